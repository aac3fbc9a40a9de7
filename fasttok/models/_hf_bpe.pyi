"""Hugging Face tokenizers' BPE model (compiled): character parts, merges by rank, offsets."""

from array import array
from collections.abc import Callable, Iterable, Sequence

from fasttok.errors import FasttokError
from fasttok.shared._json_reader import PackedMerges, PackedVocab
from fasttok.shared._tables import TokenTables

class UnkTokenNotFoundError(FasttokError): ...

PREPEND_EACH: int
PREPEND_UNLESS_THERE: int
PREPEND_FIRST: int

def merge_slots(
    merges: Sequence[Sequence[str]] | Sequence[str],
    tables: TokenTables,
    cut: int,
    empty_slot: int = ...,
    *,
    legacy: bool = ...,
    skip: bytes | bytearray | None = ...,
) -> array[int] | tuple[int, int]: ...

def packed_merge_slots(
    vocab: PackedVocab,
    merges: PackedMerges,
    cut: int,
    *,
    skip: bytes | bytearray | None = ...,
) -> array[int] | tuple[int, int]: ...

class HfBpeCore:
    unk_token: str | None
    slot_ints: tuple[int, ...]
    slot_names: tuple[str, ...]
    def __init__(
        self,
        tokens: Sequence[bytes],
        ids: tuple[int, ...],
        merges: Sequence[tuple[int, int, int]] | array[int],
        *,
        names: tuple[str, ...] | None = ...,
        unk_slot: int = ...,
        unk_token: str | None = ...,
        prefix: bytes = ...,
        suffix: bytes = ...,
        fuse_unk: bool = ...,
        byte_fallback: bool = ...,
        ignore_merges: bool = ...,
        dropout: float = ...,
        seed: int = ...,
        not_whole: Iterable[int] = ...,
    ) -> None: ...
    def slot_of(self, token: bytes) -> int: ...
    def tokenize_ids(self, sequence: str) -> list[int]: ...
    def walk_stretches(
        self, space_to: bytes | None, prepend: bytes, prepend_when: int, offsets: bool,
        parts: list[str], added: dict[str, int]
    ) -> list[int] | tuple[array[int], array[int], array[int]] | None: ...
    def sample_ids(self, sequence: str, rate: float, seed: int) -> list[int]: ...
    def tokenize_slots(self, sequence: str) -> tuple[list[int], list[int]]: ...
    def tokenize(self, sequence: str) -> list[tuple[int, str, tuple[int, int]]]: ...

class StretchWalker:
    def __init__(
        self, core: HfBpeCore, space_to: bytes | None, prepend: bytes, prepend_when: int,
        cuts_for: Callable[[frozenset[int] | None], tuple]
    ) -> None: ...
    def ids(self, text: str, allowed: frozenset[int] | None) -> list[int] | None: ...
    def encode(
        self, text: str, allowed: frozenset[int] | None
    ) -> tuple[array[int], array[int], array[int]] | None: ...
    def encode_offsets_many(
        self, texts: list[str], allowed: frozenset[int] | None
    ) -> list[tuple[array[int], array[int], array[int]] | None]: ...
