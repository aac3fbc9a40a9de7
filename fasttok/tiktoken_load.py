"""tiktoken's ``tiktoken.load`` functions: read and write rank files, convert GPT-2's files.

``fasttok.load`` is already the function that loads any vocabulary file, so
tiktoken's module of that name lives here (and its functions are exported
from :mod:`fasttok` too).

Differences from tiktoken, all deliberate: only local paths are read (a URL
is answered by the file of that name on :func:`fasttok.registry.vocab_search_path`,
never downloaded), nothing needs ``requests`` or ``blobfile``, and a
malformed file raises :class:`~fasttok.errors.VocabularyFileError` (a
``ValueError``) naming the line, where tiktoken accepts repeated tokens or
ranks and fails a ``data_gym`` mismatch with ``AssertionError``.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "t.tiktoken")
>>> dump_tiktoken_bpe({b"a": 0, b"b": 1}, path)
>>> load_tiktoken_bpe(path)
{b'a': 0, b'b': 1}
"""

from __future__ import annotations

import os
from typing import Optional

from fasttok.errors import VocabularyFileError

# The readers and the writer are imported by the function that uses them:
# `import fasttok` re-exports these functions, and hashlib (the reader's
# sha256 check, ~2 ms with OpenSSL) and the writer's modules would otherwise
# be paid by every program that never reads a .tiktoken file.

__all__ = ["load_tiktoken_bpe", "dump_tiktoken_bpe", "data_gym_to_mergeable_bpe_ranks"]


def _local(blobpath: str) -> str:
    # a URL stands for the file of its last path segment on fasttok's search path
    if "://" not in blobpath:
        return blobpath
    from fasttok.registry import find_vocab_file

    return find_vocab_file(blobpath.rstrip("/").rsplit("/", 1)[-1])


def _read(blobpath: str, expected_hash: Optional[str]) -> bytes:
    from fasttok.loaders.tiktoken_file import read_source

    return read_source(_local(blobpath), expected_hash)[0]


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: Optional[str] = None) -> dict:
    """``{token bytes: rank}`` of a ``.tiktoken`` file, its sha256 checked when
    ``expected_hash`` is given.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.tiktoken")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"YQ== 0\\nYQ== 1\\n")
    >>> load_tiktoken_bpe(path)                          # doctest: +ELLIPSIS
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: ...t.tiktoken: line 2: token b'a' already has rank 0
    """
    from fasttok.loaders.tiktoken_file import load_tiktoken_ranks

    path = _local(tiktoken_bpe_file)
    return load_tiktoken_ranks(path, expected_hash)


def dump_tiktoken_bpe(bpe_ranks: dict, tiktoken_bpe_file: str) -> None:
    """Write ``{token bytes: rank}`` as a ``.tiktoken`` file, in rank order
    (the inverse of :func:`load_tiktoken_bpe`)."""
    from fasttok.loaders.tiktoken_writer import write_tiktoken

    write_tiktoken(tiktoken_bpe_file, bpe_ranks)


def _data_gym_alphabet() -> dict:
    # GPT-2's printable stand-in for every byte: the printable Latin-1
    # characters but space stand for themselves, the other bytes are
    # U+0100, U+0101, ... in byte order. Returns {stand-in char: byte}, in
    # rank order (the stand-ins first, then the rest).
    own = [b for b in range(256) if chr(b).isprintable() and b != 0x20]
    others = [b for b in range(256) if b not in set(own)]
    alphabet = {chr(b): b for b in own}
    alphabet.update((chr(256 + k), b) for k, b in enumerate(others))
    return alphabet


def data_gym_to_mergeable_bpe_ranks(vocab_bpe_file: str, encoder_json_file: str,
                                    vocab_bpe_hash: Optional[str] = None,
                                    encoder_json_hash: Optional[str] = None,
                                    clobber_one_byte_tokens: bool = False) -> dict:
    """Ranks from GPT-2's ``vocab.bpe`` (merges) and ``encoder.json`` (ids), as tiktoken builds them.

    The 256 single bytes rank first (in the order of GPT-2's byte alphabet),
    then each merge of ``vocab.bpe`` in file order; ``encoder.json`` must
    give every token the same rank (``<|endoftext|>`` and ``<|startoftext|>``
    aside), else :class:`~fasttok.errors.VocabularyFileError`.
    ``clobber_one_byte_tokens=True`` takes the single bytes' ranks from
    ``encoder.json`` instead.
    """
    import json

    alphabet = _data_gym_alphabet()

    def to_bytes(value: str, source: str) -> bytes:
        try:
            return bytes(alphabet[c] for c in value)
        except KeyError as exc:
            raise VocabularyFileError(source, f"{value!r} holds {exc.args[0]!r}, which is not "
                                      "one of GPT-2's byte stand-ins") from None

    ranks = {bytes([b]): rank for rank, b in enumerate(alphabet.values())}
    merges = _read(vocab_bpe_file, vocab_bpe_hash).decode("utf-8").split("\n")[1:-1]
    for number, line in enumerate(merges, start=2):
        parts = line.split()
        if len(parts) != 2:
            raise VocabularyFileError(vocab_bpe_file, f"expected two tokens, found {line[:60]!r}",
                                      line=number)
        ranks[to_bytes(parts[0], vocab_bpe_file) + to_bytes(parts[1], vocab_bpe_file)] = len(ranks)
    try:
        encoder = json.loads(_read(encoder_json_file, encoder_json_hash))
    except ValueError as exc:
        if isinstance(exc, VocabularyFileError):
            raise
        raise VocabularyFileError(encoder_json_file, f"not JSON: {exc}") from None
    ids = {to_bytes(k, encoder_json_file): v for k, v in encoder.items()}
    ids.pop(b"<|endoftext|>", None)
    ids.pop(b"<|startoftext|>", None)
    if clobber_one_byte_tokens:
        ranks.update((token, rank) for token, rank in ids.items() if len(token) == 1)
    if ranks != ids:
        differ = next((t for t in ranks if ids.get(t) != ranks[t]), None)
        if differ is None:
            differ = next(t for t in ids if t not in ranks)
        raise VocabularyFileError(
            encoder_json_file, f"does not match {os.path.basename(vocab_bpe_file)}: token "
            f"{differ!r} has id {ids.get(differ)} there and rank {ranks.get(differ)} from the merges")
    return ranks
