"""The examples in the docstrings of the public modules run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "fasttok", "fasttok.core", "fasttok.errors", "fasttok.vocab", "fasttok.patterns",
    "fasttok.registry", "fasttok.cli", "fasttok.gguf_pretokenizers", "fasttok.gguf_models",
    "fasttok.loaders.tiktoken_file", "fasttok.loaders.gguf", "fasttok.loaders.sentencepiece_model",
    "fasttok._bytemap", "fasttok._tables", "fasttok._unicode", "fasttok._pretokenize",
    "fasttok._encoder", "fasttok._wordpiece", "fasttok.llama_unicode",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
