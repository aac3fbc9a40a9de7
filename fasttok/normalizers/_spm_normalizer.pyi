"""SentencePiece's normalizer (compiled): charsmap trie, whitespace rules, alignment."""

from collections.abc import Iterable

class SymbolMatcher:
    count: int
    def __init__(self, symbols: Iterable[bytes]) -> None: ...
    def longest(self, data: bytes) -> int: ...

class Normalizer:
    user_symbols: SymbolMatcher
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    treat_whitespace_as_suffix: bool
    flavour: int
    def __init__(
        self,
        charsmap: bytes | None,
        *,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool = ...,
        user_defined: Iterable[bytes] = ...,
        flavour: str = ...,
    ) -> None: ...
    def normalize(self, text: str) -> str: ...
    def normalize_with_offsets(self, text: str) -> tuple[str, list[int]]: ...
    def normalize_bytes(self, data: bytes) -> bytes: ...
