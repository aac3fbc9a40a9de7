"""Writer of Hugging Face ``tokenizer.json`` files for trained vocabularies.

The inverse of :mod:`fasttok.loaders.hf_tokenizer_json` for what a trained
vocabulary holds. :func:`wordpiece_tokenizer_json` and
:func:`bpe_tokenizer_json` write a ``WordPiece`` or ``BPE`` model over
string tokens behind the given normalizer and pre-tokenizer objects, as
tokenizers saves what its trainers made. :func:`tokenizer_json` writes byte-level
BPE: a ``BPE`` model whose vocabulary and merges are written
in GPT-2's byte-level alphabet, the pattern as a ``Split`` pre-tokenizer
(``Isolated``) followed by ``ByteLevel(use_regex=false)``, the ``ByteLevel``
decoder, and the special tokens as ``added_tokens``. Merges are written as
``["a", "b"]`` pairs, which any token (one holding a space, too) fits.

tokenizers runs the ``Split`` regex with Oniguruma, which reads a possessive
interval (cl100k's ``\\p{N}{1,3}+``) as an interval repeated, so "12345"
would stay one piece; a pattern known to hold one is written in a spelling
that splits every text the same in both engines (the interval is the end of
its alternative, where possessive and greedy match alike).

>>> doc = tokenizer_json({bytes([b]): b for b in range(256)} | {b"ab": 256},
...                      [(b"a", b"b")], r"\\w+", {"<|end|>": 257})
>>> doc["model"]["merges"], doc["added_tokens"][0]["id"]
([['a', 'b']], 257)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

from fasttok.pre_tokenizers.tiktoken_patterns import CL100K
from fasttok.shared.atomic_write import write_atomically
from fasttok.shared._bytemap import encode_byte_level

__all__ = ["tokenizer_json", "write_tokenizer_json", "oniguruma_spelling",
           "wordpiece_tokenizer_json", "bpe_tokenizer_json", "write_document"]

_ONIGURUMA = {CL100K: CL100K.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")}


def oniguruma_spelling(pattern: str) -> str:
    """``pattern`` as written for tokenizers' ``Split`` (see the module notes).

    >>> oniguruma_spelling(CL100K).count("{1,3}+"), oniguruma_spelling("a+")
    (0, 'a+')
    """
    return _ONIGURUMA.get(pattern, pattern)


def _added(content: str, token_id: int) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}


def _document(added: list, normalizer: Any, pre_tokenizer: Any, decoder: Any,
              model: dict) -> dict:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": None,
            "decoder": decoder, "model": model}


def _specials(vocab: Mapping, n_special: int) -> list:
    # the trainers put the special tokens first
    return [_added(token, i) for token, i in sorted(vocab.items(), key=lambda item: item[1])
            if i < n_special]


def wordpiece_tokenizer_json(vocab: Mapping, n_special: int, normalizer: Any, pre_tokenizer: Any,
                             unk_token: str = "[UNK]",
                             continuing_subword_prefix: str = "##") -> dict:
    """The document of a ``WordPiece`` model: ``{token: id}`` whose first
    ``n_special`` ids are special tokens, behind ``normalizer`` and
    ``pre_tokenizer`` (``tokenizer.json`` objects, or ``None``).

    >>> doc = wordpiece_tokenizer_json({"[UNK]": 0, "a": 1, "##b": 2}, 1, None, None)
    >>> doc["model"]["type"], doc["added_tokens"][0]["content"], doc["decoder"]["prefix"]
    ('WordPiece', '[UNK]', '##')
    """
    model = {"type": "WordPiece", "unk_token": unk_token,
             "continuing_subword_prefix": continuing_subword_prefix,
             "max_input_chars_per_word": 100,
             "vocab": dict(sorted(vocab.items(), key=lambda item: item[1]))}
    decoder = {"type": "WordPiece", "prefix": continuing_subword_prefix, "cleanup": True}
    return _document(_specials(vocab, n_special), normalizer, pre_tokenizer, decoder, model)


def bpe_tokenizer_json(vocab: Mapping, merges: Sequence, n_special: int, normalizer: Any,
                       pre_tokenizer: Any, continuing_subword_prefix: Optional[str] = None,
                       end_of_word_suffix: Optional[str] = None) -> dict:
    """The document of a ``BPE`` model over string tokens (not byte-level):
    ``{token: id}``, merges as ``(str, str)`` pairs in priority order.

    >>> doc = bpe_tokenizer_json({"a": 0, "b": 1, "ab": 2}, [("a", "b")], 0, None, None)
    >>> doc["model"]["merges"], doc["model"]["unk_token"]
    ([['a', 'b']], None)
    """
    model = {"type": "BPE", "dropout": None, "unk_token": None,
             "continuing_subword_prefix": continuing_subword_prefix,
             "end_of_word_suffix": end_of_word_suffix, "fuse_unk": False,
             "byte_fallback": False, "ignore_merges": False,
             "vocab": dict(sorted(vocab.items(), key=lambda item: item[1])),
             "merges": [[a, b] for a, b in merges]}
    return _document(_specials(vocab, n_special), normalizer, pre_tokenizer, None, model)


def write_document(path: Union[str, "os.PathLike[str]"], doc: dict) -> None:
    """Write a ``tokenizer.json`` document to ``path`` (UTF-8, as tokenizers
    writes it), replacing any old file all at once
    (:mod:`fasttok.shared.atomic_write`).

    >>> import os, tempfile; p = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
    >>> write_document(p, {"version": "1.0"}); open(p).read()
    '{"version": "1.0"}'
    """
    write_atomically(path, json.dumps(doc, ensure_ascii=False).encode("utf-8"))


def tokenizer_json(ranks: Mapping, merges: Sequence, pattern: str,
                   special_tokens: Mapping) -> dict:
    """The document for ``{token bytes: id}``, merges as ``(bytes, bytes)``
    pairs in priority order, the pre-tokenizer pattern and ``{special: id}``.

    >>> tokenizer_json({b" ": 0}, [], " ", {})["model"]["vocab"]
    {'Ġ': 0}
    """
    # the special tokens are in the model's vocabulary too, as tokenizers'
    # trainer leaves them; an added token it cannot find there gets a new id
    vocab = {encode_byte_level(token): token_id for token, token_id in ranks.items()}
    vocab.update(special_tokens)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added(s, i) for s, i in sorted(special_tokens.items(),
                                                          key=lambda item: item[1])],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": oniguruma_spelling(pattern)},
             "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False},
        ]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None,
            "continuing_subword_prefix": None, "end_of_word_suffix": None,
            "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": dict(sorted(vocab.items(), key=lambda item: item[1])),
            "merges": [[encode_byte_level(a), encode_byte_level(b)] for a, b in merges],
        },
    }


def write_tokenizer_json(path: Union[str, "os.PathLike[str]"], ranks: Mapping, merges: Sequence,
                         pattern: str, special_tokens: Mapping) -> None:
    """Write :func:`tokenizer_json`'s document to ``path`` (UTF-8, as tokenizers writes it).

    >>> import os, tempfile; p = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
    >>> write_tokenizer_json(p, {b"a": 0}, [], "a", {}); os.path.getsize(p) > 0
    True
    """
    write_document(path, tokenizer_json(ranks, merges, pattern, special_tokens))
