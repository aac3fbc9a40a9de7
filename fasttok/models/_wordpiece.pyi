"""WordPiece as llama.cpp runs it (compiled): BERT normaliser and linear-time longest match."""

from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, overload

from fasttok.shared._json_reader import PackedVocab
from fasttok.shared._literal_cut import LiteralCut

class BertNormalizer:
    lowercase: bool
    strip_accents: bool
    def __init__(self, lowercase: bool = ..., strip_accents: bool = ...) -> None: ...
    def map_code_point(self, cp: int) -> tuple[int, int]: ...

def normalizer(lowercase: bool = ..., strip_accents: bool = ...) -> BertNormalizer: ...
def wordpiece_texts(
    vocab: dict[str, int] | PackedVocab, prefix: str, never: frozenset[int], start: bytes
) -> tuple[list[bytes], list[int], array[int], list[int]]: ...

APPEND: int
SPACE: int
ALONE: int
SKIP: int
OTHER: int
EXPAND_MAX: int

class CodePointRules:
    def __init__(self, rule: Callable[[list[int]], Iterable[tuple[int, int]]]) -> None: ...
    def map_code_point(self, cp: int) -> tuple[int, int | tuple[int, ...]]: ...
    def words(self, texts: Iterable[str]) -> tuple[bytes, array[int], list[int], int]: ...

class WordPieceModel:
    normalizer: BertNormalizer | None
    n_states: int
    n_units: int
    probes_left: int
    n_tokens: int
    chunk_cache_entries: int
    @property
    def chunk_cache_size(self) -> int: ...
    def __init__(
        self,
        tokens: Sequence[bytes | None],
        unk_id: int | None = ...,
        *,
        lowercase: bool = ...,
        strip_accents: bool = ...,
        ids: Sequence[int] | None = ...,
        word_start: bytes = ...,
        max_word_chars: int | None = ...,
    ) -> None: ...
    def encode_with(
        self,
        text: str,
        rules: CodePointRules,
        cuts: list[tuple[int | None, int, int]] | None = ...,
        offsets: bool = ...,
        words: bool = ...,
    ) -> list[int] | tuple | None: ...
    def encode_offsets_many_with(
        self, texts: list[str], rules: CodePointRules
    ) -> list[tuple[array[int], array[int], array[int]] | None]: ...
    @overload
    def encode_many_with(
        self, texts: Iterable[str], rules: CodePointRules, flat: Literal[False] = ...
    ) -> list[list[int] | None]: ...
    @overload
    def encode_many_with(
        self, texts: Iterable[str], rules: CodePointRules, flat: Literal[True]
    ) -> tuple[array[int], array[int], list[int]]: ...
    def encode(self, text: str) -> list[int]: ...
    def count(self, text: str) -> int: ...
    def encode_many(self, texts: Iterable[str]) -> list[list[int]]: ...
    def encode_many_flat(self, texts: Iterable[str]) -> tuple[array[int], array[int]]: ...
    def count_many(self, texts: Iterable[str]) -> list[int]: ...
    def trie_steps(self, text: str) -> int: ...
    def words(self, text: str) -> list[str]: ...
    def match_word(self, piece: bytes) -> list[int]: ...
    def match_word_texts(self, piece: bytes) -> list[int]: ...
    def find_token(self, data: bytes) -> int: ...

class TextEntry:
    def __init__(
        self,
        model: WordPieceModel,
        rules: CodePointRules,
        texts: LiteralCut,
        other: Callable[[str, frozenset[int] | None], list[int] | None],
    ) -> None: ...
    def ids(self, text: str, allowed: frozenset[int] | None) -> list[int] | None: ...
    def ids_array(self, text: str, allowed: frozenset[int] | None) -> array[int] | None: ...
    def ids_many(
        self, texts: list[object], allowed: frozenset[int] | None
    ) -> list[list[int] | None]: ...
    def ids_many_flat(
        self,
        texts: list[object],
        allowed: frozenset[int] | None,
        fill: Callable[[object], Sequence[int]],
    ) -> tuple[array[int], array[int]]: ...
