"""SentencePiece's precompiled_charsmap checks (compiled)."""

class CharsmapError(ValueError):
    problem: str
    offset: int
    def __init__(self, problem: str, offset: int) -> None: ...

def check_charsmap(charsmap: bytes | None) -> None: ...
