"""``pre_tokenizer_from_json``: a ``tokenizer.json`` ``pre_tokenizer`` object as a pre-tokenizer.

Fields, their defaults and the spellings accepted are ``tokenizers``
0.23.3's (Metaspace's older ``add_prefix_space`` and ``str_rep`` included);
every field read is checked, and an error names its JSON path.

>>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
>>> pre_tokenizer_from_json({"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
...                         "$.pre_tokenizer", fail)
Metaspace(replacement='▁', prepend_scheme='always', split=True)
"""

from __future__ import annotations

from collections.abc import Callable

from fasttok.errors import FasttokError
from fasttok.pre_tokenizers.byte_level import ByteLevel
from fasttok.pre_tokenizers.metaspace import PREPEND_SCHEMES, Metaspace
from fasttok.pre_tokenizers.sequence import Sequence
from fasttok.pre_tokenizers.split import (BertPreTokenizer, CharDelimiterSplit, Digits,
                                          Punctuation, Split, Whitespace, WhitespaceSplit)
from fasttok.pre_tokenizers.unicode_scripts import UnicodeScripts
from fasttok.shared.json_fields import check_object, field, no_fields, pattern_of, stage_list, type_of
from fasttok.shared.normalized import BEHAVIORS

__all__ = ["pre_tokenizer_from_json"]


def _behavior(spec: dict, where: str, fail: Callable, default=None) -> str:
    kwargs = {} if default is None else {"default": default}
    behavior = field(spec, "behavior", str, where, fail, **kwargs)
    if behavior not in BEHAVIORS:
        raise fail(f"{where}.behavior", f"unknown behavior {behavior!r}; known: "
                                        f"{', '.join(BEHAVIORS)}")
    return behavior


def _char(spec: dict, key: str, where: str, fail: Callable) -> str:
    value = field(spec, key, str, where, fail)
    if len(value) != 1:
        raise fail(f"{where}.{key}", f"expected one character, got {value!r}")
    return value


def _byte_level(spec: dict, where: str, fail: Callable):
    return ByteLevel(add_prefix_space=field(spec, "add_prefix_space", bool, where, fail),
                     trim_offsets=field(spec, "trim_offsets", bool, where, fail),
                     use_regex=field(spec, "use_regex", bool, where, fail, default=True))


def _split(spec: dict, where: str, fail: Callable):
    pattern, regex = pattern_of(spec, where, fail)
    behavior = _behavior(spec, where, fail)
    invert = field(spec, "invert", bool, where, fail)
    try:
        return Split(pattern, behavior, invert, regex=regex)
    except FasttokError as exc:
        raise fail(f"{where}.pattern.Regex", str(exc)) from None


def _metaspace(spec: dict, where: str, fail: Callable):
    replacement = _char(spec, "replacement", where, fail)
    field(spec, "str_rep", str, where, fail, default=None)
    split = field(spec, "split", bool, where, fail, default=True, nullable=True)
    scheme = field(spec, "prepend_scheme", str, where, fail, default="always")
    if scheme not in PREPEND_SCHEMES:
        raise fail(f"{where}.prepend_scheme", f"unknown prepend_scheme {scheme!r}; known: "
                                              f"{', '.join(PREPEND_SCHEMES)}")
    if field(spec, "add_prefix_space", bool, where, fail, default=True) is False:
        if scheme != "never":
            raise fail(f"{where}.add_prefix_space", "add_prefix_space false needs "
                                                    "prepend_scheme \"never\"")
    return Metaspace(replacement, scheme, True if split is None else split)


def _sequence(spec: dict, where: str, fail: Callable):
    return Sequence(stage_list(spec, "pretokenizers", where, fail, pre_tokenizer_from_json))


_FACTORIES = {
    "BertPreTokenizer": no_fields(BertPreTokenizer),
    "ByteLevel": _byte_level,
    "CharDelimiterSplit": lambda spec, where, fail: CharDelimiterSplit(
        _char(spec, "delimiter", where, fail)),
    "Metaspace": _metaspace,
    "Whitespace": no_fields(Whitespace),
    "Sequence": _sequence,
    "Split": _split,
    "Punctuation": lambda spec, where, fail: Punctuation(
        _behavior(spec, where, fail, default="Isolated")),
    "WhitespaceSplit": no_fields(WhitespaceSplit),
    "Digits": lambda spec, where, fail: Digits(
        field(spec, "individual_digits", bool, where, fail)),
    "UnicodeScripts": no_fields(UnicodeScripts),
}


def pre_tokenizer_from_json(spec: dict | None, where: str, fail: Callable):
    """The pre-tokenizer a ``tokenizer.json`` ``pre_tokenizer`` object describes
    (``None`` for ``null``); ``fail(where, problem)`` builds the error raised.

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> pre_tokenizer_from_json({"type": "Foo"}, "$.p", fail)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: $.p.type: unknown type 'Foo'; known: BertPreTokenizer, ByteLevel, ...
    """
    if spec is None:
        return None
    check_object(spec, where, fail)
    return _FACTORIES[type_of(spec, where, fail, _FACTORIES)](spec, where, fail)
