"""fasttok: exact, fast tokenizers with no runtime dependencies.

A drop-in for tiktoken (same ids, same API) with a compiled core:

>>> import fasttok
>>> enc = fasttok.get_encoding("cl100k_base")        # doctest: +SKIP
>>> enc.decode(enc.encode("hello world"))              # doctest: +SKIP
'hello world'
"""

from __future__ import annotations

import os
import threading
from typing import Any

from . import registry
from .core import Encoding, StreamDecoder
from .errors import FasttokError, UnknownEncodingError, VocabularyError, VocabularyFileError
from .models import encoding_for_model, encoding_name_for_model
from .registry import list_encoding_names
from .tiktoken_load import data_gym_to_mergeable_bpe_ranks, dump_tiktoken_bpe, load_tiktoken_bpe
from .vocab import Vocabulary

__all__ = ["Encoding", "StreamDecoder", "get_encoding", "list_encoding_names", "load", "Vocabulary",
           "encoding_for_model", "encoding_name_for_model", "load_tiktoken_bpe",
           "dump_tiktoken_bpe", "data_gym_to_mergeable_bpe_ranks",
           "FasttokError", "VocabularyFileError", "VocabularyError", "UnknownEncodingError"]
__version__ = "0.1.0"

_cache: dict = {}
_lock = threading.Lock()


def get_encoding(name: str) -> Encoding:
    """A named encoding (``gpt2``, ``r50k_base``, ``p50k_base``, ``p50k_edit``,
    ``cl100k_base``, ``o200k_base``, ``o200k_harmony`` or a plugin's), cached.

    The rank file is looked up on :func:`fasttok.registry.vocab_search_path`
    and its sha256 checked. The compiled tables are kept in the user cache
    and read back on later loads (see :mod:`fasttok.table_cache`;
    ``FASTTOK_CACHE=0`` turns that off).

    >>> get_encoding("cl100k_base").encode("hello world")   # doctest: +SKIP
    [15339, 1917]
    """
    with _lock:
        if name in _cache:
            return _cache[name]
    spec = registry.encoding_spec(name)
    if isinstance(spec, registry.EncodingSpec):
        from .table_cache import load_named_encoding

        enc = load_named_encoding(name, spec)
    else:
        # a tiktoken_ext constructor names the encoding itself, as tiktoken's do
        enc = Encoding(**({"name": name} | spec.load()()))
        enc._pickle_by_name = True
    with _lock:
        return _cache.setdefault(name, enc)


def load(path: "str | os.PathLike[str]", **options: Any) -> Encoding:
    """Load a vocabulary file (chosen by its magic bytes or suffix) as an :class:`Encoding`.

    ``options`` go to the file's loader (for a ``.tiktoken`` file that is not
    one of tiktoken's own: ``pat_str=``, ``special_tokens=``).

    >>> fasttok.load("cl100k_base.tiktoken").name           # doctest: +SKIP
    'cl100k_base'
    """
    path = os.fspath(path)
    loader = registry.find_loader(path)
    return Encoding.from_vocabulary(loader.load(path, **options))
