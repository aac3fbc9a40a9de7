"""The ``model`` object of a ``tokenizer.json`` file, as tokenizers 0.23.3
reads it: dispatched on ``type``. Without a ``type`` tokenizers tries each
model in turn (BPE, WordPiece, WordLevel, Unigram) and takes the first that
reads the object; so does :func:`model_from_json`.

>>> def fail(where, problem):
...     return ValueError(f"{where}: {problem}")
>>> model_from_json({"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}, "$.model", fail).tokenize("b")
[(0, 'a', (0, 1))]
>>> model_from_json({"type": "Foo"}, "$.model", fail)
Traceback (most recent call last):
ValueError: $.model.type: unknown model type 'Foo' (known: BPE, WordPiece, WordLevel, Unigram)
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["model_from_json", "MODEL_FACTORIES"]

#: model type -> (module, factory name), in the order tokenizers tries them
#: on a model without a ``type``
MODEL_FACTORIES = {
    "BPE": ("fasttok.models.hf_bpe", "bpe_from_json"),
    "WordPiece": ("fasttok.models.hf_wordpiece", "wordpiece_from_json"),
    "WordLevel": ("fasttok.models.hf_wordlevel", "wordlevel_from_json"),
    "Unigram": ("fasttok.models.hf_unigram", "unigram_from_json"),
}


def _factory(kind: str, where: str, fail) -> Any:
    module, name = MODEL_FACTORIES[kind]
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise fail(f"{where}.type", f"model type {kind!r} is not available in this build of fasttok "
                                    f"({module}.{name} is missing)") from None


def model_from_json(spec: Any, where: str, fail, never: frozenset = frozenset()) -> Any:
    """The model of ``spec`` (``None`` for ``None``); errors through ``fail``.
    ``never``: ids the model never gives for text (fasttok's Encoding keeps a
    file's special added tokens out of its pieces, merges and words)."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise fail(where, f"expected an object, got {type(spec).__name__}")
    kind = spec.get("type")
    if kind is None:
        problems = []
        for candidate in MODEL_FACTORIES:
            try:
                return _factory(candidate, where, fail)(spec, where, fail, never)
            except Exception as error:  # the next candidate may read it, as in tokenizers
                problems.append(f"{candidate}: {error}")
        raise fail(where, "no \"type\", and the object reads as no model type (" + "; ".join(problems) + ")")
    if kind not in MODEL_FACTORIES:
        raise fail(f"{where}.type", f"unknown model type {kind!r} (known: {', '.join(MODEL_FACTORIES)})")
    return _factory(kind, where, fail)(spec, where, fail, never)
