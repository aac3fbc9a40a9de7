"""Reader for tiktoken's ``.tiktoken`` rank files.

The format is one token per line: ``base64(token bytes) SP rank``. The rank
is both the token id and its merge priority; special tokens are not in the
file. Ranks need not be contiguous (``p50k_base`` has no rank 50256) and the
single bytes are not ranked in byte order.

>>> load_tiktoken_ranks(b"IQ== 0\\nIg== 1\\n")
{b'!': 0, b'"': 1}
"""

from __future__ import annotations

import binascii
import hashlib
import os
import re
from collections.abc import Mapping
from typing import Optional, Union

from fasttok.errors import VocabularyError, VocabularyFileError
from fasttok.vocab import MAX_ID, Vocabulary

__all__ = ["load_tiktoken_ranks", "load_tiktoken", "read_source"]

Source = Union[str, "os.PathLike[str]", bytes]


def read_source(source: Source, expected_sha256: Optional[str] = None) -> tuple[bytes, str]:
    """Return ``(data, name)`` for a path (decompressed if it ends in ``.gz``)
    or raw bytes, checking the sha256 of the data if given.

    >>> read_source(b"abc")[1]
    '<bytes>'
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), "<bytes>"
    else:
        name = os.fspath(source)
        try:
            with open(name, "rb") as f:
                data = f.read()
            if name.endswith(".gz"):  # fasttok ships its rank files gzip-compressed
                import gzip  # here: 0.7 ms that a load from the table cache never needs
                import zlib
                try:
                    data = gzip.decompress(data)
                except (EOFError, zlib.error) as exc:  # a truncated or corrupt stream
                    raise VocabularyFileError(name, f"not a complete gzip stream: {exc}") from exc
        except OSError as exc:  # gzip.BadGzipFile is one
            raise VocabularyFileError(name, f"cannot read the file: {exc.strerror or exc}") from exc
    if expected_sha256 is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != expected_sha256.lower():
            raise VocabularyFileError(
                name, f"sha256 is {got}, expected {expected_sha256}; the file is damaged or "
                "not the one this encoding was built from (delete it and fetch it again)")
    return data, name


def load_tiktoken_ranks(source: Source, expected_sha256: Optional[str] = None) -> dict:
    """Parse a ``.tiktoken`` file (path or bytes) into ``{token bytes: rank}``.

    Every malformed line raises :class:`~fasttok.errors.VocabularyFileError`
    naming the file and the line: a missing or non-numeric rank, invalid
    base64, a repeated token or rank. A token of padding alone (``=``) is
    the empty token, as tiktoken reads it (Whisper's files rank it).

    >>> load_tiktoken_ranks(b"IQ== 0\\nIQ== 1\\n")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: <bytes>: line 2: token b'!' already has rank 0
    """
    data, name = read_source(source, expected_sha256)
    ranks = _parse_bulk(data)
    return ranks if ranks is not None else _parse_lines(data, name)


_BASE64_AND_LAYOUT = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \r\n"
_PADDING_INSIDE = re.compile(rb"=[^=\s]")


def _parse_bulk(data: bytes) -> "dict | None":
    # A file that is well formed as a whole (only base64 and layout bytes,
    # padding only at the end of a token, so a token of padding alone is the
    # empty one, one space and two fields a line,
    # ranks that int() reads, as tiktoken reads them) is parsed with C-level
    # bulk operations, several times
    # faster than line by line. Anything else returns None and goes through
    # the line parser, which finds and names the first bad line.
    if data.translate(None, _BASE64_AND_LAYOUT) or _PADDING_INSIDE.search(data):
        return None
    if b" =" in data:
        return None
    fields = data.split()
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if not fields or len(fields) != 2 * lines or data.count(b" ") != lines:
        return None
    try:
        tokens = list(map(binascii.a2b_base64, fields[0::2]))
        numbers = list(map(int, fields[1::2]))
    except (binascii.Error, ValueError):
        return None
    ranks = dict(zip(tokens, numbers))
    if (len(ranks) != len(tokens) or len(set(numbers)) != len(numbers)
            or min(numbers) < 0 or max(numbers) > MAX_ID):
        return None
    return ranks


_MAX_ID_DIGITS = len(str(MAX_ID))


def _rank_value(digits: bytes) -> Optional[int]:
    # The rank a run of ASCII digits spells, or None above MAX_ID. The
    # length is checked first: int() of a long enough run is slow (and past
    # 4300 digits refused with a message that names no file).
    significant = digits.lstrip(b"0") or b"0"
    if len(significant) > _MAX_ID_DIGITS:
        return None
    rank = int(significant)
    return rank if rank <= MAX_ID else None


def _shown(digits: bytes) -> str:
    # a rank for an error message: the digits, or their count when there are many
    text = digits.decode("ascii")
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} digits)"


def _parse_lines(data: bytes, name: str) -> dict:
    ranks: dict = {}
    seen_ranks: set = set()
    a2b = binascii.a2b_base64
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise VocabularyFileError(
                name, f"expected 'base64-token rank', found {len(fields)} fields: {line[:60]!r}",
                line=number)
        encoded, rank_text = fields
        if not rank_text.isdigit():
            raise VocabularyFileError(name, f"rank {rank_text[:20]!r} is not a non-negative integer",
                                      line=number)
        try:
            # padding alone is the empty token (Whisper's "= 50256"), which
            # tiktoken reads as b"" and ranks like any other
            token = b"" if not encoded.strip(b"=") else a2b(encoded, strict_mode=True)
        except (binascii.Error, ValueError) as exc:
            raise VocabularyFileError(name, f"invalid base64 token {encoded[:40]!r}: {exc}",
                                      line=number) from None
        rank = _rank_value(rank_text)
        if rank is None:
            raise VocabularyFileError(
                name, f"rank {_shown(rank_text)} does not fit in 32 bits (fasttok's ids are at "
                f"most {MAX_ID})", line=number)
        if token in ranks:
            raise VocabularyFileError(name, f"token {token!r} already has rank {ranks[token]}",
                                      line=number)
        if rank in seen_ranks:
            raise VocabularyFileError(name, f"rank {rank} appears twice", line=number)
        seen_ranks.add(rank)
        ranks[token] = rank
    if not ranks:
        raise VocabularyFileError(name, "no tokens: the file is empty or not a .tiktoken file")
    return ranks


def load_tiktoken(source: Source, *, name: Optional[str] = None, pat_str: str,
                  special_tokens: Optional[Mapping] = None, explicit_n_vocab: Optional[int] = None,
                  expected_sha256: Optional[str] = None) -> Vocabulary:
    """Load a ``.tiktoken`` file into a validated :class:`~fasttok.vocab.Vocabulary`.

    >>> v = load_tiktoken(b"".join(binascii.b2a_base64(bytes([b]), newline=False) + b" %d\\n" % b
    ...                             for b in range(256)), name="bytes", pat_str=".")
    >>> v.n_vocab, v.model
    (256, 'byte_bpe')
    """
    ranks = load_tiktoken_ranks(source, expected_sha256)
    label = "<bytes>" if isinstance(source, (bytes, bytearray, memoryview)) else os.fspath(source)
    if name is None:
        name = os.path.splitext(os.path.basename(label))[0]
    vocab = Vocabulary.from_ranks(name, ranks, pat_str=pat_str, special_tokens=special_tokens or {},
                                  explicit_n_vocab=explicit_n_vocab, source=label)
    try:
        return vocab.validate()
    except ValueError as exc:
        raise VocabularyFileError(label, str(exc)) from None
