"""``tokenizers``' ``TokenizerImpl`` over fasttok's components.

One sequence goes through the stages in ``tokenizers``' order
(``encode_single_sequence``, ``post_process``):

1. **Added tokens** (:class:`~fasttok.added_tokens.hf_added.AddedTokens`):
   those with ``normalized=false`` cut the raw text; each stretch between
   them is normalized, then the ``normalized=true`` ones cut it.
2. **Pre-tokenizer** on the stretches that are not added tokens.
3. **Model** on each piece; a token's offsets go back through the piece's
   alignment to the input, and its word id is the piece's index (or the
   word's, for pre-tokenized input).
4. **Post-processing**: truncation (leaving room for what the
   post-processor adds), the post-processor, padding.

Ids without offsets (:meth:`HFPipeline.encode_ids`, what
:class:`fasttok.Encoding` uses) take the same steps on plain strings:
``normalize_str`` and the model's ``tokenize_ids`` (``tokenize_ids_many``
for all the pieces of a stretch, where the model has it), no alignment kept;
``encode(..., offsets=False)`` post-processes those ids as ``tokenizers``'
``encode_fast`` does (``encode_batch_fast`` of the drop-in).

>>> import json
>>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
>>> doc = {"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1, "[UNK]": 2},
...                  "unk_token": "[UNK]"},
...        "pre_tokenizer": {"type": "WhitespaceSplit"},
...        "added_tokens": [{"id": 3, "content": "<s>", "special": True, "single_word": False,
...                          "lstrip": False, "rstrip": False, "normalized": False}]}
>>> pipe = pipeline_from_document(tokenizer_json_record(json.dumps(doc), "t.json"))
>>> enc = pipe.encode("a <s>b c")
>>> enc.ids, enc.offsets, enc.word_ids
([0, 3, 1, 2], [(0, 1), (2, 5), (5, 6), (7, 8)], [0, 1, 2, 3])
>>> pipe.decode(enc.ids, skip_special_tokens=True)
'a b [UNK]'
>>> pipe.tokens("a <s>b")
['a', '[UNK]']
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from fasttok.added_tokens.hf_added import AddedToken, AddedTokens
from fasttok.decoders.hf_json import decoder_from_json
from fasttok.errors import FasttokError
from fasttok.loaders.hf_tokenizer_json import JsonPathError
from fasttok.models.hf_json import model_from_json
from fasttok.normalizers.hf_json import normalizer_from_json
from fasttok.post_processors._encoding_lists import EncodingMaker, encode_single, walked_encoding
from fasttok.post_processors.encoding import Encoding, WalkedEncoding
from fasttok.post_processors.hf_json import padding_from_json, post_processor_from_json, \
    truncation_from_json
from fasttok.pre_tokenizers.hf_json import pre_tokenizer_from_json
from fasttok.shared.gc_pause import gc_paused
from fasttok.shared.normalized import NormalizedString, PreTokenizedString
from fasttok.vocab import Vocabulary

if TYPE_CHECKING:
    from fasttok.formats.walk import Walk
    from fasttok.post_processors.padding import PaddingParams
    from fasttok.post_processors.truncation import TruncationParams

# Truncation, padding and post-processing Encodings are the drop-in's
# (fasttok.hf imports their modules); fasttok.load's pipeline never runs
# them, so the methods that do import them, off the walked fast path.

__all__ = ["HFPipeline", "pipeline_from_document"]

# a post-processor that does more than put tokens around one input
_UNWRAPPED = object()
# _encode_single's found when its caller has not walked the text
_UNWALKED = object()

def _added_tokens(vocab: Vocabulary, normalize: Any) -> AddedTokens:
    # the loader gave each added token the id tokenizers gives it
    return AddedTokens([AddedToken(content, token_id, special=bool(flags["special"]),
                                   single_word=bool(flags["single_word"]),
                                   lstrip=bool(flags["lstrip"]), rstrip=bool(flags["rstrip"]),
                                   normalized=flags["normalized"])
                        for content, token_id, flags in vocab.metadata["added_tokens"]],
                       normalize)


def _looks_at_the_start(pre_tokenizer: Any) -> bool:
    # whether a pre-tokenizer's pieces depend on where in the input they
    # start (Metaspace's "first" prepend scheme), here or inside a Sequence
    if pre_tokenizer is None:
        return False
    if getattr(pre_tokenizer, "prepend_scheme", None) == "first":
        return True
    return any(map(_looks_at_the_start, getattr(pre_tokenizer, "pretokenizers", ())))


class HFPipeline:
    """The stages of one ``tokenizer.json`` (see the module docstring)."""

    def __init__(self, *, normalizer: Any, pre_tokenizer: Any, model: Any, post_processor: Any,
                 decoder: Any, added: AddedTokens, truncation: Optional[TruncationParams],
                 padding: Optional[PaddingParams],
                 model_factory: Optional[Callable[[], Any]] = None, record: Any = None) -> None:
        # model_factory (with model None) builds the model on first use: a
        # byte-level file's ids come from the fused core, and its Python BPE
        # model (half of Llama 3's load time) serves only offsets and pieces
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self._model = model
        self._model_factory = model_factory
        self.post_processor = post_processor
        self.decoder = decoder
        self.truncation = truncation
        self.padding = padding
        #: the tokenizer.json record the stages were read from (what a walk is built for)
        self.record = record
        self._start_matters = _looks_at_the_start(pre_tokenizer)
        self.set_added(added)

    def set_added(self, added: AddedTokens, spelled_normalized: Optional[frozenset] = None) -> None:
        """Match ``added`` from now on (``add_tokens`` of the drop-in);
        ``spelled_normalized``: the ids whose token string is their content
        normalized (default: those matched in the normalized text)."""
        self.added = added
        self._spelled_normalized = frozenset(t.id for t in added.tokens if t.normalized) \
            if spelled_normalized is None else spelled_normalized
        self.added_ids = frozenset(t.id for t in added.tokens)
        # what was built knowing the added tokens: their strings, the walk
        self.__dict__.pop("_added_strings", None)
        self.__dict__.pop("walk", None)
        self.__dict__.pop("_token_strings", None)
        self.__dict__.pop("_makers", None)

    @property
    def truncation(self) -> Optional[TruncationParams]:
        """The truncation settings, or ``None``."""
        return self._truncation

    @truncation.setter
    def truncation(self, value: Optional[TruncationParams]) -> None:
        self._truncation = value
        self.__dict__.pop("_makers", None)

    @property
    def padding(self) -> Optional[PaddingParams]:
        """The padding settings, or ``None``."""
        return self._padding

    @padding.setter
    def padding(self, value: Optional[PaddingParams]) -> None:
        self._padding = value
        self.__dict__.pop("_makers", None)

    @functools.cached_property
    def walk(self) -> Optional[Walk]:
        """The compiled walk of this configuration (:mod:`fasttok.formats.hf_walks`), or ``None``."""
        if self.record is None:
            return None
        # the walks' module is imported by the first encode: a load never needs it
        from fasttok.formats.hf_walks import walk_for

        return walk_for(self.record, self)

    @functools.cached_property
    def _token_strings(self) -> list:
        # id -> token string, for the tokens of walked encodings; a byte-level
        # record spells its tokens without the Python BPE model (most of
        # Llama 3's load, built for nothing else)
        record = self.record
        if record is None or record.merges is None:
            # a BPE whose ids are its entries' places lists them by id (Gemma
            # 3's get_vocab would make a dict of 262k entries for this)
            by_id = getattr(self.model, "texts_by_id", None)
            strings: list = list(by_id) if by_id is not None else []
            for text, token_id in self.model.get_vocab().items() if by_id is None else ():
                if token_id >= len(strings):
                    strings += [None] * (token_id + 1 - len(strings))
                strings[token_id] = text
        else:
            # imported for byte-level records only (the module is the
            # byte-level walk's, which other files never import)
            from fasttok.formats.hf_byte_level import byte_level_token_strings
            strings = byte_level_token_strings(record)
        # an added token in an encoding is spelled as it was matched: normalized
        # only when it is looked for in the normalized text (the spelling
        # add_tokens may give its id elsewhere is id_to_token's)
        added = self._added_spelled(frozenset(t.id for t in self.added.tokens if t.normalized))
        strings += [None] * (max(added, default=-1) + 1 - len(strings))
        for token_id, text in added.items():
            strings[token_id] = text
        return strings

    @functools.cached_property
    def _wraps(self) -> dict:
        # add_special_tokens -> the post-processor as a wrapping of one input
        # (None: no post-processor; _UNWRAPPED: not a wrapping)
        post = self.post_processor
        if post is None:
            return {True: None, False: None}
        return {add: post.single_wrap(add) or _UNWRAPPED for add in (True, False)}

    @functools.cached_property
    def _makers(self) -> dict:
        # add_special_tokens -> the EncodingMaker of one str input (its walk
        # and its wrapping in one compiled call), or None where an input may
        # need more: no walk, a post-processor that is not a wrapping,
        # truncation, padding to a length
        padding = self.padding
        if self.walk is None or self.truncation is not None or padding is not None and (
                padding.length is not None or padding.pad_to_multiple_of):
            return {True: None, False: None}
        return {add: None if wrap is _UNWRAPPED else
                EncodingMaker(WalkedEncoding, self._token_strings, wrap, self.walk.encoder)
                for add, wrap in self._wraps.items()}

    @functools.cached_property
    def _added_strings(self) -> dict:
        # tokenizers gives an added token looked for in the normalized text
        # its normalized spelling as its string (id_to_token, decode): with
        # Llama 2's normalizer "<new>" decodes as "▁<new>", a space
        return self._added_spelled(self._spelled_normalized)

    def _added_spelled(self, normalized_ids: frozenset) -> dict:
        # added token id -> its content, normalized for the ids normalized_ids
        normalize = None if self.normalizer is None else self.normalizer.normalize_str
        return {token_id: normalize(t.content) if normalize and token_id in normalized_ids
                else t.content for token_id, t in self.added.by_id.items()}

    @property
    def model(self) -> Any:
        """The model (built now if it was left for first use)."""
        if self._model is None:
            self._model = self._model_factory()
        return self._model

    @functools.cached_property
    def _ids_many(self) -> Callable[[list], list]:
        # a model with tokenize_ids_many takes a stretch's pieces in one call
        # (a compiled loop, where a Python call a word was a fifth of the time)
        return getattr(self.model, "tokenize_ids_many", None) or self._ids_piece_by_piece

    # ------------------------------------------------------------ one sequence
    def _cut(self, piece: NormalizedString, normalized: bool,
             allowed: Optional[frozenset]) -> list:
        # one added-token pass over a piece: [(piece, token or None)], empty pieces dropped
        out = []
        for token_id, start, end in self.added.find_matches(piece.normalized,
                                                            normalized=normalized,
                                                            allowed=allowed):
            part = piece.slice(start, end)
            if part is None or not part.normalized:
                continue
            out.append((part, None if token_id is None else
                        (token_id, part.normalized, (0, len(part.normalized)))))
        return out

    def _splits(self, text: str, allowed: Optional[frozenset]) -> list:
        # steps 1 and 2: [(piece, added token or None)], in order; the pieces
        # that are not added tokens normalized and then pre-tokenized
        splits = []
        for piece, found in self._cut(NormalizedString(text), False, allowed):
            if found is not None:
                splits.append((piece, found))
                continue
            if self.normalizer is not None:
                self.normalizer.normalize(piece)
            for part, token in self._cut(piece, True, allowed):
                if token is not None or self.pre_tokenizer is None:
                    splits.append((part, token))
                    continue
                pts = PreTokenizedString(part)
                self.pre_tokenizer.pre_tokenize(pts)
                splits.extend((word, None) for word in pts.splits)
        return splits

    def _encode_one(self, text: str, type_id: int, word: Optional[int],
                    allowed: Optional[frozenset] = None) -> Encoding:
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        walk = self.walk
        if walk is not None:
            found = walk.encode(text, allowed)
            if found is not None:
                return self._walked(found, type_id, word, None)
        return self._encode_staged(text, type_id, word, allowed)

    def _encode_staged(self, text: str, type_id: int, word: Optional[int],
                       allowed: Optional[frozenset] = None) -> Encoding:
        # the stages one by one: the test oracle of every walk
        ids: list = []
        tokens: list = []
        offsets: list = []
        words: list = []
        tokenize = self.model.tokenize
        for index, (piece, token) in enumerate(self._splits(text, allowed)):
            found = tokenize(piece.normalized) if token is None else (token,)
            for token_id, value, (start, end) in found:
                span = piece.offsets_of(start, end)
                ids.append(token_id)
                tokens.append(value)
                offsets.append((start, end) if span is None else span)
                words.append(index if word is None else word)
        return Encoding(ids, tokens, offsets, words, type_ids=[type_id] * len(ids))

    def tokens(self, text: str) -> list:
        """The token strings of ``text`` with no added token matched and no
        post-processing (what :meth:`encode_ids` with nothing allowed gives ids for)."""
        return self._encode_one(text, 0, None, frozenset()).tokens

    def _encode_ids_only(self, text: str, allowed: Optional[frozenset]) -> Encoding:
        # tokenizers' OffsetType::None: no token strings, offsets or words,
        # and type id 0 even for a pair's second input (only a post-processor
        # that sets type ids sets them)
        ids = self.encode_ids(text, allowed)
        n = len(ids)
        return Encoding(ids, [""] * n, [(0, 0)] * n, [None] * n)

    def _encode_sequence(self, sequence: Any, type_id: int, is_pretokenized: bool,
                         allowed: Optional[frozenset], offsets: bool) -> Encoding:
        if not offsets:
            if not is_pretokenized:
                return self._encode_ids_only(sequence, allowed)
            if isinstance(sequence, str):
                raise TypeError("a pre-tokenized sequence is a list of strings, not a str")
            return Encoding.merge([self._encode_ids_only(w, allowed) for w in sequence], False)
        if not is_pretokenized:
            return self._encode_one(sequence, type_id, None, allowed)
        if isinstance(sequence, str):
            raise TypeError("a pre-tokenized sequence is a list of strings, not a str")
        return Encoding.merge([self._encode_one(w, type_id, i, allowed)
                               for i, w in enumerate(sequence)], False)

    def encode(self, sequence: Any, pair: Any = None, *, is_pretokenized: bool = False,
               add_special_tokens: bool = True, allowed: Optional[frozenset] = None,
               offsets: bool = True) -> Encoding:
        """``tokenizers``' ``encode``: one sequence or a pair, post-processed.
        ``allowed``: the added token ids matched (``None``: all); without
        ``offsets``, tokenizers' ``encode_fast``: the ids through the
        ids-only path, token strings empty, offsets ``(0, 0)``, words ``None``."""
        if pair is None and offsets and type(sequence) is str and not is_pretokenized:
            return self.encode_single(sequence, allowed, add_special_tokens)
        if pair is None and isinstance(sequence, tuple) and len(sequence) == 2 \
                and not is_pretokenized:
            sequence, pair = sequence
        first = self._encode_sequence(sequence, 0, is_pretokenized, allowed, offsets)
        second = None if pair is None else self._encode_sequence(pair, 1, is_pretokenized,
                                                                 allowed, offsets)
        return self.post_process(first, second, add_special_tokens)

    # encode of one str (allowed: the added token ids matched, None for
    # all), post-processed: the common call, compiled, walked and wrapped
    # in one call by the maker where there is one, else _encode_single's
    encode_single = encode_single

    def _encode_single(self, text: str, allowed: Optional[frozenset],
                       add_special_tokens: bool, found: Any = _UNWALKED) -> Encoding:
        # one str input post-processed, walked once: where the post-processor
        # only wraps it and truncation and padding leave it alone, the
        # wrapping goes into the walked encoding itself and no list is made
        # until one is read
        # (found: the walk's encode of text, when a batch walked its texts together)
        if found is _UNWALKED:
            found = None if self.walk is None else self.walk.encode(text, allowed)
        if found is None:
            return self.post_process(self._encode_staged(text, 0, None, allowed), None,
                                     add_special_tokens)
        wrap = self._wraps[add_special_tokens]
        if wrap is _UNWRAPPED or not (self.padding is None and self.truncation is None
                                      or self._leaves_alone(len(found[0]), add_special_tokens)):
            return self.post_process(self._walked(found, 0, None, None), None,
                                     add_special_tokens)
        return walked_encoding(WalkedEncoding, found[0], found[1], found[2], self._token_strings,
                               0, None, wrap, found[3] if len(found) > 3 else None)

    def _walked(self, found: tuple, type_id: int, word: Optional[int], wrap: Any) -> Encoding:
        return walked_encoding(WalkedEncoding, found[0], found[1], found[2], self._token_strings,
                               type_id, word, wrap, found[3] if len(found) > 3 else None)

    def _leaves_alone(self, n: int, add_special_tokens: bool) -> bool:
        # whether truncation and padding change nothing of one input of n tokens
        padding, truncation = self.padding, self.truncation
        if padding is not None and (padding.length is not None or padding.pad_to_multiple_of):
            return False
        if truncation is None:
            return True
        limit = truncation.max_length
        if add_special_tokens:
            limit -= self.num_special_tokens_to_add(False)
        return limit < 0 or n <= limit

    def encode_batch(self, inputs: list, *, is_pretokenized: bool = False,
                     add_special_tokens: bool = True, allowed: Optional[frozenset] = None,
                     offsets: bool = True) -> list:
        """:meth:`encode` of each input, then padded together; the walk takes
        the ``str`` inputs together (:meth:`Walk.encode_many`, on threads
        where it walks without the GIL)."""
        out = []
        options = {"add_special_tokens": add_special_tokens, "allowed": allowed,
                   "offsets": offsets}
        singles = offsets and not is_pretokenized
        walked = None
        rest = inputs  # the inputs encoded one by one below
        if singles and self.walk is not None:
            texts = [item for item in inputs if type(item) is str]
            # the collector paused: the walk's list of results and the list
            # of encodings, young and thousands long, were walked again by
            # each collection the batch's allocations set off (a sixth of
            # Llama 3's batch of 5,000 lines, callgrind)
            with gc_paused():
                found = self.walk.encode_many(texts, allowed)
                maker = self._makers[add_special_tokens]
                if maker is not None and len(texts) == len(inputs):
                    # every input one str: all the encodings made in one compiled loop
                    out = maker.make_many(found, texts, lambda text: self._encode_single(
                        text, allowed, add_special_tokens, None))
                    rest = ()
                    # the walk's results freed before the collector runs
                    # again: its first pass would walk them all
                    found = ()
            walked = iter(found)
        for item in rest:
            if singles and type(item) is str:
                out.append(self._encode_single(item, allowed, add_special_tokens,
                                               _UNWALKED if walked is None else next(walked)))
                continue
            if isinstance(item, (tuple, list)) and not is_pretokenized and len(item) == 2:
                out.append(self.encode(item[0], item[1], **options))
            elif isinstance(item, tuple) and is_pretokenized and len(item) == 2 \
                    and not isinstance(item[0], str):
                out.append(self.encode(item[0], item[1], is_pretokenized=True, **options))
            else:
                out.append(self.encode(item, is_pretokenized=is_pretokenized, **options))
        if self.padding is not None:
            from fasttok.post_processors.padding import pad_encodings

            pad_encodings(out, self.padding)
        return out

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many ids the post-processor adds."""
        return 0 if self.post_processor is None else self.post_processor.added_tokens(is_pair)

    def post_process(self, encoding: Encoding, pair: Optional[Encoding],
                     add_special_tokens: bool) -> Encoding:
        """Truncate (leaving room for the post-processor's ids), post-process, pad."""
        from fasttok.post_processors.pipeline import post_process

        return post_process(encoding, pair, add_special_tokens, self.post_processor,
                            self.truncation, self.padding)

    # ------------------------------------------------------------ ids only
    def _pieces(self, part: str, at_start: bool) -> list:
        # the pre-tokenizer's pieces of one normalized stretch, as strings
        pre = self.pre_tokenizer
        if pre is None:
            return [part]
        if at_start or not self._start_matters:
            return pre.split_str(part)
        # Metaspace's "first" scheme looks at where the piece starts in the
        # input; a piece placed past the start says so through its offsets
        pts = PreTokenizedString(NormalizedString(part, original_shift=1))
        pre.pre_tokenize(pts)
        return [ns.normalized for ns in pts.splits]

    def _ids_piece_by_piece(self, pieces: list) -> list:
        tokenize_ids = self.model.tokenize_ids
        out: list = []
        for piece in pieces:
            if piece:
                out += tokenize_ids(piece)
        return out

    def encode_ids(self, text: str, allowed: Optional[frozenset],
                   sample: Optional[tuple] = None) -> list:
        """The ids of ``text`` without post-processing; ``allowed``: the added
        token ids matched (``None``: all, as ``tokenizers`` does). The same
        steps as :meth:`encode` on plain strings: no alignment is kept.
        ``sample``: ``(rate, rng)``, each piece drawn by the model's
        ``sample_ids`` with a seed from ``rng``: BPE-dropout's rate, or a
        Unigram model's ``(alpha, nbest_size)``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        added = self.added
        if sample is None and self.walk is not None:
            found = self.walk.ids(text, allowed)
            if found is not None:
                return found
        normalize = None if self.normalizer is None else self.normalizer.normalize_str
        ids_many = self._ids_many
        if sample is not None:
            rate, rng = sample
            sample_ids = self.model.sample_ids

            def ids_many(pieces: list) -> list:
                out: list = []
                for piece in pieces:
                    if piece:
                        out += sample_ids(piece, rate, rng.getrandbits(64))
                return out
        out: list = []
        for token_id, start, end in added.find_matches(text, normalized=False, allowed=allowed):
            if token_id is not None:
                out.append(token_id)
                continue
            stretch = text[start:end]
            if normalize is not None:
                stretch = normalize(stretch)
            if not self.added.any_normalized:
                if stretch:
                    out += ids_many(self._pieces(stretch, start == 0))
                continue
            for token2, start2, end2 in added.find_matches(stretch, normalized=True,
                                                           allowed=allowed):
                if token2 is not None:
                    out.append(token2)
                elif end2 > start2:
                    out += ids_many(self._pieces(stretch[start2:end2], start == 0 == start2))
        return out

    # ------------------------------------------------------------ decoding and vocabulary
    def id_to_token(self, token_id: int) -> Optional[str]:
        """The token string of ``token_id`` (added tokens first, in their
        normalized spelling when they are matched in the normalized text), or ``None``."""
        found = self._added_strings.get(token_id)
        if found is not None:
            return found
        return self.model.id_to_token(token_id)

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token`` (added tokens first), or ``None``."""
        found = self.added.by_content.get(token)
        return found if found is not None else self.model.token_to_id(token)

    def decode_tokens(self, ids: list, skip_special_tokens: bool) -> list:
        """The token strings of ``ids`` that decoding joins (unknown ids dropped,
        as ``tokenizers`` drops them)."""
        out = []
        special = self.added.special_contents
        for token_id in ids:
            if not isinstance(token_id, int) or token_id < 0:
                raise FasttokError(f"invalid token id {token_id!r}")
            token = self.id_to_token(token_id)
            if token is None or (skip_special_tokens and token in special):
                continue
            out.append(token)
        return out

    def decode(self, ids: list, skip_special_tokens: bool) -> str:
        """``tokenizers``' ``decode``."""
        tokens = self.decode_tokens(ids, skip_special_tokens)
        if self.decoder is None:
            return " ".join(tokens)
        return self.decoder.decode(tokens)

    def get_vocab(self, with_added_tokens: bool) -> dict:
        """Token string -> id, with the added tokens when asked."""
        vocab = self.model.get_vocab()
        if with_added_tokens:
            vocab.update(self.added.by_content)
        return vocab

    def get_vocab_size(self, with_added_tokens: bool) -> int:
        """The number of distinct tokens of :meth:`get_vocab`."""
        if not with_added_tokens:
            return self.model.get_vocab_size()
        return len(self.get_vocab(True))

    def set_truncation(self, max_length: int, stride: int, strategy: str, direction: str) -> None:
        """``enable_truncation``'s settings (checked as ``tokenizers`` checks them)."""
        from fasttok.post_processors.pipeline import check_truncation
        from fasttok.post_processors.truncation import TruncationParams

        params = TruncationParams(max_length, stride, strategy, direction)
        check_truncation(params, self.post_processor)
        self.truncation = params

    def set_padding(self, direction: str, pad_id: int, pad_type_id: int, pad_token: str,
                    length: Optional[int], pad_to_multiple_of: Optional[int]) -> None:
        """``enable_padding``'s settings."""
        from fasttok.post_processors.padding import PaddingParams

        self.padding = PaddingParams(length, direction, pad_to_multiple_of, pad_id, pad_type_id,
                                     pad_token)


