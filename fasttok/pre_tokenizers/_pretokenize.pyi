"""Hand-written pre-tokenizers for tiktoken's, Qwen 2's and llama.cpp's known patterns (compiled)."""

SCANNERS: tuple[str, ...]

def split(name: str, text: str) -> list[str]: ...
