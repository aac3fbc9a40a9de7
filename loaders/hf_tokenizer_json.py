"""Reader for Hugging Face ``tokenizer.json`` files.

The file is one JSON object with one entry per stage (``normalizer``,
``pre_tokenizer``, ``model``, ``post_processor``, ``decoder``) plus
``added_tokens``, ``truncation`` and ``padding``. :func:`load_tokenizer_json`
reads it (and the ``tokenizer_config.json`` beside it, when there is one)
into a record that carries the document; the stages themselves are built
from it by :mod:`fasttok.formats.hf`, each component checking its own part
and naming the JSON path of what is wrong.

:func:`byte_level_record` recognises the configuration GPT-2-style models
ship (Llama 3, Qwen 2/3, GPT-4o's): a ``BPE`` model written in GPT-2's
byte-level alphabet, a ``Split`` regex followed by
``ByteLevel(use_regex=false)`` (or ``ByteLevel`` alone with its own GPT-2
regex), no normalizer or ``NFC``, and the ``ByteLevel`` decoder. Such a file
also gets a byte-level record that fasttok's fused compiled BPE runs
directly: tokens become raw bytes; ``merges`` (either ``"a b"`` strings or
``["a", "b"]`` pairs, rank = list index) become pairs of token bytes; every
added token is a special token of the record (``tokenizers`` always matches
added tokens before the model, special or not), and an ordinary vocabulary
entry under an added token's id is left out, because the model can never
produce it. BOS/EOS come from a ``TemplateProcessing`` post-processor (which
is also what ``add_special_tokens=True`` adds), else from the
``bos_token``/``eos_token`` of the ``tokenizer_config.json``, which then
only names them.

:func:`tokenizer_json_file_reading` (what ``fasttok.load`` and
``fasttok.hf.Tokenizer.from_file`` read a file with) keeps a BPE model's
vocabulary and merges packed (:func:`~fasttok.loaders.json_document.parse_tokenizer_json`)
and builds a byte-level file's token tables from them in C, once; its
Python objects are made only if someone asks for the whole record or the
model object. A model the packed build does not take as it is (an entry
outside the alphabet, ids listed twice, a merge that fails) is read from
its Python objects as before, so each error names what it names there.

>>> from fasttok.shared._bytemap import bytes_to_unicode
>>> alphabet = bytes_to_unicode()
>>> doc = {"model": {"type": "BPE", "merges": ["a b"],
...                  "vocab": {alphabet[b]: b for b in range(256)} | {"ab": 256}},
...        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
...        "decoder": {"type": "ByteLevel"}, "added_tokens": []}
>>> byte_level_record(doc, "t.json").merges
((b'a', b'b'),)
>>> byte_level_record({"model": {"type": "WordPiece"}}, "t.json") is None
True
"""

from __future__ import annotations

import functools
import math
import os
from typing import Any, Optional

from fasttok.errors import VocabularyError, VocabularyFileError
from fasttok.loaders.json_document import parse_json_document, parse_tokenizer_json
from fasttok.loaders.sniff import looks_like_tokenizer_json
from fasttok.shared._json_reader import FileBytes, PackedModel, PackedPieces, PackedVocab, \
    read_file
from fasttok.shared._tables import TokenTables
from fasttok.shared.gc_pause import gc_paused
from fasttok.shared.json_fields import BOOL, INTEGER, OBJECT, Fields, all_ints
from fasttok.vocab import MAX_ID, Vocabulary, ids_are_dense, token_layout

__all__ = ["load_tokenizer_json", "tokenizer_json_record", "tokenizer_json_file_record",
           "tokenizer_json_file_reading", "TokenizerJsonReading", "tokenizer_json_name",
           "tokenizer_config_path", "read_tokenizer_config", "byte_level_record", "looks_like_tokenizer_json",
           "BYTE_LEVEL_REGEX", "JsonPathError", "ModelObject"]

# What ByteLevel(use_regex=true) splits with (tokenizers'
# pre_tokenizers/byte_level.rs); the same text as GPT-2's original pattern.
BYTE_LEVEL_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"



#: the flags of an added token (each true, false or missing)
ADDED_TOKEN_FLAGS = ("special", "single_word", "lstrip", "rstrip", "normalized")


class _OtherShape(Exception):
    # the document is valid but not the byte-level configuration
    pass


class _Unpacked(Exception):
    # the packed model is not what the compiled tables take: the model is
    # read again from its Python objects
    pass


class JsonPathError:
    """``fail(where, problem)`` for one file: the ``VocabularyFileError``
    naming the file and the JSON path, which the stage factories raise.

    >>> str(JsonPathError("t.json")("$.model.type", "unknown"))
    "t.json: field '$.model.type': unknown"
    """

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, where: str, problem: str) -> VocabularyFileError:
        return VocabularyFileError(self.path, problem, field=where)


class _Reader:
    """Checks against the document, each error naming the file and the JSON path."""

    def __init__(self, name: str) -> None:
        self.fail = JsonPathError(name)

    def other_shape(self) -> _OtherShape:
        return _OtherShape()

    def fields(self, obj: Any, where: str) -> Fields:
        return Fields(obj, where, self.fail)

    def token_bytes(self, text: str) -> bytes:
        from fasttok.shared._bytemap import decode_byte_level

        try:
            return decode_byte_level(text)
        except ValueError:
            raise _OtherShape() from None


