"""What every ``tokenizer.json`` pre-tokenizer has in common: a
``pre_tokenize_str`` made from its ``pre_tokenize``, as ``tokenizers``'
Python binding makes it for all of them, and by default a ``pre_tokenize``
that cuts every piece with the class's ``_split(index, piece)``.

>>> class Halves(PreTokenizer):
...     def _split(self, i, ns):
...         half = len(ns.normalized) // 2
...         return [ns.slice(0, half), ns.slice(half, len(ns.normalized))]
>>> Halves().pre_tokenize_str("abcd")
[('ab', (0, 2)), ('cd', (2, 4))]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a text is split as Python strings: a compiled walk never is
    from fasttok.shared.normalized import PreTokenizedString

__all__ = ["PreTokenizer"]


class PreTokenizer:
    """The base of the ``tokenizer.json`` pre-tokenizers; a subclass defines
    ``_split`` or its own ``pre_tokenize``.

    >>> from fasttok.pre_tokenizers.split import WhitespaceSplit
    >>> isinstance(WhitespaceSplit(), PreTokenizer)
    True
    """

    __slots__ = ()

    def pre_tokenize(self, pts: PreTokenizedString) -> None:
        """Replace each piece of ``pts`` by the pieces ``_split`` cuts it into."""
        pts.split(self._split)

    def pre_tokenize_str(self, text: str) -> list:
        """``[(piece, (start, end))]``: the pieces of ``text``, with offsets into it."""
        from fasttok.shared.normalized import PreTokenizedString

        pts = PreTokenizedString(text)
        self.pre_tokenize(pts)
        return pts.get_splits()
