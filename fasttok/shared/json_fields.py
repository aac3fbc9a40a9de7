"""Reading the fields of a ``tokenizer.json``: one reader, each error naming the JSON path.

Every part of the file is read through :class:`Fields`: the loader's checks
of the model and the added tokens, each stage factory
(``xxx_from_json(spec, where, fail)``) and the post-processor's untagged
variants. ``fail(where, problem)`` builds the exception to raise (the
loader's names the file; the post-processor's variants raise a mismatch
that moves on to the next variant), ``where`` is the JSON path of the object
being read. A value is checked against a :class:`Kind`; a field may be
required (the default), have a ``default`` when missing, and be ``nullable``.

>>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
>>> f = Fields({"a": True, "n": 3}, "$.x", fail)
>>> f.bool("a"), f.int("n"), f.str("s", default="-")
(True, 3, '-')
>>> f.str("a")
Traceback (most recent call last):
ValueError: $.x.a: expected a string, got true
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["MISSING", "Kind", "BOOL", "STR", "LIST", "OBJECT", "CHAR", "NUMBER", "INTEGER",
           "integer", "U32", "U64", "is_int", "all_ints", "describe", "check", "Fields"]

MISSING = object()


# a plain class: collections.namedtuple makes its class by exec of
# generated source (~0.1 ms) on every tokenizer.json load's path
class Kind:
    """What a JSON value must be: a ``test`` (value -> bool), and its ``name`` in errors.

    >>> U32.test(2**32), U32.name
    (False, 'an integer from 0 to 4294967295')
    """

    __slots__ = ("test", "name")

    def __init__(self, test: Any, name: str) -> None:
        self.test = test
        self.name = name


def is_int(value: Any) -> bool:
    """Whether ``value`` is a JSON integer (``bool`` is not, as serde reads it).

    >>> is_int(True), is_int(3), is_int(1.0)
    (False, True, False)
    """
    return isinstance(value, int) and not isinstance(value, bool)


def all_ints(values: Any, limit: Any) -> bool:
    """Whether each of ``values`` is a JSON integer from 0 to ``limit - 1``,
    checked by C loops (``map``, ``set``, ``min``, ``max``): a vocabulary's
    ids, where a check entry by entry was a tenth of Llama 3's load. The
    caller finds the culprit for its error only when this is false.

    >>> all_ints([0, 3], 4), all_ints([0, 4], 4), all_ints([True], 4), all_ints({}.values(), 4)
    (True, False, False, True)
    """
    if not values:
        return True
    return set(map(type, values)) == {int} and min(values) >= 0 and max(values) < limit


def integer(limit: int) -> Kind:
    """An integer from 0 to ``limit - 1`` (a ``u32`` or ``u64`` of tokenizers).

    >>> integer(10).test(9), integer(10).test(10)
    (True, False)
    """
    return Kind(lambda v: is_int(v) and 0 <= v < limit, f"an integer from 0 to {limit - 1}")


BOOL = Kind(lambda v: v is True or v is False, "a boolean")
STR = Kind(lambda v: isinstance(v, str), "a string")
LIST = Kind(lambda v: isinstance(v, list), "a list")
OBJECT = Kind(lambda v: isinstance(v, dict), "an object")
CHAR = Kind(lambda v: isinstance(v, str) and len(v) == 1, "one character")
NUMBER = Kind(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number")
INTEGER = Kind(is_int, "an integer")
U32 = integer(2**32)
U64 = integer(2**64)


def describe(value: Any) -> str:
    """``value`` as an error shows it: its JSON spelling for null and the
    booleans, else its ``repr``, cut to 60 characters.

    >>> describe(None), describe(False), describe("x" * 80)[-5:]
    ('null', 'false', 'xx...')
    """
    if value is None or value is True or value is False:
        return {None: "null", True: "true", False: "false"}[value]
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check(value: Any, kind: Kind, where: str, fail: Callable, nullable: bool = False) -> Any:
    """``value`` (found at ``where``) when it is of ``kind`` (or null, with ``nullable``).

    >>> check([1], LIST, "$.a", lambda w, p: ValueError(f"{w}: {p}"))
    [1]
    """
    if kind.test(value) or (nullable and value is None):
        return value
    raise fail(where, f"expected {kind.name}{' or null' if nullable else ''}, "
                      f"got {describe(value)}")


class Fields:
    """Typed reads of one JSON object found at ``where``; ``fail(where,
    problem)`` makes the exception raised for a field that is missing or
    of the wrong kind.

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> Fields({}, "$.n", fail).bool("lowercase")
    Traceback (most recent call last):
    ValueError: $.n.lowercase: missing field
    >>> Fields([], "$.n", fail)
    Traceback (most recent call last):
    ValueError: $.n: expected an object, got []
    """

    __slots__ = ("spec", "where", "fail")

    def __init__(self, spec: Any, where: str, fail: Callable) -> None:
        self.spec = check(spec, OBJECT, where, fail)
        self.where = where
        self.fail = fail

    def at(self, key: str) -> str:
        """The JSON path of the field ``key``.

        >>> Fields({}, "$.model", None).at("vocab")
        '$.model.vocab'
        """
        return f"{self.where}.{key}"

    def get(self, key: str, kind: Kind, default: Any = MISSING, nullable: bool = False) -> Any:
        """The field ``key``, of ``kind``; ``default`` when it is missing
        (required when no default is given); null allowed with ``nullable``.

        >>> Fields({"a": None}, "$", None).get("a", STR, nullable=True) is None
        True
        """
        if key not in self.spec:
            if default is MISSING:
                raise self.fail(self.at(key), "missing field")
            return default
        return check(self.spec[key], kind, self.at(key), self.fail, nullable)

    def bool(self, key: str, default: Any = MISSING, nullable: bool = False) -> Any:
        """A boolean field.

        >>> Fields({"a": False}, "$", None).bool("a")
        False
        """
        return self.get(key, BOOL, default, nullable)

    def str(self, key: str, default: Any = MISSING, nullable: bool = False) -> Any:
        """A string field.

        >>> Fields({"a": "x"}, "$", None).str("a")
        'x'
        """
        return self.get(key, STR, default, nullable)

    def char(self, key: str, default: Any = MISSING) -> Any:
        """A one-character string field.

        >>> Fields({"a": "▁"}, "$", None).char("a")
        '▁'
        """
        return self.get(key, CHAR, default)

    def int(self, key: str, default: Any = MISSING, nullable: bool = False,
            kind: Kind = U64) -> Any:
        """A non-negative integer field (below ``2**64``, or ``kind``'s limit).

        >>> Fields({"a": 7}, "$", None).int("a", kind=U32)
        7
        """
        return self.get(key, kind, default, nullable)

    def list(self, key: str, default: Any = MISSING, nullable: bool = False) -> Any:
        """A list field.

        >>> Fields({"a": [1]}, "$", None).list("a")
        [1]
        """
        return self.get(key, LIST, default, nullable)

    def object(self, key: str, default: Any = MISSING, nullable: bool = False) -> Any:
        """An object field, as the :class:`Fields` that read it (``default``
        as it is when the field is missing, ``None`` for null).

        >>> Fields({"a": {"b": 1}}, "$", None).object("a").where
        '$.a'
        """
        value = self.get(key, OBJECT, default, nullable)
        if value is default or value is None:
            return value
        return Fields(value, self.at(key), self.fail)

    def optional(self, key: str, kind: Kind) -> Any:
        """A field that may be missing or null (``None`` then), else of ``kind``.

        >>> Fields({"a": None}, "$", None).optional("a", STR) is None
        True
        """
        return self.get(key, kind, None, nullable=True)

    def items(self, key: str, kind: Kind) -> list:
        """A list field whose every item is of ``kind``.

        >>> Fields({"ids": [1, "2"]}, "$.t", lambda w, p: ValueError(f"{w}: {p}")).items("ids", U32)
        Traceback (most recent call last):
        ValueError: $.t.ids[1]: expected an integer from 0 to 4294967295, got '2'
        """
        at = self.at(key)
        return [check(item, kind, f"{at}[{i}]", self.fail)
                for i, item in enumerate(self.list(key))]

    def choice(self, key: str, names: Any, default: Any = MISSING) -> Any:
        """A string field that must be one of ``names``; a mapping's value for it
        when ``names`` is a mapping.

        >>> Fields({"d": "Left"}, "$", None).choice("d", {"Left": "left", "Right": "right"})
        'left'
        >>> Fields({"d": "up"}, "$.p", lambda w, p: ValueError(f"{w}: {p}")).choice("d", ("Left",))
        Traceback (most recent call last):
        ValueError: $.p.d: unknown d 'up'; known: Left
        """
        value = self.spec.get(key, MISSING)
        if value is MISSING and default is not MISSING:
            return default
        if value is MISSING:
            raise self.fail(self.at(key), "missing field")
        if not isinstance(value, str) or value not in names:
            raise self.fail(self.at(key), f"unknown {key} {describe(value)}; known: "
                                          f"{', '.join(names)}")
        return names[value] if isinstance(names, dict) else value

    def type(self, known: Any) -> str:
        """The object's ``type``, which must be one of ``known``.

        >>> Fields({"type": "NFX"}, "$.n", lambda w, p: ValueError(f"{w}: {p}")).type(("NFC", "NFD"))
        Traceback (most recent call last):
        ValueError: $.n.type: unknown type 'NFX'; known: NFC, NFD
        """
        kind = self.str("type")
        if kind not in known:
            raise self.fail(self.at("type"), f"unknown type {kind!r}; known: "
                                             f"{', '.join(sorted(known))}")
        return kind

    def pattern(self) -> tuple:
        """A ``pattern`` field, ``{"String": s}`` or ``{"Regex": r}``, as ``(s_or_r, is_regex)``.

        >>> Fields({"pattern": {"Regex": "a+"}}, "$.p", None).pattern()
        ('a+', True)
        """
        value = self.object("pattern")
        if len(value.spec) != 1 or next(iter(value.spec)) not in ("String", "Regex"):
            raise self.fail(self.at("pattern"), f"expected {{\"String\": ...}} or "
                                                f"{{\"Regex\": ...}}, got {describe(value.spec)}")
        key = next(iter(value.spec))
        return value.str(key), key == "Regex"

    def stages(self, key: str, build: Callable) -> list:
        """The stages of a ``Sequence`` under ``key``, each read by
        ``build(item, where, fail)``; a null item is refused (null means "no
        stage" only outside a Sequence).

        >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
        >>> Fields({"xs": [{}, {}]}, "$.n", fail).stages("xs", lambda item, where, fail: where)
        ['$.n.xs[0]', '$.n.xs[1]']
        >>> Fields({"xs": [None]}, "$.n", fail).stages("xs", lambda item, where, fail: where)
        Traceback (most recent call last):
        ValueError: $.n.xs[0]: expected an object, got null
        """
        at = self.at(key)
        return [build(check(item, OBJECT, f"{at}[{i}]", self.fail), f"{at}[{i}]", self.fail)
                for i, item in enumerate(self.list(key))]
