"""A drop-in for the inference half of Hugging Face ``tokenizers.Tokenizer``.

``fasttok.hf.Tokenizer`` reads a ``tokenizer.json`` and answers as
``tokenizers`` 0.23.3 does: :meth:`Tokenizer.encode` returns an
:class:`Encoding` with ``ids``, ``tokens``, ``offsets`` (character offsets
into the input, through normalization), ``type_ids``, ``attention_mask``,
``special_tokens_mask``, ``word_ids``, ``sequence_ids`` and ``overflowing``;
pairs, pre-tokenized input, truncation and padding (read from the file, or
set with :meth:`Tokenizer.enable_truncation` / :meth:`Tokenizer.enable_padding`),
batches (``encode_batch_fast``: without offsets), ``decode`` with
``skip_special_tokens``, :class:`DecodeStream`; ``add_tokens`` /
``add_special_tokens`` (str or :class:`AddedToken`), ``encode_special_tokens``;
``to_str`` / ``save`` (a document ``tokenizers`` loads to the same
tokenizer), pickling and ``copy.deepcopy`` (through that document, as
``tokenizers`` does, so ``datasets.map(num_proc=...)`` and process pools
work); the stages read-only (``normalizer.normalize_str``,
``pre_tokenizer.pre_tokenize_str``, ``model.token_to_id``,
``post_processor.num_special_tokens_to_add``, ``decoder.decode``).
Arguments are checked as the Rust binding checks them, with its exception
types (:mod:`fasttok.shared.binding_arguments`).

Sampling is what the file says: a BPE model with ``dropout`` drops merges
on every encode, as ``tokenizers`` does (fasttok's draws are its own, so
the segmentations agree in distribution, not draw for draw). A Unigram
model has no sampling in ``tokenizers`` (its ``tokenizer.json`` has no
``alpha`` or ``nbest_size``), so none here either; ``fasttok.load(path)``
gives sampling for both (``encode(text, sample=True)``). Training and
editing the pipeline are not part of the drop-in; for ids alone,
``fasttok.load(path)`` gives the tiktoken-style :class:`fasttok.Encoding` of
the same file, which runs the fused compiled path.

>>> import json
>>> from fasttok.shared._bytemap import bytes_to_unicode
>>> alphabet = bytes_to_unicode()
>>> doc = {"model": {"type": "BPE", "vocab": {alphabet[b]: b for b in range(256)} | {"hi": 256},
...                  "merges": [["h", "i"]]},
...        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
...                          "trim_offsets": True, "use_regex": True},
...        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
...                    "use_regex": True}, "added_tokens": []}
>>> tok = Tokenizer.from_str(json.dumps(doc))
>>> enc = tok.encode("hi hi")
>>> enc.ids, enc.tokens, enc.offsets
([256, 32, 256], ['hi', 'Ġ', 'hi'], [(0, 2), (2, 3), (3, 5)])
>>> tok.decode(enc.ids)
'hi hi'
"""

from __future__ import annotations

import copy
import functools
import json
import operator
import os
import warnings
from collections.abc import Callable
from typing import Any, Optional

from fasttok.decoders.hf_stream import HFDecodeStream
from fasttok.errors import FasttokError
from fasttok.formats.hf_pipeline import HFPipeline, pipeline_from_document
from fasttok.hf.added_token import AddedToken
from fasttok.hf.added_vocabulary import AddedVocabulary
from fasttok.shared.binding_arguments import (PADDING_DIRECTION, TRUNCATION_DIRECTION, as_bool,
                                              as_direction, as_instance, as_sequence,
                                              as_str, as_u32, as_usize)
from fasttok.hf.components import Decoder, Model, Normalizer, PostProcessor, PreTokenizer
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.post_processors._encoding_lists import refuse_surrogates, tokenizer_encode
from fasttok.post_processors.encoding import Encoding
from fasttok.post_processors.truncation import STRATEGIES
from fasttok.shared.atomic_write import write_atomically
from fasttok.shared._json_reader import read_file
from fasttok.shared.gc_pause import gc_paused
from fasttok.tokenizer_json import read_tokenizer_json

__all__ = ["Tokenizer", "Encoding", "AddedToken", "DecodeStream"]

# the examples' tokenizer: one word
_ONE_WORD = '{"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}'
# tokenizer.json's top-level keys in the order tokenizers writes them
_STAGES = ("normalizer", "pre_tokenizer", "post_processor", "decoder", "model")