def _entry(text: str) -> str:
    # an error's JSON path (json imported here: the load itself never needs it)
    import json

    return f"$.model.vocab[{json.dumps(text, ensure_ascii=False)}]"


def _check_model(r: _Reader, model: dict) -> None:
    kind = r.fields(model, "$.model").str("type", None)
    if kind != "BPE":
        raise r.other_shape()
    rules = (("byte_fallback", False), ("dropout", None), ("continuing_subword_prefix", ""),
             ("end_of_word_suffix", ""))
    for key, off in rules:
        if model.get(key) not in (None, off):
            raise r.other_shape()


def _pattern(r: _Reader, doc: dict) -> tuple:
    """``(regex, Split behavior)`` of the pre-tokenizer."""
    pre = doc.get("pre_tokenizer")
    where = "$.pre_tokenizer"
    kind = r.fields(pre, where).str("type") if pre is not None else None
    if kind == "ByteLevel":
        _check_byte_level(r, pre, where, use_regex=True)
        return BYTE_LEVEL_REGEX, "Isolated"
    steps = r.fields(pre, where).list("pretokenizers") if kind == "Sequence" else None
    if (steps is None or len(steps) != 2
            or not all(isinstance(s, dict) for s in steps)
            or [s.get("type") for s in steps] != ["Split", "ByteLevel"]):
        raise r.other_shape()
    split = steps[0]
    at = f"{where}.pretokenizers[0]"
    fields = r.fields(split, at)
    pattern = fields.object("pattern")
    if "Regex" not in pattern.spec:
        raise r.other_shape()
    regex = pattern.str("Regex")
    behavior = fields.str("behavior")
    invert = fields.bool("invert", False)
    # "Isolated": matches and the text between them are pieces; inverted
    # "Removed": matches are pieces, the text between them is dropped.
    if (behavior, invert) not in (("Isolated", False), ("Removed", True)):
        raise r.other_shape()
    _check_byte_level(r, steps[1], f"{where}.pretokenizers[1]", use_regex=False)
    return regex, behavior


def _check_byte_level(r: _Reader, step: dict, where: str, *, use_regex: bool) -> None:
    fields = r.fields(step, where)
    if fields.bool("add_prefix_space", True):
        raise r.other_shape()
    if fields.bool("use_regex", True) != use_regex:
        raise r.other_shape()


def _normalizer(r: _Reader, doc: dict) -> Optional[str]:
    norm = doc.get("normalizer")
    if norm is None:
        return None
    kind = r.fields(norm, "$.normalizer").str("type")
    if kind != "NFC":
        raise r.other_shape()
    return kind


def _check_decoder(r: _Reader, doc: dict) -> None:
    dec = doc.get("decoder")
    kind = r.fields(dec, "$.decoder").str("type") if dec is not None else None
    if kind != "ByteLevel":
        raise r.other_shape()


def _template(r: _Reader, doc: dict) -> tuple:
    """``(head ids, tail ids)`` that ``add_special_tokens=True`` puts around one sequence."""
    post = doc.get("post_processor")
    where = "$.post_processor"
    steps = [(where, post)]
    if isinstance(post, dict) and post.get("type") == "Sequence":
        steps = [(f"{where}.processors[{i}]", p)
                 for i, p in enumerate(r.fields(post, where).list("processors"))]
    head: list = []
    tail: list = []
    for at, step in steps:
        kind = r.fields(step, at).str("type") if step is not None else None
        if kind in (None, "ByteLevel"):
            continue  # ByteLevel only moves offsets
        if kind != "TemplateProcessing":
            raise r.other_shape()
        fields = r.fields(step, at)
        single = fields.list("single")
        specials = fields.object("special_tokens")
        seen_sequence = False
        for i, item in enumerate(single):
            piece = f"{at}.single[{i}]"
            if isinstance(item, dict) and "Sequence" in item:
                seen_sequence = True
                continue
            name = r.fields(item, piece).object("SpecialToken").str("id")
            ids = specials.object(name).list("ids")
            (tail if seen_sequence else head).extend(ids)
    for ids in (head, tail):
        if len(ids) > 1 or not all(isinstance(i, int) for i in ids):
            raise r.other_shape()
    return tuple(head), tuple(tail)


def _config_ids(config: Optional[dict], by_text: dict) -> dict:
    """``bos_id``/``eos_id`` named by a ``tokenizer_config.json`` document."""
    found = {}
    for key, field in (("bos_token", "bos_id"), ("eos_token", "eos_id")):
        token = config.get(key) if isinstance(config, dict) else None
        if isinstance(token, dict):  # transformers' AddedToken form
            token = token.get("content")
        if isinstance(token, str) and token in by_text:
            found[field] = by_text[token]
    return found


def tokenizer_config_path(path: str) -> str:
    """Where the ``tokenizer_config.json`` of the file ``path`` would be: beside it.

    >>> tokenizer_config_path("/m/llama3/tokenizer.json")
    '/m/llama3/tokenizer_config.json'
    """
    return os.path.join(os.path.dirname(os.path.abspath(path)), "tokenizer_config.json")


