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
character of each kind that moves a boundary) begins with.

>>> from fasttok.inference.prefix_table import PrefixTable
>>> tokens = {0: b"T", 1: b"he", 2: b" q", 3: b" qu", 4: b"u"}
>>> table = PrefixTable((b, i) for i, b in tokens.items())
>>> encode = lambda s: {"The qu": [0, 1, 3]}.get(s) or [0, 1, 2, 4][:len(s)]
>>> heal(encode, tokens.__getitem__, lambda i: False, table, "The qu".encode(), ())
([0, 1], b' qu')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fasttok.inference.prefix_table import PrefixTable
from fasttok.inference.stability import PROBES

__all__ = ["heal", "LOOKBACK"]

#: How many ids llguidance looks back over.
LOOKBACK = 4


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
         is_special: Callable[[int], bool], table: PrefixTable, data: bytes,
         recent_ids: Sequence[int]) -> tuple:
    """``(ids, suffix)`` for the prompt bytes ``data`` after ``recent_ids``
    (see the module doc); ``encode`` is the encoding's with the caller's
    special-token arguments. Bytes that are not UTF-8 from the first
    invalid one on go to the suffix.

    >>> from fasttok.inference.prefix_table import PrefixTable
    >>> table = PrefixTable([(b"a", 0), (b"b", 1), (b"ab", 2)])
    >>> encode = lambda s: [{"a": 0, "b": 1}.get(ch, 9) for ch in s]
    >>> heal(encode, [b"a", b"b", b"ab"].__getitem__, lambda i: False, table, b"ba", ())
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
    fixed = len(kept)
    for i in range(len(ids) - 1, fixed - 1, -1):
        if is_special(ids[i]):
            fixed = i + 1
            break
    k = len(ids) - _chop(token_bytes, table, ids[fixed:])
    for probe in PROBES:
        k = min(k, _common(ids, encode(text + probe)))
    k = max(k, len(kept))
    # the bytes backed off, counted as the ids spell them and taken from the
    # end of the text given (where a normalizer changed them, the text's)
    spelled = text.encode("utf-8")
    backed = sum(len(token_bytes(i)) for i in ids[k:])
    return ids[len(kept):k], spelled[max(len(spelled) - backed, len(context.encode("utf-8"))):] + rest


def _common(ids: list, other: list) -> int:
    # how many ids the two lists begin with alike
    n = 0
    for a, b in zip(ids, other):
        if a != b:
            break
        n += 1
    return n
