"""The clean-ups of tokenization spaces: llama.cpp's and Hugging Face's.

llama.cpp's runs on decoded bytes in three byte-level passes (as ``llama_detokenize`` with ``clean_spaces``), so a
stream can clean what it holds in pieces cut between two bytes outside
:data:`CLEAN_UP_BYTES` (see :class:`fasttok.decoders.stream.CleanUpStream`).
Every pass only deletes spaces, so :func:`clean_up_spaces_kept` can say which
bytes of the input survive (what ``decode_with_offsets`` needs).
Hugging Face ``tokenizers``' (:func:`clean_up_tokenization`, used by its
WordPiece and CTC decoders) is a different chain of string replacements, run
on each token.
"""

from __future__ import annotations

import re

__all__ = ["clean_up_spaces", "clean_up_spaces_kept", "CLEAN_UP_BYTES", "clean_up_tokenization"]


def clean_up_spaces(data: bytes) -> bytes:
    """llama.cpp's detokenizer clean-up (``clean_spaces``), three passes over the bytes.

    Drops the space before ``? ! . ,``, turns ``" ' "`` into ``"'"``, and drops
    the space before ``'s 'm 're 've`` (not ``'t 'd 'll``).

    >>> clean_up_spaces(b"Hello , world ! it 's ok , isn 't it ' cool '")
    b"Hello, world! it's ok, isn 't it'cool '"
    """
    for pattern, replacement, _ in _PASSES:
        data = pattern.sub(replacement, data)
    return data


def clean_up_spaces_kept(data: bytes) -> tuple:
    """``(clean_up_spaces(data), kept)``: ``kept`` lists, in order, the index
    in ``data`` of each byte of the cleaned bytes.

    >>> clean_up_spaces_kept(b"it ' s ,")
    (b"it's,", [0, 1, 3, 5, 7])
    """
    kept = list(range(len(data)))
    for pattern, _, dropped in _PASSES:
        cuts = [m.start() + d for m in pattern.finditer(data) for d in dropped]
        if not cuts:
            continue
        parts, where, start = [], [], 0
        for cut in cuts:
            parts.append(data[start:cut])
            where += kept[start:cut]
            start = cut + 1
        parts.append(data[start:])
        where += kept[start:]
        data, kept = b"".join(parts), where
    return data, kept


# The bytes clean-up looks at; between two bytes outside this set no clean-up
# pattern can match across, so a text may be cleaned in pieces cut there.
CLEAN_UP_BYTES = frozenset(b" '?!.,")

# (pattern, replacement, offsets in a match of the bytes it deletes), in
# llama.cpp's order
_PASSES = (
    (re.compile(rb" (?=[?!.,])"), b"", (0,)),
    (re.compile(rb" ' "), b"'", (0, 2)),
    (re.compile(rb" (?='(?:[sm]|re|ve))"), b"", (0,)),
)


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