def read_tokenizer_config(path: str) -> Optional[dict]:
    """The ``tokenizer_config.json`` beside the file ``path``, or ``None``.

    >>> read_tokenizer_config("/nonexistent/tokenizer.json") is None
    True
    """
    config_path = tokenizer_config_path(path)
    try:
        with open(config_path, "rb") as f:
            config = parse_json_document(f.read(), config_path)
    except FileNotFoundError:
        return None
    if not isinstance(config, dict):
        raise VocabularyFileError(config_path, f"expected an object, found {type(config).__name__}",
                                  field="$")
    return config


def byte_level_record(doc: Any, source: str, *, name: Optional[str] = None,
                      config: Optional[dict] = None) -> Optional[Vocabulary]:
    """The byte-level BPE record of a parsed ``tokenizer.json`` document, or
    ``None`` when the document is another configuration.

    ``source`` (the file) starts error messages; ``name`` names the record
    (default ``source``); ``config``, the ``tokenizer_config.json`` document,
    may name BOS/EOS.

    >>> byte_level_record({"model": {"type": "BPE", "vocab": {}, "merges": []}, "decoder": None},
    ...                   "x.json") is None
    True
    """
    try:
        return _byte_level_record(doc, source, name, config)[0]
    except _OtherShape:
        return None




def _byte_level_record(doc: Any, source: str, name: Optional[str], config: Optional[dict],
                       packed: Optional[PackedModel] = None) -> tuple:
    # (record, None, None), or with packed (record listing no tokens or
    # merges, its TokenTables, its largest ordinary id); _OtherShape for
    # another configuration, and with packed _Unpacked for a model the
    # packed tables do not take
    r = _Reader(source)
    model = r.fields(doc, "$").get("model", OBJECT)
    _check_model(r, model)
    normalizer = _normalizer(r, doc)
    pattern, behavior = _pattern(r, doc)
    _check_decoder(r, doc)
    # the byte map is imported once the file is found byte-level: no other kind uses it
    from fasttok.shared._bytemap import byte_level_merges, byte_level_tables, decode_byte_level

    specials: dict = {}
    added = r.fields(doc, "$").list("added_tokens", [])
    for i, entry in enumerate(added):
        at = f"$.added_tokens[{i}]"
        fields = r.fields(entry, at)
        content = fields.str("content")
        token_id = fields.get("id", INTEGER)
        for flag in ("lstrip", "rstrip", "single_word"):
            if fields.bool(flag, False):
                raise r.other_shape()
        if normalizer is not None and fields.bool("normalized", False):
            raise r.other_shape()
        specials[content] = token_id
    added_ids = set(specials.values())
    if packed is not None:
        built = byte_level_tables(packed.vocab, packed.merges, added_ids)
        if built is None:
            raise _Unpacked()
        tables, top, left_out_entries = built
        left_out = frozenset(text for text, _ in left_out_entries)
        model_gives_left_out = bool(left_out) and bool(model.get("ignore_merges", False))
        record = _byte_level_vocabulary(
            r, doc, model, source, name, config, specials, (), None, (), normalizer, pattern,
            behavior, left_out, model_gives_left_out)
        return record, tables, top

    vocab = r.fields(model, "$.model").get("vocab", OBJECT)
    texts, ids = list(vocab), list(vocab.values())
    if not all_ints(ids, math.inf):
        for text, token_id in vocab.items():
            if not all_ints([token_id], math.inf):
                raise r.fail(_entry(text), f"id {token_id!r} is not a non-negative integer")
    if len(set(ids)) < len(ids):
        raise r.other_shape()  # tokenizers keeps both strings; the pipeline does too
    # An added token's id in the vocabulary too (GPT-4o's <|endoftext|>) is
    # always matched as the added token first, so the entry is left out.
    left_out: frozenset = frozenset()
    if not added_ids.isdisjoint(ids):
        left_out = frozenset(t for t, i in zip(texts, ids) if i in added_ids)
        kept = [k for k, i in enumerate(ids) if i not in added_ids]
        texts, ids = [texts[k] for k in kept], [ids[k] for k in kept]
    # an entry outside the byte-level alphabet can never be produced, but
    # tokenizers keeps it (and decodes it): the pipeline serves such a file
    try:
        raws = list(map(decode_byte_level, texts))
    except ValueError:
        raise r.other_shape() from None
    tokens, ids = token_layout(list(zip(ids, raws)))
    tables = TokenTables(tokens)
    if any(tables.find(bytes([b])) < 0 for b in range(256)):
        # tokenizers drops a character it has no token for (with no unk):
        # the fused core needs every byte, the pipeline does it as tokenizers
        raise r.other_shape()
    merges_in = r.fields(model, "$.model").list("merges")
    merges = byte_level_merges(merges_in, tables, tokens)
    # whether tokenizers' model may still give an entry left out for an added
    # token (a merge makes or uses it, or ignore_merges looks a piece up
    # whole): the fused core never does, so its offsets walk leaves the file
    # to the stages (fasttok.formats.hf_byte_level)
    model_gives_left_out = bool(left_out) and (isinstance(merges, int)
                                               or bool(model.get("ignore_merges", False)))
    if isinstance(merges, int) and left_out:
        merges = _merges_without(r, merges_in, left_out, normalizer, tables, tokens)
    if isinstance(merges, int):
        raise _merge_error(r, merges, merges_in[merges], vocab, set(raws))
    return _byte_level_vocabulary(r, doc, model, source, name, config, specials, tokens, ids,
                                  merges, normalizer, pattern, behavior, left_out,
                                  model_gives_left_out), None, None


