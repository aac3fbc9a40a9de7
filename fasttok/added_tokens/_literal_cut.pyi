"""A text cut at a set of literal strings, leftmost first, then longest (compiled)."""

from collections.abc import Iterable

class LiteralCut:
    def __init__(self, strings: Iterable[str]) -> None: ...
    def split(self, text: str) -> list[str] | None: ...
