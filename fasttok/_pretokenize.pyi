"""Hand-written pre-tokenizers for tiktoken's known patterns (compiled)."""

SCANNERS: tuple[str, ...]

def split(name: str, text: str) -> list[str]: ...
