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
from typing import Optional

from fasttok.errors import FasttokError
from fasttok.shared.built_once import made_later
from fasttok.shared.json_fields import Fields

__all__ = ["normalizer_from_json", "normalizer_maker"]

# Each factory checks its fields and gives what builds its stage
# (made_later): the stage's module is imported, and the object built, when
# first asked for (the first encode), so a load imports none of them and a
# file only the ones it names (BertNormalizer's and Strip's Unicode classes
# were a sixth of what fasttok.load of a T5 conversion imported). What only
# building checks is done at load: a charsmap is decoded, a regex compiled.


def _bert(f: Fields):
    return made_later("fasttok.normalizers.bert", "BertNormalizer",
                      clean_text=f.bool("clean_text"),
                      handle_chinese_chars=f.bool("handle_chinese_chars"),
                      strip_accents=f.bool("strip_accents", default=None, nullable=True),
                      lowercase=f.bool("lowercase"))


def _strip(f: Fields):
    return made_later("fasttok.normalizers.strip", "Strip", left=f.bool("strip_left"),
                      right=f.bool("strip_right"))


def _strip_accents(f: Fields):
    return made_later("fasttok.normalizers.strip", "StripAccents")


def _replace(f: Fields):
    pattern, regex = f.pattern()
    content = f.str("content")
    if not regex:
        return made_later("fasttok.normalizers.replace", "Replace", pattern, content)
    from fasttok.shared.regex_translate import compile_onig
    try:
        compiled = compile_onig(pattern)  # the pattern's check
    except FasttokError as exc:
        raise f.fail(f.at("pattern.Regex"), str(exc)) from None
    return made_later("fasttok.normalizers.replace", "Replace", pattern, content, regex=True,
                      compiled=compiled)


def _precompiled(f: Fields):
    from fasttok.shared._charsmap import CharsmapError, CharsmapRules, charsmap_from_base64
    text = f.str("precompiled_charsmap")
    where = f.at("precompiled_charsmap")
    if not text:
        raise f.fail(where, "the charsmap is empty")
    try:
        # decoded and checked in compiled passes (base64.b64decode with
        # validate=True ran a regex over T5's 320 kB first, then a decoder of
        # ~24 instructions a byte: a third of the file's load; see
        # fasttok/shared/_charsmap.pyx's notes)
        charsmap = charsmap_from_base64(text)
        rules = CharsmapRules(charsmap)  # its trie checked
    except CharsmapError as exc:
        raise f.fail(where, exc.problem) from None
    except ValueError as exc:
        raise f.fail(where, f"not base64: {exc}") from None
    return made_later("fasttok.normalizers.precompiled", "Precompiled", charsmap, rules)


def _form(name: str) -> Callable:
    def build(f: Fields):
        return made_later("fasttok.normalizers.unicode_forms", name)
    return build


def _lowercase(f: Fields):
    return made_later("fasttok.normalizers.simple", "Lowercase")


def _prepend(f: Fields):
    return made_later("fasttok.normalizers.simple", "Prepend", f.str("prepend"))


def _byte_level(f: Fields):
    return made_later("fasttok.normalizers.simple", "ByteLevel")


def _nmt(f: Fields):
    return made_later("fasttok.normalizers.nmt", "Nmt")


def _sequence(f: Fields):
    makers = f.stages("normalizers", normalizer_maker)

    def make():
        from fasttok.normalizers.sequence import Sequence
        return Sequence([m() for m in makers])

    return make


# type -> what builds the stage of its object (read by Fields)
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
    make = normalizer_maker(spec, where, fail)
    return None if make is None else make()


def normalizer_maker(spec: dict | None, where: str, fail: Callable) -> Optional[Callable]:
    """What builds the normalizer ``spec`` describes when called (``None``
    for ``null``), every field checked now, as :func:`normalizer_from_json`
    checks it.

    >>> make = normalizer_maker({"type": "Lowercase"}, "$.normalizer", None)
    >>> make().normalize_str("AB")
    'ab'
    """
    if spec is None:
        return None
    f = Fields(spec, where, fail)
    return _FACTORIES[f.type(_FACTORIES)](f)
