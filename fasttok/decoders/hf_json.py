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
from typing import Optional

from fasttok.decoders import PREPEND_SCHEMES
from fasttok.errors import FasttokError
from fasttok.shared.built_once import made_later
from fasttok.shared.json_fields import MISSING, Fields

__all__ = ["decoder_from_json", "decoder_maker"]

# Each reader checks its fields and gives what builds its decoder
# (made_later): the decoder's module is imported, and the object built, when
# something first decodes (a load and an encode never do; ByteLevel's and
# Replace's modules brought two compiled modules and the regex translator
# into every Unigram file's load).


def decoder_from_json(spec, where: str, fail: Callable):
    """The decoder ``spec`` describes (``None`` for ``None``); ``fail(where,
    problem)`` makes the error raised for a bad field.

    >>> decoder_from_json({"type": "WordPiece", "prefix": "##", "cleanup": True},
    ...                   "$.decoder", lambda w, p: ValueError(w + ": " + p))
    WordPiece(prefix='##', cleanup=True)
    """
    make = decoder_maker(spec, where, fail)
    return None if make is None else make()


def decoder_maker(spec, where: str, fail: Callable) -> Optional[Callable]:
    """What builds the decoder ``spec`` describes when called (``None`` for
    ``None``), every field checked now, as :func:`decoder_from_json` checks it.

    >>> make = decoder_maker({"type": "Fuse"}, "$.decoder", None)
    >>> make().decode(["a", "b"])
    'ab'
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
    return made_later("fasttok.decoders.hf_bpe", "BPEDecoder", f.str("suffix"))


def _byte_fallback(f: Fields):
    return made_later("fasttok.decoders.hf_byte_fallback", "ByteFallback")


def _byte_level(f: Fields):
    return made_later("fasttok.decoders.hf_byte_level", "ByteLevel", f.bool("add_prefix_space"),
                      f.bool("trim_offsets"), f.bool("use_regex", default=True))


def _ctc(f: Fields):
    return made_later("fasttok.decoders.hf_wordpiece", "CTC", f.str("pad_token"),
                      f.str("word_delimiter_token"), f.bool("cleanup"))


def _fuse(f: Fields):
    return made_later("fasttok.decoders.hf_simple", "Fuse")


def _metaspace(f: Fields):
    replacement = f.char("replacement")
    scheme = f.choice("prepend_scheme", PREPEND_SCHEMES, default="always")
    f.str("str_rep", default=None, nullable=True)
    if f.bool("add_prefix_space", default=None, nullable=True) is False and scheme != "never":
        raise f.fail(f.at("add_prefix_space"),
                     f'false does not match prepend_scheme {scheme!r} (false needs "never")')
    split = f.bool("split", default=True, nullable=True)
    return made_later("fasttok.decoders.hf_metaspace", "Metaspace", replacement, scheme,
                      True if split is None else split)


def _replace(f: Fields):
    pattern, regex = f.pattern()
    content = f.str("content")
    if not regex:
        return made_later("fasttok.decoders.hf_replace", "Replace", pattern, content)
    # a regex is compiled now: compiling it is its check
    from fasttok.decoders.hf_replace import Replace
    try:
        built = Replace(regex=pattern, content=content)
    except FasttokError as exc:
        raise f.fail(f.at("pattern.Regex"), str(exc)) from None
    return lambda: built


def _sequence(f: Fields):
    makers = f.stages("decoders", decoder_maker)

    def make():
        from fasttok.decoders.hf_simple import Sequence
        return Sequence([m() for m in makers])

    return make


def _strip(f: Fields):
    return made_later("fasttok.decoders.hf_simple", "Strip", f.char("content"), f.int("start"),
                      f.int("stop"))


def _wordpiece(f: Fields):
    return made_later("fasttok.decoders.hf_wordpiece", "WordPiece", f.str("prefix"),
                      f.bool("cleanup"))


_BUILDERS = {
    "BPEDecoder": _bpe, "ByteFallback": _byte_fallback, "ByteLevel": _byte_level, "CTC": _ctc,
    "Fuse": _fuse, "Metaspace": _metaspace, "Replace": _replace, "Sequence": _sequence,
    "Strip": _strip, "WordPiece": _wordpiece,
}
