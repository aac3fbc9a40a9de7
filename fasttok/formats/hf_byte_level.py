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
   GPT-4o's is ``O200K``; DeepSeek-V3's three ``Split`` regexes in a row
   are the one regex ``DEEPSEEK3``), else through Python's ``re``; a known pattern
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

from fasttok.added_tokens.hf_added import AddedToken, AddedTokens
from fasttok.formats._byte_bpe import CoreBPE
from fasttok.formats.walk import MIN_THREADED_TEXTS, Walk
from fasttok.models._model_base import in_normal_form, normal_first
from fasttok.models.interface import ModelBase, run_batch
from fasttok.formats.tiktoken import build_byte_bpe
from fasttok.normalizers.one_for_one import one_for_one
from fasttok.normalizers.unicode_forms import FORMS
from fasttok.pre_tokenizers.byte_level import ByteLevel as ByteLevelPreTokenizer
from fasttok.pre_tokenizers.patterns import GPT2_DIGITS, JOINED_SPLITS, scanner_for
from fasttok.pre_tokenizers.sequence import Sequence as PreTokenizerSequence
from fasttok.pre_tokenizers.split import Digits, Split
from fasttok.shared._tables import TokenTables
from fasttok.shared._bytemap import bytes_to_unicode, decode_byte_level, encode_byte_level
from fasttok.shared.normalized import NormalizedString
from fasttok.shared.regex_translate import compile_generic
from fasttok.shared.literal_match import longest_first
from fasttok.loaders.hf_tokenizer_json import byte_level_record
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