def _byte_level_vocabulary(r: _Reader, doc: dict, model: dict, source: str, name: Optional[str],
                           config: Optional[dict], specials: dict, tokens: tuple,
                           ids: Optional[tuple], merges: Any, normalizer: Optional[str],
                           pattern: str, behavior: str, left_out: frozenset,
                           model_gives_left_out: bool) -> Vocabulary:
    # the record of a byte-level document, its tokens and merges given
    head, tail = _template(r, doc)
    names = _config_ids(config, specials)
    try:
        return Vocabulary(
            name=name or source, model="hf_byte_bpe", tokens=tokens, ids=ids, merges=tuple(merges),
            special_tokens=specials, pattern=pattern, normalizer=normalizer,
            bos_id=head[0] if head else names.get("bos_id"),
            eos_id=tail[0] if tail else names.get("eos_id"),
            add_bos=bool(head), add_eos=bool(tail), source=source,
            metadata={"ignore_merges": bool(model.get("ignore_merges", False)),
                      "split_behavior": behavior, "model_gives_left_out": model_gives_left_out,
                      # their texts, for a walk that declines a text where the
                      # model may meet one (the table cache keeps no vocabulary)
                      "left_out": tuple(sorted(left_out)) if model_gives_left_out else ()},
        ).validate()
    except VocabularyError as exc:
        raise VocabularyFileError(source, str(exc)) from None


def _merge_parts(merge: Any) -> Optional[tuple]:
    # the two parts of a well-formed merge, else None (its error comes later)
    parts = merge.split(" ") if isinstance(merge, str) else merge
    if isinstance(parts, list) and len(parts) == 2 and all(isinstance(p, str) for p in parts):
        return parts[0], parts[1], parts[0] + parts[1]
    return None


# NFC gives an ASCII character only for itself or for one of these three
# singletons (U+212A, U+037E, U+1FEF): every composition ends non-ASCII
_NFC_MADE_ASCII = frozenset(b"K;`")


def _merges_without(r: _Reader, merges_in: list, left_out: frozenset, normalizer: Optional[str],
                    tables: TokenTables, tokens: tuple) -> Any:
    """``byte_level_merges`` of the merges that neither use nor make an entry
    left out for an added token (MiniCPM-V 4.5 merges ``<unk`` and ``>`` into
    its ``<unk>``): the text of such an entry is always matched as the added
    token before the model sees it, so tokenizers never applies them, and
    leaving them out keeps the order of the rest. The index of a bad merge
    is its index in ``merges_in``."""
    from fasttok.shared._bytemap import byte_level_merges, decode_byte_level

    keep = []
    reached = set()
    for i, merge in enumerate(merges_in):
        parts = _merge_parts(merge)
        touched = [] if parts is None else [p for p in parts if p in left_out]
        if touched:
            reached.update(touched)
        else:
            keep.append(i)
    if normalizer is not None:
        # unless NFC can make the entry's text from text without it, which
        # tokenizers' model would then merge: the pipeline serves that file
        for text in reached:
            try:
                raw = decode_byte_level(text)
            except ValueError:
                continue  # not byte-level text: the model never sees it at all
            if not raw.isascii() or not _NFC_MADE_ASCII.isdisjoint(raw):
                raise r.other_shape()
    merges = byte_level_merges([merges_in[i] for i in keep], tables, tokens)
    return keep[merges] if isinstance(merges, int) else merges


def _merge_error(r: _Reader, i: int, merge: Any, vocab: dict, token_of: set) -> VocabularyFileError:
    # what is wrong with the merge that byte_level_merges stopped at
    at = f"$.model.merges[{i}]"
    if isinstance(merge, str):
        parts = merge.split(" ")
    elif isinstance(merge, list) and all(isinstance(p, str) for p in merge):
        parts = merge
    else:
        return r.fail(at, f"expected \"a b\" or [\"a\", \"b\"], found {merge!r}")
    if len(parts) != 2:
        return r.fail(at, f"a merge has two parts, found {len(parts)} in {merge!r}")
    for part in parts:
        if part not in vocab:
            return r.fail(at, f"{merge!r}: {part!r} is not in the vocabulary")
    pair = (r.token_bytes(parts[0]), r.token_bytes(parts[1]))
    for part in pair + (pair[0] + pair[1],):
        if part not in token_of:
            return r.fail(at, f"{merge!r}: {part!r} is not in the vocabulary")
    return r.fail(at, f"{merge!r} is not two tokens spelling a third")


