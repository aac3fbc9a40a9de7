"""Which ids of a text's encoding no continuation of the text can change.

``encode(a)`` is not always a prefix of ``encode(a + b)``: a continuation
can move a pre-tokenizer boundary (a whitespace run that ``\\s+(?!\\S)``
splits, a digit group, a contraction), change what a normalizer makes of
the last characters (a combining mark composing with them, a
SentencePiece charsmap's longest match, collapsed whitespace), complete a
special or added token, or give a BPE or Unigram piece another
segmentation. On the vocabulary kinds fasttok reads those reach back to
the last place where whitespace starts or ends at most, where no piece
takes the whitespace with the text before it: a pre-tokenizer splits
there (a byte-level regex before a letter run, BERT and SentencePiece at
the whitespace itself) and a normalizer's look-ahead is a character or a
charsmap entry long. Where a piece does take it (cl100k's ``".\n"``) the
confirmation below finds the ids not cut there. This is a rule checked,
not proved: generated texts, splits and continuations on every kind
(tests/test_appender.py, tests/test_heal.py) hold it.

Which side of the whitespace is the boundary differs (``" bar"`` is one
byte-level piece, ``"▁bar"`` one SentencePiece piece, BERT drops the
space), so the rule does not assume it: :func:`split_stable` tries the
places from the end and keeps the first one that the encoding itself
confirms (an appender's cut, ``settled``, leaves a whole word and the
whitespace on both sides of it after it, and tries no probe). A cut ``c``
is taken when, encoding the text from an earlier
such place ``a`` on (a few words, not the whole text):

* the ids of ``text[a:]`` are the last ids of the whole text's (``a`` is
  where the whole text's ids are cut too, so the ids of ``text[a:c]``
  placed there are the ids the whole text has there);
* the ids of ``text[a:c]`` begin those of ``text[a:]`` (``c`` is a
  boundary of this text's ids);
* and they still begin them after each of :data:`PROBES` is appended: a
  letter, a digit, an apostrophe and ``s``, punctuation, spaces, a newline,
  a tab, a combining mark, a CJK character, an emoji (a character a
  WordPiece vocabulary lacks makes its whole word unknown) -- one of each
  kind of character that moves a boundary.

SentencePiece's dummy prefix makes ``text[a:]`` alone begin with a ``▁``
the whole text does not have there; the text from ``a`` without its first
space is tried too. The ids before ``c`` are final; the text from ``c``
on is the unstable tail.

>>> encode = lambda s: [ord(ch) for ch in s]          # one id a character
>>> split_stable(encode, "ab cd", encode("ab cd"), 0)[:2]
(3, 3)
>>> split_stable(encode, "ab cd ef gh", encode("ab cd ef gh"), 0, settled=True)[:2]
(5, 5)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Optional

__all__ = ["PROBES", "split_stable", "cuts"]

#: One continuation of each kind that moves a boundary (see the module doc).
PROBES = ("a", "A", "1", "s", "'", "'s", ".", ",", " ", "  ", " a", "\n", "\r\n", "\t",
          "\u0301", "\u4e2d", "_", "-", "<", "\U0001f389")

# a whitespace run: where it starts and ends are the places
_SPACES = re.compile(r"\s+")

# how far back from the end places are looked for, and how many are tried
_SEARCH = 512
_TRIES = 6
_ANCHORS = 3
# how many places a settled cut leaves after it: the end of a whitespace run,
# the end of the word after it, and the whitespace's start before that
_SETTLED = 3
# how many places the tries need (settled places, the tries, their anchors)
_ENOUGH = _SETTLED + _TRIES + 2 + _ANCHORS
# a window this short may be its own anchor (the whole of it encoded per probe)
_WHOLE = 1024


def cuts(text: str, lo: int) -> list:
    """The places after ``lo`` where whitespace starts or ends in ``text``
    (within its last few hundred characters), latest first.

    >>> cuts("ab cd  e", 0)
    [7, 5, 3, 2]
    """
    # the last stretch first (32 characters are some six words of English):
    # a few places are all a cut needs
    for back in (_SEARCH // 16, _SEARCH // 4, _SEARCH):
        start = max(lo, len(text) - back)
        found = []
        for m in _SPACES.finditer(text, start):
            if m.start() > start or (m.start() > 0 and not text[m.start() - 1].isspace()):
                found.append(m.start())
            if m.end() < len(text):
                found.append(m.end())
        found = [c for c in reversed(found) if lo < c]
        if len(found) >= _ENOUGH or start == lo:
            return found
    return found


def _variants(local: str, whole: bool) -> tuple:
    # the text from an anchor as the encoding may have it alone: as it is,
    # and without its first space (a SentencePiece dummy prefix stands for it)
    if whole or not local.startswith(" "):
        return (local,)
    return (local, local[1:])


def split_stable(encode: Callable[[str], list], text: str, ids: list,
                 lo: int, *, settled: bool = False) -> Optional[tuple]:
    """``(c, k, segment, segment_ids)``: ``ids[:k]`` (the ids of ``text``,
    which starts where its encoding starts) cannot change whatever follows
    ``text``, and are the ids of ``text[:c]``; ``segment`` is the text
    before ``c`` from an earlier such place, as encoded alone to
    ``segment_ids`` (the last ids of ``ids[:k]``), the context an
    appender re-encodes its tail after. Only places after ``lo`` are
    tried; ``None`` when none is confirmed. ``settled``: only places with a
    whole word and the whitespace on both sides of it after them, which no
    continuation reaches back over, so no probe is tried (an appender's
    cut: two encodes of a few words a push).

    >>> encode = lambda s: [ord(ch) for ch in s]
    >>> c, k, segment, segment_ids = split_stable(encode, "ab cd ef", encode("ab cd ef"), 0)
    >>> c, k, segment
    (6, 6, 'cd ')
    """
    places = cuts(text, lo)
    first = _SETTLED if settled else 0
    for i, c in enumerate(places[first:first + _TRIES], first):
        anchors = places[i + 2:i + 2 + _ANCHORS]
        if len(text) <= _WHOLE or not anchors:
            anchors.append(0)
        for a in anchors:
            if a == 0 and len(text) > _WHOLE:
                continue
            found = _confirmed(encode, text, ids, a, c, () if settled else PROBES)
            if found is _NOT_A_BOUNDARY:
                break
            if found is not None:
                return found
    return None


# _confirmed's answer when the ids from a true anchor are not cut at c: no
# other anchor cuts them there either
_NOT_A_BOUNDARY = ()


def _confirmed(encode: Callable[[str], list], text: str, ids: list, a: int,
               c: int, probes: tuple) -> Optional[tuple]:
    local = text[a:]
    for v in _variants(local, a == 0):
        tail = ids if a == 0 else encode(v)
        if not tail or len(tail) > len(ids) or ids[len(ids) - len(tail):] != tail:
            continue
        head_text = v[:c - a - (len(local) - len(v))]
        head = encode(head_text)
        if tail[:len(head)] != head:
            return _NOT_A_BOUNDARY
        if all(encode(v + p)[:len(head)] == head for p in probes):
            return c, len(ids) - len(tail) + len(head), head_text, head
    return None