def _ids(ids: Any) -> list:
    # a Vec<u32> as the binding reads it
    return [as_u32(i) for i in as_sequence(ids)]


def _token_list(tokens: Any, special: bool) -> list:
    # add_tokens' argument: a list of str or AddedToken; each taken as it is
    # now (a later change to the caller's AddedToken changes nothing here)
    as_instance(tokens, list)
    out = []
    for token in tokens:
        if isinstance(token, str):
            out.append(AddedToken(token, special=special))
        elif isinstance(token, AddedToken):
            if special:
                token.special = True  # tokenizers marks the caller's token too
            out.append(AddedToken(**token.__getstate__()))
        else:
            raise TypeError("Input must be a List[Union[str, AddedToken]]")
    return out


def _strategy(value: Any) -> str:
    if as_str(value) not in STRATEGIES:
        raise FasttokError(f"Unknown `strategy`: `{value}`. Use one of `longest_first`, "
                           f"`only_first`, or `only_second`")
    return value


def _optional_usize(value: Any) -> Optional[int]:
    return None if value is None else as_usize(value)


# enable_truncation's and enable_padding's keywords -> how the binding reads each
_TRUNCATION_KEYWORDS = {"stride": as_usize, "strategy": _strategy,
                        "direction": lambda v: as_direction(v, TRUNCATION_DIRECTION)}
_PADDING_KEYWORDS = {"direction": lambda v: as_direction(v, PADDING_DIRECTION),
                     "pad_id": as_u32, "pad_type_id": as_u32, "pad_token": as_str,
                     "length": _optional_usize, "pad_to_multiple_of": _optional_usize}


def _read_keywords(kwargs: dict, readers: dict) -> dict:
    # tokenizers walks its **kwargs in the caller's order, so the first bad
    # one met is the one refused
    out = {}
    for key, value in kwargs.items():
        if key in readers:
            out[key] = readers[key](value)
        else:
            warnings.warn(f"Ignored unknown kwarg option {key}", stacklevel=3)
    return out


