"""llama.cpp's clean-up of tokenization spaces, run on decoded bytes.

Three byte-level passes (as ``llama_detokenize`` with ``clean_spaces``), so a
stream can clean what it holds in pieces cut between two bytes outside
:data:`CLEAN_UP_BYTES` (see :class:`fasttok.decoders.stream.CleanUpStream`).
"""

from __future__ import annotations

import re

__all__ = ["clean_up_spaces", "CLEAN_UP_BYTES"]


def clean_up_spaces(data: bytes) -> bytes:
    """llama.cpp's detokenizer clean-up (``clean_spaces``), three passes over the bytes.

    Drops the space before ``? ! . ,``, turns ``" ' "`` into ``"'"``, and drops
    the space before ``'s 'm 're 've`` (not ``'t 'd 'll``).

    >>> clean_up_spaces(b"Hello , world ! it 's ok , isn 't it ' cool '")
    b"Hello, world! it's ok, isn 't it'cool '"
    """
    data = _BEFORE_PUNCT.sub(b"", data)
    data = data.replace(b" ' ", b"'")
    return _BEFORE_CONTRACTION.sub(b"", data)


# The bytes clean-up looks at; between two bytes outside this set no clean-up
# pattern can match across, so a text may be cleaned in pieces cut there.
CLEAN_UP_BYTES = frozenset(b" '?!.,")

_BEFORE_PUNCT = re.compile(rb" (?=[?!.,])")
_BEFORE_CONTRACTION = re.compile(rb" (?='(?:[sm]|re|ve))")