def pipeline_from_document(vocab: Vocabulary, *, lazy_model: bool = False,
                           model_document: Optional[Callable[[], dict]] = None,
                           never: frozenset = frozenset()) -> HFPipeline:
    """The pipeline of a ``tokenizer.json`` record (``metadata["document"]``),
    every part checked by its stage's factory; with ``lazy_model`` the model
    is built (and checked) on first use, from ``model_document()`` when given
    (else the document's ``model``); ``never``: ids the model never gives
    for text (:func:`~fasttok.models.hf_json.model_from_json`)."""
    doc = vocab.metadata["document"]
    fail = JsonPathError(vocab.source or vocab.name)
    version = doc.get("version", "1.0")
    if version != "1.0":
        raise fail("$.version", f"unknown tokenizer version {version!r} (tokenizers reads 1.0)")
    normalizer = normalizer_from_json(doc.get("normalizer"), "$.normalizer", fail)
    if model_document is None:
        build_model = functools.partial(model_from_json, doc.get("model"), "$.model", fail, never)
    else:
        def build_model() -> Any:
            return model_from_json(model_document(), "$.model", fail, never)
    normalize = None if normalizer is None else normalizer.normalize_str
    return HFPipeline(
        normalizer=normalizer,
        pre_tokenizer=pre_tokenizer_from_json(doc.get("pre_tokenizer"), "$.pre_tokenizer", fail),
        model=None if lazy_model else build_model(),
        model_factory=build_model if lazy_model else None,
        post_processor=post_processor_from_json(doc.get("post_processor"), "$.post_processor",
                                                fail),
        decoder=decoder_from_json(doc.get("decoder"), "$.decoder", fail),
        added=_added_tokens(vocab, normalize),
        truncation=truncation_from_json(doc.get("truncation"), "$.truncation", fail),
        padding=padding_from_json(doc.get("padding"), "$.padding", fail),
        record=vocab)
