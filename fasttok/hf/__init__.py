"""A drop-in for the inference half of Hugging Face ``tokenizers.Tokenizer``.

``fasttok.hf.Tokenizer`` reads a ``tokenizer.json`` and answers as
``tokenizers`` 0.23.3 does: :meth:`Tokenizer.encode` returns an
:class:`Encoding` with ``ids``, ``tokens``, ``offsets`` (character offsets
into the input, through normalization), ``type_ids``, ``attention_mask``,
``special_tokens_mask``, ``word_ids``, ``sequence_ids`` and ``overflowing``;
pairs, pre-tokenized input, truncation and padding (read from the file, or
set with :meth:`Tokenizer.enable_truncation` / :meth:`Tokenizer.enable_padding`),
batches, ``decode`` with ``skip_special_tokens``. Training and editing the
pipeline are not part of it; for ids alone, ``fasttok.load(path)`` gives the
tiktoken-style :class:`fasttok.Encoding` of the same file, which runs the
fused compiled path.

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

import os
from typing import Any, Optional

from fasttok.formats.hf import HFPipeline, pipeline_from_document
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.post_processors.encoding import Encoding
from fasttok.shared.gc_pause import gc_paused

__all__ = ["Tokenizer", "Encoding"]


def _refuse_surrogates(value: Any) -> None:
    # a str without UTF-8 (lone surrogates) is not text to tokenizers
    if isinstance(value, str):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise TypeError("TextInputSequence must be str") from None
    elif isinstance(value, (list, tuple)):
        for item in value:
            _refuse_surrogates(item)


class Tokenizer:
    """``tokenizers.Tokenizer``'s inference API over one ``tokenizer.json``.

    >>> Tokenizer.from_str('{"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}'
    ...                    ).encode("a").ids
    [0]
    """

    def __init__(self, pipeline: HFPipeline) -> None:
        self._pipeline = pipeline

    @classmethod
    def from_file(cls, path: Any) -> "Tokenizer":
        """Load ``path`` (a ``tokenizer.json``)."""
        path = os.fspath(path)
        with open(path, "rb") as f:
            data = f.read()
        return cls._read(data, path)

    @classmethod
    def from_str(cls, json: str) -> "Tokenizer":
        """Load a ``tokenizer.json`` document given as text."""
        return cls._read(json, "<string>")

    @classmethod
    def from_buffer(cls, buffer: bytes) -> "Tokenizer":
        """Load a ``tokenizer.json`` document given as bytes."""
        return cls._read(bytes(buffer), "<buffer>")

    @classmethod
    def _read(cls, document: Any, source: str) -> "Tokenizer":
        # the collector paused while the file's objects are made: they all live on
        with gc_paused():
            return cls(pipeline_from_document(tokenizer_json_record(document, source)))

    # ------------------------------------------------------------ encoding
    def encode(self, sequence: Any, pair: Any = None, is_pretokenized: bool = False,
               add_special_tokens: bool = True) -> Encoding:
        """One sequence (or a pair) as an :class:`Encoding`.

        Text with lone surrogates is refused as tokenizers refuses it:

        >>> Tokenizer.from_str('{"model": {"type": "WordLevel", "vocab": {"a": 0}, '
        ...                    '"unk_token": "a"}}').encode("x\\ud800")
        Traceback (most recent call last):
        TypeError: TextInputSequence must be str
        """
        _refuse_surrogates(sequence)
        _refuse_surrogates(pair)
        return self._pipeline.encode(sequence, pair, is_pretokenized=is_pretokenized,
                                     add_special_tokens=add_special_tokens)

    def encode_batch(self, input: Any, is_pretokenized: bool = False,
                     add_special_tokens: bool = True) -> list:
        """Each input (a sequence, or a ``(sequence, pair)`` tuple) encoded, then
        padded together as the padding settings say."""
        inputs = list(input)
        for item in inputs:
            _refuse_surrogates(item)
        return self._pipeline.encode_batch(inputs, is_pretokenized=is_pretokenized,
                                           add_special_tokens=add_special_tokens)

    encode_batch_fast = encode_batch

    def post_process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                     add_special_tokens: bool = True) -> Encoding:
        """Truncation, the post-processor and padding, on encodings made without them."""
        return self._pipeline.post_process(encoding, pair, add_special_tokens)

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many ids the post-processor adds to one sequence or a pair."""
        return self._pipeline.num_special_tokens_to_add(is_pair)

    # ------------------------------------------------------------ decoding
    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        """The text of ``ids`` through the file's decoder."""
        return self._pipeline.decode(list(ids), skip_special_tokens)

    def decode_batch(self, sequences: Any, skip_special_tokens: bool = True) -> list:
        """:meth:`decode` of each sequence of ids."""
        return [self._pipeline.decode(list(ids), skip_special_tokens) for ids in sequences]

    # ------------------------------------------------------------ vocabulary
    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token`` (an added token or the model's), or ``None``."""
        return self._pipeline.token_to_id(token)

    def id_to_token(self, id: int) -> Optional[str]:
        """The token string of ``id``, or ``None``."""
        return self._pipeline.id_to_token(id)

    def get_vocab(self, with_added_tokens: bool = True) -> dict:
        """Token string -> id."""
        return self._pipeline.get_vocab(with_added_tokens)

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """How many distinct tokens :meth:`get_vocab` holds."""
        return self._pipeline.get_vocab_size(with_added_tokens)

    def get_added_tokens_decoder(self) -> dict:
        """Id -> added token, as ``tokenizers`` lists them."""
        return {t.id: t for t in self._pipeline.added.tokens}

    # ------------------------------------------------------------ truncation and padding
    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right") -> None:
        """Truncate every encoding to ``max_length`` ids (special ids included)."""
        self._pipeline.set_truncation(max_length, stride, strategy, direction)

    def no_truncation(self) -> None:
        """Stop truncating."""
        self._pipeline.truncation = None

    @property
    def truncation(self) -> Optional[dict]:
        """The truncation settings as ``tokenizers`` shows them, or ``None``."""
        params = self._pipeline.truncation
        return None if params is None else params.as_dict()

    def enable_padding(self, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
                       pad_token: str = "[PAD]", length: Optional[int] = None,
                       pad_to_multiple_of: Optional[int] = None) -> None:
        """Pad to ``length`` (or the batch's longest), rounded up to ``pad_to_multiple_of``."""
        self._pipeline.set_padding(direction, pad_id, pad_type_id, pad_token, length,
                                   pad_to_multiple_of)

    def no_padding(self) -> None:
        """Stop padding."""
        self._pipeline.padding = None

    @property
    def padding(self) -> Optional[dict]:
        """The padding settings as ``tokenizers`` shows them, or ``None``."""
        params = self._pipeline.padding
        return None if params is None else params.as_dict()
