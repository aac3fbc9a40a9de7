"""Metaspace: spaces become the replacement character (``▁``), which is put in
front (``prepend_scheme``: always, only for the piece at the start of the
text, never) and, with ``split``, starts each new piece.

>>> Metaspace().pre_tokenize_str("Hey  you")
[('▁Hey', (0, 3)), ('▁', (3, 4)), ('▁you', (4, 8))]
>>> Metaspace(split=False, prepend_scheme="never").split_str("a b")
['a▁b']
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from fasttok.pre_tokenizers.base import PreTokenizer
from fasttok.shared import PREPEND_SCHEMES

if TYPE_CHECKING:  # annotations only: a compiled walk of this stage never needs the module
    from fasttok.shared.normalized import NormalizedString

__all__ = ["Metaspace", "PREPEND_SCHEMES"]
_SPACE = re.compile(" ")


class Metaspace(PreTokenizer):
    """``tokenizers.pre_tokenizers.Metaspace``.

    >>> Metaspace(prepend_scheme="first").pre_tokenize_str("a b")
    [('▁a', (0, 1)), ('▁b', (1, 3))]
    """

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always",
                 split: bool = True) -> None:
        if len(replacement) != 1:
            raise ValueError(f"replacement must be one character, got {replacement!r}")
        if prepend_scheme not in PREPEND_SCHEMES:
            raise ValueError(f"unknown prepend_scheme {prepend_scheme!r}; known: "
                             f"{', '.join(PREPEND_SCHEMES)}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split

    # The patterns are compiled when the Python path first splits: a file
    # whose compiled walk cuts the pieces never needs them.
    @functools.cached_property
    def _replacement(self) -> "re.Pattern[str]":
        return re.compile(re.escape(self.replacement))

    @functools.cached_property
    def _pieces(self) -> "re.Pattern[str]":
        # the pieces of a MergedWithNext split on the replacement: each
        # replacement starts one, and a run of them leaves all but the last alone
        r = re.escape(self.replacement)
        return re.compile(f"{r}?[^{r}]+|{r}")

    def __repr__(self) -> str:
        return (f"Metaspace(replacement={self.replacement!r}, prepend_scheme="
                f"{self.prepend_scheme!r}, split={self.split})")

    def _split(self, i: int, ns: NormalizedString) -> list:
        ns.replace(_SPACE, self.replacement)
        if not ns.normalized.startswith(self.replacement) and (
                self.prepend_scheme == "always"
                or (self.prepend_scheme == "first" and ns.offsets_original()[0] == 0)):
            ns.prepend(self.replacement)
        if self.split:
            return ns.split(self._replacement, "MergedWithNext")
        return [ns]

    def split_str(self, text: str) -> list:
        """The pieces of ``text`` taken as a whole text (for ``"first"``, the
        start of the input)."""
        return self.split_many([text])

    def split_many(self, texts: list) -> list:
        """The pieces of :meth:`split_str` of each of ``texts``, one list: a
        ``Sequence`` gives Metaspace every word of the split before it, and a
        call a word was a third of T5's pre-tokenizing.

        >>> Metaspace().split_many(["a b", "", "c"])
        ['▁a', '▁b', '▁c']
        """
        rep = self.replacement
        texts = [t.replace(" ", rep) for t in texts if t]
        if self.prepend_scheme != "never":
            texts = [t if t.startswith(rep) else rep + t for t in texts]
        if not self.split:
            return texts
        if self.prepend_scheme != "never":
            # every text starts with the replacement now, which always starts
            # a piece: joined, they split where they meet, in one findall
            texts = ["".join(texts)]
        findall = self._pieces.findall
        return [piece for t in texts for piece in findall(t)]
