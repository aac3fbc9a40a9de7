"""Reading the fields of a ``tokenizer.json`` stage, each checked, errors naming the JSON path.

Every ``xxx_from_json(spec, where, fail)`` factory reads its fields through
these: ``fail(where, problem)`` builds the exception to raise (the loader's
names the file), ``where`` is the JSON path of the object being read.

>>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
>>> field({"a": True}, "a", bool, "$.x", fail)
True
>>> field({"a": 1}, "a", bool, "$.x", fail)
Traceback (most recent call last):
ValueError: $.x.a: expected a boolean, got 1
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["MISSING", "field", "check_object", "type_of", "pattern_of", "unknown_type",
           "stage_list", "no_fields"]

MISSING = object()

_NAMES = {bool: "a boolean", str: "a string", int: "an integer", list: "a list",
          dict: "an object", float: "a number"}


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def field(spec: dict, key: str, kind, where: str, fail: Callable, default=MISSING,
          nullable: bool = False):
    """``spec[key]`` checked to be of ``kind`` (a type or tuple of types);
    ``default`` when it is missing (required when no default is given);
    ``None`` allowed with ``nullable``.

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> field({}, "a", bool, "$.x", fail, default=False)
    False
    """
    if key not in spec:
        if default is MISSING:
            raise fail(f"{where}.{key}", "missing field")
        return default
    value = spec[key]
    if value is None and nullable:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (bool not in kinds and isinstance(value, bool))
    if not ok:
        names = " or ".join(_NAMES.get(k, k.__name__) for k in kinds)
        raise fail(f"{where}.{key}", f"expected {names}{' or null' if nullable else ''}, "
                                     f"got {_describe(value)}")
    return value


def stage_list(spec: dict, key: str, where: str, fail: Callable, build: Callable) -> list:
    """The stages of a ``Sequence`` under ``spec[key]``, each read by
    ``build(item, where, fail)``; a null item is refused (null means "no
    stage" only outside a Sequence).

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> stage_list({"xs": [{}, {}]}, "xs", "$.n", fail, lambda item, where, fail: where)
    ['$.n.xs[0]', '$.n.xs[1]']
    >>> stage_list({"xs": [None]}, "xs", "$.n", fail, lambda item, where, fail: where)
    Traceback (most recent call last):
    ValueError: $.n.xs[0]: expected an object, got null
    """
    stages = []
    for i, item in enumerate(field(spec, key, list, where, fail)):
        at = f"{where}.{key}[{i}]"
        if item is None:
            raise fail(at, "expected an object, got null")
        stages.append(build(item, at, fail))
    return stages


def no_fields(cls) -> Callable:
    """The factory of a stage that reads no field: ``cls()`` whatever the object holds.

    >>> no_fields(list)({"type": "X"}, "$.n", None)
    []
    """
    return lambda spec, where, fail: cls()


def check_object(spec, where: str, fail: Callable) -> dict:
    """``spec`` itself, which must be a JSON object.

    >>> check_object({}, "$.x", lambda w, p: ValueError(p))
    {}
    """
    if not isinstance(spec, dict):
        raise fail(where, f"expected an object, got {_describe(spec)}")
    return spec


def type_of(spec: dict, where: str, fail: Callable, known) -> str:
    """The ``type`` of a stage object, which must be one of ``known``.

    >>> type_of({"type": "NFC"}, "$.n", lambda w, p: ValueError(p), ("NFC",))
    'NFC'
    """
    kind = field(spec, "type", str, where, fail)
    if kind not in known:
        raise unknown_type(kind, where, fail, known)
    return kind


def unknown_type(kind, where: str, fail: Callable, known) -> Exception:
    """The error for a ``type`` that is none of ``known``.

    >>> print(unknown_type("X", "$.n", lambda w, p: ValueError(f"{w}: {p}"), ("A", "B")))
    $.n.type: unknown type 'X'; known: A, B
    """
    return fail(f"{where}.type", f"unknown type {kind!r}; known: {', '.join(sorted(known))}")


def pattern_of(spec: dict, where: str, fail: Callable) -> tuple:
    """A ``pattern`` field, ``{"String": s}`` or ``{"Regex": r}``, as ``(s_or_r, is_regex)``.

    >>> pattern_of({"pattern": {"Regex": "a+"}}, "$.p", lambda w, p: ValueError(p))
    ('a+', True)
    """
    value = field(spec, "pattern", dict, where, fail)
    if len(value) != 1 or next(iter(value)) not in ("String", "Regex"):
        raise fail(f"{where}.pattern", f"expected {{\"String\": ...}} or {{\"Regex\": ...}}, "
                                       f"got {_describe(value)}")
    key = next(iter(value))
    text = field(value, key, str, f"{where}.pattern", fail)
    return text, key == "Regex"