def load_tokenizer_json(path: str) -> Vocabulary:
    """Read a ``tokenizer.json`` file (and the ``tokenizer_config.json`` beside
    it, if any) into a record carrying both documents (``metadata["document"]``,
    ``metadata["config"]``); the stages are built from them on use.

    >>> load_tokenizer_json("/nonexistent/tokenizer.json")
    Traceback (most recent call last):
    FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/tokenizer.json'
    """
    path = os.fspath(path)
    return tokenizer_json_file_record(read_file(path), path)


def tokenizer_json_file_record(data: Any, path: str) -> Vocabulary:
    """The record of ``data``, the bytes read from the file ``path``: named
    after the file, with the ``tokenizer_config.json`` beside it.

    >>> tokenizer_json_file_record(b'{"model": 1}', "/nonexistent/t.json")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: /nonexistent/t.json: field '$.model': expected an object, got 1
    """
    return tokenizer_json_record(data, path, name=tokenizer_json_name(path),
                                 config=read_tokenizer_config(path))


# a plain class: collections.namedtuple makes its class by exec of
# generated source (~0.1 ms) on every tokenizer.json load's path
class TokenizerJsonReading:
    """What :func:`tokenizer_json_file_reading` gives.

    ``record``: the file's record; for a byte-level BPE model read packed
    it lists no tokens or merges and its document's ``model`` lacks
    ``vocab`` and ``merges``: ``tables`` (the byte-level core's
    ``TokenTables``) hold them and ``model_document()`` gives the whole
    ``model`` object. Else ``tables`` and ``model_document`` are ``None``
    and the record lists no tokens nor ids (the stages never read them).
    ``whole()``: the whole record, as :func:`tokenizer_json_record` reads
    it (made on first call). ``max_token_value``: the largest id in use.
    """

    __slots__ = ("record", "tables", "whole", "model_document", "max_token_value")

    def __init__(self, record: Any, tables: Any, whole: Any, model_document: Any,
                 max_token_value: int) -> None:
        self.record = record
        self.tables = tables
        self.whole = whole
        self.model_document = model_document
        self.max_token_value = max_token_value


def tokenizer_json_file_reading(data: bytes, path: str) -> TokenizerJsonReading:
    """The reading of ``data``, the bytes of the file ``path`` (named after
    the file, with the ``tokenizer_config.json`` beside it), with a
    byte-level BPE model's tables built once from the packed vocabulary and
    merges, which never become Python objects unless ``whole()`` or
    ``model_document()`` is called.

    >>> tokenizer_json_file_reading(b'{"model": 1}', "/nonexistent/t.json")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: /nonexistent/t.json: field '$.model': expected an object, got 1
    """
    name, config = tokenizer_json_name(path), read_tokenizer_config(path)
    with gc_paused():
        doc, packed = parse_tokenizer_json(data, path)
        if packed is not None and _may_be_byte_level(doc, packed):
            try:
                record, tables, top = _tokenizer_json_record(doc, path, name, config, packed)
            except _Unpacked:
                pass
            else:
                whole = functools.cache(functools.partial(
                    _tokenizer_json_whole, doc, packed, path, name, config))
                return TokenizerJsonReading(record, tables, whole, packed.object,
                                            max([top, *record.special_tokens.values(),
                                                 *record.template_ids]))
        if packed is not None:
            doc["model"] = _model_object(doc, packed)
        # the record without its tokens: the stages never read them, and one
        # bytes object an entry (and their tuple) was a sixth of
        # all-MiniLM-L6-v2's load; whole() lays them out when asked
        record, _, top = _tokenizer_json_record(doc, path, name, config, packed, lean=False,
                                                with_tokens=False)
        whole = functools.cache(functools.partial(
            _tokenizer_json_record_whole, doc, path, name, config, packed))
    return TokenizerJsonReading(record, None, whole, None, top)


def _tokenizer_json_record_whole(doc: dict, source: str, name: str, config: Optional[dict],
                                 packed: Optional[PackedModel]) -> Vocabulary:
    # the whole record of a document read with its model object in place
    with gc_paused():
        return _tokenizer_json_record(doc, source, name, config, packed, lean=False)[0]


#: the model types that take a PackedVocab as it is (hf_bpe, hf_wordpiece): their
#: vocab stays packed in a ModelObject (all-MiniLM-L6-v2's as a dict was ~5 ms)
_PACKED_VOCAB_MODELS = frozenset({"BPE", "WordPiece"})


class ModelObject(dict):
    """The ``model`` object of a document read packed, as ``json.loads``
    gives it except its packed parts: ``"merges"`` stays the
    :class:`PackedMerges` (``to_list()`` gives the list), for a BPE or
    WordPiece model whose ids are its entries' places ``"vocab"`` the
    :class:`PackedVocab` (``to_dict()``), and for a Unigram model the
    :class:`PackedPieces` (``to_list()``): Gemma 3's 514k merges and 262k
    entries as Python objects were half of its load, a Unigram file's
    pieces and scores most of one. ``packed``: the
    :class:`PackedModel` it was made from, which a model's build reads in
    C. Pickled and copied as the plain ``dict`` ``json.loads`` gives.

    >>> from fasttok.shared._json_reader import read_tokenizer_document
    >>> doc, packed = read_tokenizer_document(
    ...     b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a a"]}}')
    >>> model = ModelObject(packed)
    >>> model["vocab"].to_dict(), model["merges"].to_list(), model.packed is packed
    ({'a': 0}, ['a a'], True)
    """

    __slots__ = ("packed",)

    def __init__(self, packed: PackedModel) -> None:
        super().__init__(packed.object(made=False))
        self.packed = packed
        vocab = packed.vocab
        if type(vocab) is PackedPieces:
            if self.get("type") != "Unigram":
                self["vocab"] = vocab.to_list()
        elif vocab is not None and (self.get("type") not in _PACKED_VOCAB_MODELS
                                    or not vocab.in_order):
            self["vocab"] = vocab.to_dict()

    def __reduce__(self) -> tuple:
        return dict, (self.packed.object(),)


