"""Nmt: the control characters NMT models drop and the spaces they unify.

>>> Nmt().normalize_str("a\\x01b\\u200bc\\td")
'ab c d'
"""

from __future__ import annotations

import re

from fasttok.normalizers.strip import remove_class
from fasttok.shared.normalized import NormalizedString

__all__ = ["Nmt"]

_DROPPED = re.compile("[\x01-\x08\x0b\x0e-\x1f\x7f\x8f\x9f]+")
_SPACES = {ord(c): " " for c in "\t\n\x0c\r\u1680\u200b\u200c\u200d\u200e\u200f"
                                "\u2028\u2029\u2581\ufeff\ufffd"}


class Nmt:
    """``tokenizers.normalizers.Nmt``.

    >>> Nmt().normalize_str("\\u2581x")
    ' x'
    """

    def __repr__(self) -> str:
        return "Nmt()"

    def normalize(self, ns: NormalizedString) -> None:
        remove_class(ns, _DROPPED)
        ns.normalized = ns.normalized.translate(_SPACES)

    def normalize_str(self, text: str) -> str:
        return _DROPPED.sub("", text).translate(_SPACES)