class Tokenizer:
    """``tokenizers.Tokenizer``'s inference API over one ``tokenizer.json``.

    >>> Tokenizer.from_str('{"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}'
    ...                    ).encode("a").ids
    [0]
    """

    def __init__(self, pipeline: HFPipeline, document: Any) -> None:
        # document: the JSON text read (str, bytes or a file's FileBytes),
        # for to_str (its stages as they were written, with the added
        # tokens, truncation and padding of now)
        self._pipeline = pipeline
        self._document = document
        self._allowed: Optional[frozenset] = None

    @functools.cached_property
    def _added(self) -> AddedVocabulary:
        # the added tokens as the drop-in's API gives and takes them, made
        # from the stages' when first asked for (add_tokens, to_str and the
        # decoder map ask; an encode never does): a T5 conversion's 104 were
        # a tenth of its load
        return AddedVocabulary([
            (t.id, AddedToken(t.content, single_word=t.single_word, lstrip=t.lstrip,
                              rstrip=t.rstrip, normalized=t.normalized, special=t.special))
            for t in self._pipeline.added.tokens])

    @classmethod
    def from_file(cls, path: Any) -> "Tokenizer":
        """Load ``path`` (a ``tokenizer.json``): read as :func:`fasttok.load`
        reads it (:func:`fasttok.tokenizer_json.read_tokenizer_json`, through the table cache)."""
        path = os.fspath(path)
        data = read_file(path)  # filled in one go, not a page fault a page
        parts = read_tokenizer_json(path, data)
        return cls._build(parts.record, data, parts.model_document)

    @classmethod
    def from_str(cls, json: str) -> "Tokenizer":
        """Load a ``tokenizer.json`` document given as text."""
        return cls._read(json, "<string>")

    @classmethod
    def from_buffer(cls, buffer: bytes) -> "Tokenizer":
        """Load a ``tokenizer.json`` document given as bytes."""
        if not isinstance(buffer, bytes):
            # as tokenizers: bytes(5) would read five zero bytes, a huge int allocate them
            raise TypeError(f"'{type(buffer).__name__}' object is not an instance of 'bytes'")
        return cls._read(buffer, "<buffer>")

    @classmethod
    def _read(cls, document: Any, source: str) -> "Tokenizer":
        # the collector paused while the file's objects are made: they all live on
        with gc_paused():
            return cls._build(tokenizer_json_record(document, source), document)

    @classmethod
    def _build(cls, record: Any, document: Any,
               model_document: Optional[Callable[[], dict]] = None) -> "Tokenizer":
        # A byte-level file's Python BPE model (most of Llama 3's load) is
        # built on first use: its walk runs the compiled core
        with gc_paused():
            return cls(pipeline_from_document(record, lazy_model=record.merges is not None,
                                              model_document=model_document), document)

    # ------------------------------------------------------------ saving and pickling
    def to_str(self, pretty: bool = False) -> str:
        """The tokenizer as a ``tokenizer.json`` document, which ``tokenizers``
        (and :meth:`from_str`) load to the same tokenizer: the file's stages,
        with the added tokens, truncation and padding set since.

        >>> tok = Tokenizer.from_str(_ONE_WORD)
        >>> tok.add_special_tokens(["<s>"])
        1
        >>> json.loads(tok.to_str())["added_tokens"][0]["content"]
        '<s>'
        """
        pretty = as_bool(pretty)
        document = self._document
        doc = json.loads(document if isinstance(document, (str, bytes)) else bytes(document))
        pipeline = self._pipeline
        out = {"version": doc.get("version", "1.0"),
               "truncation": None if pipeline.truncation is None else pipeline.truncation.as_json(),
               "padding": None if pipeline.padding is None else pipeline.padding.as_json(),
               "added_tokens": self._added.as_json()}
        for stage in _STAGES:
            out[stage] = doc.get(stage)
        if pretty:
            return json.dumps(out, ensure_ascii=False, indent=2)
        return json.dumps(out, ensure_ascii=False, separators=(",", ":"))

    def save(self, path: Any, pretty: bool = True) -> None:
        """Write :meth:`to_str` to ``path``, all at once: a crash or a full
        disk leaves the old file or the new one, never a part.

        >>> import tempfile; path = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
        >>> tok = Tokenizer.from_str(_ONE_WORD)
        >>> tok.save(path); Tokenizer.from_file(path).encode("a").ids
        [0]
        """
        write_atomically(path, self.to_str(pretty).encode("utf-8"))

    def __getstate__(self) -> bytes:
        # what tokenizers pickles: the document (encode_special_tokens is not in it)
        return self.to_str().encode("utf-8")

    def __setstate__(self, state: bytes) -> None:
        self.__dict__.update(Tokenizer._read(state, "<pickle>").__dict__)

    # ------------------------------------------------------------ the stages
    @property
    def normalizer(self) -> Optional[Normalizer]:
        """The normalizer (``normalize_str``), or ``None``.

        >>> Tokenizer.from_str('{"normalizer": {"type": "Lowercase"}, "model": {"type": '
        ...     '"WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}').normalizer.normalize_str("AB")
        'ab'
        """
        stage = self._pipeline.normalizer
        return None if stage is None else Normalizer(stage)

    @property
    def pre_tokenizer(self) -> Optional[PreTokenizer]:
        """The pre-tokenizer (``pre_tokenize_str``), or ``None``.

        >>> Tokenizer.from_str(_ONE_WORD).pre_tokenizer is None
        True
        """
        stage = self._pipeline.pre_tokenizer
        return None if stage is None else PreTokenizer(stage)

    @property
    def model(self) -> Model:
        """The model (``token_to_id``, ``id_to_token``).

        >>> Tokenizer.from_str(_ONE_WORD).model.id_to_token(0)
        'a'
        """
        return Model(self._pipeline.model)

    @property
    def post_processor(self) -> Optional[PostProcessor]:
        """The post-processor (``num_special_tokens_to_add``), or ``None``.

        >>> Tokenizer.from_str(_ONE_WORD).post_processor is None
        True
        """
        stage = self._pipeline.post_processor
        return None if stage is None else PostProcessor(stage)

    @property
    def decoder(self) -> Optional[Decoder]:
        """The decoder (``decode`` of token strings), or ``None``.

        >>> Tokenizer.from_str(_ONE_WORD).decoder is None
        True
        """
        stage = self._pipeline.decoder
        return None if stage is None else Decoder(stage)

    # ------------------------------------------------------------ encoding
    @property
    def encode_special_tokens(self) -> bool:
        """Whether special added tokens are read as plain text (``False``: each
        is found and given its id, the default).

        >>> tok = Tokenizer.from_str('{"model": {"type": "WordLevel", "vocab": {"a": 0, "<": 1},'
        ...     ' "unk_token": "a"}, "added_tokens": [{"id": 2, "content": "<<", "special": true,'
        ...     ' "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}]}')
        >>> tok.encode_special_tokens = True
        >>> tok.encode("<<").ids
        [0]
        """
        return self._allowed is not None

    @encode_special_tokens.setter
    def encode_special_tokens(self, value: bool) -> None:
        self._allowed = None if not as_bool(value) else frozenset(
            t.id for t in self._pipeline.added.tokens if not t.special)

    # one sequence (or a pair) as an Encoding: compiled, the common call
    # (one str) straight to the walk; any other call is _encode_any's
    encode = tokenizer_encode

    def _encode_any(self, sequence: Any, pair: Any, is_pretokenized: Any,
                    add_special_tokens: Any) -> Encoding:
        # encode's arguments checked as the binding checks them
        is_pretokenized, add_special_tokens = as_bool(is_pretokenized), as_bool(add_special_tokens)
        refuse_surrogates(sequence, is_pretokenized)
        refuse_surrogates(pair, is_pretokenized)
        return self._pipeline.encode(sequence, pair, is_pretokenized=is_pretokenized,
                                     add_special_tokens=add_special_tokens,
                                     allowed=self._allowed)

    def encode_batch(self, input: Any, is_pretokenized: bool = False,
                     add_special_tokens: bool = True) -> list:
        """Each input (a sequence, or a ``(sequence, pair)`` tuple) encoded, then
        padded together as the padding settings say."""
        return self._batch(input, is_pretokenized, add_special_tokens, True)

    def encode_batch_fast(self, input: Any, is_pretokenized: bool = False,
                          add_special_tokens: bool = True) -> list:
        """:meth:`encode_batch` without offsets, through the ids-only path: as in
        ``tokenizers``, token strings are empty (but the post-processor's and
        padding's), offsets ``(0, 0)`` and word ids ``None``.

        >>> tok = Tokenizer.from_str(_ONE_WORD)
        >>> e = tok.encode_batch_fast(["a"])[0]
        >>> e.ids, e.tokens, e.offsets
        ([0], [''], [(0, 0)])
        """
        return self._batch(input, is_pretokenized, add_special_tokens, False)

    def _batch(self, input: Any, is_pretokenized: bool, add_special_tokens: bool,
               offsets: bool) -> list:
        inputs = list(as_sequence(input))
        is_pretokenized, add_special_tokens = as_bool(is_pretokenized), as_bool(add_special_tokens)
        refuse_surrogates(inputs, is_pretokenized, batch=True)
        return self._pipeline.encode_batch(inputs, is_pretokenized=is_pretokenized,
                                           add_special_tokens=add_special_tokens,
                                           allowed=self._allowed, offsets=offsets)

    def post_process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                     add_special_tokens: bool = True) -> Encoding:
        """Truncation, the post-processor and padding, on encodings made without
        them (which are left as they were); the arguments checked as
        ``tokenizers`` checks them:

        >>> Tokenizer.from_str(_ONE_WORD).post_process("a")
        Traceback (most recent call last):
        TypeError: 'str' object is not an instance of 'Encoding'
        """
        encoding = as_instance(encoding, Encoding).copy()
        if pair is not None:
            pair = as_instance(pair, Encoding).copy()
        # copies, as the binding clones them: truncation works in place
        return self._pipeline.post_process(encoding, pair, as_bool(add_special_tokens))

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many ids the post-processor adds to one sequence or a pair."""
        return self._pipeline.num_special_tokens_to_add(as_bool(is_pair))

    # ------------------------------------------------------------ decoding
    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        """The text of ``ids`` (any sequence of integers: a list, a numpy
        array) through the file's decoder; ids no token has are left out.

        >>> Tokenizer.from_str(_ONE_WORD).decode([0, -1])
        Traceback (most recent call last):
        OverflowError: number too small to fit in target type
        """
        return self._pipeline.decode(_ids(ids), as_bool(skip_special_tokens))

    def decode_batch(self, sequences: Any, skip_special_tokens: bool = True) -> list:
        """:meth:`decode` of each sequence of ids."""
        sequences = as_sequence(sequences)
        skip = as_bool(skip_special_tokens)
        return [self._pipeline.decode(_ids(ids), skip) for ids in sequences]

    # ------------------------------------------------------------ vocabulary
    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token`` (an added token or the model's), or ``None``."""
        return self._pipeline.token_to_id(as_str(token))

    def id_to_token(self, id: int) -> Optional[str]:
        """The token string of ``id``, or ``None``."""
        return self._pipeline.id_to_token(as_u32(id))

    def get_vocab(self, with_added_tokens: bool = True) -> dict:
        """Token string -> id."""
        return self._pipeline.get_vocab(as_bool(with_added_tokens))

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """How many distinct tokens :meth:`get_vocab` holds."""
        return self._pipeline.get_vocab_size(as_bool(with_added_tokens))

    def get_added_tokens_decoder(self) -> dict:
        """Id -> :class:`AddedToken`, by id as ``tokenizers`` orders them (copies:
        changing one changes nothing here).

        >>> tok = Tokenizer.from_str(_ONE_WORD)
        >>> tok.add_tokens(["b"]); tok.get_added_tokens_decoder()
        1
        {1: AddedToken("b", rstrip=False, lstrip=False, single_word=False, normalized=True, special=False)}
        """
        by_id = self._added.by_id
        return {i: AddedToken(**by_id[i].__getstate__()) for i in sorted(by_id)}

    def add_tokens(self, tokens: list) -> int:
        """Add tokens (``str``: a plain token, matched in the normalized text;
        or :class:`AddedToken`); how many were added or changed, as
        ``tokenizers`` counts (a content the vocabulary holds keeps its id).

        >>> tok = Tokenizer.from_str(_ONE_WORD)
        >>> tok.add_tokens(["a", "bc"]), tok.encode("abc").ids
        (2, [0, 1])
        """
        return self._add(_token_list(tokens, False))

    def add_special_tokens(self, tokens: list) -> int:
        """:meth:`add_tokens` with every token made special (skipped by
        ``decode(skip_special_tokens=True)``, matched in the raw text unless
        an :class:`AddedToken` says ``normalized=True``).

        >>> tok = Tokenizer.from_str(_ONE_WORD)
        >>> tok.add_special_tokens(["<s>"]), tok.decode(tok.encode("<s>a").ids)
        (1, 'a')
        """
        return self._add(_token_list(tokens, True))

    def _add(self, tokens: list) -> int:
        pipeline = self._pipeline
        model = pipeline.model
        count = self._added.add(tokens, model.token_to_id, model_size=model.get_vocab_size())
        normalize = None if pipeline.normalizer is None else pipeline.normalizer.normalize_str
        pipeline.set_added(self._added.matching(normalize), self._added.spelled_normalized_ids())
        if self._allowed is not None:
            self.encode_special_tokens = True  # the plain tokens allowed, new ones included
        return count

    # ------------------------------------------------------------ truncation and padding
    def enable_truncation(self, max_length: int, **kwargs: Any) -> None:
        """Truncate every encoding to ``max_length`` ids (special ids included);
        keywords ``stride`` (0), ``strategy`` (``"longest_first"``,
        ``"only_first"``, ``"only_second"``) and ``direction`` (``"right"``), each
        checked as it comes in the caller's order, as ``tokenizers`` checks them
        (an unknown keyword is ignored with a warning):

        >>> tok = Tokenizer.from_str(_ONE_WORD)
        >>> tok.enable_truncation(4, strategy="LongestFirst")
        Traceback (most recent call last):
        fasttok.errors.FasttokError: Unknown `strategy`: `LongestFirst`. Use one of `longest_first`, `only_first`, or `only_second`
        """
        settings = {"stride": 0, "strategy": "longest_first", "direction": "right"}
        max_length = as_usize(max_length)
        settings.update(_read_keywords(kwargs, _TRUNCATION_KEYWORDS))
        self._pipeline.set_truncation(max_length, settings["stride"], settings["strategy"],
                                      settings["direction"])

    def no_truncation(self) -> None:
        """Stop truncating."""
        self._pipeline.truncation = None

    @property
    def truncation(self) -> Optional[dict]:
        """The truncation settings as ``tokenizers`` shows them, or ``None``."""
        params = self._pipeline.truncation
        return None if params is None else params.as_dict()

    def enable_padding(self, **kwargs: Any) -> None:
        """Pad to ``length`` (default ``None``: the batch's longest), rounded up to
        ``pad_to_multiple_of`` (``None``), on the ``direction`` side (``"right"``),
        with ``pad_id`` (0), ``pad_type_id`` (0) and ``pad_token`` (``"[PAD]"``):
        keywords only, each checked as it comes in the caller's order, as
        ``tokenizers`` checks them (ids are ``u32``; an unknown keyword is
        ignored with a warning):

        >>> tok = Tokenizer.from_str(_ONE_WORD)
        >>> tok.enable_padding(pad_id=2**32)
        Traceback (most recent call last):
        OverflowError: number too large to fit in target type
        """
        settings = {"direction": "right", "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]",
                    "length": None, "pad_to_multiple_of": None}
        settings.update(_read_keywords(kwargs, _PADDING_KEYWORDS))
        self._pipeline.set_padding(settings["direction"], settings["pad_id"],
                                   settings["pad_type_id"], settings["pad_token"],
                                   settings["length"], settings["pad_to_multiple_of"])

    def no_padding(self) -> None:
        """Stop padding."""
        self._pipeline.padding = None

    @property
    def padding(self) -> Optional[dict]:
        """The padding settings as ``tokenizers`` shows them, or ``None``."""
        params = self._pipeline.padding
        return None if params is None else params.as_dict()


