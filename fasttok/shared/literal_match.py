"""Leftmost-longest search over a set of literal strings.

Added and special tokens are matched leftmost first and, at one position,
longest first (Aho-Corasick ``LeftmostLongest`` in ``tokenizers``, the same
rule in fasttok's compiled cores). An alternation of the escaped strings,
longest first, gives exactly that with the standard library's ``re``: at
each position the first alternative that matches is the longest one there.

>>> longest_first(["a", "ab"]).findall("xab a")
['ab', 'a']
>>> longest_first([]) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Optional

__all__ = ["longest_first"]


def longest_first(texts: Iterable) -> Optional["re.Pattern[str]"]:
    """The pattern that finds ``texts`` leftmost, then longest; ``None`` when
    there is no non-empty text (an empty alternation would match everywhere)."""
    ordered = sorted({t for t in texts if t}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, ordered))) if ordered else None