def _model_object(doc: dict, packed: PackedModel) -> dict:
    # the model object of a document whose model was read packed: a
    # ModelObject, unless the byte-level reading (which reads the vocab and
    # merges as Python objects) may take the document: it needs the
    # ByteLevel decoder
    decoder = doc.get("decoder")
    if type(decoder) is dict and decoder.get("type") == "ByteLevel":
        return packed.object()
    return ModelObject(packed)


def _may_be_byte_level(doc: dict, packed: PackedModel) -> bool:
    # whether the packed reading may take the document: a BPE model with
    # both parts packed and the ByteLevel decoder every byte-level file has
    # (a file without is read from its Python objects at once, not checked
    # twice)
    decoder = doc.get("decoder")
    return (packed.rest.get("type") == "BPE" and type(packed.vocab) is PackedVocab
            and packed.merges is not None and type(decoder) is dict
            and decoder.get("type") == "ByteLevel")


def _tokenizer_json_whole(doc: dict, packed: PackedModel, source: str, name: str,
                          config: Optional[dict]) -> Vocabulary:
    # the whole record of a document whose model was read packed
    with gc_paused():
        return _tokenizer_json_record(dict(doc, model=packed.object()), source, name, config)[0]


def tokenizer_json_name(path: str) -> str:
    """The name of the record of the file ``path``: its folder's for a file
    named ``tokenizer.json`` (as the hub lays models out), else its stem.

    >>> tokenizer_json_name("models/llama3/tokenizer.json"), tokenizer_json_name("x/gpt4o.json")
    ('llama3', 'gpt4o')
    """
    base = os.path.basename(path)
    if base == "tokenizer.json":
        return os.path.basename(os.path.dirname(os.path.abspath(path)))
    return os.path.splitext(base)[0]


def tokenizer_json_record(data: Any, source: str, *, name: Optional[str] = None,
                          config: Optional[dict] = None) -> Vocabulary:
    """The record of a ``tokenizer.json`` document given as bytes (or a
    file's :class:`~fasttok.shared._json_reader.FileBytes`), text or already
    parsed; ``source`` names it in errors.

    >>> tokenizer_json_record(b'{"model": 1}', "t.json")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: t.json: field '$.model': expected an object, got 1
    """
    with gc_paused():
        doc, packed = data, None
        if isinstance(data, (bytes, bytearray, FileBytes)):
            doc, packed = parse_tokenizer_json(data, source)
            if packed is not None:
                doc["model"] = _model_object(doc, packed)
        elif isinstance(data, str):
            doc = parse_tokenizer_json(data, source)[0]
        return _tokenizer_json_record(doc, source, name, config, packed, lean=False)[0]


def _tokenizer_json_record(doc: Any, source: str, name: Optional[str], config: Optional[dict],
                           packed: Optional[PackedModel] = None, *, lean: bool = True,
                           with_tokens: bool = True) -> tuple:
    # (record, tables, top): with packed and lean (a BPE model whose vocab
    # and merges are packed and left out of doc), the record of a byte-level
    # file without its tokens and merges, its TokenTables and its largest
    # ordinary id, or _Unpacked for any other file; else (record, None,
    # None), packed (if given) what doc's model was made from; with_tokens
    # False: (the record, without tokens or ids unless byte-level, None, the
    # largest id in use, which the whole record's max_token_value gives)
    r = _Reader(source)
    model = r.fields(doc, "$").get("model", OBJECT)
    packed_vocab = None
    if not lean and packed is not None:
        packed_vocab, packed = packed.vocab, None
    model_ids = packed.vocab if packed is not None else (
        packed_vocab if type(model.get("vocab")) is PackedVocab else _model_token_ids(r, model))
    _check_spells_every_text(r, model, model_ids)
    # the model's vocabulary size as tokenizers counts it: the entries listed
    unigram = _is_piece_list(model.get("vocab"))
    added = _added_tokens(r, doc, model_ids, len(model["vocab"]) if unigram else None)
    try:
        fast, tables, top = _byte_level_record(doc, source, name, config, packed)
    except _OtherShape:
        if packed is not None:
            raise _Unpacked() from None
        fast = tables = top = None
    metadata = {"document": doc, "config": config, "added_tokens": added}
    specials = {t[0]: t[1] for t in added}
    added_ids = set(specials.values())
    if packed is not None:
        in_order = packed.vocab.in_order
        model_id_set = None if in_order else set(packed.vocab.ids)
    elif packed_vocab is not None:
        in_order = packed_vocab.in_order
        model_id_set = None if in_order else set(model_ids.values())
    else:
        in_order = _listed_in_id_order(model_ids)
        model_id_set = None if in_order else set(model_ids.values())
    template_ids = tuple(sorted({
        i for i in _processor_ids(doc.get("post_processor"))
        if i not in added_ids and not (i < len(model_ids) if in_order else i in model_id_set)}))
    if fast is not None:
        fast = fast.replace(model="hf_pipeline", template_ids=template_ids,
                            metadata=dict(fast.metadata) | metadata)
        # read unpacked, a byte-level record has its tokens (its core's own)
        return fast, tables, top if with_tokens else fast.max_token_value
    if not with_tokens:
        # the whole record's max_token_value, its tokens not laid out: an
        # entry under an added token's id is left out of them, but the id
        # stays in use as the added token's
        top = max([len(model_ids) - 1 if in_order else max(model_id_set, default=-1),
                   *specials.values(), *template_ids])
    try:
        tokens, ids = _text_layout(model_ids, added_ids, in_order, packed_vocab) \
            if with_tokens else ((), None)
    except UnicodeEncodeError:
        # a token with a lone surrogate, which has no UTF-8 to match: only a
        # document given parsed (a trainer's in-memory one) gets here, as
        # parse_tokenizer_json refuses it in bytes and text (so does
        # tokenizers' reader, serde_json)
        from fasttok.shared.surrogates import has_utf8

        text = next(t for t in model_ids if not has_utf8(t))
        raise r.fail(_entry(text), f"{text!r} holds a lone surrogate, which no UTF-8 text "
                     "can match (tokenizers refuses the file)") from None
    names = _template_ids(r, doc) | _config_ids(config, specials)
    unk_token = model.get("unk_token")
    unk = model.get("unk_id") if unigram else (
        model_ids.get(unk_token) if isinstance(unk_token, str) else None)
    return Vocabulary(name=name or source, model="hf_pipeline", tokens=tokens, ids=ids,
                      special_tokens=specials, source=source, byte_level=False,
                      template_ids=template_ids,
                      bos_id=names.get("bos_id"), eos_id=names.get("eos_id"),
                      unk_id=unk if isinstance(unk, int) else None, metadata=metadata), None, \
        None if with_tokens else top


def _listed_in_id_order(model_ids: dict) -> bool:
    # whether the ids are 0 to n - 1 in the order listed, as tokenizers
    # writes a vocabulary (and a Unigram's pieces are numbered): then an
    # entry's id is its index, checked and laid out by C loops
    return list(model_ids.values()) == list(range(len(model_ids)))


def _text_layout(model_ids: dict, added_ids: set, in_order: bool,
                 packed: Optional[PackedVocab] = None) -> tuple:
    """``token_layout`` of the model's entries as UTF-8, less those under an
    added token's id (the added token is always matched first); ``packed``,
    the packed vocabulary ``model_ids`` was made from, has the UTF-8."""
    if not in_order:
        pairs = [(i, t.encode()) for t, i in model_ids.items() if i not in added_ids]
        return token_layout(pairs)
    tokens = packed.utf8_texts() if packed is not None else list(map(str.encode, model_ids))
    left_out = [i for i in added_ids if i < len(tokens)]
    for i in left_out:
        tokens[i] = None
    while tokens and tokens[-1] is None:
        tokens.pop()
    if ids_are_dense(len(tokens) - 1, len(model_ids) - len(left_out)):
        return tuple(tokens), None
    return token_layout([(i, t) for i, t in enumerate(tokens) if t is not None])


def _check_spells_every_text(r: _Reader, model: dict, model_ids: dict) -> None:
    # tokenizers loads a model that names an unknown token it lacks (or a
    # Unigram with neither unk_id nor the byte pieces) and fails on the first
    # text it cannot spell; fasttok refuses the file instead
    if _is_piece_list(model.get("vocab")):
        byte_fallback = model.get("byte_fallback") is True
        if model.get("unk_id") is None and not (
                byte_fallback and all(f"<0x{b:02X}>" in model_ids for b in range(256))):
            raise r.fail("$.model.unk_id", "null, and no byte pieces to fall back on: "
                                           "tokenizers loads the file and fails on the first "
                                           "text holding a character the pieces lack")
        return
    unk = model.get("unk_token")
    if isinstance(unk, str) and unk not in model_ids:
        raise r.fail("$.model.unk_token", f"{unk!r} is not in the model's vocabulary: tokenizers "
                     "loads the file and fails on the first text holding a character no token "
                     f"spells; add {unk!r} to $.model.vocab")


def _processor_ids(spec: Any) -> list:
    # every id a post-processor object names (its own stage checks the shapes)
    if not isinstance(spec, dict):
        return []
    kind = spec.get("type")
    found: list = []
    if kind == "TemplateProcessing" and isinstance(spec.get("special_tokens"), dict):
        for body in spec["special_tokens"].values():
            if isinstance(body, dict) and isinstance(body.get("ids"), list):
                found += body["ids"]
    elif kind in ("BertProcessing", "RobertaProcessing"):
        found += [spec[key][1] for key in ("sep", "cls")
                  if isinstance(spec.get(key), list) and len(spec[key]) == 2]
    elif kind == "Sequence" and isinstance(spec.get("processors"), list):
        for item in spec["processors"]:
            found += _processor_ids(item)
    return [i for i in found if isinstance(i, int) and not isinstance(i, bool) and i >= 0]


