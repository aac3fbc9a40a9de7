"""``normalizer_from_json``: a ``tokenizer.json`` ``normalizer`` object as a fasttok normalizer.

Fields, their defaults and the spellings accepted are ``tokenizers``
0.23.3's; every field read is checked, and an error names its JSON path.

>>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
>>> normalizer_from_json({"type": "Sequence", "normalizers": [{"type": "NFC"}]},
...                      "$.normalizer", fail)
Sequence([NFC()])
>>> normalizer_from_json({"type": "NFX"}, "$.normalizer", fail)  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: $.normalizer.type: unknown type 'NFX'; known: BertNormalizer, ByteLevel, ...
"""

from __future__ import annotations

from collections.abc import Callable

from fasttok.errors import FasttokError
from fasttok.shared.json_fields import Fields

__all__ = ["normalizer_from_json"]

# Each factory imports its stage's module: a file imports the stages it
# names, not all of them (BertNormalizer's and Strip's Unicode classes were
# a sixth of what fasttok.load of a T5 conversion imported).


def _bert(f: Fields):
    from fasttok.normalizers.bert import BertNormalizer
    return BertNormalizer(clean_text=f.bool("clean_text"),
                          handle_chinese_chars=f.bool("handle_chinese_chars"),
                          strip_accents=f.bool("strip_accents", default=None, nullable=True),
                          lowercase=f.bool("lowercase"))


def _strip(f: Fields):
    from fasttok.normalizers.strip import Strip
    return Strip(left=f.bool("strip_left"), right=f.bool("strip_right"))


def _strip_accents(f: Fields):
    from fasttok.normalizers.strip import StripAccents
    return StripAccents()


def _replace(f: Fields):
    from fasttok.normalizers.replace import Replace
    pattern, regex = f.pattern()
    content = f.str("content")
    try:
        return Replace(pattern, content, regex=regex)
    except FasttokError as exc:
        raise f.fail(f.at("pattern.Regex"), str(exc)) from None


def _precompiled(f: Fields):
    from fasttok.normalizers.precompiled import Precompiled
    from fasttok.shared._charsmap import CharsmapError, charsmap_from_base64
    text = f.str("precompiled_charsmap")
    where = f.at("precompiled_charsmap")
    if not text:
        raise f.fail(where, "the charsmap is empty")
    try:
        # decoded and checked in compiled passes (base64.b64decode with
        # validate=True ran a regex over T5's 320 kB first, then a decoder of
        # ~24 instructions a byte: a third of the file's load; see
        # fasttok/shared/_charsmap.pyx's notes)
        return Precompiled(charsmap_from_base64(text))
    except CharsmapError as exc:
        raise f.fail(where, exc.problem) from None
    except ValueError as exc:
        raise f.fail(where, f"not base64: {exc}") from None


def _form(name: str) -> Callable:
    def build(f: Fields):
        from fasttok.normalizers.unicode_forms import FORMS
        return FORMS[name]()
    return build


def _lowercase(f: Fields):
    from fasttok.normalizers.simple import Lowercase
    return Lowercase()


def _prepend(f: Fields):
    from fasttok.normalizers.simple import Prepend
    return Prepend(f.str("prepend"))


def _byte_level(f: Fields):
    from fasttok.normalizers.simple import ByteLevel
    return ByteLevel()


def _nmt(f: Fields):
    from fasttok.normalizers.nmt import Nmt
    return Nmt()


def _sequence(f: Fields):
    from fasttok.normalizers.sequence import Sequence
    return Sequence(f.stages("normalizers", normalizer_from_json))


# type -> the stage of its object (read by Fields)
_FACTORIES = {
    "BertNormalizer": _bert, "Strip": _strip, "StripAccents": _strip_accents,
    "NFC": _form("NFC"), "NFD": _form("NFD"), "NFKC": _form("NFKC"), "NFKD": _form("NFKD"),
    "Lowercase": _lowercase, "Nmt": _nmt, "Sequence": _sequence,
    "Precompiled": _precompiled, "Replace": _replace, "Prepend": _prepend,
    "ByteLevel": _byte_level,
}


def normalizer_from_json(spec: dict | None, where: str, fail: Callable):
    """The normalizer a ``tokenizer.json`` ``normalizer`` object describes
    (``None`` for ``null``); ``fail(where, problem)`` builds the error raised.

    >>> normalizer_from_json(None, "$.normalizer", None) is None
    True
    """
    if spec is None:
        return None
    f = Fields(spec, where, fail)
    return _FACTORIES[f.type(_FACTORIES)](f)
