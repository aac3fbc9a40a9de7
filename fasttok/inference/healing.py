"""Token healing: the ids of a prompt that generation may build on, and the
bytes it must reproduce.

A prompt ending mid-word ("The qu") ends on a token boundary the model
rarely saw. :func:`heal` backs off the last ids, as llguidance 1.9.1's
``LLTokenizer.tokenize_partial(new_bytes, recent_tokens)`` does, and
returns them with the bytes they spelled, which generation is then
constrained to start with (the ids :meth:`PrefixTable.extending` gives).

llguidance's rule: encode the bytes (after the last of ``recent_ids``,
kept when the encoding starts with it); among the bytes of the last four
ids after the last special token, find the longest suffix that some longer
token starts with, and back off the fewest ids that cover it. That rule
looks only at the vocabulary, so a continuation can still change ids it
keeps; here the ids kept are also at most those that the encoding of the
text followed by each of :data:`~fasttok.inference.stability.PROBES` (one
character of each kind that moves a boundary), by its own last characters,
by each ASCII letter and digit and by the rest of a few tokens extending
the bytes backed off, begins with.

>>> from fasttok.inference.prefix_table import PrefixTable
>>> tokens = {0: b"T", 1: b"he", 2: b" q", 3: b" qu", 4: b"u"}
>>> table = PrefixTable((b, i) for i, b in tokens.items())
>>> encode = lambda s: {"The qu": [0, 1, 3]}.get(s) or [0, 1, 2, 4][:len(s)]
>>> spell = tokens.__getitem__
>>> heal(encode, spell, lambda ids: b"".join(map(spell, ids)), lambda i: False, table,
...      "The qu".encode(), ())
([0, 1], b' qu')
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Optional

from fasttok.inference.prefix_table import PrefixTable
from fasttok.inference.stability import PROBES, split_stable

__all__ = ["heal", "LOOKBACK", "WINDOW"]

#: How many ids llguidance looks back over.
LOOKBACK = 4
# a BPE piece that grows by one letter or digit can re-merge its last tokens
# ("ququ" is qu|qu, "ququt" quq|ut): every one is tried
_ALNUM = tuple("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
# how many tokens extending the backed-off bytes are tried as continuations
_EXTENSIONS = 8
# how many characters from the end the text the kept ids encode is looked for
_SEARCH = 64
#: How many characters of a long prompt with no place near its end are
#: probed (see :func:`heal`).
WINDOW = 512
# how many starts of that window are tried for one whose ids are the text's end
_ALIGN_TRIES = 8


def _chop(token_bytes: Callable[[int], bytes], table: PrefixTable, ids: list) -> int:
    # llguidance's chop_tokens: how many of ids (none special) to back off
    suffix = b"".join(map(token_bytes, ids[-LOOKBACK:]))
    for start in range(len(suffix)):
        want = len(suffix) - start
        if table.has_longer(suffix[start:]):
            covered = 0
            for n in range(1, len(ids) + 1):
                covered += len(token_bytes(ids[-n]))
                if covered >= want:
                    return n
    return 0


def heal(encode: Callable[[str], list], token_bytes: Callable[[int], bytes],
         decode_bytes: Callable[[list], bytes], is_special: Callable[[int], bool],
         table: PrefixTable, data: bytes, recent_ids: Sequence[int], *, reach: int = 0,
         specials: Sequence[str] = ()) -> tuple:
    """``(ids, suffix)`` for the prompt bytes ``data`` after ``recent_ids``
    (see the module doc); ``encode`` is the encoding's with the caller's
    special-token arguments, ``token_bytes`` an id's bytes and
    ``decode_bytes`` the text ids spell. The suffix is the text after what
    the ids kept spell; where they spell another text (a normalizer, a
    decoder's clean-up), the text after the longest start of the text they
    are the encoding of (else as many bytes from the end of the text as the
    ids backed off have, as llguidance counts them). Bytes that are not
    UTF-8 from the first invalid one on go to the suffix. ``reach`` is the
    longest special token's length in characters, ``specials`` the special
    tokens ``encode`` matches, sorted: where the text ends partway through
    one, the rest of it is a probe too (completed, it changes the ids before
    it).

    A long prompt is probed from the appender's last cut on (a whitespace
    place or an edge: :func:`~fasttok.inference.stability.split_stable`),
    and one with no place in its last characters from where the encoding
    of its last :data:`WINDOW` characters or so is its own ids' end (a
    continuation is taken to reach back no further: checked, as the probes
    are, by the tests); so a heal costs one encode of the text, one decode
    of the ids kept and a few dozen encodes of a short tail.

    >>> from fasttok.inference.prefix_table import PrefixTable
    >>> table = PrefixTable([(b"a", 0), (b"b", 1), (b"ab", 2)])
    >>> encode = lambda s: [{"a": 0, "b": 1}.get(ch, 9) for ch in s]
    >>> spell = [b"a", b"b", b"ab"].__getitem__
    >>> heal(encode, spell, lambda ids: b"".join(map(spell, ids)), lambda i: False, table,
    ...      b"ba", ())
    ([1], b'a')
    """
    if not data:
        return [], b""
    try:
        new = data.decode("utf-8")
        rest = b""
    except UnicodeDecodeError as exc:
        new = data[:exc.start].decode("utf-8")
        rest = data[exc.start:]
    kept = list(recent_ids[-1:])
    context = b"".join(map(token_bytes, kept)).decode("utf-8", "replace") if kept else ""
    text = context + new
    ids = encode(text)
    if kept and ids[:1] != kept:
        text, ids, kept = new, encode(new), []
    # the back-off looks at the last LOOKBACK ids after the last special one
    fixed = max(len(kept), len(ids) - LOOKBACK)
    for i in range(len(ids) - 1, fixed - 1, -1):
        if is_special(ids[i]):
            fixed = i + 1
            break
    k = len(ids) - _chop(token_bytes, table, ids[fixed:])
    probes = PROBES + _echoes(text, token_bytes, table, ids[k:]) + _completions(text, specials)
    # a long prompt is probed from the appender's last cut on, not whole:
    # the ids before it are final already
    found = split_stable(encode, text, ids, len(context), settled=True, reach=reach)
    if found is None or found[1] > k:
        found = _aligned(encode, text, ids, len(context)) or found
    if found is not None and found[1] <= k:
        cut, base, segment, segment_ids = found
        local = _probed(encode, segment + text[cut:], segment_ids + ids[base:],
                        k - base + len(segment_ids), probes)
        # a settled cut is final; an aligned window's start is not: some of
        # the window's ids must stay
        need = len(segment_ids) + (not segment)
        k = base + local - len(segment_ids) if local >= need else _probed(
            encode, text, ids, k, probes)
    else:
        k = _probed(encode, text, ids, k, probes)
    k = max(k, len(kept))
    # the text the kept ids spell is compared from the settled cut's segment
    # on when they reach past it (decoding a long prompt's ids is slow where
    # a decoder runs in Python), else from the start
    head, head_ids, start = "", ids[:k], 0
    if found is not None and found[1] <= k:
        head, head_ids, start = found[2], found[3] + ids[found[1]:k], found[0]
    local = (head + text[start:]).encode("utf-8")
    kept_bytes = decode_bytes(head_ids)
    if local.startswith(kept_bytes):
        return ids[len(kept):k], local[len(kept_bytes):] + rest
    # the ids spell another text (a normalizer, a decoder's clean-up): the
    # text whose encoding they are, found from the end
    for cut in range(len(text), max(start, len(context), len(text) - _SEARCH) - 1, -1):
        if encode(head + text[start:cut]) == head_ids:
            return ids[len(kept):k], text[cut:].encode("utf-8") + rest
    # none so near: llguidance's count, the backed-off ids' bytes taken
    # from the end of the text given
    spelled = text.encode("utf-8")
    backed = sum(len(token_bytes(i)) for i in ids[k:])
    first = max(len(spelled) - backed, len(context.encode("utf-8")))
    return ids[len(kept):k], spelled[first:] + rest


def _aligned(encode: Callable[[str], list], text: str, ids: list, lo: int) -> Optional[tuple]:
    # split_stable's answer for a long text with no place near its end: a
    # start some WINDOW characters back whose encoding, after a first id a
    # SentencePiece dummy prefix adds there, is the end of the text's ids
    if len(text) - lo <= 2 * WINDOW:
        return None
    for start in range(len(text) - WINDOW, len(text) - WINDOW - _ALIGN_TRIES, -1):
        window = encode(text[start:])
        for lead in (0, 1):
            tail = window[lead:]
            if tail and len(tail) <= len(ids) and ids[len(ids) - len(tail):] == tail:
                return start, len(ids) - len(tail), "", window[:lead]
    return None


def _probed(encode: Callable[[str], list], text: str, ids: list, k: int, probes: tuple) -> int:
    # how many of ids[:k] the text followed by each probe still begins with
    for probe in probes:
        k = _common(ids, encode(text + probe), k)
    return k


def _echoes(text: str, token_bytes: Callable[[int], bytes], table: PrefixTable,
            backed: list) -> tuple:
    # continuations drawn from the text itself: its last characters again
    # (a Unigram word re-segments when it grows by what it ends with), every
    # ASCII letter and digit, and the rest of a few tokens that extend the bytes backed off (what
    # generation would write next)
    echoes = [text[-1:], text[-2:], text[-1:] * 2, *_ALNUM]
    spelled = b"".join(map(token_bytes, backed))
    for raw in table.bytes_extending(spelled)[:_EXTENSIONS] if spelled else ():
        echoes.append(raw[len(spelled):].decode("utf-8", "ignore"))
    return tuple(e for e in echoes if e)


def _completions(text: str, specials: Sequence[str]) -> tuple:
    # the rest of a special token that each end of the text begins (one a
    # length: any completed there moves the ids before it alike)
    found = []
    for n in range(1, min(len(text), max(map(len, specials), default=0)) + 1):
        end = text[-n:]
        i = bisect.bisect_left(specials, end)
        while i < len(specials) and specials[i].startswith(end):
            if len(specials[i]) > n:
                found.append(specials[i][n:])
                break
            i += 1
    return tuple(found)


def _common(ids: list, other: list, k: int) -> int:
    # how many of ids[:k] other begins with alike (a probe seldom changes
    # any: one comparison, else a halving search)
    if ids[:k] == other[:k]:
        return min(k, len(other))
    lo, hi = 0, min(k, len(other))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ids[:mid] == other[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo
