"""The stages of a ``tokenizer.json`` as ``tokenizers`` 0.23.3 reads them:
its ``normalizer``, ``pre_tokenizer``, ``post_processor`` and ``decoder``
objects, every field checked at load and each error naming its JSON path.

Fields, their defaults and the spellings accepted are tokenizers' (required
fields are required, optional ones take its serde defaults, unknown fields
are ignored; Metaspace's older ``add_prefix_space`` and ``str_rep``
included). Each reader gives what builds its stage (``xxx_maker``, through
:func:`~fasttok.shared.built_once.made_later`): the stage's module is named
here, and imported and its object built when something first asks for it (a
load never does; its first encode builds the stages it walks, a decode the
decoder, ``add_special_tokens`` the post-processor). What only building
checks is done at load: a charsmap is decoded and its trie checked, a regex
compiled (and kept by the compiler's cache for the build). ``xxx_from_json``
builds the stage at once. The four readers are one module, in the reader of
the file: a load imports it and no stage package (the seven modules they
were took ~2.4M instructions of a Unigram conversion's 27M load). The model is
read by :func:`fasttok.models.hf_fields.model_from_json`, truncation and
padding by :mod:`fasttok.post_processors.hf_json`.

>>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
>>> normalizer_from_json({"type": "Sequence", "normalizers": [{"type": "NFC"}]},
...                      "$.normalizer", fail)
Sequence([NFC()])
>>> normalizer_from_json({"type": "NFX"}, "$.normalizer", fail)  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: $.normalizer.type: unknown type 'NFX'; known: BertNormalizer, ByteLevel, ...
>>> pre_tokenizer_from_json({"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
...                         "$.pre_tokenizer", fail)
Metaspace(replacement='▁', prepend_scheme='always', split=True)
>>> p = post_processor_from_json({"type": "BertProcessing", "sep": ["[SEP]", 102],
...                               "cls": ["[CLS]", 101]}, "$.post_processor", fail)
>>> p.added_tokens(True)
3
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
from typing import Any, Optional

from fasttok.errors import FasttokError
from fasttok.shared import DECODER_PREPEND_SCHEMES, PREPEND_SCHEMES
from fasttok.shared.built_once import made_later
from fasttok.shared.json_fields import MISSING, OBJECT, STR, U32, Fields, check, describe

__all__ = ["normalizer_from_json", "normalizer_maker", "pre_tokenizer_from_json",
           "pre_tokenizer_maker", "post_processor_from_json", "post_processor_maker",
           "decoder_from_json", "decoder_maker"]


def _sequence(module: str, makers: list) -> Callable[[], Any]:
    # what builds the Sequence of module of the stages makers build
    return lambda: made_later(module, "Sequence", [make() for make in makers])()


# ---------------------------------------------------------------- normalizers

def _norm_bert(f: Fields):
    return made_later("fasttok.normalizers.bert", "BertNormalizer",
                      clean_text=f.bool("clean_text"),
                      handle_chinese_chars=f.bool("handle_chinese_chars"),
                      strip_accents=f.bool("strip_accents", default=None, nullable=True),
                      lowercase=f.bool("lowercase"))


def _norm_strip(f: Fields):
    return made_later("fasttok.normalizers.strip", "Strip", left=f.bool("strip_left"),
                      right=f.bool("strip_right"))


def _norm_strip_accents(f: Fields):
    return made_later("fasttok.normalizers.strip", "StripAccents")


def _norm_replace(f: Fields):
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


def _norm_precompiled(f: Fields):
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


def _norm_form(name: str) -> Callable:
    def build(f: Fields):
        return made_later("fasttok.normalizers.unicode_forms", name)
    return build


def _norm_lowercase(f: Fields):
    return made_later("fasttok.normalizers.simple", "Lowercase")


def _norm_prepend(f: Fields):
    return made_later("fasttok.normalizers.simple", "Prepend", f.str("prepend"))


def _norm_byte_level(f: Fields):
    return made_later("fasttok.normalizers.simple", "ByteLevel")


def _norm_nmt(f: Fields):
    return made_later("fasttok.normalizers.nmt", "Nmt")


def _norm_sequence(f: Fields):
    return _sequence("fasttok.normalizers.sequence", f.stages("normalizers", normalizer_maker))


# type -> what builds the normalizer of its object (read by Fields)
_NORMALIZERS = {
    "BertNormalizer": _norm_bert, "Strip": _norm_strip, "StripAccents": _norm_strip_accents,
    "NFC": _norm_form("NFC"), "NFD": _norm_form("NFD"), "NFKC": _norm_form("NFKC"),
    "NFKD": _norm_form("NFKD"), "Lowercase": _norm_lowercase, "Nmt": _norm_nmt,
    "Sequence": _norm_sequence, "Precompiled": _norm_precompiled, "Replace": _norm_replace,
    "Prepend": _norm_prepend, "ByteLevel": _norm_byte_level,
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
    return _NORMALIZERS[f.type(_NORMALIZERS)](f)


# ---------------------------------------------------------------- pre-tokenizers

def _pre_byte_level(f: Fields):
    return made_later("fasttok.pre_tokenizers.byte_level", "ByteLevel",
                      add_prefix_space=f.bool("add_prefix_space"),
                      trim_offsets=f.bool("trim_offsets"),
                      use_regex=f.bool("use_regex", default=True))


def _pre_split(f: Fields):
    from fasttok.shared.normalized import BEHAVIORS
    pattern, regex = f.pattern()
    behavior = f.choice("behavior", BEHAVIORS)
    invert = f.bool("invert")
    if regex:
        from fasttok.shared.regex_translate import compile_onig
        try:
            compile_onig(pattern)  # the pattern's check; its build finds it compiled
        except FasttokError as exc:
            raise f.fail(f.at("pattern.Regex"), str(exc)) from None
    return made_later("fasttok.pre_tokenizers.split", "Split", pattern, behavior, invert,
                      regex=regex)


def _pre_metaspace(f: Fields):
    replacement = f.char("replacement")
    f.str("str_rep", default=None)
    split = f.bool("split", default=True, nullable=True)
    scheme = f.choice("prepend_scheme", PREPEND_SCHEMES, default="always")
    if f.bool("add_prefix_space", default=True) is False:
        if scheme != "never":
            raise f.fail(f.at("add_prefix_space"), "add_prefix_space false needs "
                                                   "prepend_scheme \"never\"")
    return made_later("fasttok.pre_tokenizers.metaspace", "Metaspace", replacement, scheme,
                      True if split is None else split)


def _pre_bert(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "BertPreTokenizer")


def _pre_char_delimiter(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "CharDelimiterSplit", f.char("delimiter"))


def _pre_whitespace(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "Whitespace")


def _pre_whitespace_split(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "WhitespaceSplit")


def _pre_punctuation(f: Fields):
    from fasttok.shared.normalized import BEHAVIORS
    return made_later("fasttok.pre_tokenizers.split", "Punctuation",
                      f.choice("behavior", BEHAVIORS, default="Isolated"))


def _pre_digits(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "Digits", f.bool("individual_digits"))


def _pre_sequence(f: Fields):
    return _sequence("fasttok.pre_tokenizers.sequence",
                     f.stages("pretokenizers", pre_tokenizer_maker))


def _pre_unicode_scripts(f: Fields):
    return made_later("fasttok.pre_tokenizers.unicode_scripts", "UnicodeScripts")


# type -> what builds the pre-tokenizer of its object (read by Fields)
_PRE_TOKENIZERS = {
    "BertPreTokenizer": _pre_bert, "ByteLevel": _pre_byte_level,
    "CharDelimiterSplit": _pre_char_delimiter, "Metaspace": _pre_metaspace,
    "Whitespace": _pre_whitespace, "Sequence": _pre_sequence, "Split": _pre_split,
    "Punctuation": _pre_punctuation, "WhitespaceSplit": _pre_whitespace_split,
    "Digits": _pre_digits, "UnicodeScripts": _pre_unicode_scripts,
}


def pre_tokenizer_from_json(spec: dict | None, where: str, fail: Callable):
    """The pre-tokenizer a ``tokenizer.json`` ``pre_tokenizer`` object describes
    (``None`` for ``null``); ``fail(where, problem)`` builds the error raised.

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> pre_tokenizer_from_json({"type": "Foo"}, "$.p", fail)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: $.p.type: unknown type 'Foo'; known: BertPreTokenizer, ByteLevel, ...
    """
    make = pre_tokenizer_maker(spec, where, fail)
    return None if make is None else make()


def pre_tokenizer_maker(spec: dict | None, where: str, fail: Callable) -> Optional[Callable]:
    """What builds the pre-tokenizer ``spec`` describes when called (``None``
    for ``null``), every field checked now, as :func:`pre_tokenizer_from_json`
    checks it.

    >>> make = pre_tokenizer_maker({"type": "WhitespaceSplit"}, "$.p", None)
    >>> make().pre_tokenize_str("a b")
    [('a', (0, 1)), ('b', (2, 3))]
    """
    if spec is None:
        return None
    f = Fields(spec, where, fail)
    return _PRE_TOKENIZERS[f.type(_PRE_TOKENIZERS)](f)


# ---------------------------------------------------------------- post-processors
#
# tokenizers reads a post-processor as an untagged enum: the first of
# RobertaProcessing (sep, cls, trim_offsets, add_prefix_space),
# BertProcessing (sep, cls), ByteLevel (add_prefix_space, trim_offsets,
# optional use_regex), TemplateProcessing (single, pair, special_tokens) and
# Sequence (processors) that reads the object wins. The first two and
# TemplateProcessing go by their fields whatever "type" says (a
# RobertaProcessing without trim_offsets is read as BertProcessing);
# ByteLevel and Sequence also need their own "type", so a TemplateProcessing
# that carries ByteLevel's flags (Cohere's Command-R files) is still a
# template. fasttok resolves the same way but asks for a known "type", and
# rejects at load what tokenizers would only fail on later: a template
# naming a special token it does not define, a special token with more ids
# than token strings.

_POST_TYPES = ("RobertaProcessing", "BertProcessing", "ByteLevel", "TemplateProcessing",
               "Sequence")
# the variants tokenizers reads only under their own "type" (impl_serde_type)
_TAGGED = frozenset({"ByteLevel", "Sequence"})


class _Mismatch(Exception):
    # one variant's fields are not there: (JSON path, what was expected);
    # the variants read their fields with it as Fields' fail
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(where, problem)
        self.where = where
        self.problem = problem


def _token(f: Fields, name: str) -> tuple:
    value = f.list(name)
    if len(value) != 2:
        raise _Mismatch(f.at(name), f"expected [token, id], got {describe(value)}")
    return (check(value[0], STR, f"{f.at(name)}[0]", _Mismatch),
            check(value[1], U32, f"{f.at(name)}[1]", _Mismatch))


def _post_roberta(f: Fields, fail):
    return made_later("fasttok.post_processors.roberta", "RobertaProcessing", _token(f, "sep"),
                      _token(f, "cls"), f.bool("trim_offsets"), f.bool("add_prefix_space"))


def _post_bert(f: Fields, fail):
    return made_later("fasttok.post_processors.bert", "BertProcessing", _token(f, "sep"),
                      _token(f, "cls"))


def _post_byte_level(f: Fields, fail):
    return made_later("fasttok.post_processors.byte_level", "ByteLevel",
                      f.bool("add_prefix_space"), f.bool("trim_offsets"),
                      f.bool("use_regex", default=True))


def _piece(value, where: str) -> tuple:
    f = Fields(value, where, _Mismatch)
    if len(value) != 1 or next(iter(value)) not in ("Sequence", "SpecialToken"):
        raise _Mismatch(where, 'expected {"Sequence": {...}} or {"SpecialToken": {...}}')
    kind = next(iter(value))
    body = f.object(kind)
    name = body.str("id")
    type_id = body.int("type_id", kind=U32)
    if kind == "Sequence" and name not in ("A", "B"):
        raise _Mismatch(body.at("id"), f'expected "A" or "B", got {name!r}')
    return (kind == "Sequence", name, type_id)


def _post_template(f: Fields, fail):
    templates = [[_piece(p, f"{f.at(key)}[{i}]") for i, p in enumerate(f.list(key))]
                 for key in ("single", "pair")]
    specials = []
    table = f.object("special_tokens")
    for name, body in table.spec.items():
        token = Fields(body, f"{table.where}[{name!r}]", _Mismatch)
        token.str("id")
        ids = token.items("ids", U32)
        tokens = token.items("tokens", STR)
        if len(ids) != len(tokens):
            raise fail(token.where, f"{len(ids)} ids but {len(tokens)} tokens; they must be as many")
        specials.append({"id": name, "ids": ids, "tokens": tokens})
    for i, (is_seq, name, _) in enumerate(templates[0]):
        if is_seq and name == "B":
            raise fail(f"{f.at('single')}[{i}].Sequence.id",
                       "the single-input template uses $B, which tokenizers cannot apply "
                       "(it panics on every input)")
    defined = {s["id"] for s in specials}
    for key, template in zip(("single", "pair"), templates):
        for i, (is_seq, name, _) in enumerate(template):
            if not is_seq and name not in defined:
                raise fail(f"{f.at(key)}[{i}].SpecialToken.id",
                           f"special token {name!r} is not in special_tokens")
    return made_later("fasttok.post_processors.template", "TemplateProcessing", templates[0],
                      templates[1], specials, require_pair=False)


def _post_sequence(f: Fields, fail):
    makers = []
    for i, item in enumerate(f.list("processors")):
        at = f"{f.at('processors')}[{i}]"
        if item is None:
            raise _Mismatch(at, "expected a post-processor, got null")
        makers.append(post_processor_maker(item, at, fail))
    return _sequence("fasttok.post_processors.sequence", makers)


_POST_PROCESSORS = {"RobertaProcessing": _post_roberta, "BertProcessing": _post_bert,
                    "ByteLevel": _post_byte_level, "TemplateProcessing": _post_template,
                    "Sequence": _post_sequence}


def post_processor_from_json(spec: dict | None, where: str, fail):
    """The post-processor of ``spec`` (``None`` for ``null``).

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> post_processor_from_json({"type": "ByteLevel", "add_prefix_space": True,
    ...                           "trim_offsets": False}, "$.post_processor", fail)
    ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True)
    """
    make = post_processor_maker(spec, where, fail)
    return None if make is None else make()


def post_processor_maker(spec: dict | None, where: str, fail) -> Optional[Callable]:
    """What builds the post-processor of ``spec`` when called (``None`` for
    ``null``), every field checked now, as :func:`post_processor_from_json`
    checks it.

    >>> make = post_processor_maker({"type": "BertProcessing", "sep": ["[SEP]", 1],
    ...                              "cls": ["[CLS]", 0]}, "$.post_processor", None)
    >>> make().added_tokens(False)
    2
    """
    if spec is None:
        return None
    check(spec, OBJECT, where, fail)
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in _POST_PROCESSORS:
        raise fail(f"{where}.type", f"unknown post-processor type {kind!r}; "
                                    f"known: {', '.join(_POST_TYPES)}")
    first = None
    fields = Fields(spec, where, _Mismatch)
    for name in _POST_TYPES:
        if name in _TAGGED and name != kind:
            continue
        try:
            return _POST_PROCESSORS[name](fields, fail)
        except _Mismatch as mismatch:
            if name == kind:
                first = mismatch
    raise fail(first.where, f"{kind}: {first.problem}")


# ---------------------------------------------------------------- decoders
#
# Metaspace's old add_prefix_space: false is accepted only beside
# prepend_scheme: "never", as tokenizers does.

def _dec_bpe(f: Fields):
    return made_later("fasttok.decoders.hf_bpe", "BPEDecoder", f.str("suffix"))


def _dec_byte_fallback(f: Fields):
    return made_later("fasttok.decoders.hf_byte_fallback", "ByteFallback")


def _dec_byte_level(f: Fields):
    return made_later("fasttok.decoders.hf_byte_level", "ByteLevel", f.bool("add_prefix_space"),
                      f.bool("trim_offsets"), f.bool("use_regex", default=True))


def _dec_ctc(f: Fields):
    return made_later("fasttok.decoders.hf_wordpiece", "CTC", f.str("pad_token"),
                      f.str("word_delimiter_token"), f.bool("cleanup"))


def _dec_fuse(f: Fields):
    return made_later("fasttok.decoders.hf_simple", "Fuse")


def _dec_metaspace(f: Fields):
    replacement = f.char("replacement")
    scheme = f.choice("prepend_scheme", DECODER_PREPEND_SCHEMES, default="always")
    f.str("str_rep", default=None, nullable=True)
    if f.bool("add_prefix_space", default=None, nullable=True) is False and scheme != "never":
        raise f.fail(f.at("add_prefix_space"),
                     f'false does not match prepend_scheme {scheme!r} (false needs "never")')
    split = f.bool("split", default=True, nullable=True)
    return made_later("fasttok.decoders.hf_metaspace", "Metaspace", replacement, scheme,
                      True if split is None else split)


def _dec_replace(f: Fields):
    pattern, regex = f.pattern()
    content = f.str("content")
    if not regex:
        return made_later("fasttok.decoders.hf_replace", "Replace", pattern, content)
    from fasttok.shared.regex_translate import compile_generic
    try:
        compile_generic(pattern)  # the pattern's check; its build finds it compiled
    except FasttokError as exc:
        raise f.fail(f.at("pattern.Regex"), str(exc)) from None
    return made_later("fasttok.decoders.hf_replace", "Replace", regex=pattern, content=content)


def _dec_sequence(f: Fields):
    return _sequence("fasttok.decoders.hf_simple", f.stages("decoders", decoder_maker))


def _dec_strip(f: Fields):
    return made_later("fasttok.decoders.hf_simple", "Strip", f.char("content"), f.int("start"),
                      f.int("stop"))


def _dec_wordpiece(f: Fields):
    return made_later("fasttok.decoders.hf_wordpiece", "WordPiece", f.str("prefix"),
                      f.bool("cleanup"))


_DECODERS = {
    "BPEDecoder": _dec_bpe, "ByteFallback": _dec_byte_fallback, "ByteLevel": _dec_byte_level,
    "CTC": _dec_ctc, "Fuse": _dec_fuse, "Metaspace": _dec_metaspace, "Replace": _dec_replace,
    "Sequence": _dec_sequence, "Strip": _dec_strip, "WordPiece": _dec_wordpiece,
}


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
    build = _DECODERS.get(kind) if isinstance(kind, str) else None
    if build is None:
        raise fail(f.at("type"), f"unknown decoder type "
                                 f"{'(missing)' if kind is MISSING else repr(kind)}; known: "
                                 + ", ".join(sorted(_DECODERS)))
    return build(f)
