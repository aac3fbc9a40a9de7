"""Sequence: normalizers applied one after the other.

>>> from fasttok.normalizers.simple import Lowercase, Prepend
>>> Sequence([Prepend("_"), Lowercase()]).normalize_str("AB")
'_ab'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: a compiled walk of this stage never needs the module
    from fasttok.shared.normalized import NormalizedString

__all__ = ["Sequence"]


class Sequence:
    """``tokenizers.normalizers.Sequence``.

    >>> Sequence([]).normalize_str("x")
    'x'
    """

    def __init__(self, normalizers: list) -> None:
        self.normalizers = list(normalizers)

    def __repr__(self) -> str:
        return f"Sequence({self.normalizers!r})"

    def normalize(self, ns: NormalizedString) -> None:
        for n in self.normalizers:
            n.normalize(ns)

    def normalize_str(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize_str(text)
        return text