class NormalizedBPE(ModelBase):
    """A :class:`~fasttok.formats._byte_bpe.CoreBPE` whose input first goes
    through ``stage``, a Unicode normal form of
    :mod:`fasttok.normalizers.unicode_forms`, stretch by stretch between the
    special tokens that are matched, as ``tokenizers`` normalizes.

    Text that is ASCII or already normalized goes to the core as it is; so
    does text that no matched special token cuts, after normalizing it whole.
    A batch goes to the core's compiled batch, which asks :meth:`respell`
    for each text the quick check fails.

    >>> from fasttok.formats.tiktoken import byte_bpe_model
    >>> from fasttok.normalizers.unicode_forms import NFC
    >>> from fasttok.shared._tables import TokenTables
    >>> core = byte_bpe_model(TokenTables([bytes([i]) for i in range(256)]), {"<e>": 256}, ".")
    >>> NormalizedBPE(core, NFC()).encode("e\\u0301<e>", b"\\x01")
    [195, 169, 256]
    """

    # (tiktoken_pieces stays False: tiktoken's internals re-merge raw
    # pieces and would skip the normalizer)
    kind = "byte-level BPE"

    def __init__(self, core: CoreBPE, stage: Any) -> None:
        #: the compiled core the normalized text goes to
        self.core = core
        self._core = core
        #: the Unicode form's stage; a text not in its form (see
        #: :func:`~fasttok.models._model_base.in_normal_form`) is respelled
        #: first (:meth:`respell`)
        self.stage = stage
        self.special_order = core.special_order
        self.post_processor = core.post_processor
        self._special_res: dict = {}

    def _plain(self, text: str, allowed: Optional[bytes]) -> Any:
        # the text to hand the core whole, or its ids (a list) when a
        # matched special token cuts text that normalizing would change
        if type(text) is not str:
            raise TypeError(f"text must be str, not {type(text).__name__}")
        if in_normal_form(text, self.stage):
            return text
        return self.respell(text, allowed)

    def respell(self, text: str, allowed: Optional[bytes]) -> Any:
        """What the core encodes in place of ``text``, which is not in
        :attr:`stage`'s normal form: the normalized text,
        or, where a special token ``allowed`` selects cuts it, its ids
        (normalized stretch by stretch between the special tokens).

        >>> from fasttok.formats.tiktoken import byte_bpe_model
        >>> from fasttok.normalizers.unicode_forms import NFC
        >>> from fasttok.shared._tables import TokenTables
        >>> core = byte_bpe_model(TokenTables([bytes([i]) for i in range(256)]), {"<e>": 256}, ".")
        >>> model = NormalizedBPE(core, NFC())
        >>> model.respell("e\u0301", None), model.respell("e\u0301<e>", b"\x01")
        ('é', [195, 169, 256])
        """
        if allowed is None or self._core.find_special(text, allowed) < 0:
            return self.stage.normalize_str(text)
        return self._by_stretch(text, allowed)

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
        normalize = self.stage.normalize_str
        for m in self._special_re(allowed).finditer(text):
            ids += core.encode_ordinary(normalize(text[start:m.start()]))
            ids += core.encode(m.group(), allowed)
            start = m.end()
        return ids + core.encode_ordinary(normalize(text[start:]))

    def encode(self, text: str, allowed: Optional[bytes]) -> list:
        """The ids of ``text``, matching the special tokens ``allowed`` selects."""
        if type(text) is str and text.isascii():
            # most lines: no normal form to check, and the call to _plain
            # was 5% of a short line's instructions (Qwen 3)
            return self._core.encode(text, allowed) if allowed is not None else \
                self._core.encode_ordinary(text)
        plain = self._plain(text, allowed)
        if type(plain) is list:
            return plain
        return self._core.encode(plain, allowed) if allowed is not None else \
            self._core.encode_ordinary(plain)

    def encode_ordinary(self, text: str) -> list:
        """The ids of ``text`` with special tokens as plain text."""
        return self._core.encode_ordinary(self._plain(text, None))

    def encoder(self, allowed: bytes) -> tuple:
        """A text in normal form (the stage's quick check, compiled) straight
        to the core's ``encode``, other text to :meth:`encode` (see
        :func:`~fasttok.models._model_base.normal_first`)."""
        return normal_first, (self._core.encode, allowed, self.encode, self.stage.is_normalized,
                              self.stage.stable_ranges)

    def count(self, text: str, allowed: Optional[bytes]) -> int:
        """How many ids :meth:`encode` gives."""
        plain = self._plain(text, allowed)
        return len(plain) if type(plain) is list else self._core.count(plain, allowed)

    def sample(self, text: str, allowed: Optional[bytes], alpha: float, nbest_size: int,
               rng: Any) -> list:
        """BPE-dropout of the normalized text (see ``CoreBPE.sample``)."""
        plain = self._plain(text, allowed)
        if type(plain) is list:
            plain = self.stage.normalize_str(text)
        return self._core.sample(plain, allowed, alpha, nbest_size, rng)

    # a batch: the core's, which asks respell for the texts the quick
    # check fails as it reads them, then encodes without the GIL

    def encode_many(self, texts: list, allowed: Optional[bytes] = None) -> list:
        """:meth:`encode` of each text."""
        return self._core.encode_many(texts, allowed, self)

    def encode_many_flat(self, texts: list, allowed: Optional[bytes] = None) -> tuple:
        """:meth:`encode` of each text as one ``array('I')`` of ids and one
        ``array('Q')`` of where each text's start (see ``CoreBPE.encode_many_flat``)."""
        return self._core.encode_many_flat(texts, allowed, self)

    def count_many(self, texts: list, allowed: Optional[bytes] = None) -> list:
        """:meth:`count` of each text."""
        return self._core.count_many(texts, allowed, self)

    def batch_job(self, texts: list, allowed: Optional[bytes], how: str, num_threads: int) -> Any:
        """The core's batch job (``how``: ``encode_many``, ``encode_many_flat``
        or ``count_many``) over ``texts`` normalized as :meth:`encode` does."""
        return self._core.batch_job(texts, allowed, how, num_threads, self)

    def find_special(self, text: str, mask: bytes) -> int:
        """The first special token ``mask`` selects in the raw ``text``, or -1."""
        return self._core.find_special(text, mask)

    def find_token(self, data: bytes) -> int:
        """The id of the token whose bytes are ``data``, or -1."""
        return self._core.find_token(data)

    def encode_bytes_piece(self, piece: bytes) -> list:
        """Merge raw bytes as one piece (no normalizer: bytes have no normal form)."""
        return self._core.encode_bytes_piece(piece)

    def token_bytes(self, token: int) -> bytes:
        """The bytes of one id."""
        return self._core.token_bytes(token)

    def decode_bytes(self, tokens: Any) -> bytes:
        """The bytes of a sequence of ids."""
        return self._core.decode_bytes(tokens)

    def token_byte_values(self) -> list:
        """The core's ordinary tokens' bytes, sorted."""
        return self._core.token_byte_values()


