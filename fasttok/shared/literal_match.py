"""Leftmost-longest search over a set of literal strings.

Added and special tokens are matched leftmost first and, at one position,
longest first (Aho-Corasick ``LeftmostLongest`` in ``tokenizers``, the same
rule in fasttok's compiled cores). The standard library's ``re`` gives
exactly that from the strings' trie written as a pattern: a node's children
are an alternation keyed by distinct characters (at most one can go on at
a position), and a node that ends a string makes its children optional,
greedily, so a longer string is taken when there is one. A flat
alternation of the strings, longest first, means the same but tries every
string at every place its first character occurs: Gemma 3's 6,415 added
tokens (``<unused0>`` ... and runs of newlines) made that search half of
its encode.

>>> longest_first(["a", "ab"]).findall("xab a")
['ab', 'a']
>>> longest_first(["<u1>", "<u12>", "\\n", "\\n\\n"]).findall("<u12><u1>\\n\\n\\n")
['<u12>', '<u1>', '\\n\\n', '\\n']
>>> longest_first([]) is None
True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Optional

__all__ = ["longest_first", "first_char_test"]


def longest_first(texts: Iterable, *, group: bool = False) -> Optional["re.Pattern[str]"]:
    """The pattern that finds ``texts`` leftmost, then longest; ``None`` when
    there is no non-empty text (an empty alternation would match everywhere).
    ``group``: the whole pattern in one capturing group, so that ``split``
    keeps the texts found (it matches the same).

    >>> longest_first(["<m>"], group=True).split("a<m>b")
    ['a', '<m>', 'b']
    """
    strings = {t for t in texts if t}
    if not strings:
        return None
    trie: dict = {}
    for text in strings:
        node = trie
        for c in text:
            node = node.setdefault(c, {})
        node[_END] = True
    if max(map(functools.partial(_nesting, trie), strings)) > _MAX_NESTING:
        # re compiles nested groups recursively: a long chain of them (runs
        # of one character of every length) takes the flat alternation,
        # longest first, which means the same
        pattern = "|".join(map(re.escape, sorted(strings, key=len, reverse=True)))
    else:
        pattern = _pattern(trie)
    return re.compile(f"({pattern})" if group else pattern)


def _nesting(trie: dict, text: str) -> int:
    # how many groups the pattern nests around text's end: one at each node
    # on its path that branches or ends another string
    depth, node = 0, trie
    for c in text:
        depth += len(node) > 1
        node = node[c]
    return depth


_MAX_NESTING = 100  # far below the depth at which re.compile recurses too deep


_END = ""  # the key that marks a node ending a string (no character is empty)


def _pattern(node: dict) -> str:
    # the pattern of the strings below node (one string's rest inline, so
    # the nesting is as deep as the branch points, not as the strings)
    parts = []
    for c in sorted(k for k in node if k != _END):
        child, rest = node[c], re.escape(c)
        while len(child) == 1 and _END not in child:
            (c2, child), = child.items()
            rest += re.escape(c2)
        if any(k != _END for k in child):
            rest += _optional(_pattern(child)) if _END in child else f"(?:{_pattern(child)})"
        parts.append(rest)
    return "|".join(parts)


def _optional(pattern: str) -> str:
    return f"(?:{pattern})?"


class first_char_test:
    """Whether some of ``texts`` may start in a text: whether one of their
    first characters is in it. Few first characters (BERT's ``[CLS]``,
    ``[SEP]``...: one) are each a C search of the text, which beats hashing
    every character of the text into a set; many are that set test.

    >>> may_start = first_char_test(["[CLS]", "[SEP]", "<s>"])
    >>> may_start("a [b]"), may_start("a b")
    (True, False)
    """

    __slots__ = ("firsts", "_few")

    def __init__(self, texts: Iterable) -> None:
        self.firsts = frozenset(t[0] for t in texts if t)
        self._few = tuple(self.firsts) if len(self.firsts) <= 8 else None

    def __call__(self, text: str) -> bool:
        if self._few is None:
            return not self.firsts.isdisjoint(text)
        for c in self._few:
            if c in text:
                return True
        return False

