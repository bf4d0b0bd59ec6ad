"""The ULDP runtime classes (Murakami & Kawamoto, USENIX Security 2019): uRR, uRAP, PUM, basic RAPPOR.

Each class carries its privacy map beside it in its private module (``_urr``: Def. 3;
``_urap``: Def. 4; ``_pum``: Sec. 5), one module per mechanism so that each stays well under
500 lines; this module is the family's one public runtime surface, as in every family package.
"""
from __future__ import annotations

from ._pum import PersonalizedULDP, PreProcessor
from ._urap import BasicRAPPOR, BitwiseChannel, UtilityOptimizedRAPPOR, pack_bits, unpack_bits, urap_epsilon
from ._urr import URRChannel, UtilityOptimizedRR, urr_epsilon

__all__ = ["UtilityOptimizedRR", "UtilityOptimizedRAPPOR", "BasicRAPPOR", "PersonalizedULDP", "PreProcessor",
           "URRChannel", "BitwiseChannel", "urr_epsilon", "urap_epsilon", "pack_bits", "unpack_bits"]
