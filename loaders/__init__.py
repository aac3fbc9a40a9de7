"""Vocabulary file loaders: one module per format, each ``path or bytes -> Vocabulary``."""
