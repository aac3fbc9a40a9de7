"""Unigram segmentation (compiled): piece trie and single-pass Viterbi."""

from array import array
from collections.abc import Iterable, Sequence

class UnigramModel:
    n_pieces: int
    unk_id: int
    min_score: float
    unk_score: float
    llama_cpp: bool
    tokenizers: bool
    def __init__(
        self,
        tokens: Sequence[bytes | None],
        scores: Sequence[float],
        types: Sequence[int],
        unk_id: int,
        *,
        llama_cpp: bool = ...,
        tokenizers: bool = ...,
        never: Iterable[int] = ...,
    ) -> None: ...
    def segment(self, data: str | bytes) -> list[tuple[bytes, int]]: ...
    def lattice(self, data: str | bytes) -> list[tuple[int, int, int, float]]: ...

class TokenizersUnigram:
    byte_fallback: bool
    def __init__(
        self, pieces: Sequence[str], scores: Sequence[float], unk_id: int | None, byte_fallback: bool,
        *, never: Iterable[int] = ...
    ) -> None: ...
    def ids(self, text: str) -> list[int]: ...
    def ids_many(self, texts: list[str]) -> list[int]: ...
    def lattice(self, text: str) -> list[tuple[int, int, int, float]]: ...
    def resolve(self, normalized: bytes, pieces: Iterable[tuple[int, int, int]]) -> list[int]: ...
    def tokenize(self, text: str) -> list[tuple[int, str, tuple[int, int]]]: ...

class UnigramWalk:
    def __init__(
        self,
        model: TokenizersUnigram,
        early: Sequence[tuple[str, str, str]],
        charsmap: tuple[object, tuple[str, str, str]] | None,
        ops: Sequence[tuple[str, str, str]],
        whitespace: str | None,
        metaspace: tuple[str, str, bool] | None,
        n_ids: int,
        added: object | None = ...,
    ) -> None: ...
    def ids(self, text: str, allowed: frozenset[int] | None) -> list[int] | None: ...
    def encode(
        self, text: str, allowed: frozenset[int] | None
    ) -> (
        tuple[array[int], array[int], array[int]]
        | tuple[array[int], array[int], array[int], dict[int, str]]
        | None
    ): ...
    def encode_scored(
        self,
        text: str,
        allowed: frozenset[int] | None,
        state: tuple[float, bool] | None = None,
        cut: bool = True,
    ) -> tuple[list[int], int, int, tuple[float, bool] | None] | None: ...
    def run(
        self,
        text: str,
        matches: list[tuple[int | None, int, int]] | None,
        offsets: bool,
    ) -> list[int] | tuple[array[int], ...] | None: ...
    def encode_offsets_many(
        self, texts: list[str], allowed: frozenset[int] | None
    ) -> list[tuple[array[int], ...] | None]: ...

def tokenizers_scores(vocab: list) -> tuple[list[str], array[float]] | int: ...
