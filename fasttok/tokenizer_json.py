"""A ``tokenizer.json`` file read once for both of fasttok's faces,
:func:`fasttok.load` and :meth:`fasttok.hf.Tokenizer.from_file`.

:func:`read_tokenizer_json` reads the file
(:func:`~fasttok.loaders.hf_tokenizer_json.tokenizer_json_file_reading`),
a byte-level BPE file through the table cache (:mod:`fasttok.table_cache`,
so either face's first load fills the cache for both);
:func:`load_tokenizer_json_encoding` is :func:`fasttok.load`'s reader, the
Encoding of that reading. Only a file that names the ``ByteLevel`` decoder
can have byte-level tables to cache: any other is neither hashed for the
cache nor imports its module (~1M instructions of a Unigram conversion's
load).

>>> read_tokenizer_json("/nonexistent/tokenizer.json")
Traceback (most recent call last):
FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/tokenizer.json'
"""

from __future__ import annotations

import os
from typing import Any, Optional

from fasttok import registry
from fasttok.shared.gc_pause import gc_paused

__all__ = ["read_tokenizer_json", "load_tokenizer_json_encoding"]


def read_tokenizer_json(path: str, data: Optional[bytes] = None, *,
                        cache: Optional[bool] = None) -> Any:
    """The :class:`~fasttok.loaders.hf_tokenizer_json.TokenizerJsonReading`
    of the file ``path`` (whose bytes are ``data`` when read already): for a
    byte-level BPE file, from the table cache when it holds this file (with
    this ``tokenizer_config.json`` beside it), else read, built and then
    cached, its record carrying its byte-level core's token tables
    (``metadata["tables"]``); any other file is read each time, and its
    record lists no tokens (the stages never read them). ``cache`` as in
    :func:`~fasttok.table_cache.load_named_encoding`.
    """
    from fasttok.loaders.hf_tokenizer_json import TokenizerJsonReading, \
        tokenizer_json_file_reading
    from fasttok.shared._json_reader import read_file

    path = os.fspath(path)
    if data is None:
        data = read_file(path)  # filled in one go, not a page fault a page
    with gc_paused():
        slot = None
        if registry.cache_enabled(cache) and b'"ByteLevel"' in data:
            from fasttok import table_cache

            found, slot = table_cache.find_tokenizer_json(path, data)
            if found is not None:
                return found
        reading = tokenizer_json_file_reading(data, path)
        record, tables = reading.record, reading.tables
        if tables is None:
            if record.merges is None:
                return reading
            # a byte-level file the packed tables did not take (imported
            # here: the byte-level core's modules are no other file's)
            from fasttok.formats.tiktoken import byte_bpe_tables

            tables = byte_bpe_tables(record)
        if slot is not None:
            table_cache.store_tokenizer_json(slot, record, tables, reading.max_token_value)
        record = record.replace(metadata=dict(record.metadata, tables=tables))
        return TokenizerJsonReading(record, tables, reading.whole, reading.model_document,
                                    reading.max_token_value)


def load_tokenizer_json_encoding(path: str, *, cache: Optional[bool] = None) -> Any:
    """:func:`fasttok.load` of a ``tokenizer.json``: the Encoding of its
    :func:`read_tokenizer_json` (``cache`` as there).

    >>> enc = load_tokenizer_json_encoding("llama3/tokenizer.json")  # doctest: +SKIP
    >>> enc.encode("hello world")                                    # doctest: +SKIP
    [15339, 1917]
    """
    from fasttok.core import Encoding
    from fasttok.formats.hf import build_hf_pipeline

    with gc_paused():
        parts = read_tokenizer_json(path, cache=cache)
        record = parts.record
        # the Encoding's own record is the whole one (with its tokens, and
        # without a byte-level file's tables): made (the file read again,
        # after the cache) the first time someone asks
        return Encoding.from_model(build_hf_pipeline(record, model_document=parts.model_document),
                                   parts.whole, name=record.name, pattern=record.pattern,
                                   special_tokens=record.special_tokens,
                                   max_token_value=parts.max_token_value)
