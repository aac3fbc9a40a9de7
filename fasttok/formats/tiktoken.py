"""tiktoken's format: ``.tiktoken`` rank files and tiktoken's named encodings.

The stages -- tiktoken's regex pattern as a compiled scanner (or, for a
pattern without one, a translation to Python's ``re``), byte-level BPE by
rank or by merge list, tiktoken's special tokens -- run fused in the
compiled :class:`fasttok.formats._byte_bpe.CoreBPE`, so an encode call costs
one Python call whatever the text.

>>> from fasttok.vocab import Vocabulary
>>> v = Vocabulary(name="b", model="byte_bpe", pattern=r"\\w+|\\s+",
...                tokens=tuple(bytes([i]) for i in range(256)) + (b"hi",))
>>> build_byte_bpe(v).encode_ordinary("hi hi")
[256, 32, 256]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Optional

from fasttok import registry
from fasttok.errors import UnknownEncodingError
from fasttok.formats._byte_bpe import CoreBPE
from fasttok.loaders.tiktoken_file import load_tiktoken
from fasttok.post_processors.special_ids import from_flags
from fasttok.pre_tokenizers.patterns import pattern_splitter, scanner_for
from fasttok.shared._tables import TokenTables
from fasttok.vocab import Vocabulary

__all__ = ["byte_bpe_model", "byte_bpe_tables", "build_byte_bpe", "load_tiktoken_file"]


def byte_bpe_model(tables: TokenTables, special_tokens: Mapping, pattern: Optional[str], *,
                   ids: Optional[tuple] = None, scanner: Optional[str] = None,
                   whole_piece_lookup: bool = True,
                   splitter: Optional[Callable[[str], list]] = None) -> CoreBPE:
    """The compiled model over ``tables``: ``pattern``'s scanner (else
    ``scanner``, a scanner's name), or when it has none ``splitter``, else
    ``pattern`` through Python's ``re``.

    >>> m = byte_bpe_model(TokenTables([bytes([i]) for i in range(256)]), {"<e>": 256}, ".")
    >>> m.encode("a<e>", b"\\x01")
    [97, 256]
    """
    # The model decodes a special's id to its first name, as tiktoken does.
    specials = {text.encode("utf-8"): sid for text, sid in special_tokens.items()}
    if pattern is not None:
        scanner = scanner_for(pattern)
    if scanner is not None:
        splitter = None
    elif splitter is None:
        splitter = pattern_splitter(pattern or "")
    return CoreBPE(tables, specials, ids=ids, scanner=scanner, splitter=splitter,
                   whole_piece_lookup=whole_piece_lookup)


def byte_bpe_tables(vocab: Vocabulary) -> TokenTables:
    """The compiled token tables of a ``byte_bpe`` vocabulary: its tokens,
    and its merges by slot when merges, not ranks, give the priority.

    >>> v = Vocabulary(name="b", model="byte_bpe", pattern=".",
    ...                tokens=tuple(bytes([i]) for i in range(256)))
    >>> len(byte_bpe_tables(v))
    256
    """
    # a tokenizer.json record read by fasttok.table_cache carries its tables
    # (one from the cache file lists no tokens or merges to build them from)
    tables = vocab.metadata.get("tables")
    if tables is not None:
        return tables
    # a record's merge list is a tokenizer.json file's (GGUF builds its own
    # tables): a pair listed twice keeps its last merge, as tokenizers does
    return TokenTables(vocab.tokens, priorities=vocab.ranks, merge_tokens=vocab.merges,
                       later_merge_wins=True)


def build_byte_bpe(vocab: Vocabulary, tables: Optional[TokenTables] = None, *,
                   whole_piece_lookup: Optional[bool] = None,
                   splitter: Optional[Callable[[str], list]] = None) -> CoreBPE:
    """The compiled model of a ``byte_bpe`` vocabulary.

    ``tables``: the vocabulary's :class:`~fasttok.shared._tables.TokenTables`
    when they are at hand already (the table cache reads them from disk).
    ``whole_piece_lookup``: whether a piece that is a token is emitted whole;
    by default only when ranks, not merges, give the priority (tiktoken's
    shortcut; with merges it is a file's choice, Hugging Face's ``ignore_merges``).
    ``splitter``: the pre-tokenizer for a pattern without a compiled scanner.
    """
    if tables is None:
        tables = byte_bpe_tables(vocab)
    if whole_piece_lookup is None:
        whole_piece_lookup = vocab.merges is None
    model = byte_bpe_model(tables, vocab.special_tokens, vocab.pattern, ids=vocab.ids,
                           scanner=vocab.pre_tokenizer, whole_piece_lookup=whole_piece_lookup,
                           splitter=splitter)
    model.post_processor = from_flags(vocab)
    return model


def load_tiktoken_file(path: str, **options: Any) -> Vocabulary:
    """:func:`fasttok.load`'s reader for ``.tiktoken`` files.

    One of tiktoken's own rank files (by name) gets its encoding's pattern
    and specials; any other needs ``pat_str=`` (and ``special_tokens=``).
    """
    known = registry.encoding_for_file(os.path.basename(path))
    if "pat_str" not in options:
        if known is None:
            raise UnknownEncodingError(
                f"{path}: a .tiktoken file does not say how to pre-tokenize; pass pat_str= "
                f"(and special_tokens=) to fasttok.load")
        name, spec = known
        options = dict(name=name, pat_str=spec.pat_str, special_tokens=spec.special_tokens,
                       explicit_n_vocab=spec.explicit_n_vocab) | options
    return load_tiktoken(path, **options)
