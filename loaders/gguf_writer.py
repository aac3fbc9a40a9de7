"""Writer of vocabulary-only GGUF files for byte-level BPE (the inverse of :mod:`fasttok.loaders.gguf` for ``gpt2``).

What llama.cpp reads from a GGUF to tokenize, and nothing else: no
tensors. ``tokenizer.ggml.model`` is ``gpt2``; the tokens and merges are
written in GPT-2's byte-level alphabet; special tokens are ``CONTROL``
tokens. GGUF cannot hold a regex: llama.cpp picks its pre-tokenizer by the
name in ``tokenizer.ggml.pre``, so only a pattern some name splits exactly
like can be written (:data:`PRE_FOR_PATTERN`; cl100k's, written as
``llama-bpe``, also makes llama.cpp emit a piece that is itself a token
whole, which is what tiktoken does). o200k's is not among them: llama.cpp's
``gpt-4o`` splits a letter from the combining marks after it ("a" + U+0308
is two pieces there, one in tiktoken); ``pre="gpt-4o"`` writes it anyway.

llama.cpp loads a model architecture before the vocabulary even with
``vocab_only``, so the file names ``llama`` and the few hyper-parameters
its loader requires, as the vocabulary files in llama.cpp's own ``models/``
do. Without the keys llama.cpp assumes a ``gpt2`` vocabulary starts every
text with id 11 and stops at it, so ``add_bos_token`` is always written and
the ids of beginning and end default to the vocabulary's own.

An id no token holds (ranks may have gaps) is written as a placeholder
spelled outside the byte-level alphabet, typed ``UNUSED``: no text can
produce it, and fasttok reads it back as decode-only.

>>> import fasttok
>>> enc = fasttok.train(["ab ab"], vocab_size=258, special_tokens=["<|end|>"])
>>> gguf_bytes(enc.vocabulary)[:4]
b'GGUF'
"""

from __future__ import annotations

import os
import struct
from typing import IO, Optional, Union

from fasttok.errors import FasttokError
from fasttok.loaders.gguf import GGUFType
from fasttok.pre_tokenizers.tiktoken_patterns import CL100K, CL100K_LEGACY, GPT2, GPT2_LEGACY
from fasttok.shared._bytemap import encode_byte_level
from fasttok.shared.atomic_write import write_atomically
from fasttok.vocab import TokenType, Vocabulary

__all__ = ["write_gguf", "gguf_bytes", "PRE_FOR_PATTERN"]

# pattern -> the tokenizer.ggml.pre whose regex list splits every text the
# same (checked by the tests: a written file reads back and encodes alike)
PRE_FOR_PATTERN = {
    GPT2: "gpt-2",
    GPT2_LEGACY: "gpt-2",
    CL100K: "llama-bpe",
    CL100K_LEGACY: "llama-bpe",
}

_VERSION = 3
_ALIGNMENT = 32
# the hyper-parameters llama.cpp's loader requires of a "llama" model
_ARCHITECTURE = (
    ("llama.context_length", GGUFType.UINT32, 4096),
    ("llama.embedding_length", GGUFType.UINT32, 64),
    ("llama.block_count", GGUFType.UINT32, 1),
    ("llama.feed_forward_length", GGUFType.UINT32, 64),
    ("llama.attention.head_count", GGUFType.UINT32, 1),
    ("llama.attention.head_count_kv", GGUFType.UINT32, 1),
    ("llama.rope.dimension_count", GGUFType.UINT32, 64),
    ("llama.attention.layer_norm_rms_epsilon", GGUFType.FLOAT32, 1e-5),
)
_SCALAR = {GGUFType.UINT32: "<I", GGUFType.INT32: "<i", GGUFType.FLOAT32: "<f",
           GGUFType.BOOL: "<?"}


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _entry(key: str, vtype: int, value) -> bytes:
    head = _string(key) + struct.pack("<I", vtype)
    if vtype == GGUFType.STRING:
        return head + _string(value)
    return head + struct.pack(_SCALAR[vtype], value)


def _string_array(key: str, items: list) -> bytes:
    return (_string(key) + struct.pack("<IIQ", GGUFType.ARRAY, GGUFType.STRING, len(items))
            + b"".join(map(_string, items)))


def _int32_array(key: str, items: list) -> bytes:
    return (_string(key) + struct.pack("<IIQ", GGUFType.ARRAY, GGUFType.INT32, len(items))
            + struct.pack(f"<{len(items)}i", *items))


def _token_table(vocab: Vocabulary) -> tuple:
    # (texts, types) with one entry per id, 0 .. the largest id
    ranks = vocab.mergeable_ranks
    size = 1 + max([*ranks.values(), *vocab.special_tokens.values()], default=-1)
    texts: list = [None] * size
    types = [TokenType.UNUSED] * size
    for token, rank in ranks.items():
        texts[rank] = encode_byte_level(token)
        types[rank] = TokenType.NORMAL
    for text, token_id in vocab.special_tokens.items():
        if texts[token_id] is not None:
            raise FasttokError(f"special token {text!r} has id {token_id}, which the "
                               "vocabulary also gives an ordinary token")
        texts[token_id] = text
        types[token_id] = TokenType.CONTROL
    for i, text in enumerate(texts):
        if text is None:
            texts[i] = f"<unused {i}>"  # a space: outside the byte-level alphabet
    return texts, types


