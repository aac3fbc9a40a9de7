"""The table cache: a named encoding's compiled token tables kept on disk, so
that loading it a second time takes milliseconds, not a tenth of a second;
and the same for a byte-level BPE ``tokenizer.json`` (see the end).

Where a load from the rank file goes (cl100k_base / o200k_base, a fresh
process): reading the file and its sha256 2 / 5 ms; parsing the base64 lines
into ``{bytes: rank}`` 91 / 164 ms (``split``, an ``a2b_base64`` and an
``int`` a line, the dict; half that in a process whose memory is warm); the
tuple of tokens 6 / 8 ms; checking the record 18 / 24 ms; the C tables
10 / 14 ms; the model 1.2 / 2.7 ms. The pre-tokenizer is hand-written:
nothing to compile.

From the cache (fastest of 21 fresh processes on a busy 2-core machine):
the rank file's sha256 1.7 / 3.1 ms, reading the cache file 2.3 / 4.5 ms,
its CRC-32 1.0 / 1.9 ms, checking it and deriving the other tables
3.4 / 6.1 ms, the model and the Encoding 0.4 ms; 9 / 16 ms in all. No
Python object is made per token: the model decodes from the tables' own
bytes and makes each id's int the first time it returns it (a copy of the
bytes and a tuple of every id's int would be 8 / 15 ms and 5 / 10 MB), and the
Encoding makes its vocabulary record, a tuple of one bytes object per token
(4 / 8 ms, 4.5 / 9 MB), only when someone asks for it.

The cache file holds the tables as :meth:`fasttok.shared._tables.TokenTables.to_bytes`
lays them out (token bytes, offsets, the hash index, priorities). It is read
with one ``read`` into a bytes object that the tables then point into: no
parse, no further copy. What follows from those arrays (byte pairs, atomic
characters) is derived again on load (within the 3.4 / 6.1 ms above), so
that a table added to the model can never be missing from an old cache file.

Layout: a header (``_HEADER``: magic, format version, byte order, fasttok
version, identity of the compiled ``_tables`` module, whose code lays out
and hashes the index, sha256 of the rank file, sha256 of the encoding's spec
and of the identity of the code that parses the rank file, payload length,
payload CRC-32), then the payload: the ids of the tables'
tokens when the rank file's ranks are too far apart to index by
(``_IDS``: whether they are there and how many, then one 32-bit word each,
padded to 8 bytes; see :attr:`fasttok.vocab.Vocabulary.ids`), then the tables.

Validation. The rank file's sha256 is checked on every load, as without the
cache (1.7 / 3.1 ms, hashed in chunks; a size-and-mtime check would save
that, but a same-size edit that leaves the mtime as it was, by ``touch -r``,
a restored copy or two writes within one clock tick, would pass it), so a
changed rank file is never served an old table. Every header field must
equal what this process expects; the CRC catches torn and flipped files; and
``TokenTables.from_bytes`` checks every offset and id, so a hostile file
cannot make a lookup read outside the tables or probe forever. Anything
wrong and the file is ignored and rebuilt.

Trust. A consistent forgery, a valid CRC over other tokens, is beyond any
check short of rebuilding, so the cache is only as trusted as its folder:
a folder or file not owned by the user, or writable by group or others
(``FASTTOK_CACHE_DIR`` or ``XDG_CACHE_HOME`` may point into a shared
folder), is neither read nor written, and the tables are built from the
rank file as without the cache. Silently: the encoding is the same, only
its load is slower, and a warning on every load would be noise in a setup
that is deliberate. fasttok makes its folder 0700 and its files 0600; a
folder an older fasttok made group-writable (under umask 002) is skipped
too until ``chmod go-w`` is run on it. Only write bits count: a 0755
folder is the user's alone.

``tokenizer.json``. Uncached, llama3's load is about 0.2 s of JSON parsing,
0.45 s building the record (128k entries and 280k merges checked and turned
into bytes, the merges in one compiled pass) and 0.15-0.2 s the tables;
from the cache it is about 70 ms: reading and hashing the 9 MB file
(14 ms), reading the 22 MB cache file and its CRC (34 ms), checking the
tables (12 ms), the stages. The
header is the same, its source digest the file's sha256 and its spec digest
that of the ``tokenizer_config.json`` beside it and of the identity of the
modules that derive the record (they change with no version number while
fasttok is developed). The payload starts with the record as JSON: its
fields the model reads and its metadata, with the document less the
model's vocabulary and merges (``ensure_ascii``, so lone surrogates in the
file survive). The Encoding's record and the pipeline's Python BPE model
read the file again when first asked for, after checking that its sha256
is still the one the cache was keyed by. Both faces of a file,
:func:`fasttok.load` and :meth:`fasttok.hf.Tokenizer.from_file`, read it
through :func:`fasttok.tokenizer_json.read_tokenizer_json`, which asks
:func:`find_tokenizer_json` and :func:`store_tokenizer_json`, so either
one's first load fills the cache for both; a record read back carries its
tables, from which the byte-level walk is built.

Size. Each cache file is an entry (``*.tables``, starting with fasttok's
magic); a ``tokenizer.json``'s entry is keyed by the file, so every model
folder loaded adds one (llama3's is 22 MB). The entries' total is bounded
by ``$FASTTOK_CACHE_MAX_BYTES`` (bytes, or with a ``K``, ``M`` or ``G``
suffix for KiB, MiB, GiB; default 256 MiB): after an entry is written, the
least recently used others (oldest modification time; a load from an entry
touches it, one ``futimens``) are removed until the total is within the
bound, and an entry larger than the bound alone is not written. Other files
in the folder (rank files kept there, see
:func:`fasttok.registry.vocab_search_path`) are neither counted nor removed.
:func:`cache_info` and :func:`clear_cache` (``fasttok cache info|clear``)
report and empty it; a writer's temporary file (written, then renamed over
the entry) is removed by them only once it is a minute old, so a concurrent
writer is not cut short.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import struct
import zlib
from typing import Any, NamedTuple, Optional

from fasttok import registry
from fasttok.registry import cache_enabled
from fasttok.embedded import embedded_file
from fasttok.errors import FasttokError
from fasttok.vocab import Vocabulary

# hashlib, json and the atomic writer are imported by the functions that
# hash, lay out and write cache files: a tokenizer.json with no byte-level
# tables never enters the cache, and its load should not pay ~3 ms for them.

__all__ = ["load_named_encoding", "find_tokenizer_json", "store_tokenizer_json", "cache_file",
           "CacheInfo", "cache_info", "clear_cache", "cache_max_bytes"]

_MAGIC = b"FTTABLES"
_FORMAT = 2
_BYTE_ORDER = 0x01020304  # reads back differently on a machine of the other byte order
# magic, format, byte order, fasttok version, build, rank file, spec, payload length, payload CRC;
# 160 bytes, so the payload after it stays 8-byte aligned
_HEADER = struct.Struct("=8sII32s32s32s32sQI4x")
_IDS = struct.Struct("=QQ")  # whether the tokens' ids follow, and how many
_HF_MAGIC = b"FTHFJSON"
_HF_FORMAT = 1
_META = struct.Struct("=Q")  # the length of the record's JSON that follows


@functools.cache
def _plain_name() -> "re.Pattern[str]":
    # compiled on first use: fasttok.load of a tokenizer.json never asks
    return re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def cache_file(name: str) -> Optional[str]:
    """Where the tables of the encoding ``name`` are cached, in
    :func:`fasttok.registry.user_cache_dir`; ``None`` for a name that is not
    a plain file name.

    >>> os.path.basename(cache_file("cl100k_base"))
    'cl100k_base.tables'
    >>> cache_file("../x") is None
    True
    """
    if not _plain_name().fullmatch(name):
        return None
    return os.path.join(registry.user_cache_dir(), f"{name}.tables")


_DEFAULT_MAX_BYTES = 256 << 20
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
# a writer's temporary file younger than this may be about to be renamed into place
_TEMPORARY_AGE_NS = 60 * 10**9


class CacheInfo(NamedTuple):
    """What the table cache holds: its ``folder``, the number of ``entries``,
    their total ``bytes``, and ``max_bytes``, the bound on that total."""

    folder: str
    entries: int
    bytes: int
    max_bytes: int


def cache_max_bytes() -> int:
    """The bound on the table cache's total size: ``$FASTTOK_CACHE_MAX_BYTES``
    (bytes, or ``256M``, ``1G``: K, M and G are powers of 1024), else 256 MiB.
    A value that is no size raises :class:`~fasttok.errors.FasttokError`
    (a cache write then keeps to the default).

    >>> cache_max_bytes() > 0
    True
    """
    value = os.environ.get("FASTTOK_CACHE_MAX_BYTES", "").strip()
    if not value:
        return _DEFAULT_MAX_BYTES
    unit = value[-1:].upper() if value[-1:].isalpha() else ""
    digits = value[:len(value) - len(unit)]
    if unit not in _UNITS or not digits.isdigit():
        raise FasttokError(f"FASTTOK_CACHE_MAX_BYTES={value!r} is not a size: give a number of "
                           "bytes, or one with K, M or G (256M)")
    return int(digits) * _UNITS[unit]


def cache_info(folder: Optional[str] = None) -> CacheInfo:
    """The entries of the table cache in ``folder`` (default
    :func:`fasttok.registry.user_cache_dir`), their total size and the bound.

    >>> import tempfile
    >>> cache_info(tempfile.mkdtemp())[1:3]
    (0, 0)
    """
    folder = registry.user_cache_dir() if folder is None else folder
    entries, _ = _scan(folder)
    return CacheInfo(folder, len(entries), sum(size for _, size, _ in entries), cache_max_bytes())


def clear_cache(folder: Optional[str] = None) -> tuple:
    """Remove the table cache's entries from ``folder`` (default
    :func:`fasttok.registry.user_cache_dir`), and writers' temporary files a
    minute old or more; any other file stays. Returns the number of entries
    removed and their bytes.

    >>> import tempfile
    >>> clear_cache(tempfile.mkdtemp())
    (0, 0)
    """
    entries, temporaries = _scan(registry.user_cache_dir() if folder is None else folder)
    removed = [entry for entry in entries if _remove(entry[0])]
    _remove_stale(temporaries)
    return len(removed), sum(size for _, size, _ in removed)


@functools.cache
def _cache_names() -> tuple:
    # an entry's name (cache_file's and _hf_slot's), and a temporary file
    # write_atomically makes beside one (".<name>.<hex>.tmp")
    return (re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.tables"),
            re.compile(r"\.[A-Za-z0-9_][A-Za-z0-9_.-]*\.tables\.[0-9a-f]+\.tmp"))


def _scan(folder: str) -> tuple:
    # (entries, temporaries) in folder, each a list of (path, size, mtime_ns):
    # regular files (no link is followed) with an entry's name and magic, or
    # a temporary's name (a temporary may be empty yet)
    entry_name, temporary_name = _cache_names()
    entries, temporaries = [], []
    try:
        with os.scandir(folder) as listing:
            found = list(listing)
    except OSError:
        return entries, temporaries
    for item in found:
        try:
            if not item.is_file(follow_symlinks=False):
                continue
            info = item.stat(follow_symlinks=False)
        except OSError:
            continue
        row = (item.path, info.st_size, info.st_mtime_ns)
        if entry_name.fullmatch(item.name) and _has_magic(item.path):
            entries.append(row)
        elif temporary_name.fullmatch(item.name):
            temporaries.append(row)
    return entries, temporaries


def _has_magic(path: str) -> bool:
    # whether path starts as fasttok's cache files do: a file of the user's
    # that only happens to be named *.tables is not fasttok's to remove
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        return os.read(fd, len(_MAGIC)) in (_MAGIC, _HF_MAGIC)
    except OSError:
        return False
    finally:
        os.close(fd)


def _remove(path: str) -> bool:
    # whether path was removed here (a concurrent clear may have been first)
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def _remove_stale(temporaries: list) -> None:
    # the temporaries a minute old or more: a killed writer leaves its own behind
    import time

    stale = time.time_ns() - _TEMPORARY_AGE_NS
    for path, _, mtime in temporaries:
        if mtime <= stale:
            _remove(path)


def _evict(folder: str, kept: str, bound: int) -> None:
    # Remove the least recently used entries, all but the one named kept,
    # until the entries' total is within bound; and stale temporaries.
    entries, temporaries = _scan(folder)
    total = sum(size for _, size, _ in entries)
    # oldest first; the name breaks ties so that every process picks alike
    for path, size, _ in sorted(entries, key=lambda e: (e[2], e[0])):
        if total <= bound:
            break
        if os.path.basename(path) != kept and _remove(path):
            total -= size
    _remove_stale(temporaries)


def load_named_encoding(name: str, spec: registry.EncodingSpec, *,
                        cache: Optional[bool] = None) -> Any:
    """The :class:`fasttok.Encoding` that ``spec`` describes: from the table
    cache when it holds this encoding of this rank file, else built from the
    rank file and then cached. ``cache=False`` (or ``FASTTOK_CACHE=0``)
    neither reads nor writes the cache; a cache that cannot be written is
    skipped without a word.

    >>> enc = load_named_encoding("cl100k_base", registry.ENCODINGS["cl100k_base"])  # doctest: +SKIP
    >>> enc.encode("hello world")                                                    # doctest: +SKIP
    [15339, 1917]
    """
    from fasttok.shared._tables import TokenTables
    from fasttok.loaders.tiktoken_file import load_tiktoken

    # the package's own copy first: it needs no search and no network
    packaged = embedded_file(spec.file, spec.sha256)
    path = packaged or registry.find_vocab_file(spec.file)
    slot = _slot(name, spec, path, packaged=packaged is not None) if cache_enabled(cache) else None
    if slot is not None:
        read = _read_tables(*slot)
        if read is not None:
            return _cached_encoding(name, spec, path, read)
    vocab = load_tiktoken(path, name=name, pat_str=spec.pat_str, special_tokens=spec.special_tokens,
                          explicit_n_vocab=spec.explicit_n_vocab, expected_sha256=spec.sha256)
    tables = TokenTables(vocab.tokens)  # a rank file's id (in id order: slot) is its merge priority
    if slot is not None:
        target, key, _ = slot
        _write_tables(target, key, _ids_bytes(vocab.ids) + tables.to_bytes())
    return _encoding(vocab, tables)


def _ids_bytes(ids: Optional[tuple]) -> bytes:
    # the ids section of the payload
    if ids is None:
        return _IDS.pack(0, 0)
    words = struct.pack(f"={len(ids)}I", *ids)
    return _IDS.pack(1, len(ids)) + words + bytes(-len(words) % 8)


def _slot(name: str, spec: registry.EncodingSpec, path: str, *,
          packaged: bool = False) -> Optional[tuple]:
    # (cache file, header key, size limit) for this encoding of the rank
    # file at path, or None when there is nothing to cache: a name that is
    # no file name, a rank file that cannot be read or is not the pinned one
    # (the build then raises the error that says so), no compiled module to
    # fingerprint.
    import hashlib

    target = cache_file(name)
    if target is None:
        return None
    if packaged:
        # The package's own gzip copy is not hashed here: that would mean
        # decompressing it (11 / 22 ms for cl100k / o200k, more than the
        # whole cached load). setup.py refuses to build unless it
        # decompresses to the pin, the parser checks the pin whenever it is
        # read, and the cache only ever holds tables of pinned contents, so
        # a hit serves exactly those. Its limit follows the uncompressed
        # size, which the gzip trailer records.
        try:
            with open(path, "rb") as f:
                f.seek(-4, os.SEEK_END)
                source_size = struct.unpack("<I", f.read(4))[0]
            return target, _key(name, spec), _HEADER.size + 8 * source_size + (1 << 20)
        except OSError:
            return None
    try:
        # hashed in chunks: reading the whole file into one new bytes object
        # took longer than hashing it (fresh memory faults in page by page)
        with open(path, "rb") as f:
            source_size = os.fstat(f.fileno()).st_size
            source_sha256 = hashlib.file_digest(f, "sha256").hexdigest()
        key = _key(name, spec)
    except OSError:
        return None
    if source_sha256 != spec.sha256.lower():
        return None
    # a cache file is about 2.3 times the size of its rank file; a larger one is not ours
    return target, key, _HEADER.size + 8 * source_size + (1 << 20)


def _encoding(vocab: Vocabulary, tables: Any) -> Any:
    from fasttok.core import Encoding
    from fasttok.formats.tiktoken import build_byte_bpe

    return Encoding.from_vocabulary(vocab, model=build_byte_bpe(vocab, tables), by_name=True)


def _cached_encoding(name: str, spec: registry.EncodingSpec, path: str,
                     read: tuple) -> Any:
    # The encoding of tables read back: the model decodes from the tables'
    # own token bytes, and the vocabulary record, a tuple of one bytes
    # object per token, is made only if someone asks for it.
    from fasttok.core import Encoding
    from fasttok.formats.tiktoken import byte_bpe_model

    ids, tables = read

    def make_vocabulary() -> Vocabulary:
        return Vocabulary(name=name, model="byte_bpe", tokens=tables.tokens(), ids=ids,
                          special_tokens=spec.special_tokens, pattern=spec.pat_str,
                          explicit_n_vocab=spec.explicit_n_vocab, source=path)

    model = byte_bpe_model(tables, spec.special_tokens, spec.pat_str, ids=ids)
    # a rank file's last token is its largest rank
    last = len(tables) - 1 if ids is None else ids[-1] if ids else -1
    top = max(last, max(spec.special_tokens.values(), default=-1))
    return Encoding.from_model(model, make_vocabulary, name=name, pattern=spec.pat_str,
                               special_tokens=spec.special_tokens, max_token_value=top,
                               by_name=True)


def find_tokenizer_json(path: str, data: bytes) -> tuple:
    """``(reading, slot)`` for the byte-level ``tokenizer.json`` ``data`` read
    from ``path`` (see :func:`fasttok.tokenizer_json.read_tokenizer_json`,
    which asks only with the cache on): ``reading`` its
    :class:`~fasttok.loaders.hf_tokenizer_json.TokenizerJsonReading` from the
    cache when the cache holds this file (with this ``tokenizer_config.json``
    beside it), else ``None``; ``slot`` where :func:`store_tokenizer_json`
    keeps its tables (``None`` when the cache is out of reach).

    >>> find_tokenizer_json("/nonexistent/t.json", b"{}")[0] is None
    True
    """
    slot = _hf_slot(path, data)
    if slot is not None:
        found = _read_payload(*slot)
        if found is not None:
            reading = _cached_tokenizer_json(path, found, slot[1][5])
            if reading is not None:
                return reading, slot
    return None, slot


def store_tokenizer_json(slot: tuple, record: Vocabulary, tables: Any,
                         max_token_value: int) -> None:
    """Keep a byte-level ``tokenizer.json``'s record and ``tables`` in the
    cache file ``slot`` names (from :func:`find_tokenizer_json`)."""
    _write_tables(slot[0], slot[1], _hf_payload(record, tables, max_token_value))


# the record's fields besides its tokens, ids and merges that the byte-level
# model reads, as the cache keeps them
_HF_FIELDS = ("special_tokens", "pattern", "normalizer", "bos_id", "eos_id", "add_bos",
              "add_eos", "template_ids")


def _hf_payload(vocab: Vocabulary, tables: Any, max_token_value: int) -> bytes:
    # the record as JSON (its document without the model's vocabulary and
    # merges, which the tables hold), then the ids and the tables
    import json

    document = dict(vocab.metadata["document"])
    document["model"] = {k: v for k, v in document["model"].items()
                         if k not in ("vocab", "merges")}
    # the record's mappings are read-only views (MappingProxyType)
    fields = {f: getattr(vocab, f) for f in _HF_FIELDS}
    meta = json.dumps({"fields": dict(fields, max_token_value=max_token_value),
                       "metadata": dict(vocab.metadata, document=document)},
                      default=dict).encode()
    return (_META.pack(len(meta)) + meta + bytes(-len(meta) % 8) + _ids_bytes(vocab.ids)
            + tables.to_bytes())


def _cached_tokenizer_json(path: str, data: bytes, source_sha256: bytes) -> Any:
    # The reading of a cache file, or None when its record does not read.
    # The record has no token list: the tables hold the tokens, and the
    # whole record (every token and merge) is the file read again, the
    # first time someone asks for it.
    import json

    from fasttok.loaders.hf_tokenizer_json import TokenizerJsonReading, tokenizer_json_name

    at = _HEADER.size
    try:
        (length,) = _META.unpack_from(data, at)
        at += _META.size
        meta = json.loads(data[at:at + length])
        read = _payload_tables(data, at + length + -length % 8)
        if read is None:
            return None
        ids, tables = read
        fields = meta["fields"]
        top = fields.pop("max_token_value")
        fields["template_ids"] = tuple(fields["template_ids"])
        record = Vocabulary(name=tokenizer_json_name(path), model="hf_pipeline", tokens=(),
                            ids=ids, merges=(), source=path,
                            metadata=dict(meta["metadata"], tables=tables), **fields)
    except (ValueError, TypeError, KeyError, AttributeError, FasttokError):
        return None
    whole = functools.cache(functools.partial(_reread_tokenizer_json, path, source_sha256))
    return TokenizerJsonReading(record, tables, whole,
                                lambda: whole().metadata["document"]["model"], top)


def _reread_tokenizer_json(path: str, source_sha256: bytes) -> Vocabulary:
    # the whole record of the file a cached encoding was loaded from, read
    # again; the file must still be the one the cache was keyed by
    import hashlib

    from fasttok.loaders.hf_tokenizer_json import tokenizer_json_file_record
    from fasttok.shared._json_reader import read_file

    data = read_file(path)
    if hashlib.sha256(data).digest() != source_sha256:
        raise FasttokError(f"{path}: the file changed after this encoding was loaded from it; "
                           "load it again")
    return tokenizer_json_file_record(data, path)


def _hf_slot(path: str, data: bytes) -> Optional[tuple]:
    # (cache file, header key, size limit) for the tokenizer.json bytes data
    # read from path and the tokenizer_config.json beside it; the key holds
    # the identity of the code that derives the record, which changes
    # without a version number while fasttok is developed
    import hashlib

    from fasttok import vocab
    from fasttok.formats import tiktoken as tables_builder
    from fasttok.loaders import hf_tokenizer_json, json_document
    from fasttok.shared import _bytemap, _json_reader
    from fasttok.version import __version__

    try:
        with open(hf_tokenizer_json.tokenizer_config_path(path), "rb") as f:
            config = f.read()
    except FileNotFoundError:
        config = None
    except OSError:
        return None
    source = hashlib.sha256(data).digest()
    code = _code_identity(hf_tokenizer_json.__file__, json_document.__file__, _bytemap.__file__,
                          _json_reader.__file__, vocab.__file__, tables_builder.__file__)
    spec = hashlib.sha256(repr((config, code)).encode()).digest()
    key = (_HF_MAGIC, _HF_FORMAT, _BYTE_ORDER, __version__.encode().ljust(32, b"\0")[:32],
           _build_digest(), source, spec)
    name = hashlib.sha256(source + spec).hexdigest()[:32]
    target = os.path.join(registry.user_cache_dir(), f"hf-{name}.tables")
    return target, key, _HEADER.size + 4 * len(data) + (1 << 20)


@functools.cache
def _build_digest() -> bytes:
    # The compiled _tables module lays out and hashes the index, so tables
    # are only read back by the very file that wrote them. Its identity
    # (inode, size, times) stands for its bytes: any rebuild or reinstall
    # writes the file anew, and hashing its 0.9 MB would cost 1.3 ms a load.
    import hashlib

    from fasttok.shared import _tables

    info = os.stat(_tables.__file__)
    identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return hashlib.sha256(repr(identity).encode()).digest()


def _code_identity(*module_files: str) -> list:
    # The identity (size, mtime) of the modules that derive what a cache
    # file holds, and of this one, which lays the payload out: they change
    # with no version number while fasttok is developed.
    return [(info.st_size, info.st_mtime_ns)
            for info in map(os.stat, module_files + (__file__,))]


def _key(name: str, spec: registry.EncodingSpec) -> tuple:
    # The header fields before the payload's length and CRC, as this process
    # would write them: everything that changes the ids. The spec is in it
    # because the tables were checked with its special tokens and
    # explicit_n_vocab when the file was written; the rank file's sha256 is
    # a field of its own; the code that parses it into tokens and ids is in
    # with the spec.
    import hashlib

    from fasttok import vocab
    from fasttok.loaders import tiktoken_file
    from fasttok.version import __version__

    described = repr((name, spec.pat_str, list(spec.special_tokens.items()), spec.explicit_n_vocab,
                      _code_identity(tiktoken_file.__file__, vocab.__file__)))
    return (_MAGIC, _FORMAT, _BYTE_ORDER, __version__.encode().ljust(32, b"\0")[:32],
            _build_digest(), bytes.fromhex(spec.sha256),
            hashlib.sha256(described.encode()).digest())


def _read_tables(target: str, key: tuple, limit: int) -> Optional[tuple]:
    # (ids, tables) from target if it is a regular file of at most limit
    # bytes whose header matches key and whose payload is intact, else None.
    data = _read_payload(target, key, limit)
    return None if data is None else _payload_tables(data, _HEADER.size)


def _read_payload(target: str, key: tuple, limit: int) -> Optional[bytes]:
    # the whole of target if it is a regular file of at most limit bytes
    # whose header matches key and whose payload is intact, else None
    fd = _open_private(target)
    if fd is None:
        return None
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or not _private(info)
                or not _HEADER.size <= info.st_size <= limit):
            return None
        data = os.read(fd, info.st_size)
    except OSError:
        return None
    else:
        _touch(fd, target)
    finally:
        os.close(fd)
    if len(data) != info.st_size:
        return None
    *found, length, crc = _HEADER.unpack_from(data)
    if (tuple(found) != key or length != len(data) - _HEADER.size
            or zlib.crc32(memoryview(data)[_HEADER.size:]) != crc):
        return None
    return data


def _touch(fd: int, target: str) -> None:
    # a load marks its entry used, for the bound's least-recently-used order;
    # a file that cannot be touched (a read-only file system) is still read
    try:
        os.utime(fd if os.utime in os.supports_fd else target)
    except OSError:
        pass


def _private(info: os.stat_result) -> bool:
    # Whether a cache folder or file is the user's alone: owned by them and
    # writable by nobody else. Anything else may hold a consistent forgery
    # (a valid CRC over other tokens) that no check short of rebuilding
    # would catch. Windows has no such bits: its cache is in the profile.
    if not hasattr(os, "geteuid"):
        return True
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _open_private(target: str) -> Optional[int]:
    # A read-only descriptor of target, opened through a descriptor of its
    # folder that was checked to be private (so the folder checked is the
    # folder read, whatever is renamed meanwhile), or None. O_NOFOLLOW: a
    # symbolic link planted under the file's name is not followed;
    # O_NONBLOCK: nor does a FIFO block the open.
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
             | getattr(os, "O_NOFOLLOW", 0))
    if os.open not in os.supports_dir_fd:
        try:
            return os.open(target, flags)
        except OSError:
            return None
    try:
        folder = os.open(os.path.dirname(target), os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        if not _private(os.fstat(folder)):
            return None
        return os.open(os.path.basename(target), flags, dir_fd=folder)
    except OSError:
        return None
    finally:
        os.close(folder)


def _payload_tables(data: bytes, at: int) -> Optional[tuple]:
    # (ids, tables) laid out from data[at:], or None where they do not check
    from fasttok.shared._tables import TokenTables

    if len(data) < at + _IDS.size:
        return None
    has_ids, count = _IDS.unpack_from(data, at)
    at += _IDS.size
    ids = None
    if has_ids:
        if has_ids != 1 or at + 4 * count > len(data):
            return None
        ids = struct.unpack_from(f"={count}I", data, at)
        at += (4 * count + 7) // 8 * 8
    elif count:
        return None
    try:
        tables = TokenTables.from_bytes(data, at)
    except ValueError:
        return None
    if ids is not None and (len(ids) != len(tables) or any(a >= b for a, b in zip(ids, ids[1:]))):
        return None
    return ids, tables


def _write_tables(target: str, key: tuple, payload: bytes) -> None:
    # Replaced all at once, so a reader sees the old file or the new one,
    # never half of one; not durable (no fsync), since a file torn by a
    # crash fails its CRC and is rebuilt. Only into a folder of the user's
    # own (made 0700 when missing), as a 0600 file; then the folder is
    # brought within the bound.
    from fasttok.shared.atomic_write import write_atomically

    try:
        bound = cache_max_bytes()
    except FasttokError:
        bound = _DEFAULT_MAX_BYTES
    if _HEADER.size + len(payload) > bound:
        return
    header = _HEADER.pack(*key, len(payload), zlib.crc32(payload))
    folder = os.path.dirname(target)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not _private(os.stat(folder)):
            return
        try:
            if not stat.S_ISREG(os.lstat(target).st_mode):
                # a link or a FIFO under the file's name is replaced, not written through
                os.unlink(target)
        except FileNotFoundError:
            pass
        write_atomically(target, header + payload, mode=0o600, durable=False)
        _evict(folder, os.path.basename(target), bound)
    except OSError:
        pass