def byte_level_walk(record: Vocabulary, pipeline: Any,
                    model: Any = None) -> Optional["ByteLevelWalk"]:
    """The compiled walk of a byte-level BPE ``tokenizer.json`` (``record``,
    its built ``pipeline``), or ``None`` for another configuration and for
    the few byte-level files whose stages the fused core does not follow
    exactly, which the stages then encode:

    * a ``Split`` regex without a compiled scanner (a Python splitter's
      pieces carry no positions);
    * a vocabulary entry under an added token's id that ``tokenizers``' model
      may still give for text (the core left it out), when the record does
      not say which texts those are.

    A file the fused model does not take whole (fasttok's byte-level record
    refuses a normalizer other than ``NFC``, added tokens with
    ``lstrip``/``rstrip``/``single_word``, ``normalized=true`` ones beside a
    normalizer, a post-processor other than a template, Command-R's
    ``Digits`` before ``ByteLevel``'s regex and its entries outside the
    byte-level alphabet, which no text reaches) is walked over a core
    built for the walk alone from the document's model and pre-tokenizer
    (:func:`_walk_record`): the pipeline's added tokens and normalizer stage
    cut and normalize the text (:meth:`ByteLevelWalk._by_stretch`) wherever
    one of them would act, and the core walks the rest. So is a file whose
    added tokens the core's one pass would match otherwise than the
    pipeline's two (flags, ``normalized=true`` beside ``normalized=false``,
    an id ``tokenizers`` gives anew).

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
    if record.merges is None:
        record = _walk_record(record, pipeline.pre_tokenizer)
        model = None
        if record is None:
            return None
    if scanner_for(record.pattern or "") is None and record.pre_tokenizer is None:
        return None
    left_out = None
    if record.metadata.get("model_gives_left_out"):
        left_out = _left_out(record)
        if left_out is None:
            return None
    added = pipeline.added
    normalizer = pipeline.normalizer
    # whether the core's one pass over the text, its normalizer included,
    # is the pipeline's added tokens and normalizer
    whole = (not any(t.single_word or t.lstrip or t.rstrip for t in added.tokens)
             and len({t.normalized for t in added.tokens}) <= 1
             and added.by_content == dict(record.special_tokens)
             and (normalizer is None) == (record.normalizer is None)
             and (normalizer is None or type(normalizer) is FORMS[record.normalizer]))
    if model is None:
        model = build_hf_byte_bpe(record)
    return ByteLevelWalk(model, [record.special_tokens[raw.decode("utf-8")]
                                 for raw in model.special_order], normalizer, added,
                         whole=whole, left_out=left_out)


def _walk_record(record: Vocabulary, pre_tokenizer: Any) -> Optional[Vocabulary]:
    # the byte-level record of a tokenizer.json document the fused model
    # does not take whole, for a walk that asks the pipeline for the rest:
    # the document's model and pre-tokenizer (``pre_tokenizer``, the stage)
    # alone (its added tokens plain, for the vocabulary entries they leave
    # out), or None when those are not the fused core's
    doc = record.metadata.get("document")
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict) \
            or "vocab" not in doc["model"]:
        return None
    # a document without a ByteLevel step is no byte-level file: asked first,
    # before _reachable reads every vocabulary entry (Gemma 3's 262k)
    steps = getattr(pre_tokenizer, "pretokenizers", None) or (pre_tokenizer,)
    if not any(type(step) is ByteLevelPreTokenizer for step in steps):
        return None
    added = [dict(t, lstrip=False, rstrip=False, single_word=False, normalized=False)
             for t in doc.get("added_tokens") or () if isinstance(t, dict)]
    core_doc = {"model": _reachable(doc["model"]),
                "pre_tokenizer": (_digits_apart(pre_tokenizer) or _one_split(pre_tokenizer)
                                  or doc.get("pre_tokenizer")),
                "decoder": {"type": "ByteLevel"}, "added_tokens": added}
    try:
        return byte_level_record(core_doc, record.source or record.name)
    except ValueError:
        return None


def _reachable(model: dict) -> dict:
    # the BPE model without its entries outside the byte-level alphabet and
    # the merges of them (Command-R's 1,403 "‼"-like entries): a byte-level
    # piece is alphabet characters, so the model never gives them
    outside = re.compile("[^" + re.escape("".join(bytes_to_unicode().values())) + "]").search
    vocab = model.get("vocab")
    merges = model.get("merges")
    if not isinstance(vocab, dict) or not isinstance(merges, list):
        return model
    left = {text for text in vocab if isinstance(text, str) and outside(text)}
    if not left:
        return model
    # a merge whose two parts are alphabet text makes alphabet text
    kept = [m for m in merges if not left.intersection(m.split(" ") if isinstance(m, str) else m)]
    return dict(model, vocab={text: i for text, i in vocab.items() if text not in left},
                merges=kept)


def _digits_apart(pre_tokenizer: Any) -> Optional[dict]:
    # Digits(individual_digits) then ByteLevel's regex (Cohere's Command-R
    # and Aya) as the Split of the one regex that splits alike, which the
    # fused core scans; None for another pre-tokenizer
    steps = getattr(pre_tokenizer, "pretokenizers", None)
    if type(pre_tokenizer) is not PreTokenizerSequence or len(steps) != 2:
        return None
    digits, byte_level = steps
    if not (type(digits) is Digits and digits.individual_digits
            and type(byte_level) is ByteLevelPreTokenizer and byte_level.use_regex
            and not byte_level.add_prefix_space):
        return None
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": GPT2_DIGITS}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
         "use_regex": False}]}


def _one_split(pre_tokenizer: Any) -> Optional[dict]:
    # Split(Isolated)s in a row before ByteLevel without its regex (DeepSeek-V3's
    # three) as the Split of the one regex that splits alike, which the fused
    # core scans; None for another pre-tokenizer
    steps = getattr(pre_tokenizer, "pretokenizers", None)
    if type(pre_tokenizer) is not PreTokenizerSequence or not steps:
        return None
    *splits, byte_level = steps
    if not (type(byte_level) is ByteLevelPreTokenizer and not byte_level.use_regex
            and not byte_level.add_prefix_space
            and all(type(s) is Split and s.regex and s.behavior == "Isolated" and not s.invert
                    for s in splits)):
        return None
    regex = JOINED_SPLITS.get(tuple(s.pattern for s in splits))
    if regex is None:
        return None
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
         "use_regex": False}]}


def _left_out(record: Vocabulary) -> Optional[Any]:
    # the matcher of the texts of the vocabulary entries left out of the core
    # for an added token's id, or None when they are unknown (a record read
    # before the loader kept them) or one is no UTF-8 text (its bytes may
    # begin or end inside a character)
    texts = []
    for text in record.metadata.get("left_out") or ():
        try:
            texts.append(decode_byte_level(text).decode("utf-8"))
        except ValueError:
            return None
    if not texts:
        return None
    return AddedTokens([AddedToken(text, 0, normalized=False) for text in texts]).matcher(False)


class ByteLevelWalk(Walk):
    """The byte-level BPE configuration's walk (see :func:`byte_level_walk`):
    ids from the fused model (``model``: a :class:`CoreBPE`, or a
    :class:`NormalizedBPE` for a file with a normalizer), ids with offsets and
    piece indices from its core's ``encode_offsets``.

    ``order_ids``: the id of each of the model's ``special_order``;
    ``normalizer``: the pipeline's normalizer stage or ``None``; ``added``:
    the pipeline's added tokens; ``whole``: whether the model matches the
    added tokens and normalizes as the pipeline does; ``left_out``: the
    matcher of the vocabulary entries the core left out for added tokens'
    ids and ``tokenizers``' model may give, or ``None``.

    Text the normalizer leaves alone (ASCII, or found normalized by the
    stage's quick check) has offsets straight from the compiled walk, and
    so, where the model is not ``whole``, does text holding no added token;
    other text is cut at the added tokens by the pipeline's own matcher and
    normalized stretch by stretch with its alignment kept by the stage, as
    ``tokenizers`` does, and each stretch's offsets read back through it. A
    text in which the model would meet a left-out entry is declined.
    """

    def __init__(self, model: Any, order_ids: list, normalizer: Any, added: Any, *,
                 whole: bool = True, left_out: Any = None) -> None:
        self._model = model
        self._core = getattr(model, "core", model)
        self._encode_offsets = self._core.encode_offsets
        self._order_ids = order_ids
        self._normalizer = normalizer
        forms = type(normalizer) in FORMS.values()
        #: the normalizer when it is a Unicode form (see in_normal_form)
        self._form = normalizer if forms else None
        #: another normalizer's: its own output compared
        self._changes = None if forms or normalizer is None else normalizer.normalize_str
        self._respell = None if normalizer is None else one_for_one(normalizer.normalize_str)
        self._added = added
        self._whole = whole
        self._left = left_out
        #: whether the core walks every text the normalizer leaves alone
        self._fast = whole and left_out is None and self._changes is None
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

    def _plain(self, text: str, allowed: Optional[frozenset]) -> bool:
        # whether the core alone walks text exactly (with its own special
        # tokens where the model is whole, with none otherwise); a text
        # where it may not meets _by_stretch, which declines what it must
        if type(text) is not str:
            raise TypeError(f"text must be str, not {type(text).__name__}")
        if not in_normal_form(text, self._form):
            return False
        if self._changes is not None and self._changes(text) != text:
            return False
        left = self._left
        if self._whole:
            # with every added token matched, none of their texts is left
            return left is None or allowed is None or not left.occurs(text)
        added = self._added
        return not (added.matcher(False, allowed).occurs(text)
                    or (added.any_normalized and added.matcher(True, allowed).occurs(text))
                    or (left is not None and left.occurs(text)))

    def ids(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        """The ids of ``text``, the added tokens ``allowed`` selects matched."""
        if self._fast or self._whole and self._plain(text, allowed):
            mask = self._all if allowed is None else self._mask(allowed)
            return self._model.encode_ordinary(text) if mask is None else \
                self._model.encode(text, mask)
        if self._plain(text, allowed):
            return self._core.encode_ordinary(text)
        found = self._by_stretch(text, allowed)
        return None if found is None else found[0].tolist()

    def encode(self, text: str, allowed: Optional[frozenset]) -> Optional[tuple]:
        """``(ids, offsets, words)`` of ``text`` (see :class:`Walk`), or
        ``None`` for a text with a surrogate pair."""
        if self._fast:
            # most files: the core's own walk unless the normalizer acts
            if type(text) is not str:
                raise TypeError(f"text must be str, not {type(text).__name__}")
            if in_normal_form(text, self._form):
                return self._encode_offsets(text, self._all if allowed is None else
                                            self._mask(allowed))
            return self._by_stretch(text, allowed)
        if not self._plain(text, allowed):
            return self._by_stretch(text, allowed)
        if not self._whole:
            return self._encode_offsets(text, None)
        return self._encode_offsets(text, self._all if allowed is None else self._mask(allowed))

    def encoder(self, allowed: Optional[frozenset]) -> tuple:
        """The core's ``encode_offsets`` with the mask of ``allowed`` for a
        file the core walks whole with no normalizer (Llama 3), else
        :meth:`encode` (see :meth:`Walk.encoder`)."""
        if self._fast and self._form is None:
            return self._encode_offsets, self._all if allowed is None else self._mask(allowed)
        return self.encode, allowed

    def encode_many(self, texts: list, allowed: Optional[frozenset],
                    num_threads: Optional[int] = None) -> list:
        """:meth:`encode` of each text (see :meth:`Walk.encode_many`): the
        core walks them all on ``num_threads`` threads without the GIL, then
        :meth:`encode` walks again each text the core may not walk alone
        (rare text: cheaper than a second list of the others)."""
        texts = texts if type(texts) is list else list(texts)
        mask = None if not self._whole else self._all if allowed is None else self._mask(allowed)
        found = run_batch(self._core, texts, mask, "encode_offsets_many", num_threads,
                          MIN_THREADED_TEXTS)
        if self._fast:
            # as encode: the core's walk but where the normalizer acts (a
            # call of _plain a text was a twentieth of Llama 3's zh batch)
            form = self._form
            if form is not None:
                for i, text in enumerate(texts):
                    if not in_normal_form(text, form):
                        found[i] = self._by_stretch(text, allowed)
            return found
        for i, text in enumerate(texts):
            if not self._plain(text, allowed):
                found[i] = self.encode(text, allowed)
        return found

    def _respelled(self, text: str, allowed: Optional[frozenset]) -> Optional[str]:
        # the normalized text, where the normalizer writes each character as
        # one character, as it writes that character alone (NFKC of CJK
        # text's full-width punctuation, a Lowercase): its alignment keeps
        # every offset; None where it does not, or an added token or a
        # left-out entry occurs (the core then walks it with no special token)
        out = self._respell(text)
        if out is None:
            return None
        added = self._added
        raw = added.matcher(False, allowed)
        if raw.occurs(text) or raw.occurs(out) \
                or (added.any_normalized and added.matcher(True, allowed).occurs(out)) \
                or (self._left is not None and self._left.occurs(out)):
            return None
        return out

    def _by_stretch(self, text: str, allowed: Optional[frozenset]) -> Optional[tuple]:
        # tokenizers' order: the added tokens of the raw pass cut the text,
        # each stretch between them is normalized on its own, its alignment
        # kept, those of the normalized pass cut it, and the core walks what
        # is left of it
        if self._normalizer is not None:
            respelled = self._respelled(text, allowed)
            if respelled is not None:
                return self._encode_offsets(respelled, None)
        ids = array("I")
        offsets = array("i")
        words = array("i")
        word = 0
        added = self._added
        normalizer = self._normalizer
        left = self._left
        encode_offsets = self._encode_offsets
        for token_id, start, end in added.find_matches(text, normalized=False, allowed=allowed):
            if token_id is not None:
                ids.append(token_id)
                offsets.extend((start, end))
                words.append(word)
                word += 1
                continue
            if start == end:
                continue
            stretch = NormalizedString(text[start:end])
            if normalizer is not None:
                normalizer.normalize(stretch)
            normalized = stretch.normalized
            aligns = stretch.alignments
            parts = added.find_matches(normalized, normalized=True, allowed=allowed) \
                if added.any_normalized else ((None, 0, len(normalized)),)
            for token_id, at, stop in parts:
                if at == stop:
                    continue
                if token_id is not None:
                    ids.append(token_id)
                    offsets.extend((start + aligns[at][0], start + aligns[stop - 1][1]))
                    words.append(word)
                    word += 1
                    continue
                part = normalized[at:stop]
                if left is not None and left.occurs(part):
                    return None
                found = encode_offsets(part)
                if found is None:
                    return None
                part_ids, spans, part_words = found
                ids.extend(part_ids)
                for k in range(0, len(spans), 2):
                    offsets.extend((start + aligns[at + spans[k]][0],
                                    start + aligns[at + spans[k + 1] - 1][1]))
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