def _special_id(vocab: Vocabulary, token: Optional[str], fallback: Optional[int],
                role: str) -> Optional[int]:
    if token is None:
        return fallback
    if token not in vocab.special_tokens:
        raise FasttokError(f"{role} token {token!r} is not one of the vocabulary's special "
                           f"tokens ({', '.join(map(repr, vocab.special_tokens)) or 'none'})")
    return vocab.special_tokens[token]


def gguf_bytes(vocab: Vocabulary, *, pre: Optional[str] = None, bos_token: Optional[str] = None,
               eos_token: Optional[str] = None, add_bos: bool = False) -> bytes:
    """The GGUF file for a byte-level BPE ``vocab`` with a merge list.

    ``pre`` is the ``tokenizer.ggml.pre`` to record (default: the one for
    the vocabulary's pattern, :data:`PRE_FOR_PATTERN`); ``bos_token`` and
    ``eos_token`` name special tokens for those roles, and ``add_bos``
    makes llama.cpp start every text with the first.

    >>> plain = Vocabulary.from_ranks("x", {b"a": 0}, pat_str="a", special_tokens={})
    >>> gguf_bytes(plain.replace(merges=()))
    Traceback (most recent call last):
    fasttok.errors.FasttokError: GGUF names its pre-tokenizer, it cannot hold a pattern: fasttok writes a vocabulary whose pattern is r50k_base's or cl100k_base's (or give pre=, knowing llama.cpp will split as that name says)
    """
    if vocab.model != "byte_bpe" or not vocab.byte_level:
        raise FasttokError(f"a GGUF vocabulary is written from byte-level BPE, not "
                           f"{vocab.model!r}")
    if vocab.merges is None:
        raise FasttokError("the vocabulary has no merge list, which a gpt2 GGUF needs "
                           "(train it with fasttok.train, or load a tokenizer.json)")
    if pre is None:
        pre = PRE_FOR_PATTERN.get(vocab.pattern)
        if pre is None:
            raise FasttokError(
                "GGUF names its pre-tokenizer, it cannot hold a pattern: fasttok writes a "
                "vocabulary whose pattern is r50k_base's or cl100k_base's (or give pre=, "
                "knowing llama.cpp will split as that name says)")
    bos = _special_id(vocab, bos_token, vocab.bos_id, "bos")
    eos = _special_id(vocab, eos_token, vocab.eos_id, "eos")
    if add_bos and bos is None:
        raise FasttokError("add_bos needs a bos_token")
    texts, types = _token_table(vocab)
    merges = [f"{encode_byte_level(a)} {encode_byte_level(b)}" for a, b in vocab.merges]
    entries = [
        _entry("general.architecture", GGUFType.STRING, "llama"),
        _entry("general.name", GGUFType.STRING, vocab.name),
        *(_entry(key, vtype, value) for key, vtype, value in _ARCHITECTURE),
        _entry("llama.vocab_size", GGUFType.UINT32, len(texts)),
        _entry("tokenizer.ggml.model", GGUFType.STRING, "gpt2"),
        _entry("tokenizer.ggml.pre", GGUFType.STRING, pre),
        _string_array("tokenizer.ggml.tokens", texts),
        _int32_array("tokenizer.ggml.token_type", types),
        _string_array("tokenizer.ggml.merges", merges),
        _entry("tokenizer.ggml.add_bos_token", GGUFType.BOOL, add_bos),
        _entry("tokenizer.ggml.add_eos_token", GGUFType.BOOL, False),
    ]
    for key, token_id in (("tokenizer.ggml.bos_token_id", bos),
                          ("tokenizer.ggml.eos_token_id", eos)):
        if token_id is not None:
            entries.append(_entry(key, GGUFType.UINT32, token_id))
    body = struct.pack("<4sIQQ", b"GGUF", _VERSION, 0, len(entries)) + b"".join(entries)
    return body + bytes(-len(body) % _ALIGNMENT)


def write_gguf(target: Union[str, "os.PathLike[str]", IO[bytes]], vocab: Vocabulary,
               **options) -> None:
    """Write :func:`gguf_bytes` (same ``options``) to a path (replaced all at
    once, see :mod:`fasttok.shared.atomic_write`) or a binary file object.

    >>> import io, fasttok
    >>> out = io.BytesIO(); write_gguf(out, fasttok.train([], vocab_size=256).vocabulary)
    >>> len(out.getvalue()) % 32
    0
    """
    data = gguf_bytes(vocab, **options)
    if hasattr(target, "write"):
        target.write(data)
        return
    write_atomically(target, data)
