"""Metaspace: spaces become the replacement character (``▁``), which is put in
front (``prepend_scheme``: always, only for the piece at the start of the
text, never) and, with ``split``, starts each new piece.

>>> Metaspace().pre_tokenize_str("Hey  you")
[('▁Hey', (0, 3)), ('▁', (3, 4)), ('▁you', (4, 8))]
>>> Metaspace(split=False, prepend_scheme="never").split_str("a b")
['a▁b']
"""

from __future__ import annotations

import re

from fasttok.shared.normalized import (NormalizedString, PreTokenizedString, find_matches,
                                       split_spans)

__all__ = ["Metaspace", "PREPEND_SCHEMES"]

PREPEND_SCHEMES = ("always", "first", "never")
_SPACE = re.compile(" ")


class Metaspace:
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
        self._replacement = re.compile(re.escape(replacement))

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

    def pre_tokenize(self, pts: PreTokenizedString) -> None:
        pts.split(self._split)

    def pre_tokenize_str(self, text: str) -> list:
        pts = PreTokenizedString(text)
        self.pre_tokenize(pts)
        return pts.get_splits()

    def split_str(self, text: str) -> list:
        """The pieces of ``text`` taken as a whole text (for ``"first"``, the
        start of the input)."""
        if not text:
            return []
        text = text.replace(" ", self.replacement)
        if self.prepend_scheme != "never" and not text.startswith(self.replacement):
            text = self.replacement + text
        if not self.split:
            return [text]
        return [text[s:e] for s, e in
                split_spans(find_matches(self._replacement, text), "MergedWithNext") if s < e]
