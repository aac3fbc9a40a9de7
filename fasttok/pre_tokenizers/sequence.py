"""Sequence: pre-tokenizers applied one after the other, each to every piece of the last.

>>> from fasttok.pre_tokenizers.split import WhitespaceSplit, Digits
>>> Sequence([WhitespaceSplit(), Digits(True)]).pre_tokenize_str("a1 b")
[('a', (0, 1)), ('1', (1, 2)), ('b', (3, 4))]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fasttok.pre_tokenizers.base import PreTokenizer
from fasttok.pre_tokenizers.metaspace import Metaspace

if TYPE_CHECKING:  # annotations only: a compiled walk of this stage never needs the module
    from fasttok.shared.normalized import PreTokenizedString

__all__ = ["Sequence"]


class Sequence(PreTokenizer):
    """``tokenizers.pre_tokenizers.Sequence``.

    >>> Sequence([]).split_str("a b")
    ['a b']
    """

    def __init__(self, pretokenizers: list) -> None:
        self.pretokenizers = list(pretokenizers)
        # Metaspace("first") after a split needs each piece's offset, which
        # the string path does not keep
        self._str_path = not any(isinstance(p, Metaspace) and p.prepend_scheme == "first"
                                 for p in self.pretokenizers[1:])

    def __repr__(self) -> str:
        return f"Sequence({self.pretokenizers!r})"

    def pre_tokenize(self, pts: PreTokenizedString) -> None:
        for p in self.pretokenizers:
            p.pre_tokenize(pts)

    def split_str(self, text: str) -> list:
        if not self._str_path:
            return [piece for piece, _ in self.pre_tokenize_str(text)]
        pieces = [text]
        for p in self.pretokenizers:
            # a pre-tokenizer with split_many takes all the pieces in one call
            split_many = getattr(p, "split_many", None)
            if split_many is not None:
                pieces = split_many(pieces)
            else:
                pieces = [q for piece in pieces for q in p.split_str(piece)]
        return pieces
