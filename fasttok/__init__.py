"""fasttok: exact, fast tokenizers with no runtime dependencies."""
