"""Checks shared by the factories of ``tokenizer.json`` model objects.

>>> model_object({"type": "WordPiece"}, "$.model", ValueError, "WordPiece")
{'type': 'WordPiece'}
>>> is_int(True), is_int(3)
(False, True)
"""

from __future__ import annotations


def is_int(value) -> bool:
    """Whether ``value`` is a JSON integer (``bool`` is not, as serde reads it).

    >>> is_int(1.0)
    False
    """
    return isinstance(value, int) and not isinstance(value, bool)


def model_object(spec, where: str, fail, kind: str) -> dict | None:
    """``spec`` when it is a model object of type ``kind`` (its ``type`` may be
    left out, as tokenizers allows), ``None`` for ``None``; else raises
    ``fail(where, problem)``.

    >>> model_object(None, "$.model", ValueError, "Unigram") is None
    True
    >>> model_object({"type": "BPE"}, "$.model", lambda w, p: ValueError(f"{w}: {p}"), "Unigram")
    Traceback (most recent call last):
    ...
    ValueError: $.model.type: expected "Unigram", not 'BPE'
    """
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise fail(where, "expected an object")
    if spec.get("type", kind) != kind:
        raise fail(f"{where}.type", f"expected \"{kind}\", not {spec['type']!r}")
    return spec