_BAD_INPUT = "StreamInput must be either an integer or a list of integers"


def _stream_id(value: Any) -> int:
    # tokenizers' StreamInput::Id, a u32
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(_BAD_INPUT) from None
    if not 0 <= number < 2 ** 32:
        raise TypeError(_BAD_INPUT)
    return number


def _stream_input(value: Any) -> Any:
    # an id, or (StreamInput::Ids) any sequence of them but a str
    try:
        return _stream_id(value)
    except TypeError:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
            raise
    return [_stream_id(v) for v in value]


class DecodeStream:
    """Text of ids that arrive one at a time, as ``tokenizers``' ``DecodeStream``.

    ``ids``: ids already given out (their text is not returned again);
    ``skip_special_tokens``: leave out the special tokens, as ``decode`` does.

    The stream holds no tokenizer: each :meth:`step` is given one and an
    id (or a list of ids), and returns the text those ids complete, or
    ``None`` while it may still change (an incomplete UTF-8 character at the
    end); the rule is :class:`~fasttok.decoders.hf_stream.HFDecodeStream`'s.
    Ids are read as ``tokenizers`` reads them: any integer (numpy's too)
    that fits a ``u32``; an id no token has is left out, as ``decode`` leaves it out.

    >>> tok = Tokenizer.from_str('{"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1},'
    ...                          ' "unk_token": "a"}}')
    >>> stream = DecodeStream()
    >>> [stream.step(tok, i) for i in (0, 1, 7)]
    ['a', ' b', None]
    >>> DecodeStream(ids=True)
    Traceback (most recent call last):
    TypeError: 'bool' object is not an instance of 'Sequence'
    """

    __slots__ = ("_stream",)

    def __init__(self, ids: Optional[list] = None, skip_special_tokens: bool = False) -> None:
        # both Option<...> in the binding: None is the default
        skip = False if skip_special_tokens is None else as_bool(skip_special_tokens)
        self._stream = HFDecodeStream(None, skip, None if ids is None else
                                      [_stream_id(i) for i in as_sequence(ids)])

    def step(self, tokenizer: Any, id: Any) -> Optional[str]:
        """The text ``id`` (an int, or a list of them) completes, or ``None``.

        >>> DecodeStream().step(None, -1)
        Traceback (most recent call last):
        TypeError: StreamInput must be either an integer or a list of integers
        """
        given = _stream_input(id)
        pipeline = tokenizer._pipeline
        self._stream.decoder = pipeline.decoder
        return self._stream.step(_token_of(pipeline), given)

    def __copy__(self) -> "DecodeStream":
        return self.__deepcopy__({})

    def __deepcopy__(self, memo: dict) -> "DecodeStream":
        # the state is copied, the decoder (a stage of some tokenizer) shared
        clone = DecodeStream.__new__(DecodeStream)
        memo[id(self._stream.decoder)] = self._stream.decoder
        clone._stream = copy.deepcopy(self._stream, memo)
        return clone


def _token_of(pipeline: Any):
    special = pipeline.added.special_contents

    def token_of(token_id: int, skip_special_tokens: bool) -> Optional[str]:
        token = pipeline.id_to_token(token_id)
        if token is not None and skip_special_tokens and token in special:
            return None
        return token
    return token_of
