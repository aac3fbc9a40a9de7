"""Hugging Face ``tokenizer.json`` as a :class:`fasttok.Encoding`.

:func:`load_tokenizer_json_file` is :func:`fasttok.load`'s reader;
:func:`build_hf_pipeline` builds what the Encoding calls, an
:class:`HFModel`: the file's :class:`~fasttok.formats.hf_stages.HFStages`
and, where the file is the byte-level BPE configuration of GPT-2-style models,
the fused compiled byte-level BPE of :mod:`fasttok.formats.hf_byte_level`,
which then gives the ids (one Python call per text instead of one per piece).

The tiktoken-style API over a ``tokenizer.json``:

* every added token (special or not) is a special token of the Encoding, so
  ``encode(text, allowed_special="all")`` is ``tokenizers``'
  ``encode(text, add_special_tokens=False).ids``, and ``encode_ordinary``
  matches none of them;
* ``add_special_tokens=True`` adds what the file's post-processor adds to one
  sequence (not the file's truncation or padding, which belong to
  :class:`fasttok.hf.Tokenizer`);
* ``decode`` is ``tokenizers``' ``decode(ids, skip_special_tokens=False)``,
  except that an unknown id raises instead of being dropped;
* BPE models sample with BPE-dropout (``encode(text, sample=True)``); other
  model types raise :class:`~fasttok.errors.FasttokError` saying so.

>>> import json
>>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
>>> doc = {"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1}, "unk_token": "a"},
...        "pre_tokenizer": {"type": "WhitespaceSplit"}}
>>> m = build_hf_pipeline(tokenizer_json_record(json.dumps(doc), "t.json"))
>>> m.encode("b a", None), m.decode_bytes([1, 0])
([1, 0], b'b a')
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable
from typing import Any, Optional

from fasttok.errors import FasttokError
from fasttok.formats.hf_stages import HFStages, stages_from_document
from fasttok.loaders.hf_tokenizer_json import load_tokenizer_json
from fasttok.models.interface import ModelBase
from fasttok.vocab import Vocabulary

__all__ = ["load_tokenizer_json_file", "build_hf_pipeline", "control_ids", "HFModel",
           "ByteLevelHFModel"]


def load_tokenizer_json_file(path: str, **options: Any) -> Vocabulary:
    """:func:`fasttok.load`'s reader for ``tokenizer.json`` files (no options).

    >>> load_tokenizer_json_file("t.json", pat_str=".")
    Traceback (most recent call last):
    TypeError: tokenizer.json takes no options, got pat_str
    """
    if options:
        raise TypeError(f"tokenizer.json takes no options, got {', '.join(options)}")
    return load_tokenizer_json(path)


def build_hf_pipeline(vocab: Vocabulary, *, tables: Any = None,
                      model_document: Optional[Callable[[], dict]] = None) -> "HFModel":
    """The model of a ``tokenizer.json`` record: its pipeline, with the fused
    byte-level core when the record has byte-level tokens.

    ``tables``: the byte-level core's token tables when they are at hand
    (the table cache); ``model_document``: what gives the document's
    ``model`` object, read on first use, when the record's document lacks
    its vocabulary (the table cache keeps the rest of the document only)."""
    # the stages first: they check the document and name the JSON path of a
    # fault (a Split regex that does not compile); the byte-level record has
    # checked the model's vocabulary and merges already
    byte_level = vocab.merges is not None
    pipeline = stages_from_document(vocab, lazy_model=byte_level, model_document=model_document,
                                    never=control_ids(vocab))
    decoder = vocab.metadata["document"].get("decoder")
    if byte_level:
        # imported for byte-level files only: the other kinds never use it
        from fasttok.formats.hf_byte_level import build_hf_byte_bpe, byte_level_walk
        core = build_hf_byte_bpe(vocab, tables)
        # the walk of the pipeline over the same core (one set of tables)
        pipeline.walk = byte_level_walk(vocab, pipeline, model=core)
        return ByteLevelHFModel(pipeline, core, decoder, vocab.template_ids)
    return HFModel(pipeline, tuple(content.encode("utf-8")
                                   for content, _, _ in vocab.metadata["added_tokens"]),
                   decoder, vocab.template_ids)


def control_ids(vocab: Vocabulary) -> frozenset:
    """The ids of a ``tokenizer.json`` record's special added tokens
    (``"special": true``): its control tokens, which the Encoding's model
    never gives for text. ``tokenizers`` also matches them inside the model
    (a Unigram piece ``</s>``, a merge ``["<unk", ">"]``), so user text
    spelling one -- or normalized into one, as NFKC folds ``＜/ｓ＞`` -- became
    the control id even with ``disallowed_special=()``. Only
    ``allowed_special`` makes them now; :class:`fasttok.hf.Tokenizer` keeps
    tokenizers' behaviour. Non-special added tokens stay ordinary pieces.

    >>> import json
    >>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
    >>> added = [{"id": 1, "content": "<s>", "special": True}, {"id": 2, "content": "hi"}]
    >>> control_ids(tokenizer_json_record(json.dumps({"added_tokens": added, "model": {
    ...     "type": "WordLevel", "vocab": {"<unk>": 0, "<s>": 1, "hi": 2}, "unk_token": "<unk>"}}),
    ...     "t.json"))
    frozenset({1})
    """
    return frozenset(token_id for _, token_id, flags in vocab.metadata["added_tokens"]
                     if flags["special"])


_HEX = frozenset("0123456789abcdefABCDEF")


def _is_byte_token(text: str) -> bool:
    # whether text is a byte-fallback piece, <0xXX> (tested without a
    # regex: compiling one was a cost of importing the module)
    return len(text) == 6 and text.startswith("<0x") and text[5] == ">" \
        and text[3] in _HEX and text[4] in _HEX


def _token_int(token: Any) -> int:
    # decode's reading of a token that is not an int (the decode side's
    # module, imported when first needed)
    from fasttok.decoders.stream import token_int

    return token_int(token)


def _repaired(text: str) -> str:
    # text with its lone surrogates repaired (the surrogates' module imported
    # by the first text that needs it: a walk takes any text without one)
    from fasttok.shared.surrogates import repair_surrogates

    return repair_surrogates(text)


def _ends_at_whitespace(spec: Any) -> bool:
    # whether a tokenizer.json pre_tokenizer ends a pre-token at every
    # whitespace character
    if not isinstance(spec, dict):
        return False
    if spec.get("type") == "Sequence":
        return any(map(_ends_at_whitespace, spec.get("pretokenizers") or ()))
    return spec.get("type") in ("WhitespaceSplit", "Whitespace", "BertPreTokenizer")


class HFModel(ModelBase):
    """What :class:`fasttok.Encoding` calls for a ``tokenizer.json`` (the
    declared model interface), served by the file's pipeline: its walk where
    it has one, its stages otherwise."""

    def __init__(self, pipeline: HFStages, special_order: tuple,
                 decoder_spec: Optional[dict] = None, template_ids: tuple = ()) -> None:
        self.pipeline = pipeline
        #: ids only the post-processor adds: no token holds them, they decode to nothing
        self.template_only = frozenset(template_ids)
        self._decoder_spec = decoder_spec or {}
        #: the added tokens' contents (UTF-8) that ``allowed`` masks index
        self.special_order = special_order
        #: allowed mask (None: none allowed) -> the added token ids it allows
        self._allowed: dict = {None: frozenset()}

    @property
    def windows_exact(self) -> bool:
        """Whether a window from a place on encodes alone as the whole text
        does there (:attr:`fasttok.models.interface.Model.windows_exact`):
        not on a Unigram model whose pre-tokenizer does not end a pre-token
        at every whitespace (none, or Metaspace alone, which cuts at spaces
        only), where its Viterbi sums scores across the whitespace, so that
        a tie before a window goes by how the sum rounds.

        >>> import json
        >>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
        >>> doc = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]}}
        >>> build_hf_pipeline(tokenizer_json_record(json.dumps(doc), "t.json")).windows_exact
        False
        """
        doc = self.pipeline.record.metadata["document"]
        return doc["model"]["type"] != "Unigram" or _ends_at_whitespace(doc.get("pre_tokenizer"))

    @property
    def cuts_inside_words(self) -> bool:
        """Whether an appender without :attr:`scored_windows` may cut inside
        a pre-token: not on a Unigram model, whose Viterbi sums scores from
        the pre-token's start, so that a tie between the same pieces in
        another order ("f" + "ff", "ff" + "f") goes by how the sum before
        it rounds (see
        :attr:`fasttok.models.interface.Model.cuts_inside_words`).

        >>> import json
        >>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
        >>> doc = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]}}
        >>> build_hf_pipeline(tokenizer_json_record(json.dumps(doc), "t.json")).cuts_inside_words
        False
        """
        return self.pipeline.record.metadata["document"]["model"]["type"] != "Unigram"

    @property
    def scored_windows(self) -> Optional[Callable]:
        """:meth:`encode_scored`, which an appender encodes its windows with,
        where the file's walk carries the Viterbi's score into them (a
        Unigram configuration the compiled walk runs), else None.

        >>> import json
        >>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
        >>> doc = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]}}
        >>> model = build_hf_pipeline(tokenizer_json_record(json.dumps(doc), "t.json"))
        >>> model.scored_windows == model.encode_scored
        True
        """
        walk = self.pipeline.walk
        return self.encode_scored if walk is not None and walk.encode_scored else None

    def encode_scored(self, text: str, state: Any = None, cut: bool = True,
                      allowed: Optional[bytes] = None) -> tuple:
        """``(ids, k, c, state_at_c)`` of ``text`` as the whole text has them
        where it begins, from ``state``, with the added tokens ``allowed``
        selects: the walk's
        :meth:`~fasttok.models._unigram.UnigramWalk.encode_scored`, on the
        text with its lone surrogates repaired (``c`` counted in ``text``)."""
        repaired = _repaired(text)
        ids, k, c, state = self.pipeline.walk.encode_scored(
            repaired, self._allowed_ids(allowed), state, cut)
        if c and repaired is not text:
            from fasttok.shared.surrogates import repaired_starts

            c = repaired_starts(text)[c]
        return ids, k, c, state

    @functools.cached_property
    def _order_ids(self) -> list:
        # the ids of special_order's tokens: made by the first mask that
        # allows some, as the pipeline makes its added tokens when first
        # asked for (a load makes none)
        by_content = self.pipeline.added.by_content
        return [by_content[c.decode("utf-8")] for c in self.special_order]

    @functools.cached_property
    def post_processor(self) -> Callable[[list], list]:
        """ids -> ids with what the file's post-processor adds to one
        sequence: made when first asked for (``add_special_tokens=True``), as
        the pipeline builds its post-processor then."""
        post = self.pipeline.post_processor
        return post.ids_only() if post is not None else list

    # ------------------------------------------------------------ ids
    @functools.cached_property
    def find_special(self) -> Callable[[str, bytes], int]:
        """``(text, mask)`` -> the index in ``special_order`` of the first
        added token ``mask`` selects in ``text`` (leftmost, then longest), or
        -1: one compiled search, what ``Encoding.encode``'s default call asks
        first. Built by that first call, so a load imports no search (a BERT
        file's compiled walk, which cimports it too, waits for the first
        encode as well)."""
        from fasttok.shared._literal_cut import LiteralCut

        return LiteralCut(c.decode("utf-8") for c in self.special_order).find

    def _allowed_ids(self, allowed: Optional[bytes]) -> frozenset:
        found = self._allowed.get(allowed)
        if found is None:
            found = self._allowed[allowed] = frozenset(
                i for i, on in zip(self._order_ids, allowed) if on)
        return found

    def encode(self, text: str, allowed: Optional[bytes]) -> list:
        """The ids of ``text``, matching the added tokens ``allowed`` selects."""
        allowed_ids = self._allowed.get(allowed)
        if allowed_ids is None:
            allowed_ids = self._allowed_ids(allowed)
        walk = self.pipeline.walk
        if walk is not None and type(text) is str:
            # The walk first, two Python calls fewer (a fifth of a short
            # line's time); every walk declines a lone surrogate, so the
            # text is repaired only after a decline. A declined text is
            # walked again by encode_ids: rare, and a tenth of the stages.
            found = walk.ids(text, allowed_ids)
            if found is not None:
                return found
        return self._unwalked(text, allowed_ids)

    def encode_with_offsets(self, text: str, allowed: Optional[bytes]) -> tuple:
        """:meth:`encode`'s ids with each one's span of ``text`` in
        characters, ``tokenizers``' offsets before post-processing: the
        walk's, with the same flag it gives ids with, or the stages'."""
        allowed_ids = self._allowed_ids(allowed) if allowed is not None else frozenset()
        walk = self.pipeline.walk
        found = walk.encode(text, allowed_ids) if walk is not None and type(text) is str else None
        if found is not None:
            ids, spans = found[0].tolist(), found[1]
        else:
            staged = self.pipeline.staged_tokens(_repaired(text), allowed_ids)
            ids, spans = [t[1] for t in staged], array("q", [x for t in staged for x in t[3]])
        post = self.pipeline.post_processor
        if post is not None and not post.keeps_tokens:
            spans = self._post_processed_spans(post, ids, spans)
        return ids, spans, "chars"

    def _post_processed_spans(self, post: Any, ids: list, spans: Any) -> list:
        # the spans as the post-processor leaves them (ByteLevel's
        # trim_offsets), which tokenizers applies even without special tokens
        from fasttok.post_processors.encoding import Encoding

        tokens = [self.pipeline.id_to_token(i) or "" for i in ids]
        pairs = [(spans[2 * k], spans[2 * k + 1]) for k in range(len(ids))]
        done = post.process(Encoding(ids, tokens, pairs, [0] * len(ids)), None, False)
        return array("q", [x for span in done.offsets for x in span])

    def _unwalked(self, text: str, allowed_ids: frozenset) -> list:
        # the stages' ids of a text the walk declined (or cannot take)
        return self.pipeline.encode_ids(_repaired(text), allowed_ids)

    def encode_many(self, texts: list, allowed: Optional[bytes] = None) -> list:
        """:meth:`encode` of each text: the walk's batch call
        (:meth:`~fasttok.formats.walk.Walk.ids_many`, one compiled pass for
        BERT's) where there is a walk, then :meth:`encode`'s way for each text
        it declines (its surrogates repaired and walked again, else the
        stages)."""
        walk = self.pipeline.walk
        if walk is None or type(texts) is not list:
            return [self.encode(text, allowed) for text in texts]
        allowed_ids = self._allowed_ids(allowed)
        return [self._unwalked(text, allowed_ids) if ids is None else ids
                for text, ids in zip(texts, walk.ids_many(texts, allowed_ids))]

    def encode_many_flat(self, texts: list, allowed: Optional[bytes] = None) -> tuple:
        """:meth:`encode_many`'s ids as ``(ids, offsets)`` (see
        :meth:`~fasttok.models.interface.Model.encode_many_flat`): the walk's
        own flat call where it has one (BERT's, no list a text), a text it
        declines by :meth:`encode`'s way."""
        many_flat = getattr(self.pipeline.walk, "ids_many_flat", None)
        if many_flat is not None and type(texts) is list:
            allowed_ids = self._allowed_ids(allowed)
            found = many_flat(texts, allowed_ids, lambda text: self._unwalked(text, allowed_ids))
            if found is not None:
                return found
        return ModelBase.encode_many_flat(self, texts, allowed)

    def encode_to_array(self, text: str, allowed: Optional[bytes] = None) -> array:
        """:meth:`encode` as an ``array('I')``: the walk's (BERT's is filled
        with no list between), else the stages' list copied."""
        allowed_ids = self._allowed_ids(allowed)
        walk = self.pipeline.walk
        if walk is not None and type(text) is str:
            found = walk.ids_array(text, allowed_ids)
            if found is not None:
                return found
        return array("I", self._unwalked(text, allowed_ids))

    def encoder(self, allowed: bytes) -> tuple:
        """The walk's own ``ids`` with the ids ``allowed`` selects (see
        :meth:`~fasttok.models.interface.Model.encoder`); with no walk,
        :meth:`encode`. The walk is built here when it has not been: on the
        first text encoded."""
        walk = self.pipeline.walk
        if walk is None:
            return self.encode, allowed
        return walk.ids, self._allowed_ids(allowed)

    def sample(self, text: str, allowed: Optional[bytes], alpha: float, nbest_size: int,
               rng: Any) -> list:
        """One segmentation drawn at random, piece by piece: BPE-dropout with
        rate ``alpha`` (BPE models), or sentencepiece's Unigram sampling with
        ``alpha`` and ``nbest_size`` (Unigram models, see
        :meth:`fasttok.models.hf_unigram.Unigram.sample_ids`)."""
        # imported here: a load imports only its own model type's module
        from fasttok.models.hf_bpe import BPE
        from fasttok.models.hf_unigram import Unigram
        model = self.pipeline.model
        if isinstance(model, BPE):
            rate: Any = alpha
        elif isinstance(model, Unigram):
            rate = (alpha, nbest_size)
        else:
            raise FasttokError(f"this tokenizer.json's {type(model).__name__} model cannot "
                               "sample (one segmentation per word); sampling needs a BPE or "
                               "Unigram model")
        return self.pipeline.encode_ids(_repaired(text), self._allowed_ids(allowed),
                                        sample=(rate, rng))

    # ------------------------------------------------------------ added tokens and pieces
    def find_token(self, data: bytes) -> int:
        """The id of the model token whose :meth:`token_bytes` are ``data``,
        else whose vocabulary text is ``data``, or -1."""
        found = self._by_bytes.get(bytes(data))
        if found is None:
            try:
                found = self.pipeline.model.token_to_id(bytes(data).decode("utf-8"))
            except UnicodeDecodeError:
                pass
        return -1 if found is None or found in self.pipeline.added_ids else found

    def encode_bytes_piece(self, piece: bytes) -> list:
        """``piece`` through the model alone, as one word (no normalizer, no
        pre-tokenizer); the bytes must be UTF-8 unless the vocabulary is byte-level."""
        try:
            text = bytes(piece).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FasttokError(f"this tokenizer.json's model works on text; the piece is not "
                               f"UTF-8 ({exc.reason} at byte {exc.start})") from None
        return self.pipeline.model.tokenize_ids(text) if text else []

    def encode_as_pieces(self, text: str) -> list:
        """The token strings ``tokenizers`` gives for ``text``, with no added
        token matched (one for each id of :meth:`encode` with none allowed)."""
        return self.pipeline.tokens(_repaired(text))

    # ------------------------------------------------------------ decoding
    def _check(self, tokens: Any) -> list:
        # the ids as a list, an id only a template adds left out (it decodes
        # to nothing, as tokenizers decodes it)
        ids = [t if type(t) is int else _token_int(t) for t in tokens]
        pipe = self.pipeline
        template_only = self.template_only
        for t in dict.fromkeys(ids):  # each distinct id once, the first bad one first
            if t < 0 or (pipe.id_to_token(t) is None and t not in template_only):
                raise KeyError(t)
        return [t for t in ids if t not in template_only] if template_only else ids

    def token_bytes(self, token: int) -> bytes:
        """The bytes one id stands for: its token string with the decoder's
        per-token rules (a byte-fallback ``<0xXX>`` is that byte, ``▁`` a
        space, a WordPiece continuation loses its prefix and a word start
        gains a space, byte-level characters their bytes); an added token is
        its content; an id only the post-processor adds, nothing."""
        if token in self.template_only:
            return b""
        self._check([token])
        return self._bytes_of(token)

    def _bytes_of(self, token: int) -> bytes:
        text = self.pipeline.id_to_token(token)
        if token in self.pipeline.added_ids:
            return text.encode("utf-8")
        return self._token_rule(text)

    @functools.cached_property
    def _token_rule(self) -> Any:
        # the decoder's steps that act on each token alone, from its JSON
        # (json and re imported here: a load never reads them)
        import json
        import re

        from fasttok.shared._bytemap import decode_byte_level

        doc = json.dumps(self._decoder_spec)
        kinds = set(re.findall(r'"type": "(\w+)"', doc))
        metaspace = "\u2581" in doc or "\\u2581" in doc
        prefix = self._decoder_spec.get("prefix") if "WordPiece" in kinds else None
        if prefix is None and "WordPiece" in kinds:
            prefix = "##"

        def rule(text: str) -> bytes:
            if "ByteFallback" in kinds and _is_byte_token(text):
                return bytes([int(text[3:5], 16)])
            if "ByteLevel" in kinds:
                try:
                    return decode_byte_level(text)
                except ValueError:
                    return text.encode("utf-8")
            if metaspace:
                text = text.replace("\u2581", " ")
            if prefix is not None:
                text = text[len(prefix):] if text.startswith(prefix) else " " + text
            return text.encode("utf-8")

        return rule

    @functools.cached_property
    def _by_bytes(self) -> dict:
        out: dict = {}
        for token in sorted(self.pipeline.model.get_vocab().values()):
            if token not in self.pipeline.added_ids:
                out.setdefault(self._bytes_of(token), token)
        return out

    def decode_bytes(self, tokens: Any) -> bytes:
        """The UTF-8 of ``tokenizers``' ``decode(ids, skip_special_tokens=False)``."""
        return self.pipeline.decode(self._check(tokens), False).encode("utf-8")

    def decode_with_offsets(self, tokens: Any) -> tuple:
        """``(decode_bytes(tokens), starts)``: id ``i``'s text starts where the
        decoding of the ids before it stops agreeing with the whole (decoders
        such as ``Strip`` and ``ByteFallback`` look at their neighbours). The
        decoder chains :func:`~fasttok.decoders.hf_starts.token_starts` reads
        take one pass; the others decode each prefix in a window (see
        :func:`~fasttok.decoders.hf_starts.prefix_agreements`). An id only the post-processor adds starts
        where the next id does."""
        ids = list(tokens)
        if self.template_only and not self.template_only.isdisjoint(ids):
            whole, kept_starts = self.decode_with_offsets(
                [t for t in ids if t not in self.template_only])
            starts = [0] * len(ids)
            at, k = len(whole), len(kept_starts)
            for i in range(len(ids) - 1, -1, -1):
                if ids[i] not in self.template_only:
                    k -= 1
                    at = kept_starts[k]
                starts[i] = at
            return whole, starts
        ids = self._check(ids)
        pipe = self.pipeline
        # every id is known now: each distinct one's token is looked up once
        token_of = {i: pipe.id_to_token(i) for i in set(ids)}
        from fasttok.decoders.hf_starts import prefix_agreements, token_starts

        found = token_starts(pipe.decoder, list(map(token_of.__getitem__, ids)))
        if found is not None:
            return found
        whole = pipe.decode(ids, False).encode("utf-8")
        starts = []

        def byte_piece(token: int) -> bool:
            return _is_byte_token(pipe.id_to_token(token))

        for agreed in prefix_agreements(lambda part: pipe.decode(part, False), ids, whole,
                                        lambda left, right: byte_piece(left) and byte_piece(right)):
            starts.append(max(agreed, starts[-1] if starts else 0))
        return whole, starts

    def token_byte_values(self) -> list:
        """:meth:`token_bytes` of every model id that is not an added token, sorted."""
        added = self.pipeline.added_ids
        return sorted(self._bytes_of(i) for i in set(self.pipeline.model.get_vocab().values())
                      if i not in added)

    def stream_decoder(self) -> Any:
        """Ids one at a time, as ``tokenizers``' ``DecodeStream`` gives their text."""
        # the decode side's module, imported by the first stream
        from fasttok.decoders.hf_stream import TextStream

        return TextStream(self._check, self.pipeline)


class ByteLevelHFModel(HFModel):
    """A byte-level BPE ``tokenizer.json`` (Llama 3, Qwen, GPT-4o): the fused
    compiled core (:mod:`fasttok.formats.hf_byte_level`) serves ids, pieces
    and decoding, one Python call per text; the pipeline the rest."""

    def __init__(self, pipeline: HFStages, core: Any, decoder_spec: Optional[dict] = None,
                 template_ids: tuple = ()) -> None:
        super().__init__(pipeline, core.special_order, decoder_spec, template_ids)
        self._core = core
        # the core's own methods, bound: no Python layer between the
        # Encoding and the compiled call
        for name in ("count", "encode_many", "encode_many_flat", "batch_job", "encode_to_array",
                     "sample", "find_special", "find_token", "encode_bytes_piece",
                     "encode_as_pieces", "token_byte_values", "stream_decoder"):
            setattr(self, name, getattr(core, name))
        # encode_files reads a file's UTF-8 straight through a core that has
        # it (one without a normalizer)
        self.document_encoder = getattr(core, "document_encoder", None)

    def encode(self, text: str, allowed: Optional[bytes]) -> list:
        """The core's ids of ``text``."""
        core = self._core
        return core.encode(text, allowed) if allowed is not None else core.encode_ordinary(text)

    def encoder(self, allowed: bytes) -> tuple:
        """The core's entry (a compiled ``encode`` with its mask)."""
        return self._core.encoder(allowed)

    def token_bytes(self, token: int) -> bytes:
        """The core's bytes of ``token`` (nothing for an id only the post-processor adds)."""
        return b"" if token in self.template_only else self._core.token_bytes(token)

    def decode_bytes(self, tokens: Any) -> bytes:
        """The core's decoding, ids only the post-processor adds left out."""
        if self.template_only:
            tokens = [t for t in tokens if t not in self.template_only]
        return self._core.decode_bytes(tokens)

    def decode_with_offsets(self, tokens: Any) -> tuple:
        """The core's decoding with each id's start (see :meth:`HFModel.decode_with_offsets`)."""
        ids = list(tokens)
        if self.template_only and not self.template_only.isdisjoint(ids):
            return super().decode_with_offsets(ids)
        return self._core.decode_with_offsets(ids)
