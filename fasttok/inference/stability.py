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

Text without whitespace (CJK, URLs, code) has other places, *edges*:
where a letter (CJK and Hangul each a script of their own), a digit and a
punctuation mark (ASCII, CJK and fullwidth, general punctuation) meet. A
mark, a symbol or an emoji is of no class: no edge is beside it (a mark
joins the letter before it). Most pre-tokenizers cut at most edges
whatever follows (a regex's letter run ends at a digit or a punctuation
mark, BERT splits off every punctuation mark and CJK character,
SentencePiece's trainer makes no piece across a script or a digit); some
do not (a regex puts one punctuation mark before a letter run,
``".com"``; a CJK and a Latin letter are one regex letter run). So where
a settled cut finds no whitespace place, an edge is the cut when the
encoding confirms it as above after every one of :data:`EDGE_PROBES`, at
least :data:`MARGIN` characters (or the longest special token, ``reach``)
before the end, with a *hard* place after it (whitespace, or an edge no
pre-tokenizer joins: after a letter or a digit, before a digit), so the
pre-token holding the cut ends before the text does. That too is checked
(hypothesis texts of CJK, URLs, mixed scripts, marks and digits pushed in
any pieces, on every kind), not proved. Edges are looked for once the text
after the last cut is a few hundred characters long (their probes cost
some thirty encodes of the text from an anchor). SentencePiece encodes a
text from an edge alone with a dummy ``▁`` the whole text does not have
there: its first ids (``▁`` and the piece it changes, at most
:data:`_LEAD`) may differ from the whole text's, and the ids after them
must be the whole text's last ones, the cut among those.

Where no edge is confirmed (a run of one class: Han, kana, base64, a
letter repeated), a place inside the run two margins before the end is
the cut, anchored a few characters before it where the text from the
anchor encodes to the end of the text's ids (one of a few starts is in
step with a BPE run's repeating segmentation), confirmed after every
edge probe and the run's last characters again, with ids after it (a
WordPiece word too long for its vocabulary, or a run a vocabulary lacks
the script of, is one unknown id however cut, and is kept whole).

>>> encode = lambda s: [ord(ch) for ch in s]          # one id a character
>>> split_stable(encode, "ab cd", encode("ab cd"), 0)[:2]
(3, 3)
>>> split_stable(encode, "ab cd ef gh", encode("ab cd ef gh"), 0, settled=True)[:2]
(5, 5)
>>> text = "中文，" * 200
>>> split_stable(encode, text, encode(text), 0, settled=True)[:2]
(584, 584)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Optional

__all__ = ["PROBES", "EDGE_PROBES", "MARGIN", "split_stable", "cuts", "edges", "has_place"]

#: One continuation of each kind that moves a boundary (see the module doc).
PROBES = ("a", "A", "1", "s", "'", "'s", ".", ",", " ", "  ", " a", "\n", "\r\n", "\t",
          "\u0301", "\u4e2d", "_", "-", "<", "\U0001f389")

#: ...and for an edge, one of each class an edge is between and what a
#: regex joins to it (a URL's ``/``, ``:``, ``=``; CJK punctuation; kana,
#: Hangul and Greek letters).
EDGE_PROBES = PROBES + ("\uff0c", "\u3002", "\u3042", "\ud55c", "\u03a9", "/", ":", "=")

#: How many characters an edge cut leaves after it at least (a special
#: token, a normalizer's look-ahead, a piece re-segmented by what follows
#: it reach back less).
MARGIN = 16

# a whitespace run: where it starts and ends are the places (spelled so
# that the search skips to a whitespace character, twice as fast as \s+)
_SPACES = re.compile(r"\s\s*")

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HANGUL = "\uac00-\ud7af"
_PUNCT = ("!-/:-@\\[-^`{-~\u2010-\u2027\u2030-\u205e\u3001-\u303f"
          "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65")
# runs of one class: digits, CJK (Han and kana), Hangul, other letters,
# punctuation; anything else (a mark, a symbol, whitespace) is one
# character of no class
_RUNS = re.compile(
    rf"(\d+)|([{_CJK}]+)|([{_HANGUL}]+)|([^\W\d_{_CJK}{_HANGUL}]+)|([{_PUNCT}]+)|(.)", re.DOTALL)
_DIGIT, _PUNCTUATION, _NONE = 1, 5, 6
_LETTERS = (2, 3, 4)
# a letter run ends at these; a digit run ends at anything; a punctuation
# run before a letter may be one regex piece with it (".com")
_HARD_AFTER = (_DIGIT, _PUNCTUATION)

