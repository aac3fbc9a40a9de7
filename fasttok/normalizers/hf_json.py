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

import base64
import binascii
from collections.abc import Callable

from fasttok.errors import FasttokError
from fasttok.normalizers.bert import BertNormalizer
from fasttok.normalizers.nmt import Nmt
from fasttok.normalizers.precompiled import Precompiled
from fasttok.normalizers.replace import Replace
from fasttok.normalizers.sequence import Sequence
from fasttok.normalizers.simple import ByteLevel, Lowercase, Prepend
from fasttok.normalizers.strip import Strip, StripAccents
from fasttok.normalizers.unicode_forms import NFC, NFD, NFKC, NFKD
from fasttok.shared._charsmap import CharsmapError
from fasttok.shared.json_fields import check_object, field, no_fields, pattern_of, stage_list, type_of

__all__ = ["normalizer_from_json"]


def _bert(spec: dict, where: str, fail: Callable):
    return BertNormalizer(clean_text=field(spec, "clean_text", bool, where, fail),
                          handle_chinese_chars=field(spec, "handle_chinese_chars", bool, where,
                                                     fail),
                          strip_accents=field(spec, "strip_accents", bool, where, fail,
                                              default=None, nullable=True),
                          lowercase=field(spec, "lowercase", bool, where, fail))


def _strip(spec: dict, where: str, fail: Callable):
    return Strip(left=field(spec, "strip_left", bool, where, fail),
                 right=field(spec, "strip_right", bool, where, fail))


def _replace(spec: dict, where: str, fail: Callable):
    pattern, regex = pattern_of(spec, where, fail)
    content = field(spec, "content", str, where, fail)
    try:
        return Replace(pattern, content, regex=regex)
    except FasttokError as exc:
        raise fail(f"{where}.pattern.Regex", str(exc)) from None


def _prepend(spec: dict, where: str, fail: Callable):
    return Prepend(field(spec, "prepend", str, where, fail))


def _precompiled(spec: dict, where: str, fail: Callable):
    text = field(spec, "precompiled_charsmap", str, where, fail)
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise fail(f"{where}.precompiled_charsmap", f"not base64: {exc}") from None
    if not blob:
        raise fail(f"{where}.precompiled_charsmap", "the charsmap is empty")
    try:
        return Precompiled(blob)
    except CharsmapError as exc:
        raise fail(f"{where}.precompiled_charsmap", exc.problem) from None


def _sequence(spec: dict, where: str, fail: Callable):
    return Sequence(stage_list(spec, "normalizers", where, fail, normalizer_from_json))


_FACTORIES = {
    "BertNormalizer": _bert, "Strip": _strip, "StripAccents": no_fields(StripAccents),
    "NFC": no_fields(NFC), "NFD": no_fields(NFD), "NFKC": no_fields(NFKC), "NFKD": no_fields(NFKD),
    "Sequence": _sequence, "Lowercase": no_fields(Lowercase), "Nmt": no_fields(Nmt),
    "Precompiled": _precompiled, "Replace": _replace, "Prepend": _prepend,
    "ByteLevel": no_fields(ByteLevel),
}


def normalizer_from_json(spec: dict | None, where: str, fail: Callable):
    """The normalizer a ``tokenizer.json`` ``normalizer`` object describes
    (``None`` for ``null``); ``fail(where, problem)`` builds the error raised.

    >>> normalizer_from_json(None, "$.normalizer", None) is None
    True
    """
    if spec is None:
        return None
    check_object(spec, where, fail)
    return _FACTORIES[type_of(spec, where, fail, _FACTORIES)](spec, where, fail)
