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

from fasttok.errors import FasttokError
from fasttok.shared.json_fields import MISSING, Fields

__all__ = ["decoder_from_json"]

# Each builder imports its decoder's module: a file imports the decoders it
# names, not all of them (ByteLevel's and Replace's brought two compiled
# modules and the regex translator into every Unigram file's load).


def decoder_from_json(spec, where: str, fail: Callable):
    """The decoder ``spec`` describes (``None`` for ``None``); ``fail(where,
    problem)`` makes the error raised for a bad field.

    >>> decoder_from_json({"type": "WordPiece", "prefix": "##", "cleanup": True},
    ...                   "$.decoder", lambda w, p: ValueError(w + ": " + p))
    WordPiece(prefix='##', cleanup=True)
    """
    if spec is None:
        return None
    f = Fields(spec, where, fail)
    kind = spec.get("type", MISSING)
    build = _BUILDERS.get(kind) if isinstance(kind, str) else None
    if build is None:
        raise fail(f.at("type"), f"unknown decoder type "
                                 f"{'(missing)' if kind is MISSING else repr(kind)}; known: "
                                 + ", ".join(sorted(_BUILDERS)))
    return build(f)


def _bpe(f: Fields):
    from fasttok.decoders.hf_bpe import BPEDecoder
    return BPEDecoder(f.str("suffix"))


def _byte_fallback(f: Fields):
    from fasttok.decoders.hf_byte_fallback import ByteFallback
    return ByteFallback()


def _byte_level(f: Fields):
    from fasttok.decoders.hf_byte_level import ByteLevel
    return ByteLevel(f.bool("add_prefix_space"), f.bool("trim_offsets"),
                     f.bool("use_regex", default=True))


def _ctc(f: Fields):
    from fasttok.decoders.hf_wordpiece import CTC
    return CTC(f.str("pad_token"), f.str("word_delimiter_token"), f.bool("cleanup"))


def _fuse(f: Fields):
    from fasttok.decoders.hf_simple import Fuse
    return Fuse()


def _metaspace(f: Fields):
    from fasttok.decoders.hf_metaspace import PREPEND_SCHEMES, Metaspace
    replacement = f.char("replacement")
    scheme = f.choice("prepend_scheme", PREPEND_SCHEMES, default="always")
    f.str("str_rep", default=None, nullable=True)
    if f.bool("add_prefix_space", default=None, nullable=True) is False and scheme != "never":
        raise f.fail(f.at("add_prefix_space"),
                     f'false does not match prepend_scheme {scheme!r} (false needs "never")')
    split = f.bool("split", default=True, nullable=True)
    return Metaspace(replacement, scheme, True if split is None else split)


def _replace(f: Fields):
    from fasttok.decoders.hf_replace import Replace
    pattern, regex = f.pattern()
    content = f.str("content")
    if not regex:
        return Replace(pattern, content)
    try:
        return Replace(regex=pattern, content=content)
    except FasttokError as exc:
        raise f.fail(f.at("pattern.Regex"), str(exc)) from None


def _sequence(f: Fields):
    from fasttok.decoders.hf_simple import Sequence
    return Sequence(f.stages("decoders", decoder_from_json))


def _strip(f: Fields):
    from fasttok.decoders.hf_simple import Strip
    return Strip(f.char("content"), f.int("start"), f.int("stop"))


def _wordpiece(f: Fields):
    from fasttok.decoders.hf_wordpiece import WordPiece
    return WordPiece(f.str("prefix"), f.bool("cleanup"))


_BUILDERS = {
    "BPEDecoder": _bpe, "ByteFallback": _byte_fallback, "ByteLevel": _byte_level, "CTC": _ctc,
    "Fuse": _fuse, "Metaspace": _metaspace, "Replace": _replace, "Sequence": _sequence,
    "Strip": _strip, "WordPiece": _wordpiece,
}