# how far back from the end places are looked for, and how many are tried
_SEARCH = 512
_TRIES = 6
_ANCHORS = 3
# how many places a settled cut leaves after it: the end of a whitespace run,
# the end of the word after it, and the whitespace's start before that
_SETTLED = 3
# how many places the tries need (settled places, the tries, their anchors)
_ENOUGH = _SETTLED + _TRIES + 2 + _ANCHORS
# edges are looked for in a text this long after lo: their probes cost
# some thirty encodes of the text from an anchor, once per this many characters
_EDGE_SPAN = 512
# a window this short may be its own anchor (the whole of it encoded per probe)
_WHOLE = 1024
# how many first ids of the text from an anchor may differ from the text's
# (a dummy prefix's "▁" alone, and the piece it changes)
_LEAD = 2
# how far before a cut inside a run its anchors are, and how many are tried
# (a BPE run's segmentation repeats: one of a few starts is in step)
_INNER = 32
_ALIGN = 8


def cuts(text: str, lo: int, enough: int = _ENOUGH) -> list:
    """The places after ``lo`` where whitespace starts or ends in ``text``
    (within its last few hundred characters, enough for a cut), latest first.

    >>> cuts("ab cd  e", 0)
    [7, 5, 3, 2]
    """
    # the last stretch reversed: its first whitespace runs are the text's
    # last, and the search stops at the places a cut needs
    start = max(lo, len(text) - _SEARCH)
    end = len(text)
    found = []
    for m in _SPACES.finditer(text[start:][::-1]):
        first, last = end - m.end(), end - m.start()
        if last < end:
            found.append(last)
        if first > start or (first > 0 and not text[first - 1].isspace()):
            found.append(first)
        if len(found) >= enough:
            break
    return [c for c in found if lo < c]


def edges(text: str, lo: int) -> list:
    """``(place, hard)`` for the edges after ``lo`` in ``text`` (within its
    last few hundred characters; see the module doc), latest first;
    ``hard``: no pre-tokenizer joins the two sides.

    >>> edges("ab1.x", 0)
    [(4, False), (3, True), (2, True)]
    """
    start = max(lo, len(text) - _SEARCH)
    found = []
    before = _NONE
    for m in _RUNS.finditer(text, start):
        kind = m.lastindex
        if m.start() > start and kind != _NONE and before != _NONE and kind != before:
            found.append((m.start(), kind in _HARD_AFTER if before in _LETTERS else
                          before == _DIGIT or kind == _DIGIT))
        before = kind
    found.reverse()
    return [(c, hard) for c, hard in found if lo < c]


def has_place(text: str, start: int, lo: int, inside_words: bool = True) -> bool:
    """Whether ``text`` after ``start`` holds whitespace, or the text after
    ``lo`` (where :func:`split_stable` starts looking) is long enough for an
    edge or a cut inside a run (``inside_words``, as there) -- a quick test
    of whether it can find a cut.

    >>> has_place("aaaa", 0, 0), has_place("aa a", 0, 0), has_place("中文，", 2, 0)
    (False, True, False)
    >>> has_place("aa.a", 0, 0), has_place("x" * 600, 599, 0)
    (False, True)
    """
    return _SPACES.search(text, start + 1) is not None or (
        inside_words and len(text) - lo >= _EDGE_SPAN)


def _variants(local: str, whole: bool) -> tuple:
    # the text from an anchor as the encoding may have it alone: as it is,
    # and without its first space (a SentencePiece dummy prefix stands for it)
    if whole or not local.startswith(" "):
        return (local,)
    return (local, local[1:])


