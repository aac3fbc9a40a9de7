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
from collections.abc import Iterable
from typing import Any

try:
    from fasttok.shared._tables import TokenTables  # noqa: F401  the compiled module the others need
except ModuleNotFoundError as exc:
    if exc.name != f"{__name__}.shared._tables":
        raise
    # As numpy does: a source checkout on sys.path shadows the installed package
    # and has no compiled modules; say so in one line instead of a circular-import error.
    raise ImportError(
        f"fasttok is imported from {os.path.dirname(os.path.abspath(__file__))}, which has no "
        f"compiled modules (a source tree that was never built): build it with "
        f"`pip install -e .`, or run Python from another folder to use the installed fasttok"
    ) from None

from fasttok import registry
from fasttok.core import Encoding, StreamDecoder
from fasttok.errors import (DocumentFileError, FasttokError, UnknownEncodingError, VocabularyError,
                            VocabularyFileError)
from fasttok.model import encoding_for_model, encoding_name_for_model
from fasttok.registry import list_encoding_names
from fasttok.tiktoken_load import data_gym_to_mergeable_bpe_ranks, dump_tiktoken_bpe, load_tiktoken_bpe
from fasttok.version import __version__
from fasttok.vocab import Vocabulary

__all__ = ["Encoding", "StreamDecoder", "get_encoding", "list_encoding_names", "load", "Vocabulary",
           "encoding_for_model", "encoding_name_for_model", "load_tiktoken_bpe",
           "dump_tiktoken_bpe", "data_gym_to_mergeable_bpe_ranks", "train", "set_pretoken_cache",
           "FasttokError", "VocabularyFileError", "VocabularyError", "UnknownEncodingError",
           "DocumentFileError"]

_cache: dict = {}
_lock = threading.Lock()


def get_encoding(name: str) -> Encoding:
    """A named encoding (``gpt2``, ``r50k_base``, ``p50k_base``, ``p50k_edit``,
    ``cl100k_base``, ``o200k_base``, ``o200k_harmony`` or a plugin's), cached.

    The rank file is looked up on :func:`fasttok.registry.vocab_search_path`
    and its sha256 checked. The compiled tables are kept in the user cache
    and read back on later loads (see :mod:`fasttok.table_cache`;
    ``FASTTOK_CACHE=0`` turns that off, ``FASTTOK_CACHE_MAX_BYTES`` bounds
    it, ``fasttok cache info`` and ``fasttok cache clear`` show and empty it).

    >>> get_encoding("cl100k_base").encode("hello world")   # doctest: +SKIP
    [15339, 1917]
    """
    with _lock:
        if name in _cache:
            return _cache[name]
    spec = registry.encoding_spec(name)
    if isinstance(spec, registry.EncodingSpec):
        from fasttok.table_cache import load_named_encoding

        enc = load_named_encoding(name, spec)
    else:
        # a tiktoken_ext constructor names the encoding itself, as tiktoken's do
        vocab = Vocabulary.from_ranks(**({"name": name} | spec.load()())).validate()
        enc = Encoding.from_vocabulary(vocab, by_name=True)
    with _lock:
        return _cache.setdefault(name, enc)


def set_pretoken_cache(entries: int) -> int:
    """Size the pre-token cache of every thread and return the previous size.

    Each thread that encodes keeps the ids of the pre-tokenizer pieces it
    encoded (byte-level BPE) in a table of ``entries`` 64-byte entries
    (rounded down to a power of two; default 16384, 1 MiB a thread), keyed
    by the encoding and the piece's bytes, so the ids never depend on it.
    A piece is kept when its bytes (rounded up to 4) and ids (4 bytes each)
    fit in 48 bytes; the table is 2-way set associative, and a new piece
    replaces the older of its set's two. A longer piece whose bytes and ids
    fit in 1,008 bytes is kept in one of the thread's long entries (1 KiB
    each, one per 256 entries, 1 to 64: 64 KiB at the default, allocated
    when the first is kept), each replacing what its entry held. A piece of
    2 to 15 bytes that is one token is kept in the thread's token entries
    (32 bytes each, as many as the entries up to 8192: 256 KiB at the
    default, allocated when the first is kept), asked before the token
    index. ``0`` turns the cache off. The new size empties every thread's table at its
    next call. The environment variable ``FASTTOK_PRETOKEN_CACHE``
    (entries) sets it at import.

    >>> previous = set_pretoken_cache(0)
    >>> set_pretoken_cache(previous)
    0
    """
    from fasttok.shared._piece_cache import set_entries

    return set_entries(entries)


