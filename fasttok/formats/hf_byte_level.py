"""The byte-level BPE configuration of ``tokenizer.json``, on the fused compiled path.

Where the file is the configuration GPT-2-style models ship (recognised by
:func:`fasttok.loaders.hf_tokenizer_json.byte_level_record`), ids come from
fasttok's fused byte-level BPE, which needs no Python call per piece:

1. every added token is a special token of the tiktoken-style API, so
   ``encode(text, allowed_special="all")`` is ``tokenizers``'
   ``encode(text, add_special_tokens=False)``;
2. the ``NFC`` normalizer runs on each stretch between the special tokens
   matched (:class:`NormalizedBPE`), the stage of the pipeline itself
   (:mod:`fasttok.normalizers.unicode_forms`, ``tokenizers``' Unicode 9.0
   tables), so the two paths cannot drift apart;
3. the ``Split`` regex runs through fasttok's compiled scanner when it is one
   fasttok knows (Llama 3's is cl100k's older spelling, Qwen's is ``QWEN2``,
   GPT-4o's is ``O200K``), else through Python's ``re``; a known pattern
   matches every character, so ``Isolated`` and inverted ``Removed`` split
   alike; for any other pattern ``Isolated`` keeps the text between matches
   too (:func:`isolated_splitter`);
4. BPE by merge-list order; the file's ``ignore_merges`` (Llama 3) is the
   core's whole-piece lookup.

Decoding is the ``ByteLevel`` decoder: the token bytes joined and read as
UTF-8 with replacement, which is :meth:`fasttok.Encoding.decode`.

ASCII text and text already in normal form (the stage's quick check) skip
the step.

>>> from fasttok.shared._bytemap import bytes_to_unicode
>>> from fasttok.loaders.hf_tokenizer_json import byte_level_record
>>> alphabet = bytes_to_unicode()
>>> doc = {"model": {"type": "BPE", "vocab": {alphabet[b]: b for b in range(256)} | {"hi": 256},
...                  "merges": [["h", "i"]]},
...        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
...        "decoder": {"type": "ByteLevel"}}
>>> build_hf_byte_bpe(byte_level_record(doc, "t.json")).encode_ordinary("hi hi")
[256, 32, 256]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Optional

from array import array

from fasttok.formats._byte_bpe import CoreBPE
from fasttok.formats.walk import Walk
from fasttok.formats.tiktoken import build_byte_bpe
from fasttok.normalizers.unicode_forms import FORMS
from fasttok.pre_tokenizers.patterns import scanner_for
from fasttok.shared._tables import TokenTables
from fasttok.shared._bytemap import encode_byte_level
from fasttok.shared.batching import TextByText
from fasttok.shared.normalized import NormalizedString
from fasttok.shared.regex_translate import compile_generic
from fasttok.shared.literal_match import longest_first
from fasttok.vocab import Vocabulary

__all__ = ["build_hf_byte_bpe", "isolated_splitter", "NormalizedBPE", "ByteLevelWalk",
           "byte_level_walk", "byte_level_token_strings"]


def build_hf_byte_bpe(vocab: Vocabulary, tables: Optional[TokenTables] = None) -> Any:
    """The model of a byte-level ``tokenizer.json`` record: the compiled
    byte-level core (over ``tables`` when they are at hand already), behind
    :class:`NormalizedBPE` when the file has a normalizer."""
    splitter = None
    if vocab.metadata.get("split_behavior") == "Isolated" and scanner_for(vocab.pattern) is None:
        splitter = isolated_splitter(vocab.pattern)
    core = build_byte_bpe(vocab, tables,
                          whole_piece_lookup=bool(vocab.metadata.get("ignore_merges")),
                          splitter=splitter)
    if vocab.normalizer is None:
        return core
    return NormalizedBPE(core, FORMS[vocab.normalizer]())


def isolated_splitter(pattern: str) -> Callable[[str], list]:
    """Split as ``tokenizers``' ``Split(behavior="Isolated")``: each match is
    a piece and so is each stretch of text between matches (fasttok's own
    splitters drop those, as tiktoken does).

    >>> isolated_splitter(r"\\p{L}+")("ab, cd!")
    ['ab', ', ', 'cd', '!']
    """
    spans = compile_generic(pattern).spans

    def split(text: str) -> list:
        pieces = []
        at = 0
        for start, end in spans(text):
            if start > at:
                pieces.append(text[at:start])
            if end > start:
                pieces.append(text[start:end])
            at = end
        if at < len(text):
            pieces.append(text[at:])
        return pieces

    return split


class NormalizedBPE(TextByText):
    """A :class:`~fasttok.formats._byte_bpe.CoreBPE` whose input first goes
    through ``stage``, a Unicode normal form of
    :mod:`fasttok.normalizers.unicode_forms`, stretch by stretch between the
    special tokens that are matched, as ``tokenizers`` normalizes.

    Text that is ASCII or already normalized goes to the core as it is; so
    does text that no matched special token cuts, after normalizing it whole.

    >>> from fasttok.formats.tiktoken import byte_bpe_model
    >>> from fasttok.normalizers.unicode_forms import NFC
    >>> from fasttok.shared._tables import TokenTables
    >>> core = byte_bpe_model(TokenTables([bytes([i]) for i in range(256)]), {"<e>": 256}, ".")
    >>> NormalizedBPE(core, NFC()).encode("e\\u0301<e>", b"\\x01")
    [195, 169, 256]
    """

    # tiktoken's internals re-merge raw pieces and would skip the normalizer
    tiktoken_pieces = False

    def __init__(self, core: CoreBPE, stage: Any) -> None:
        #: the compiled core the normalized text goes to
        self.core = core
        self._core = core
        self._stage = stage
        self._is_normalized = stage.is_normalized
        self.special_order = core.special_order
        self.post_processor = core.post_processor
        self._special_res: dict = {}

    def _plain(self, text: str, allowed: Optional[bytes]) -> Optional[str]:
        # the text to hand the core whole, or None when a matched special
        # token cuts text that normalizing would change
        if type(text) is not str:
            raise TypeError(f"text must be str, not {type(text).__name__}")
        if text.isascii() or self._is_normalized(text):
            return text
        if allowed is None or self._core.find_special(text, allowed) < 0:
            return self._stage.normalize_str(text)
        return None

    def _special_re(self, allowed: bytes) -> "re.Pattern[str]":
        # only called once the core found an allowed special, so never None
        found = self._special_res.get(allowed)
        if found is None:
            found = self._special_res[allowed] = longest_first(
                raw.decode("utf-8") for raw, on in zip(self.special_order, allowed) if on)
        return found

    def _by_stretch(self, text: str, allowed: bytes) -> list:
        ids: list = []
        start = 0
        core = self._core
        normalize = self._stage.normalize_str
        for m in self._special_re(allowed).finditer(text):
            ids += core.encode_ordinary(normalize(text[start:m.start()]))
            ids += core.encode(m.group(), allowed)
            start = m.end()
        return ids + core.encode_ordinary(normalize(text[start:]))

    def encode(self, text: str, allowed: Optional[bytes]) -> list:
        """The ids of ``text``, matching the special tokens ``allowed`` selects."""
        plain = self._plain(text, allowed)
        if plain is None:
            return self._by_stretch(text, allowed)
        return self._core.encode(plain, allowed) if allowed is not None else \
            self._core.encode_ordinary(plain)

    def encode_ordinary(self, text: str) -> list:
        """The ids of ``text`` with special tokens as plain text."""
        return self._core.encode_ordinary(self._plain(text, None))

    def count(self, text: str, allowed: Optional[bytes]) -> int:
        """How many ids :meth:`encode` gives."""
        plain = self._plain(text, allowed)
        return len(self._by_stretch(text, allowed)) if plain is None else \
            self._core.count(plain, allowed)

    def sample(self, text: str, allowed: Optional[bytes], alpha: float, nbest_size: int,
               rng: Any) -> list:
        """BPE-dropout of the normalized text (see ``CoreBPE.sample``)."""
        plain = self._plain(text, allowed)
        if plain is None:
            plain = self._stage.normalize_str(text)
        return self._core.sample(plain, allowed, alpha, nbest_size, rng)

    def find_special(self, text: str, mask: bytes) -> int:
        """The first special token ``mask`` selects in the raw ``text``, or -1."""
        return self._core.find_special(text, mask)

    def find_token(self, data: bytes) -> int:
        """The id of the token whose bytes are ``data``, or -1."""
        return self._core.find_token(data)

    def encode_bytes_piece(self, piece: bytes) -> list:
        """Merge raw bytes as one piece (no normalizer: bytes have no normal form)."""
        return self._core.encode_bytes_piece(piece)

    def encode_as_pieces(self, text: str) -> list:
        """Byte-level BPE has no pieces; raises as the core does."""
        return self._core.encode_as_pieces(text)

    def token_bytes(self, token: int) -> bytes:
        """The bytes of one id."""
        return self._core.token_bytes(token)

    def decode_bytes(self, tokens: Any) -> bytes:
        """The bytes of a sequence of ids."""
        return self._core.decode_bytes(tokens)

    def decode_with_offsets(self, tokens: Any) -> tuple:
        """The core's bytes and byte starts (decoding needs no normalizer)."""
        return self._core.decode_with_offsets(tokens)

    def token_byte_values(self) -> list:
        """The core's ordinary tokens' bytes, sorted."""
        return self._core.token_byte_values()

    def stream_decoder(self) -> Any:
        """The core's decoder of ids that arrive one at a time."""
        return self._core.stream_decoder()


