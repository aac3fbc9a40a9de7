"""``tokenizers``' ``TokenizerImpl`` over fasttok's components: the drop-in's pipeline.

The stages and their order are :class:`~fasttok.formats.hf_stages.HFStages`'
(``encode_single_sequence``, what :func:`fasttok.load` runs for ids); this
subclass, which the drop-in (:mod:`fasttok.hf`) alone imports, adds the
``Encoding`` side: a token's offsets go back through its piece's alignment
to the input, its word id is the piece's index (or the word's, for
pre-tokenized input); then ``post_process``: truncation (leaving room for
what the post-processor adds), the post-processor, padding.
``encode(..., offsets=False)`` post-processes the stages' ids as
``tokenizers``' ``encode_fast`` does (``encode_batch_fast`` of the drop-in).

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

from fasttok.added_tokens.hf_added import AddedTokens
from fasttok.formats.hf_stages import HFStages, stages_from_document
from fasttok.post_processors._encoding_lists import EncodingMaker, encode_single, walked_encoding
from fasttok.post_processors.encoding import Encoding, WalkedEncoding
from fasttok.shared.gc_pause import gc_paused
from fasttok.vocab import Vocabulary

if TYPE_CHECKING:
    from fasttok.post_processors.padding import PaddingParams
    from fasttok.post_processors.truncation import TruncationParams

# Truncation, padding and post-processing Encodings: the methods that run
# them import their modules, off the walked fast path of a str input.

__all__ = ["HFPipeline", "pipeline_from_document"]

# a post-processor that does more than put tokens around one input
_UNWRAPPED = object()
# _encode_single's found when its caller has not walked the text
_UNWALKED = object()

class HFPipeline(HFStages):
    """The stages of one ``tokenizer.json`` with ``tokenizers``' ``Encoding``
    side (see the module docstring)."""

    def set_added(self, added: AddedTokens, spelled_normalized: Optional[frozenset] = None) -> None:
        """:meth:`HFStages.set_added`, and the encoding makers, which hold
        the added tokens' strings, forgotten."""
        super().set_added(added, spelled_normalized)
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

    # ------------------------------------------------------------ one sequence
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
        found = self.staged_tokens(text, allowed)
        return Encoding([t[1] for t in found], [t[2] for t in found], [t[3] for t in found],
                        [t[0] if word is None else word for t in found],
                        type_ids=[type_id] * len(found))

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

    # ------------------------------------------------------------ settings
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
    """The drop-in's pipeline of a ``tokenizer.json`` record: its
    :func:`~fasttok.formats.hf_stages.stages_from_document` as an :class:`HFPipeline`."""
    return stages_from_document(vocab, HFPipeline, lazy_model=lazy_model,
                                model_document=model_document, never=never)