def load(path: "str | os.PathLike[str]", *, format: "str | None" = None,
         **options: Any) -> Encoding:
    """Load a vocabulary file as an :class:`Encoding`.

    The reader is the one named ``format`` (``"tiktoken"``, ``"gguf"``,
    ``"sentencepiece"`` or a plugin's), else the one that recognises the
    file's first bytes, else the one for its suffix. A missing file raises
    :class:`FileNotFoundError`. ``options`` go to the file's loader (for a
    ``.tiktoken`` file that is not one of tiktoken's own: ``pat_str=``,
    ``special_tokens=``).

    >>> fasttok.load("cl100k_base.tiktoken").name           # doctest: +SKIP
    'cl100k_base'
    >>> fasttok.load("tokenizer.model.v3").name             # doctest: +SKIP
    'tokenizer.model.v3'
    """
    from fasttok.shared.gc_pause import gc_paused

    path = os.fspath(path)
    # the collector paused from the start: the reader's modules, imported
    # on the first load, and the file's objects all live on (it walked them
    # a few times during a Unigram file's imports, ~2.5M instructions)
    with gc_paused():
        loader = registry.find_loader(path, format)
        if loader.encoding is not None and not options:
            return registry.resolve(loader.encoding)(path)
        return Encoding.from_vocabulary(loader.read(path, **options))


def _train_bpe(texts: "Iterable[str]", vocab_size: int, common: dict, options: dict) -> Encoding:
    from fasttok.trainers.bpe import train_bpe

    if {"normalizer", "pre_tokenizer", "continuing_subword_prefix",
            "end_of_word_suffix"} & set(options):
        return _train_bpe_words(texts, vocab_size, common, options)
    return Encoding.from_vocabulary(train_bpe(texts, vocab_size=vocab_size, **common,
                                              **options).vocabulary)


def _train_bpe_words(texts: "Iterable[str]", vocab_size: int, common: dict,
                     options: dict) -> Encoding:
    from fasttok.trainers.words_bpe import train_bpe_words

    if common.pop("pattern") is not None or common.pop("flavour") != "hf":
        raise FasttokError("BPE on the words of a normalizer and pre-tokenizer is tokenizers' "
                           "BpeTrainer: pass flavour='hf' and pre_tokenizer= instead of pattern=")
    if common.pop("num_threads") is not None:
        raise FasttokError("BPE on words runs on one thread: drop num_threads=")
    options.setdefault("pre_tokenizer", None)
    trained = train_bpe_words(texts, vocab_size=vocab_size, **common, **options)
    return Encoding.from_vocabulary(trained.vocabulary())


def _train_wordpiece(texts: "Iterable[str]", vocab_size: int, common: dict,
                     options: dict) -> Encoding:
    from fasttok.trainers.wordpiece import train_wordpiece

    if common.pop("pattern") is not None:
        raise FasttokError("WordPiece training cuts words with pre_tokenizer= (a tokenizer.json "
                           "object, BERT's by default), not pattern=")
    if common.pop("flavour") != "rustbpe" or common.pop("num_threads") is not None:
        raise FasttokError("WordPiece training follows tokenizers' WordPieceTrainer only and "
                           "runs on one thread: drop flavour= and num_threads=")
    trained = train_wordpiece(texts, vocab_size=vocab_size, **common, **options)
    return Encoding.from_vocabulary(trained.vocabulary())


def _train_unigram(texts: "Iterable[str]", vocab_size: int, common: dict,
                   options: dict) -> Encoding:
    from fasttok.trainers.unigram import train_unigram

    if common.pop("pattern") is not None or common.pop("min_frequency") or \
            common.pop("flavour") != "rustbpe":
        raise FasttokError("pattern, min_frequency and flavour are options of model='bpe'")
    trained = train_unigram(texts, vocab_size=vocab_size,
                            user_defined_symbols=common["special_tokens"],
                            num_threads=common["num_threads"], **options)
    return Encoding.from_vocabulary(trained.vocabulary)


