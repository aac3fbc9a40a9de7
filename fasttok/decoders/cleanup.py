"""The clean-ups of tokenization spaces: llama.cpp's and Hugging Face's.

llama.cpp's runs on decoded bytes in three byte-level passes (as
``llama_detokenize`` with ``clean_spaces``). Each pass decides a byte by
looking at most three bytes ahead, so :class:`SpaceCleaner` runs the passes
one after the other over bytes that arrive in pieces, holding back in each
pass only the tail that a later byte could still turn into a match (what a
stream needs). Every pass only deletes spaces, so
:func:`clean_up_spaces_kept` can say which bytes of the input survive (what
``decode_with_offsets`` needs).
Hugging Face ``tokenizers``' (:func:`clean_up_tokenization`, used by its
WordPiece and CTC decoders) is a different chain of string replacements, run
on each token.
"""

from __future__ import annotations

import re
from array import array

from fasttok.decoders.joined import join_bytes

__all__ = ["clean_up_spaces", "clean_up_spaces_kept", "SpaceCleaner", "clean_up_tokenization"]


def clean_up_spaces(data: bytes) -> bytes:
    """llama.cpp's detokenizer clean-up (``clean_spaces``), three passes over the bytes.

    Drops the space before ``? ! . ,``, turns ``" ' "`` into ``"'"``, and drops
    the space before ``'s 'm 're 've`` (not ``'t 'd 'll``).

    >>> clean_up_spaces(b"Hello , world ! it 's ok , isn 't it ' cool '")
    b"Hello, world! it's ok, isn 't it'cool '"
    """
    for pattern, replacement, _, _, _ in _PASSES:
        data = pattern.sub(replacement, data)
    return data


def clean_up_spaces_kept(data: bytes) -> tuple:
    """``(clean_up_spaces(data), kept)``: ``kept`` lists, in order, the index
    in ``data`` of each byte of the cleaned bytes (an ``array('q')``: 8 bytes
    an entry, where a list of ints held 36).

    >>> data, kept = clean_up_spaces_kept(b"it ' s ,")
    >>> data, kept.tolist()
    (b"it's,", [0, 1, 3, 5, 7])
    """
    kept = array("q", range(len(data)))
    for pattern, _, dropped, _, _ in _PASSES:
        cuts = [m.start() + d for m in pattern.finditer(data) for d in dropped]
        if not cuts:
            continue
        parts, where, start = [], array("q"), 0
        for cut in cuts:
            parts.append(data[start:cut])
            where += kept[start:cut]
            start = cut + 1
        parts.append(data[start:])
        where += kept[start:]
        data, kept = join_bytes(parts), where
    return data, kept


class SpaceCleaner:
    """:func:`clean_up_spaces` of bytes that arrive in pieces.

    ``feed(data)`` returns the cleaned bytes that no later byte can change;
    ``feed(data, final=True)`` ends the input and returns the rest. Each pass
    keeps back only the tail of what it was given that a later byte could
    still complete into one of its matches (a space that ``.`` could follow,
    ``" '"`` that ``s`` could follow), and a pass knows which bytes the pass
    before it can still give (a space it holds is followed by a space or by
    what follows it when deleted), so the held bytes are exactly those a
    later byte could still delete (or that follow one of them), at most four
    (``"  ' "``: ``s`` after it deletes its spaces; 1 + 2 + 3 bounds the
    passes' tails, and no input of up to seven bytes holds more); each byte
    is scanned a bounded number of times.

    >>> c = SpaceCleaner()
    >>> [c.feed(p) for p in (b"Hi", b" ", b",", b" it", b" '", b"s")], c.feed(b"", final=True)
    ([b'Hi', b'', b',', b' it', b'', b"'s"], b'')
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = [b""] * len(_PASSES)

    def feed(self, data: bytes, final: bool = False) -> bytes:
        """The cleaned bytes ``data`` settles (all that is left when ``final``)."""
        held = self._held
        if not final and not any(held) and b" " not in data[-_LONGEST_START:] \
                and _MATCH_START.search(data) is None:
            return data  # most pieces: no pass matches in them or waits on them
        coming = None  # the bytes the pass's input may go on with; None: any
        for k, (pattern, replacement, _, starts, after_deleted) in enumerate(_PASSES):
            if held[k] or b" " in data:  # every match starts with a space
                buf = held[k] + data
                cut = len(buf)
                if not final and b" " in buf[-_LONGEST_START:]:
                    # hold the longest tail, after the last match, that a
                    # byte still to come could complete into a match
                    end = 0
                    for match in pattern.finditer(buf):
                        end = match.end()
                    for n in range(min(_LONGEST_START, cut - end), 0, -1):
                        then = starts.get(buf[-n:])
                        if then is not None and (coming is None or not then.isdisjoint(coming)):
                            cut -= n
                            break
                held[k] = buf[cut:]
                data = pattern.sub(replacement, buf[:cut])
            if held[k]:
                coming = _SPACE | after_deleted
            elif coming is not None and 32 in coming:
                coming = coming | after_deleted
        return data


_SPACE = frozenset(b" ")


def _pass(pattern: bytes, replacement: bytes, dropped: tuple, matched: tuple) -> tuple:
    # a clean-up pass: its regex, its replacement, the offsets in a match of
    # the bytes it deletes, each proper start of the byte strings it matches
    # (lookahead included: the tails a stream holds back) with the bytes that
    # continue it, and the bytes that follow a space it deletes
    starts: dict = {}
    for m in matched:
        for n in range(1, len(m)):
            starts.setdefault(m[:n], set()).add(m[n])
    return (re.compile(pattern), replacement, dropped, {t: frozenset(b) for t, b in starts.items()},
            frozenset(m[1] for m in matched))


# llama.cpp's passes, in its order
_PASSES = (
    _pass(rb" (?=[?!.,])", b"", (0,), (b" ?", b" !", b" .", b" ,")),
    _pass(rb" ' ", b"'", (0, 2), (b" ' ",)),
    _pass(rb" (?='(?:[sm]|re|ve))", b"", (0,), (b" 's", b" 'm", b" 're", b" 've")),
)
_LONGEST_START = max(len(t) for _, _, _, starts, _ in _PASSES for t in starts)
# the first two bytes of every match of every pass
_MATCH_START = re.compile(rb" [?!.,']")


def clean_up_tokenization(text: str) -> str:
    """``tokenizers``' clean-up (its WordPiece decoder's ``cleanup``): eleven
    replacements, in its order, each over the result of the one before.

    >>> clean_up_tokenization("it ' s , is n't it ? i do not know")
    "it's, isn't it? i don't know"
    """
    for old, new in _HF_REPLACEMENTS:
        text = text.replace(old, new)
    return text


# the order matters: " ' " -> "'" runs before the contractions see their space
_HF_REPLACEMENTS = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
    (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)
