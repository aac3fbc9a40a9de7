"""The ``decoder`` of a ``tokenizer.json`` file as a fasttok decoder.

Accepts what ``tokenizers`` 0.23.3 accepts: required fields are required,
optional ones take its serde defaults (ByteLevel's ``use_regex``,
Metaspace's ``prepend_scheme``/``split``/``add_prefix_space``/``str_rep``),
unknown fields are ignored, and Metaspace's old ``add_prefix_space: false``
is accepted only beside ``prepend_scheme: "never"``, as tokenizers does.

>>> def fail(where, problem):
...     return ValueError(f"{where}: {problem}")
>>> decoder_from_json({"type": "Sequence", "decoders": [
...     {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
...     {"type": "ByteFallback"}, {"type": "Fuse"},
...     {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, "$.decoder", fail
... ).decode(["▁Hi", "<0x21>"])
'Hi!'
>>> decoder_from_json({"type": "Cyrillic"}, "$.decoder", fail)
Traceback (most recent call last):
ValueError: $.decoder.type: unknown decoder type 'Cyrillic'; known: BPEDecoder, ByteFallback, ByteLevel, CTC, Fuse, Metaspace, Replace, Sequence, Strip, WordPiece
"""

from __future__ import annotations

from collections.abc import Callable

from fasttok.decoders.hf_bpe import BPEDecoder
from fasttok.decoders.hf_byte_fallback import ByteFallback
from fasttok.decoders.hf_byte_level import ByteLevel
from fasttok.decoders.hf_metaspace import PREPEND_SCHEMES, Metaspace
from fasttok.decoders.hf_replace import Replace
from fasttok.decoders.hf_simple import Fuse, Sequence, Strip
from fasttok.decoders.hf_wordpiece import CTC, WordPiece
from fasttok.errors import FasttokError
from fasttok.shared.json_fields import stage_list

__all__ = ["decoder_from_json"]

_MISSING = object()


def decoder_from_json(spec, where: str, fail: Callable):
    """The decoder ``spec`` describes (``None`` for ``None``); ``fail(where,
    problem)`` makes the error raised for a bad field.

    >>> decoder_from_json({"type": "WordPiece", "prefix": "##", "cleanup": True},
    ...                   "$.decoder", lambda w, p: ValueError(w + ": " + p))
    WordPiece(prefix='##', cleanup=True)
    """
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise fail(where, f"expected an object, got {_kind(spec)}")
    kind = spec.get("type", _MISSING)
    build = _BUILDERS.get(kind) if isinstance(kind, str) else None
    if build is None:
        raise fail(f"{where}.type", f"unknown decoder type {_shown(kind)}; known: "
                   + ", ".join(sorted(_BUILDERS)))
    return build(_Fields(spec, where, fail))


class _Fields:
    # typed reads of one JSON object, each failing with its JSON path
    __slots__ = ("spec", "where", "fail")

    def __init__(self, spec: dict, where: str, fail: Callable) -> None:
        self.spec = spec
        self.where = where
        self.fail = fail

    def get(self, name: str, check: Callable, expected: str, default=_MISSING, nullable=False):
        value = self.spec.get(name, _MISSING)
        if value is _MISSING or (value is None and nullable):
            if default is _MISSING:
                raise self.fail(f"{self.where}.{name}", f"missing; expected {expected}")
            return default
        if not check(value):
            raise self.fail(f"{self.where}.{name}", f"expected {expected}, got {_kind(value)}")
        return value

    def bool(self, name: str, default=_MISSING, nullable=False):
        return self.get(name, lambda v: isinstance(v, bool), "true or false", default, nullable)

    def str(self, name: str, default=_MISSING, nullable=False):
        return self.get(name, lambda v: isinstance(v, str), "a string", default, nullable)

    def char(self, name: str):
        return self.get(name, lambda v: isinstance(v, str) and len(v) == 1, "a one-character string")

    def count(self, name: str):
        return self.get(name, lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                        "a non-negative integer")


def _kind(value) -> str:
    return {dict: "an object", list: "an array", str: f"the string {value!r}", bool: str(value).lower(),
            type(None): "null"}.get(type(value), repr(value))


def _shown(kind) -> str:
    return "(missing)" if kind is _MISSING else repr(kind)


def _byte_level(f: _Fields) -> ByteLevel:
    return ByteLevel(f.bool("add_prefix_space"), f.bool("trim_offsets"),
                     f.bool("use_regex", default=True))


def _metaspace(f: _Fields) -> Metaspace:
    replacement = f.char("replacement")
    scheme = f.get("prepend_scheme", lambda v: v in PREPEND_SCHEMES,
                   " or ".join(map(repr, PREPEND_SCHEMES)), default="always")
    f.str("str_rep", default=None, nullable=True)
    if f.bool("add_prefix_space", default=None, nullable=True) is False and scheme != "never":
        raise f.fail(f"{f.where}.add_prefix_space",
                     f'false does not match prepend_scheme {scheme!r} (false needs "never")')
    return Metaspace(replacement, scheme, f.bool("split", default=True, nullable=True))


def _replace(f: _Fields) -> Replace:
    pattern = f.get("pattern", lambda v: isinstance(v, dict) and len(v) == 1
                    and isinstance(v.get("String", v.get("Regex")), str),
                    'an object {"String": ...} or {"Regex": ...}')
    content = f.str("content")
    if "String" in pattern:
        return Replace(pattern["String"], content)
    try:
        return Replace(regex=pattern["Regex"], content=content)
    except FasttokError as exc:
        raise f.fail(f"{f.where}.pattern.Regex", str(exc)) from None


def _sequence(f: _Fields) -> Sequence:
    return Sequence(stage_list(f.spec, "decoders", f.where, f.fail, decoder_from_json))


_BUILDERS = {
    "BPEDecoder": lambda f: BPEDecoder(f.str("suffix")),
    "ByteFallback": lambda f: ByteFallback(),
    "ByteLevel": _byte_level,
    "CTC": lambda f: CTC(f.str("pad_token"), f.str("word_delimiter_token"), f.bool("cleanup")),
    "Fuse": lambda f: Fuse(),
    "Metaspace": _metaspace,
    "Replace": _replace,
    "Sequence": _sequence,
    "Strip": lambda f: Strip(f.char("content"), f.count("start"), f.count("stop")),
    "WordPiece": lambda f: WordPiece(f.str("prefix"), f.bool("cleanup")),
}