def _template_ids(r: _Reader, doc: dict) -> dict:
    # BOS/EOS as the post-processor's template puts them around one sequence,
    # when it puts one id on a side
    try:
        head, tail = _template(r, doc)
    except (_OtherShape, VocabularyFileError):
        return {}
    return {k: v[0] for k, v in (("bos_id", head), ("eos_id", tail)) if len(v) == 1}


#: the model types of tokenizer.json
MODEL_TYPES = ("BPE", "WordPiece", "WordLevel", "Unigram")


def _is_piece_list(vocab: Any) -> bool:
    # whether a model's vocab is a Unigram list of pieces (read packed or not)
    return type(vocab) is PackedPieces or isinstance(vocab, list)


def _model_token_ids(r: _Reader, model: dict) -> Any:
    """Token string -> id of the model's vocabulary (the last id of a
    string listed twice, as ``tokenizers`` keeps it): a dict, or a Unigram
    model's :class:`PackedPieces` when it lists no piece twice."""
    kind = r.fields(model, "$.model").str("type", None)
    if kind is None:
        # tokenizers tells the model apart by its fields when "type" is missing
        kind = "Unigram" if _is_piece_list(model.get("vocab")) else (
            "BPE" if "merges" in model else "WordPiece" if "continuing_subword_prefix" in model
            else "WordLevel")
    if kind not in MODEL_TYPES:
        raise r.fail("$.model.type", f"unknown model type {kind!r}; known: {', '.join(MODEL_TYPES)}")
    if kind == "Unigram":
        if type(model.get("vocab")) is PackedPieces:
            # read packed, every entry is a [piece, score] pair
            pieces = model["vocab"]
            return pieces if pieces.in_order else {p: i for i, p in enumerate(pieces.texts())}
        entries = r.fields(model, "$.model").list("vocab")
        out = {}
        for i, entry in enumerate(entries):
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
                raise r.fail(f"$.model.vocab[{i}]", f"expected [piece, score], found {entry!r:.60}")
            out[entry[0]] = i
        return out
    vocab = r.fields(model, "$.model").get("vocab", OBJECT)
    if not all_ints(vocab.values(), MAX_ID + 1):
        for text, token_id in vocab.items():
            if not all_ints([token_id], MAX_ID + 1):
                raise r.fail(_entry(text), _bad_id(token_id))
    return vocab


def _bad_id(token_id: Any) -> str:
    # why a vocabulary entry's id is refused: tokenizers reads any u32, and
    # fasttok all but the largest, which its compiled models keep for "no token"
    if type(token_id) is int and token_id == MAX_ID + 1:
        return (f"id {token_id} (2**32 - 1) is the one u32 tokenizers takes that fasttok "
                "cannot: its compiled models keep it to mean no token; number the entry lower")
    return f"id {token_id!r} is not an id: ids are integers from 0 to {MAX_ID}"


def _plain_added_flags(entry: Any) -> Optional[dict]:
    # the flags of an added token entry whose fields the field reader would
    # all take (a string content, an integer id, each flag true, false, null
    # or missing), else None: Gemma 3 has 6,415 entries, and reading each
    # field through Fields was 20 ms of its load
    if type(entry) is not dict or type(entry.get("content")) is not str \
            or type(entry.get("id")) is not int:
        return None
    flags = {flag: entry.get(flag) for flag in ADDED_TOKEN_FLAGS}
    for value in flags.values():
        if value is not None and value is not True and value is not False:
            return None
    return flags


def _added_tokens(r: _Reader, doc: dict, model_ids: dict, size: Optional[int]) -> tuple:
    """``(content, id, flags)`` of each added token, with the id ``tokenizers``
    gives it: the added or model id its content has already, else the next
    id after the model's and the added ones so far (the file's ``id`` only
    has to be an integer; ``tokenizers`` warns when it differs)."""
    entries = r.fields(doc, "$").list("added_tokens", [])
    by_content: dict = {}
    flags_of: dict = {}
    size = len(model_ids) if size is None else size
    top = None
    for i, entry in enumerate(entries):
        flags = _plain_added_flags(entry)
        if flags is None:
            # something is wrong with the entry: the field reader says what
            fields = r.fields(entry, f"$.added_tokens[{i}]")
            fields.str("content")
            fields.get("id", INTEGER)
            flags = {flag: fields.optional(flag, BOOL) for flag in ADDED_TOKEN_FLAGS}
        content = entry["content"]
        if not content:
            continue
        known = by_content.get(content, model_ids.get(content))
        if known is None:
            known = size if top is None or (top < size and size) else top + 1
        top = known if top is None else max(top, known)
        by_content[content] = known
        flags_of[content] = flags
    return tuple((c, i, flags_of[c]) for c, i in by_content.items())

