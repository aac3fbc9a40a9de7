"""The common vocabulary record every loader produces.

A loader (``.tiktoken``, SentencePiece ``.model``, GGUF, ``tokenizer.json``)
turns its file into one :class:`Vocabulary`; the registry then picks the
compiled model for ``vocab.model``. Nothing here depends on the file format.

Token ids index :attr:`Vocabulary.tokens`. An id that is not an ordinary
token (a special token or a hole in the id space, like rank 50256 of
``p50k_base``) holds ``None`` there.

>>> v = Vocabulary(name="tiny", model="byte_bpe",
...                tokens=tuple(bytes([b]) for b in range(256)) + (b"ab",),
...                special_tokens={"<|end|>": 257})
>>> v.validate().n_vocab
258
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Optional

from .errors import VocabularyError

__all__ = ["Vocabulary", "TokenType"]


class TokenType:
    """Token kinds, numbered as SentencePiece and GGUF number them.

    >>> TokenType.CONTROL
    3
    """

    UNDEFINED = 0
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


def _frozen_mapping(value: Optional[Mapping]) -> Mapping:
    return MappingProxyType(dict(value or {}))


@dataclasses.dataclass(frozen=True)
class Vocabulary:
    """One vocabulary, whatever file it came from.

    Fields that a format does not have stay at their defaults. ``ranks`` is
    the merge priority of each ordinary token for byte-level BPE (lower merges
    first); ``None`` means the id itself is the rank, as in ``.tiktoken`` files.
    Never assume a single byte's rank equals its byte value.

    >>> v = Vocabulary(name="t", model="byte_bpe", tokens=(b"a", b"b", b"ab"))
    >>> v.n_vocab, v.max_token_value
    (3, 2)
    """

    name: str
    model: str
    tokens: tuple
    ranks: Optional[tuple] = None
    scores: Optional[tuple] = None
    token_types: Optional[tuple] = None
    merges: Optional[tuple] = None
    special_tokens: Mapping = dataclasses.field(default_factory=dict)
    pattern: Optional[str] = None
    pre_tokenizer: Optional[str] = None
    normalizer: Optional[str] = None
    precompiled_charsmap: Optional[bytes] = None
    add_dummy_prefix: bool = False
    remove_extra_whitespaces: bool = False
    escape_whitespaces: bool = False
    byte_fallback: bool = False
    bos_id: Optional[int] = None
    eos_id: Optional[int] = None
    unk_id: Optional[int] = None
    pad_id: Optional[int] = None
    sep_id: Optional[int] = None
    mask_id: Optional[int] = None
    add_bos: bool = False
    add_eos: bool = False
    add_sep: bool = False
    explicit_n_vocab: Optional[int] = None
    byte_level: bool = True
    source: str = ""
    metadata: Mapping = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tokens", tuple(self.tokens))
        object.__setattr__(self, "special_tokens", _frozen_mapping(self.special_tokens))
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))
        for name in ("ranks", "scores", "token_types", "merges"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(value))

    def __reduce__(self) -> tuple:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields["special_tokens"] = dict(self.special_tokens)
        fields["metadata"] = dict(self.metadata)
        return (_rebuild, (fields,))

    @property
    def n_vocab(self) -> int:
        """Largest id (ordinary or special) plus one, as tiktoken counts it."""
        return self.max_token_value + 1

    @property
    def max_token_value(self) -> int:
        """The largest id in use.

        >>> Vocabulary(name="t", model="byte_bpe", tokens=(b"a",),
        ...            special_tokens={"<s>": 9}).max_token_value
        9
        """
        top = len(self.tokens) - 1
        while top >= 0 and self.tokens[top] is None:
            top -= 1
        if self.special_tokens:
            top = max(top, max(self.special_tokens.values()))
        return top

    @property
    def mergeable_ranks(self) -> dict:
        """``{token bytes: rank}`` for the ordinary tokens, tiktoken's view.

        >>> Vocabulary(name="t", model="byte_bpe", tokens=(b"x", None, b"y")).mergeable_ranks
        {b'x': 0, b'y': 2}
        """
        ranks = self.ranks
        return {tok: (i if ranks is None else ranks[i])
                for i, tok in enumerate(self.tokens) if tok is not None}

    def validate(self) -> "Vocabulary":
        """Check the record is consistent and return it.

        Rejects duplicate token bytes or ranks among ordinary tokens, special
        ids that collide with ordinary tokens or each other, a byte-level
        vocabulary without all 256 single bytes, and an ``explicit_n_vocab``
        that does not match.

        >>> Vocabulary(name="t", model="byte_bpe", tokens=(b"a", b"a"),
        ...            byte_level=False).validate()
        Traceback (most recent call last):
        fasttok.errors.VocabularyError: t: token bytes b'a' appear at ids 0 and 1
        """
        present = [t for t in self.tokens if t is not None]
        if not set(map(type, present)) <= {bytes}:
            i, tok = next((i, t) for i, t in enumerate(self.tokens)
                          if t is not None and type(t) is not bytes)
            raise VocabularyError(f"{self.name}: token {i} is {type(tok).__name__}, not bytes")
        distinct = set(present)
        if self.model == "byte_bpe" and len(distinct) != len(present):
            first: dict = {}
            for i, tok in enumerate(self.tokens):
                if tok is not None and tok in first:
                    raise VocabularyError(
                        f"{self.name}: token bytes {tok!r} appear at ids {first[tok]} and {i}")
                first.setdefault(tok, i)
        if self.ranks is not None:
            if len(self.ranks) != len(self.tokens):
                raise VocabularyError(f"{self.name}: {len(self.ranks)} ranks for {len(self.tokens)} tokens")
            used: dict = {}
            for i, rank in enumerate(self.ranks):
                if self.tokens[i] is None:
                    continue
                if rank in used:
                    raise VocabularyError(f"{self.name}: rank {rank} is given to ids {used[rank]} and {i}")
                used[rank] = i
        for label, values in (("scores", self.scores), ("token_types", self.token_types)):
            if values is not None and len(values) != len(self.tokens):
                raise VocabularyError(f"{self.name}: {len(values)} {label} for {len(self.tokens)} tokens")
        # Two special strings may share an id (o200k_harmony's 200018 does in
        # tiktoken); decoding gives the first one.
        for text, sid in self.special_tokens.items():
            if not isinstance(sid, int) or sid < 0 or sid >= 2**32 - 1:
                raise VocabularyError(f"{self.name}: special token {text!r} has invalid id {sid!r}")
            if self.model == "byte_bpe" and sid < len(self.tokens) and self.tokens[sid] is not None:
                raise VocabularyError(
                    f"{self.name}: special token {text!r} id {sid} is also the ordinary token {self.tokens[sid]!r}")
        if self.model == "byte_bpe" and self.byte_level:
            missing = [b for b in range(256) if bytes([b]) not in distinct]
            if missing:
                raise VocabularyError(
                    f"{self.name}: byte-level vocabulary lacks single-byte tokens for "
                    f"{len(missing)} bytes (first: 0x{missing[0]:02x})")
        if self.explicit_n_vocab is not None:
            ordinary = len(present)
            if ordinary + len(self.special_tokens) != self.explicit_n_vocab:
                raise VocabularyError(
                    f"{self.name}: explicit_n_vocab is {self.explicit_n_vocab} but there are "
                    f"{ordinary} ordinary and {len(self.special_tokens)} special tokens")
            if self.max_token_value != self.explicit_n_vocab - 1:
                raise VocabularyError(
                    f"{self.name}: explicit_n_vocab is {self.explicit_n_vocab} but the largest id is "
                    f"{self.max_token_value}")
        return self


def _rebuild(fields: dict) -> Vocabulary:
    return Vocabulary(**fields)