def split_stable(encode: Callable[[str], list], text: str, ids: list,
                 lo: int, *, settled: bool = False, reach: int = 0,
                 inside_words: bool = True) -> Optional[tuple]:
    """``(c, k, segment, segment_ids)``: ``ids[:k]`` (the ids of ``text``,
    which starts where its encoding starts) cannot change whatever follows
    ``text``, and are the ids of ``text[:c]``; ``segment`` is the text
    before ``c`` from an earlier such place, as encoded alone to
    ``segment_ids`` (the last ids of ``ids[:k]``), the context an
    appender re-encodes its tail after. Only places after ``lo`` are
    tried; ``None`` when none is confirmed. ``settled``: only places with a
    whole word and the whitespace on both sides of it after them, which no
    continuation reaches back over, so no probe is tried (an appender's
    cut: two encodes of a few words a push); where there is none and the
    text after ``lo`` is a few hundred characters long, an edge (see the
    module doc; ``reach``: the longest special token), else a place inside
    a run -- unless ``inside_words`` is False (a Unigram model whose
    Viterbi sums scores from a pre-token's start: the same pieces in another
    order tie, and the sum before them decides). The cost is a few encodes
    of the last few hundred characters at most.

    >>> encode = lambda s: [ord(ch) for ch in s]
    >>> c, k, segment, segment_ids = split_stable(encode, "ab cd ef", encode("ab cd ef"), 0)
    >>> c, k, segment
    (6, 6, 'cd ')
    """
    first = _SETTLED if settled else 0
    probes = () if settled else PROBES
    # the places the first try needs, then (seldom) the places the others do
    places = cuts(text, lo, first + 2 + _ANCHORS)
    found = _first_confirmed(encode, text, ids, places, places[first:first + 1], probes)
    if found is None:
        places = cuts(text, lo)
        found = _first_confirmed(encode, text, ids, places, places[first + 1:first + _TRIES],
                                 probes)
    if found is not None or not settled or not inside_words or len(text) - lo < _EDGE_SPAN:
        return found
    # an edge: at least the margin before the end, with a hard place after it
    marks = sorted([(c, True) for c in places] + edges(text, lo), reverse=True)
    places = [c for c, _ in marks]
    end = len(text) - max(MARGIN, reach)
    tries, hard = [], False
    for c, is_hard in marks:
        if hard and c <= end and not text[c - 1].isspace() and not text[c].isspace():
            tries.append(c)
            if len(tries) == _TRIES:
                break
        hard = hard or is_hard
    return (_first_confirmed(encode, text, ids, places, tries, EDGE_PROBES)
            or _inner(encode, text, ids, lo, reach))


def _inner(encode: Callable[[str], list], text: str, ids: list, lo: int,
           reach: int) -> Optional[tuple]:
    # a cut inside a run of one class some margins before the end (a run
    # with no edge near its end: Han, kana, base64, one letter repeated),
    # anchored a few characters before it where the text from the anchor
    # encodes to the end of the text's ids; the run's last characters again
    # are probes too (a Unigram or BPE segmentation that shifts as the run
    # grows)
    margin = max(MARGIN, reach)
    probes = EDGE_PROBES + (text[-1:], text[-2:], text[-1:] * 2, text[-3:])
    tried = 0
    for c in range(len(text) - 2 * margin, len(text) - 3 * margin, -1):
        run = _RUNS.match(text, c - 1, c + 1)
        if c - _INNER - _ALIGN <= lo or run is None or run.end() != c + 1 or (
                run.lastindex == _NONE):
            continue
        for a in range(c - _INNER, c - _INNER - _ALIGN, -1):
            found = _confirmed(encode, text, ids, a, c, probes, inner=True)
            if found is _NOT_A_BOUNDARY:
                break
            if found is not None:
                return found
        tried += 1
        if tried == _TRIES:
            break
    return None


def _first_confirmed(encode: Callable[[str], list], text: str, ids: list, places: list,
                     tries: list, probes: tuple) -> Optional[tuple]:
    # the first of tries (places, latest first) that an anchor confirms
    for c in tries:
        i = places.index(c)
        anchors = places[i + 2:i + 2 + _ANCHORS]
        if len(text) <= _WHOLE or not anchors:
            anchors.append(0)
        for a in anchors:
            if a == 0 and len(text) > _WHOLE:
                continue
            found = _confirmed(encode, text, ids, a, c, probes)
            if found is _NOT_A_BOUNDARY:
                break
            if found is not None:
                return found
    return None


# _confirmed's answer when the ids from a true anchor are not cut at c: no
# other anchor cuts them there either
_NOT_A_BOUNDARY = ()


def _confirmed(encode: Callable[[str], list], text: str, ids: list, a: int,
               c: int, probes: tuple, *, inner: bool = False) -> Optional[tuple]:
    # inner: c is inside a run, whose ids after c must not be empty (a
    # WordPiece word too long for the vocabulary is one [UNK] however cut)
    local = text[a:]
    for v in _variants(local, a == 0):
        tail = ids if a == 0 else encode(v)
        lead = _lead(ids, tail)
        if lead is None:
            continue
        head_text = v[:c - a - (len(local) - len(v))]
        head = encode(head_text)
        if tail[:len(head)] != head or len(head) < lead or (inner and len(head) >= len(tail)):
            return _NOT_A_BOUNDARY
        if all(encode(v + p)[:len(head)] == head for p in probes):
            return c, len(ids) - len(tail) + len(head), head_text, head
    return None