def byte_level_walk(record: Vocabulary, pipeline: Any,
                    model: Any = None) -> Optional["ByteLevelWalk"]:
    """The compiled walk of a byte-level BPE ``tokenizer.json`` (``record``,
    its built ``pipeline``), or ``None`` for another configuration and for
    the few byte-level files whose stages the fused core does not follow
    exactly, which the stages then encode:

    * a ``Split`` regex without a compiled scanner (a Python splitter's
      pieces carry no positions);
    * added tokens the pipeline matches or numbers otherwise than the core
      (one given ``lstrip``/``rstrip``/``single_word`` by ``add_tokens``;
      ``normalized=true`` ones beside ``normalized=false`` ones, where two
      passes may cut where the core's one pass does not; an id that
      ``tokenizers`` gives anew);
    * a vocabulary entry under an added token's id that ``tokenizers``'
      model may still give for text (the core left it out).

    ``model``: the fused model of ``record`` built already
    (:func:`build_hf_byte_bpe`, the one :func:`fasttok.load` encodes with),
    else it is built here.

    >>> import json
    >>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
    >>> from fasttok.formats.hf_pipeline import pipeline_from_document
    >>> from fasttok.shared._bytemap import bytes_to_unicode
    >>> alphabet = bytes_to_unicode()
    >>> doc = {"model": {"type": "BPE", "vocab": {alphabet[b]: b for b in range(256)} | {"hi": 256},
    ...                  "merges": [["h", "i"]]},
    ...        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
    ...                          "trim_offsets": False, "use_regex": True},
    ...        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
    ...                    "use_regex": True},
    ...        "added_tokens": [{"id": 257, "content": "<e>", "special": True}]}
    >>> record = tokenizer_json_record(json.dumps(doc), "t.json")
    >>> walk = byte_level_walk(record, pipeline_from_document(record))
    >>> walk.ids("hi<e>", None)
    [256, 257]
    >>> [list(part) for part in walk.encode("hi <e>\u00e9", None)]
    [[256, 32, 257, 195, 169], [0, 2, 2, 3, 3, 6, 6, 7, 6, 7], [0, 1, 2, 3, 3]]
    """
    if record.merges is None or record.metadata.get("model_gives_left_out"):
        return None
    if scanner_for(record.pattern or "") is None and record.pre_tokenizer is None:
        return None
    added = pipeline.added
    if (any(t.single_word or t.lstrip or t.rstrip for t in added.tokens)
            or len({t.normalized for t in added.tokens}) > 1
            or added.by_content != dict(record.special_tokens)):
        return None
    normalizer = pipeline.normalizer
    if (normalizer is None) != (record.normalizer is None) or (
            normalizer is not None and type(normalizer) is not FORMS[record.normalizer]):
        return None
    if model is None:
        model = build_hf_byte_bpe(record)
    return ByteLevelWalk(model, [record.special_tokens[raw.decode("utf-8")]
                                 for raw in model.special_order], normalizer, added)


