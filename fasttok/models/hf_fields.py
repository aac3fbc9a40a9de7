"""Reading a ``tokenizer.json`` ``model`` object, as tokenizers 0.23.3 reads
it: dispatched on ``type`` (:func:`model_from_json`; without a ``type``
tokenizers tries each model in turn, BPE, WordPiece, WordLevel, Unigram, and
takes the first that reads the object, and so does fasttok), with the checks
the model types' factories share, over the one field reader
(:mod:`fasttok.shared.json_fields`, whose ``is_int`` this module passes on),
and JSON numbers read as tokenizers reads them.

>>> def fail(where, problem):
...     return ValueError(f"{where}: {problem}")
>>> model_from_json({"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}, "$.model", fail).tokenize("b")
[(0, 'a', (0, 1))]
>>> model_from_json({"type": "Foo"}, "$.model", fail)
Traceback (most recent call last):
ValueError: $.model.type: unknown model type 'Foo' (known: BPE, WordPiece, WordLevel, Unigram)
>>> model_object({"type": "WordPiece"}, "$.model", ValueError, "WordPiece")
{'type': 'WordPiece'}
>>> is_int(True), is_int(3)
(False, True)
"""

from __future__ import annotations

import functools
import importlib
import math
import re
from typing import Any

from fasttok.shared.json_fields import OBJECT, check, is_int

__all__ = ["model_from_json", "MODEL_FACTORIES", "is_int", "model_object", "serde_f64"]


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
    check(spec, OBJECT, where, fail)
    if spec.get("type", kind) != kind:
        raise fail(f"{where}.type", f"expected \"{kind}\", not {spec['type']!r}")
    return spec


_NUMBER = r"(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?"
_U64 = (1 << 64) - 1


@functools.cache
def _number_parts() -> tuple:
    # (the JSON number pattern, float(10 ** k) for k < 309: serde's table),
    # made on first use: a file read packed reads its numbers in C
    return re.compile(_NUMBER), [float(10 ** k) for k in range(309)]


def _u64_prefix(whole: str, fraction: str) -> tuple:
    # (significand, shift) of digits that do not all fit a u64: serde keeps
    # the first that do; past the first whole digit that does not, each
    # whole digit only moves the decimal point (parse_long_integer), and a
    # fraction's digits are kept until one does not fit
    significand, shift = 0, 0
    for digit in whole:
        if shift or significand > (_U64 - int(digit)) // 10:
            shift += 1
        else:
            significand = significand * 10 + int(digit)
    for digit in fraction:
        if significand > (_U64 - int(digit)) // 10:
            break
        significand = significand * 10 + int(digit)
        shift -= 1
    return significand, shift


def serde_f64(value) -> float:
    """A JSON number as tokenizers reads it into an ``f64``.

    serde_json (without its ``float_roundtrip`` feature) keeps the first
    digits that fit a u64, makes that integer a double and multiplies or
    divides it by one power of ten from a table: a decimal of 17 or more
    digits is then one step off the double nearest to it, where Python's
    ``json`` rounds correctly (a fifth of the scores of the shared Unigram
    files). ``value`` is the number's JSON text or the float ``json`` made of
    it (its shortest spelling, which is what tokenizers itself writes).

    >>> serde_f64(-3.2940776348114014), serde_f64("0.5"), serde_f64(7)
    (-3.294077634811402, 0.5, 7.0)
    """
    if isinstance(value, int):
        return float(value)
    number, pow10 = _number_parts()
    match = number.fullmatch(value if isinstance(value, str) else repr(float(value)))
    if match is None:
        raise ValueError(f"{value!r} is not a JSON number")
    sign, whole, fraction, exponent = match.groups()
    fraction = fraction or ""
    digits = (whole + fraction).lstrip("0")
    if len(digits) <= 19:  # fits a u64: serde keeps every digit
        significand, shift = int(digits or "0"), -len(fraction)
    else:
        significand, shift = _u64_prefix(whole, fraction)
    shift += int(exponent or 0)
    f = float(significand)
    while abs(shift) >= len(pow10):
        if f == 0.0 or shift > 0:
            # zero stays zero; too large is out of range (infinity here)
            f = f * math.inf if f else f
            break
        f /= 1e308
        shift += 308
    else:
        f = f * pow10[shift] if shift >= 0 else f / pow10[-shift]
    return -f if sign else f
