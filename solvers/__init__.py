"""Problem formulations and closed forms for LDP parameter planning.

No printing and no file I/O happen in this package. Every solver returns a
frozen :class:`SolveResult`.
"""
from ._result import Certificate, SolveResult, SolverError, STATUS_CLOSED_FORM, STATUS_OPTIMAL

__all__ = ["Certificate", "SolveResult", "SolverError", "STATUS_CLOSED_FORM", "STATUS_OPTIMAL"]