class ByteLevelWalk(Walk):
    """The byte-level BPE configuration's walk (see :func:`byte_level_walk`):
    ids from the fused model (``model``: a :class:`CoreBPE`, or a
    :class:`NormalizedBPE` for a file with a normalizer), ids with offsets and
    piece indices from its core's ``encode_offsets``.

    ``order_ids``: the id of each of the model's ``special_order``;
    ``normalizer``: the pipeline's normalizer stage or ``None``; ``added``:
    the pipeline's added tokens, which cut a text the normalizer changes
    (that text then takes the stage's alignment).

    Text the normalizer leaves alone (ASCII, or found normalized by the
    stage's quick check) has offsets straight from the compiled walk; other
    text is normalized stretch by stretch with its alignment kept by the
    stage, as ``tokenizers`` does, and each stretch's offsets read back
    through it.
    """

    def __init__(self, model: Any, order_ids: list, normalizer: Any, added: Any) -> None:
        self._model = model
        self._core = getattr(model, "core", model)
        self._encode_offsets = self._core.encode_offsets
        self._order_ids = order_ids
        self._normalizer = normalizer
        self._is_normalized = None if normalizer is None else normalizer.is_normalized
        self._added = added
        self._all = self._mask_of(None)
        self._masks: dict = {}

    def _mask_of(self, allowed: Optional[frozenset]) -> Optional[bytes]:
        # the core's mask of special_order, or None when it selects none
        mask = bytes(allowed is None or token_id in allowed for token_id in self._order_ids)
        return mask if any(mask) else None

    def _mask(self, allowed: frozenset) -> Optional[bytes]:
        try:
            return self._masks[allowed]
        except KeyError:
            found = self._masks[allowed] = self._mask_of(allowed)
            return found

    def ids(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        """The ids of ``text``, the added tokens ``allowed`` selects matched."""
        if type(text) is not str:
            raise TypeError(f"text must be str, not {type(text).__name__}")
        mask = self._all if allowed is None else self._mask(allowed)
        return self._model.encode_ordinary(text) if mask is None else \
            self._model.encode(text, mask)

    def encode(self, text: str, allowed: Optional[frozenset]) -> Optional[tuple]:
        """``(ids, offsets, words)`` of ``text`` (see :class:`Walk`), or
        ``None`` for a text with a surrogate pair."""
        if type(text) is not str:
            raise TypeError(f"text must be str, not {type(text).__name__}")
        mask = self._all if allowed is None else self._mask(allowed)
        if self._is_normalized is None or text.isascii() or self._is_normalized(text):
            return self._encode_offsets(text, mask)
        return self._normalizing(text, allowed)

    def _normalizing(self, text: str, allowed: Optional[frozenset]) -> Optional[tuple]:
        # tokenizers' order: the added tokens cut the raw text, each stretch
        # between them is normalized on its own, its alignment kept
        ids = array("I")
        offsets = array("i")
        words = array("i")
        word = 0
        encode_offsets = self._encode_offsets
        for token_id, start, end in self._added.find_matches(text, normalized=False,
                                                             allowed=allowed):
            if token_id is not None:
                ids.append(token_id)
                offsets.extend((start, end))
                words.append(word)
                word += 1
                continue
            stretch = NormalizedString(text[start:end])
            self._normalizer.normalize(stretch)
            found = encode_offsets(stretch.normalized)
            if found is None:
                return None
            part_ids, spans, part_words = found
            aligns = stretch.alignments
            ids.extend(part_ids)
            for k in range(0, len(spans), 2):
                offsets.extend((start + aligns[spans[k]][0], start + aligns[spans[k + 1] - 1][1]))
            words.extend(word + w for w in part_words)
            if part_words:
                word += part_words[-1] + 1
        return ids, offsets, words


def byte_level_token_strings(record: Vocabulary) -> list:
    """The model's token string of each id of a byte-level BPE
    ``tokenizer.json`` record (its text in the file: the byte-level spelling
    of the token's bytes), ``None`` for an id the model has no token for or
    whose entry the record left out for an added token (which the pipeline
    names first): what the file's Python BPE model's ``id_to_token`` gives,
    without building that model (most of Llama 3's load) or, for a record
    read from the cache, reading the file again.

    >>> from fasttok.shared._tables import TokenTables
    >>> record = Vocabulary(name="t", model="hf_pipeline", tokens=(b"a", None, b" b"), merges=())
    >>> byte_level_token_strings(record)
    ['a', None, 'Ġb']
    """
    tokens = record.tokens or record.metadata["tables"].tokens()
    ids = range(len(tokens)) if record.ids is None else record.ids
    out: list = [None] * (ids[-1] + 1 if len(ids) else 0)
    for token_id, token in zip(ids, tokens):
        if token is not None:
            out[token_id] = encode_byte_level(token)
    return out
