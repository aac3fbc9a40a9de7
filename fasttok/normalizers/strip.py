"""Strip (whitespace at either end) and StripAccents (combining marks).

Whitespace is Rust's ``char::is_whitespace``, the White_Space property
(Python's ``str.isspace`` also takes U+001C..U+001F); marks are the general
categories Mn, Mc and Me as of Unicode 9.0, the version of the crate
``tokenizers`` asks (:mod:`fasttok.shared.hf_unicode`).

>>> Strip(left=True, right=False).normalize_str(" a ")
'a '
>>> StripAccents().normalize_str("e\\u0301")
'e'
"""

from __future__ import annotations

import functools
import re

from fasttok.shared import _unicode
from fasttok.shared.normalized import NormalizedString
from fasttok.shared.hf_unicode import MARKS

__all__ = ["Strip", "StripAccents", "WHITE_SPACE", "remove_class"]

WHITE_SPACE = "".join(chr(cp) for lo, hi in _unicode.code_point_ranges("White_Space")
                      for cp in range(lo, hi + 1))


@functools.cache
def _marks() -> "re.Pattern[str]":
    # compiled on first use: importing the stage should not cost its Unicode class
    return re.compile(MARKS + "+")


def remove_class(ns: NormalizedString, runs: "re.Pattern[str]") -> None:
    """Remove from ``ns`` every character ``runs`` (a class repeated) matches;
    the others keep their spans.

    >>> ns = NormalizedString("a--b"); remove_class(ns, re.compile("-+")); ns.alignments
    [(0, 1), (3, 4)]
    """
    text = ns.normalized
    kept_text, kept_align = [], []
    at = 0
    for m in runs.finditer(text):
        kept_text.append(text[at:m.start()])
        kept_align.extend(ns.alignments[at:m.start()])
        at = m.end()
    if not at:
        return
    kept_text.append(text[at:])
    kept_align.extend(ns.alignments[at:])
    ns.normalized = "".join(kept_text)
    ns.alignments = kept_align


class Strip:
    """``tokenizers.normalizers.Strip``.

    >>> Strip().normalize_str("\\u3000 a\\t")
    'a'
    """

    def __init__(self, left: bool = True, right: bool = True) -> None:
        self.left = left
        self.right = right

    def __repr__(self) -> str:
        return f"Strip(left={self.left}, right={self.right})"

    def normalize(self, ns: NormalizedString) -> None:
        ns.strip(self.left, self.right, WHITE_SPACE)

    def normalize_str(self, text: str) -> str:
        if self.left:
            text = text.lstrip(WHITE_SPACE)
        if self.right:
            text = text.rstrip(WHITE_SPACE)
        return text


class StripAccents:
    """``tokenizers.normalizers.StripAccents``: drops every combining mark
    (usually after NFD/NFKD, which split accents off their letters).

    >>> StripAccents().normalize_str("a\\u0903b")
    'ab'
    """

    def __repr__(self) -> str:
        return "StripAccents()"

    def normalize(self, ns: NormalizedString) -> None:
        remove_class(ns, _marks())

    def normalize_str(self, text: str) -> str:
        # no ASCII character is a mark: most text skips the class's scan
        return text if text.isascii() else _marks().sub("", text)