def _lead(ids: list, tail: list) -> Optional[int]:
    # how many first ids of tail (the text from an anchor, encoded alone)
    # differ from the text's: after them tail is the end of ids. A
    # SentencePiece dummy prefix makes the text from an anchor that is not
    # whitespace begin with a piece holding a "▁" the text has not there
    for lead in range(_LEAD + 1):
        n = len(tail) - lead
        if n <= 0 or n > len(ids):
            return None
        if ids[len(ids) - n:] == tail[lead:]:
            return lead
    return None


# Performance notes
# -----------------
# Characters encoded per character pushed, 50-character pushes, pending_ids()
# asked after each (20k Han / 20k kana / 100 KB of URLs): before edges were
# anchored after a dummy prefix's first ids and runs were cut inside, 200 /
# 200 / 1,000 on llama2 tokenizer.json and GGUF llama-spm (200 / 200 / 7 on
# tiktoken): the pending text grew with the text. Now 11 / 11 / 7 on every
# kind that has the script, the pending text ~480 characters. Pushes alone:
# a cut inside a run costs 5.4-7.3 characters a character (some thirty
# probes of ~60 characters every ~480), edges 2.4-2.9. Looking for cuts
# every 1,024 characters instead of 512 (_EDGE_SPAN): pushes alone 5.4 ->
# 3.1 (Han), 2.4 -> 1.7 (URLs), but with pending_ids() after each push
# 11.0 -> 13.8 and 7.3 -> 12.1 (tiktoken and llama2; /tmp/s/span.py): not kept.
# A Unigram tokenizer.json's Viterbi sums double scores from a pre-token's
# start, and "f" + "ff" ties "ff" + "f" but for how the sum before them
# rounds, so a window from an edge inside a pre-token split a run of f and 6
# otherwise. Its compiled walk carries the score instead
# (UnigramWalk.encode_scored): a cut at a node's start inside a pre-token
# or at one's start, the text after it walked from the pre-token's score
# there. A configuration the walk does not run is cut only where
# whitespace is (Model.cuts_inside_words), its unspaced text pending.
# Where a lattice node crosses every place (two-digit pieces over a run of
# digits) the cut is where the best paths to the places before the margin
# converge (UnigramModel.converged), and the window's Viterbi from there is
# checked to give the whole text's paths at them (same_window): from them
# on the two agree whatever follows. 20k random 6/8 digits on XLNet's
# conversion, 50 characters a push, pending_ids() after each: 200.5 -> 17.0
# characters encoded a character; GGUF t5 (nomic-bert-moe) 200.5 -> 8.4, 6.9
# on any digits (/tmp/runs.py). A run of one letter on that GGUF does not
# converge (its first pieces change with the run's length): never cut.
# sentencepiece's Unigram .model cannot be cut exactly from a window encoded
# from 0: its float32 scores summed from the start of the text break ties by
# the sum's size (400 KB of English: one id in 371k differs, at 3 of 4 push
# sizes). The appender encodes its windows from the whole text's score at a
# place no lattice node crosses instead (SentencePieceCore.encode_scored),
# which is the Viterbi's whole state there: 400 KB of English on
# kyoto_ja_unigram_8000 pushed 50 characters at a time, pending_ids() after
# each, encodes 2.4 characters a character pushed (was the whole text each
# time), 10.9 with 7-character pushes (/tmp/s2/cost.py); 20k characters of
# zh / Japanese without whitespace 6.1-6.4 (/tmp/s2/ja.py), except a run
# of unknown characters merged into one unk (botchan's English models
# without byte fallback on Han: never cut, 200). A scored window costs more
# than a plain encode of it (callgrind, botchan_unigram_5000, 2,000 windows
# of 120 characters of en.txt, /tmp/s2/cg.py: encode_scored 89.4M
# instructions, encode_ordinary 44.0M): the score at the cut read off the
# Viterbi's array where the byte before it is ASCII, not from a second
# Viterbi over the text before it (the walk over a lone character of more
# bytes does not write it): 89.4M -> 72.4M. Left: the offsets and the
# tail's second normalization (16.4M together). Reserving the buffers at
# their most (3 bytes a byte) before: 72.4M -> 74.6M, not kept.
