"""The common vocabulary record every loader produces.

A loader (``.tiktoken``, SentencePiece ``.model``, GGUF, ``tokenizer.json``)
turns its file into one :class:`Vocabulary`; the registry then picks the
compiled model for ``vocab.model``. Nothing here depends on the file format.

Token ids index :attr:`Vocabulary.tokens`. An id that is not an ordinary
token (a special token or a hole in the id space, like rank 50256 of
``p50k_base``) holds ``None`` there. When the ids are spread out (a rank file
may rank a token 10**8 beside 256 others), a tuple by id would follow the
largest id instead of the number of tokens, so the record then lists the
tokens alone with their ids beside them (:attr:`Vocabulary.ids`, ascending);
:func:`ids_are_dense` is the rule that picks one form or the other.

>>> v = Vocabulary(name="tiny", model="byte_bpe",
...                tokens=tuple(bytes([b]) for b in range(256)) + (b"ab",),
...                special_tokens={"<|end|>": 257})
>>> v.validate().n_vocab
258
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Optional

from fasttok.errors import VocabularyError

__all__ = ["Vocabulary", "TokenType", "ids_are_dense", "MAX_ID"]

# The compiled models hold ids as 32-bit words and keep 2**32 - 1 to mark
# "no token", so this is the largest id a vocabulary may use.
MAX_ID = 2**32 - 2


def ids_are_dense(max_id: int, count: int) -> bool:
    """Whether ``count`` ids up to ``max_id`` are close enough together to be
    stored by id, holes and all: then the holes cost at most about as much
    as the ids themselves, plus a fixed allowance.

    >>> ids_are_dense(50_280, 50_281), ids_are_dense(10**8, 100_256)
    (True, False)
    """
    return max_id < 2 * count + 1024


def token_layout(pairs: list) -> tuple:
    """``(tokens, ids)`` of a record holding the ``(id, token bytes)`` pairs:
    one slot per id when the ids are dense (``ids`` is ``None``), else the
    tokens in id order beside their ids, so memory follows the token count.

    >>> token_layout([(0, b"a"), (2, b"c")])
    ((b'a', None, b'c'), None)
    >>> token_layout([(10**9, b"z"), (0, b"a")])
    ((b'a', b'z'), (0, 1000000000))
    """
    top = max((i for i, _ in pairs), default=-1)
    if ids_are_dense(top, len(pairs)):
        tokens: list = [None] * (top + 1)
        for i, token in pairs:
            tokens[i] = token
        return tuple(tokens), None
    by_id = sorted(pairs, key=lambda pair: pair[0])
    return tuple(token for _, token in by_id), tuple(i for i, _ in by_id)


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


def _tuple(value: Optional[Iterable]) -> Optional[tuple]:
    return None if value is None else tuple(value)


def _int_ids(special_tokens: Optional[Mapping]) -> Optional[Mapping]:
    # Any integer is an id (numpy.int64 from an array of ids, as tiktoken
    # takes it); anything else is left for validate() to name.
    if not special_tokens or all(type(i) is int for i in special_tokens.values()):
        return special_tokens
    return {text: operator.index(i) if hasattr(type(i), "__index__") and not isinstance(i, bool)
            else i for text, i in special_tokens.items()}


class Vocabulary:
    """One vocabulary, whatever file it came from: an immutable record
    (:meth:`replace` gives a changed copy), compared field by field.

    Fields that a format does not have stay at their defaults. ``ranks`` is
    the merge priority of each ordinary token for byte-level BPE (lower merges
    first); ``None`` means the id itself is the rank, as in ``.tiktoken`` files.
    Never assume a single byte's rank equals its byte value.

    ``ids``, when given (byte-level BPE only), is the id of each token, in
    ascending order, and ``tokens`` then holds no ``None``; a byte-level
    BPE token's rank is its id, so the tokens stay in rank order.

    ``template_ids`` are ids a post-processor adds that no token holds (a
    ``tokenizer.json`` template may name such ids; ``tokenizers`` emits them
    and decodes them to nothing): they count in ``n_vocab``.

    >>> v = Vocabulary(name="t", model="byte_bpe", tokens=(b"a", b"b", b"ab"))
    >>> v.n_vocab, v.max_token_value
    (3, 2)
    >>> Vocabulary(name="t", model="byte_bpe", tokens=(b"a", b"b"), ids=(0, 10**9)).n_vocab
    1000000001
    """

    # The fields, in order (FIELDS); the methods are written out rather than
    # made by dataclasses, whose import (inspect, ast, dis) and generated
    # methods (compiled from source at each import) took, with the
    # registry's records, 8 of the 18 ms of `import fasttok`.

    name: str
    model: str
    tokens: tuple
    ids: Optional[tuple]
    ranks: Optional[tuple]
    scores: Optional[tuple]
    token_types: Optional[tuple]
    merges: Optional[tuple]
    special_tokens: Mapping
    pattern: Optional[str]
    pre_tokenizer: Optional[str]
    normalizer: Optional[str]
    precompiled_charsmap: Optional[bytes]
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    byte_fallback: bool
    bos_id: Optional[int]
    eos_id: Optional[int]
    unk_id: Optional[int]
    pad_id: Optional[int]
    sep_id: Optional[int]
    mask_id: Optional[int]
    add_bos: bool
    add_eos: bool
    add_sep: bool
    explicit_n_vocab: Optional[int]
    template_ids: tuple
    byte_level: bool
    source: str
    metadata: Mapping

    def __init__(self, name: str, model: str, tokens: Iterable, ids: Optional[Iterable] = None,
                 ranks: Optional[Iterable] = None, scores: Optional[Iterable] = None,
                 token_types: Optional[Iterable] = None, merges: Optional[Iterable] = None,
                 special_tokens: Optional[Mapping] = None, pattern: Optional[str] = None,
                 pre_tokenizer: Optional[str] = None, normalizer: Optional[str] = None,
                 precompiled_charsmap: Optional[bytes] = None, add_dummy_prefix: bool = False,
                 remove_extra_whitespaces: bool = False, escape_whitespaces: bool = False,
                 byte_fallback: bool = False, bos_id: Optional[int] = None,
                 eos_id: Optional[int] = None, unk_id: Optional[int] = None,
                 pad_id: Optional[int] = None, sep_id: Optional[int] = None,
                 mask_id: Optional[int] = None, add_bos: bool = False, add_eos: bool = False,
                 add_sep: bool = False, explicit_n_vocab: Optional[int] = None,
                 template_ids: Iterable = (), byte_level: bool = True, source: str = "",
                 metadata: Optional[Mapping] = None) -> None:
        self.__dict__.update(
            name=name, model=model, tokens=tuple(tokens), ids=_tuple(ids), ranks=_tuple(ranks),
            scores=_tuple(scores), token_types=_tuple(token_types), merges=_tuple(merges),
            special_tokens=_frozen_mapping(_int_ids(special_tokens)), pattern=pattern,
            pre_tokenizer=pre_tokenizer, normalizer=normalizer,
            precompiled_charsmap=precompiled_charsmap, add_dummy_prefix=add_dummy_prefix,
            remove_extra_whitespaces=remove_extra_whitespaces,
            escape_whitespaces=escape_whitespaces, byte_fallback=byte_fallback, bos_id=bos_id,
            eos_id=eos_id, unk_id=unk_id, pad_id=pad_id, sep_id=sep_id, mask_id=mask_id,
            add_bos=add_bos, add_eos=add_eos, add_sep=add_sep, explicit_n_vocab=explicit_n_vocab,
            template_ids=tuple(template_ids), byte_level=byte_level, source=source,
            metadata=_frozen_mapping(metadata))

    def _values(self) -> tuple:
        fields = self.__dict__
        return tuple(fields[name] for name in FIELDS)

    def replace(self, **changes: Any) -> "Vocabulary":
        """A copy with ``changes`` (field name -> value), as ``dataclasses.replace``.

        >>> v = Vocabulary(name="t", model="byte_bpe", tokens=(b"a",))
        >>> v.replace(name="u").name, v.name
        ('u', 't')
        """
        return type(self)(**dict(zip(FIELDS, self._values()), **changes))

    # copy.replace (Python 3.13) calls it by this name
    __replace__ = replace

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    # equal records may hold unhashable mappings: no hash, as the frozen dataclass it was
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(FIELDS, self._values()))
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a Vocabulary is immutable; "
                             f"vocab.replace({name}=...) gives a changed copy")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a Vocabulary is immutable")

    @classmethod
    def from_ranks(cls, name: str, mergeable_ranks: Mapping, *, pat_str: str,
                   special_tokens: Mapping, explicit_n_vocab: Optional[int] = None,
                   source: str = "") -> "Vocabulary":
        """Build the common record from tiktoken's constructor arguments.

        >>> v = Vocabulary.from_ranks("t", {bytes([b]): b for b in range(256)},
        ...                           pat_str=".", special_tokens={"<e>": 256})
        >>> v.n_vocab
        257

        Ranks far apart give the record that lists ids beside the tokens, so its
        size follows the number of tokens:

        >>> far = {bytes([b]): b for b in range(255)} | {b"\\xff": 2**31 - 1}
        >>> v = Vocabulary.from_ranks("t", far, pat_str=".", special_tokens={})
        >>> len(v.tokens), v.ids[-1], v.n_vocab
        (256, 2147483647, 2147483648)
        """
        top = max(mergeable_ranks.values(), default=-1)
        low = min(mergeable_ranks.values(), default=0)
        if low < 0 or top > MAX_ID:
            bad = low if low < 0 else top
            raise VocabularyError(f"{name}: rank {bad} is outside 0 .. {MAX_ID}; fasttok's ids are "
                                  "32-bit words")
        tokens, ids = token_layout([(rank, token) for token, rank in mergeable_ranks.items()])
        return cls(name=name, model="byte_bpe", tokens=tokens, ids=ids,
                   special_tokens=special_tokens, pattern=pat_str,
                   explicit_n_vocab=explicit_n_vocab, source=source)

    def __reduce__(self) -> tuple:
        fields = dict(zip(FIELDS, self._values()))
        fields["special_tokens"] = dict(self.special_tokens)
        fields["metadata"] = _picklable(dict(self.metadata))
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
        if self.ids is not None:
            top = self.ids[-1] if self.ids else -1
        else:
            top = len(self.tokens) - 1
            while top >= 0 and self.tokens[top] is None:
                top -= 1
        if self.special_tokens:
            top = max(top, max(self.special_tokens.values()))
        return max(top, *self.template_ids) if self.template_ids else top

    @property
    def mergeable_ranks(self) -> dict:
        """``{token bytes: rank}`` for the ordinary tokens, tiktoken's view.

        >>> Vocabulary(name="t", model="byte_bpe", tokens=(b"x", None, b"y")).mergeable_ranks
        {b'x': 0, b'y': 2}
        """
        ranks = self.ranks
        if ranks is None:
            return {tok: i for i, tok in self.ordinary_tokens()}
        return {tok: ranks[i] for i, tok in enumerate(self.tokens) if tok is not None}

    def ordinary_tokens(self) -> Iterator[tuple]:
        """``(id, token bytes)`` of each ordinary token, in id order.

        >>> list(Vocabulary(name="t", model="byte_bpe", tokens=(b"x", b"y"), ids=(3, 7)).ordinary_tokens())
        [(3, b'x'), (7, b'y')]
        """
        if self.ids is not None:
            return zip(self.ids, self.tokens)
        return ((i, tok) for i, tok in enumerate(self.tokens) if tok is not None)

    def ordinary_token(self, token: int) -> Optional[bytes]:
        """The bytes of the ordinary token with id ``token``, or ``None``.

        >>> v = Vocabulary(name="t", model="byte_bpe", tokens=(b"x", b"y"), ids=(3, 7))
        >>> v.ordinary_token(7), v.ordinary_token(4)
        (b'y', None)
        """
        if self.ids is not None:
            at = bisect.bisect_left(self.ids, token)
            return self.tokens[at] if at < len(self.ids) and self.ids[at] == token else None
        return self.tokens[token] if 0 <= token < len(self.tokens) else None

    def _validate_ids(self) -> None:
        if self.ids is None:
            return
        if self.model != "byte_bpe":
            raise VocabularyError(f"{self.name}: ids apart from the tokens are for byte-level BPE "
                                  f"only, not {self.model!r}; list the tokens by id")
        if len(self.ids) != len(self.tokens):
            raise VocabularyError(f"{self.name}: {len(self.ids)} ids for {len(self.tokens)} tokens")
        previous = -1
        for i, token_id in enumerate(self.ids):
            if not isinstance(token_id, int) or not previous < token_id <= MAX_ID:
                raise VocabularyError(
                    f"{self.name}: id {token_id!r} of token {i} is not above the id before it "
                    f"({previous}) and at most {MAX_ID}: ids must ascend and fit in 32 bits")
            previous = token_id
        if None in self.tokens:
            raise VocabularyError(f"{self.name}: token {self.tokens.index(None)} is None; with ids "
                                  "apart from the tokens, leave holes out instead")

    def validate(self) -> "Vocabulary":
        """Check the record is consistent and return it.

        Raises ``TypeError`` for a token that is not bytes and a special
        token that is not a str or whose id is not an integer (as tiktoken
        does); :class:`~fasttok.errors.VocabularyError` for duplicate token
        bytes or ranks among ordinary tokens, special ids that collide with
        ordinary tokens or each other, a byte-level vocabulary without all
        256 single bytes, an ``explicit_n_vocab`` that does not match, and an
        empty special token (it would match at every position of every text).

        >>> Vocabulary(name="t", model="byte_bpe", tokens=(b"a", b"a"),
        ...            byte_level=False).validate()
        Traceback (most recent call last):
        fasttok.errors.VocabularyError: t: token bytes b'a' appear at ids 0 and 1
        """
        self._validate_ids()
        if "" in self.special_tokens:
            raise VocabularyError(f"{self.name}: special token {self.special_tokens['']} is the "
                                  "empty string, which would match everywhere")
        id_at = self.ids.__getitem__ if self.ids is not None else int
        present = [t for t in self.tokens if t is not None]
        if not set(map(type, present)) <= {bytes}:
            i, tok = next((i, t) for i, t in enumerate(self.tokens)
                          if t is not None and type(t) is not bytes)
            # a type error, as tiktoken raises for the same mergeable_ranks
            raise TypeError(f"{self.name}: token {id_at(i)} is {type(tok).__name__}, not bytes")
        distinct = set(present)
        if self.model == "byte_bpe" and len(distinct) != len(present):
            first: dict = {}
            for i, tok in enumerate(self.tokens):
                if tok is not None and tok in first:
                    raise VocabularyError(
                        f"{self.name}: token bytes {tok!r} appear at ids {first[tok]} and {id_at(i)}")
                first.setdefault(tok, id_at(i))
        if self.ranks is not None:
            if len(self.ranks) != len(self.tokens):
                raise VocabularyError(f"{self.name}: {len(self.ranks)} ranks for {len(self.tokens)} tokens")
            used: dict = {}
            for i, rank in enumerate(self.ranks):
                if self.tokens[i] is None:
                    continue
                if rank in used:
                    raise VocabularyError(
                        f"{self.name}: rank {rank} is given to ids {used[rank]} and {id_at(i)}")
                used[rank] = id_at(i)
        for label, values in (("scores", self.scores), ("token_types", self.token_types)):
            if values is not None and len(values) != len(self.tokens):
                raise VocabularyError(f"{self.name}: {len(values)} {label} for {len(self.tokens)} tokens")
        # Two special strings may share an id (o200k_harmony's 200018 does in
        # tiktoken); decoding gives the first one.
        for text, sid in self.special_tokens.items():
            if not isinstance(text, str):
                raise TypeError(f"{self.name}: special token {text!r} is "
                                f"{type(text).__name__}, not str")
            if not isinstance(sid, int):
                raise TypeError(f"{self.name}: special token {text!r} has the id {sid!r}, "
                                f"a {type(sid).__name__}, not an int")
            if not 0 <= sid <= MAX_ID:
                raise VocabularyError(f"{self.name}: special token {text!r} has invalid id {sid!r}")
            taken = self.ordinary_token(sid) if self.model == "byte_bpe" else None
            if taken is not None:
                raise VocabularyError(
                    f"{self.name}: special token {text!r} id {sid} is also the ordinary token {taken!r}")
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


#: the field names of :class:`Vocabulary`, in order
FIELDS = tuple(Vocabulary.__annotations__)
Vocabulary.__match_args__ = FIELDS


def _rebuild(fields: dict) -> Vocabulary:
    return Vocabulary(**fields)


class _ReadOnly(dict):
    # a MappingProxyType on its way through pickle, which cannot pickle
    # proxies: it unpickles as a proxy again
    def __reduce__(self) -> tuple:
        return (_frozen_mapping, (dict(self),))


def _picklable(value: Any) -> Any:
    """``value`` with every read-only mapping inside it (a GGUF record's
    ``decode_only_tokens``) made picklable; ``value`` itself when it holds none.

    >>> import pickle
    >>> pickle.loads(pickle.dumps(_picklable({"a": MappingProxyType({1: 2})})))
    {'a': mappingproxy({1: 2})}
    """
    if isinstance(value, MappingProxyType):
        return _ReadOnly({k: _picklable(v) for k, v in value.items()})
    if type(value) is dict:
        items = {k: _picklable(v) for k, v in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else items
    if type(value) in (list, tuple):
        items = [_picklable(v) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else type(value)(items)
    return value
