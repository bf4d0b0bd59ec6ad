"""The parameters of the numeric mechanisms: the runtime's formulas (one copy, :mod:`ldpplan.mechanisms.numeric._formulas`).

References
----------
.. [1] J. C. Duchi, M. I. Jordan, M. J. Wainwright, JASA 2018, Sec. 4.2.3.
.. [2] N. Wang et al., ICDE 2019 (arXiv:1907.00782), Sec. III (Alg. 1, Alg. 2, the Hybrid Mechanism).
.. [3] Z. Li et al., SIGMOD 2020 (arXiv:1912.01051), Sec. 4 (Square Wave).
"""
from __future__ import annotations

from ..mechanisms.numeric._formulas import (band_values, duchi_bound, hybrid_alpha, hybrid_epsilon_star,
                                            piecewise_bound, piecewise_densities, square_wave_bandwidth,
                                            square_wave_moments)

__all__ = ["MECHANISMS", "duchi_bound", "piecewise_bound", "square_wave_bandwidth", "square_wave_moments",
           "piecewise_densities", "hybrid_epsilon_star", "hybrid_alpha", "band_values"]

#: every numeric mechanism, by the name a spec will use
MECHANISMS = ("duchi", "piecewise", "hybrid", "square_wave")
