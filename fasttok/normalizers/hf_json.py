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
from fasttok.shared.json_fields import Fields

__all__ = ["normalizer_from_json"]


def _bert(f: Fields):
    return BertNormalizer(clean_text=f.bool("clean_text"),
                          handle_chinese_chars=f.bool("handle_chinese_chars"),
                          strip_accents=f.bool("strip_accents", default=None, nullable=True),
                          lowercase=f.bool("lowercase"))


def _strip(f: Fields):
    return Strip(left=f.bool("strip_left"), right=f.bool("strip_right"))


def _replace(f: Fields):
    pattern, regex = f.pattern()
    content = f.str("content")
    try:
        return Replace(pattern, content, regex=regex)
    except FasttokError as exc:
        raise f.fail(f.at("pattern.Regex"), str(exc)) from None


def _precompiled(f: Fields):
    text = f.str("precompiled_charsmap")
    where = f.at("precompiled_charsmap")
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise f.fail(where, f"not base64: {exc}") from None
    if not blob:
        raise f.fail(where, "the charsmap is empty")
    try:
        return Precompiled(blob)
    except CharsmapError as exc:
        raise f.fail(where, exc.problem) from None


# type -> the stage of its object (read by Fields)
_FACTORIES = {
    "BertNormalizer": _bert, "Strip": _strip, "StripAccents": lambda f: StripAccents(),
    "NFC": lambda f: NFC(), "NFD": lambda f: NFD(), "NFKC": lambda f: NFKC(),
    "NFKD": lambda f: NFKD(), "Lowercase": lambda f: Lowercase(), "Nmt": lambda f: Nmt(),
    "Sequence": lambda f: Sequence(f.stages("normalizers", normalizer_from_json)),
    "Precompiled": _precompiled, "Replace": _replace,
    "Prepend": lambda f: Prepend(f.str("prepend")), "ByteLevel": lambda f: ByteLevel(),
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
