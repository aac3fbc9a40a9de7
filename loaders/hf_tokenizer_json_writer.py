"""Writer of Hugging Face ``tokenizer.json`` files for byte-level BPE vocabularies.

The inverse of :mod:`fasttok.loaders.hf_tokenizer_json` for what a trained
vocabulary holds: a ``BPE`` model whose vocabulary and merges are written
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
from typing import Union

from fasttok.pre_tokenizers.tiktoken_patterns import CL100K
from fasttok.shared._bytemap import encode_byte_level

__all__ = ["tokenizer_json", "write_tokenizer_json", "oniguruma_spelling"]

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
    doc = tokenizer_json(ranks, merges, pattern, special_tokens)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