# model type -> trainer(texts, vocab_size, the keywords every model takes, its own)
_TRAINERS = {"bpe": _train_bpe, "wordpiece": _train_wordpiece, "unigram": _train_unigram}


def train(texts: "Iterable[str]", *, vocab_size: int, pattern: "str | None" = None,
          special_tokens: "Iterable[str]" = (), min_frequency: int = 0,
          flavour: str = "rustbpe", model: str = "bpe",
          num_threads: "int | None" = None, **options: Any) -> Encoding:
    """Train a vocabulary on ``texts`` (any iterable of str, read once, never
    held) and return it as an :class:`Encoding`.

    ``model="bpe"`` trains byte-level BPE: ``flavour="rustbpe"`` gives
    ``rustbpe``'s mergeable ranks exactly, ``flavour="hf"`` Hugging Face
    ``tokenizers``' ``BpeTrainer`` vocabulary and merges (see
    :mod:`fasttok.trainers.bpe` for both; ``limit_alphabet=``,
    ``initial_alphabet=`` and ``max_token_length=`` are tokenizers' options).
    ``vocab_size`` counts the 256
    bytes, the merges and ``special_tokens``; ``pattern`` is the pre-tokenizer
    (default GPT-4's, ``cl100k_base``'s); merging stops early when no pair
    occurs ``min_frequency`` times. Pre-tokens are counted on
    ``num_threads`` threads (default: the CPUs).

    With ``flavour="hf"`` and ``pre_tokenizer=`` (and ``normalizer=``,
    ``tokenizer.json`` objects) BPE trains on their words' characters instead
    of bytes, with every ``BpeTrainer`` option
    (:mod:`fasttok.trainers.words_bpe`).

    ``model="wordpiece"`` is tokenizers' ``WordPieceTrainer``
    (:mod:`fasttok.trainers.wordpiece`): ``limit_alphabet=``,
    ``initial_alphabet=``, ``continuing_subword_prefix=`` (``"##"``),
    ``end_of_word_suffix=``, and the stages the words are cut by,
    ``normalizer=`` and ``pre_tokenizer=`` (``tokenizer.json`` objects; BERT's
    by default); ``unk_token=`` (``"[UNK]"``) is added after the special
    tokens when they lack it, as ``BertWordPieceTokenizer`` trains with it.
    A vocabulary smaller than ``vocab_size`` (no pair left to merge) warns.

    ``model="unigram"`` trains a SentencePiece Unigram model as
    sentencepiece's trainer does (:mod:`fasttok.trainers.unigram`; its
    ``train_unigram`` also writes the ``.model`` file): ``vocab_size`` counts
    every piece, ``special_tokens`` become user-defined symbols, and
    ``options`` are sentencepiece's (``character_coverage=``,
    ``byte_fallback=``, ...).

    >>> enc = train(["hello world, hello there"] * 10, vocab_size=300)
    >>> enc.encode(" hello"), enc.decode(enc.encode("hello there"))
    ([262], 'hello there')
    >>> wp = train(["Hello there"] * 3, model="wordpiece", vocab_size=40, special_tokens=["[UNK]"])
    >>> wp.decode(wp.encode("hello, there!"))
    'hello [UNK] there [UNK]'
    >>> uni = train(["hello world, hello there"] * 10, vocab_size=30, model="unigram")
    >>> uni.decode(uni.encode("hello there"))
    'hello there'
    """
    from fasttok.trainers import check_sizes

    check_sizes(vocab_size, num_threads)
    trainer = _TRAINERS.get(model)
    if trainer is None:
        raise FasttokError(f"model {model!r} cannot be trained; fasttok trains "
                           f"{', '.join(map(repr, _TRAINERS))}")
    common = {"pattern": pattern, "special_tokens": special_tokens,
              "min_frequency": min_frequency, "flavour": flavour, "num_threads": num_threads}
    return trainer(texts, vocab_size, common, options)
