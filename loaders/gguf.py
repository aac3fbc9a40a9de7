"""Read the tokenizer out of a GGUF file (llama.cpp's model format).

A GGUF file is a header, a block of typed key/value pairs, tensor
descriptions and then the tensor data, which can be many gigabytes. The
tokenizer lives entirely in the key/value block (``tokenizer.*`` keys), so
this module streams the header and that block with buffered reads and stops
at its end: a 10 GB model loads as fast as a vocab-only file.

Two layers:

* :func:`read_gguf_metadata` -- format level: every key, every value type,
  strict checks. It trusts nothing: each length and count is compared with
  the bytes left in the file *before* anything is allocated or looped over,
  so a hostile file costs at most one pass over its own bytes. Every problem
  raises :class:`~fasttok.errors.VocabularyFileError` naming the file, the
  byte offset and the key.
* :func:`load_gguf` -- meaning level: ``tokenizer.*`` keys to a
  :class:`~fasttok.vocab.Vocabulary`, with llama.cpp's defaults for missing
  keys.

How tokens are represented (decisions, see ``load_gguf`` for details):

* ``gpt2`` files (byte-level BPE) spell ordinary tokens in GPT-2's
  byte-to-unicode alphabet; they are turned back into raw bytes here.
  CONTROL, USER_DEFINED and UNKNOWN tokens are raw UTF-8 text; they go to
  ``special_tokens`` and their ``tokens`` slot is ``None``. A NORMAL token
  that is not byte-level text (command-r has 1403, e.g. a bare U+200D) can
  never come out of byte-level BPE: it is ``None`` too, and its UTF-8 bytes
  (what Hugging Face's ByteLevel decoder prints) are kept in
  ``metadata["decode_only_tokens"]``.
* ``llama`` / ``t5`` / ``bert`` files keep every piece's UTF-8 bytes in
  ``tokens`` (``▁`` and ``<0x0A>`` stay text: the SentencePiece / WordPiece
  model interprets them by ``token_types``); CONTROL / USER_DEFINED / UNKNOWN
  pieces are *also* indexed in ``special_tokens`` for the special-token
  splitter.

Performance notes (command-r: 256000 tokens, 253333 merges, 10.9 MB; CPU
time on the 2-core development VM, fresh process): 400 ms in all, of which
~130 ms reading the two string arrays, ~110 ms decoding byte-level tokens
(``decode_byte_level`` costs ~0.3 us a call, and a duplicate check) and
~140 ms for the merges.

* Reading: one loop over a ``bytes`` buffer with a bound
  ``Struct.unpack_from`` and ``bytes.decode``, refilled only at 1 MiB chunk
  edges. Tried and slower: decoding in a second ``map`` pass,
  ``int.from_bytes``, ``str(memoryview)``. Numeric arrays are one
  ``array.frombytes``. ``mmap`` was not used: it fails on empty files and
  pipes, and buffered reads were already enough.
* Merges are read undecoded and converted in bulk (one join, one
  ``charmap`` codec call, one split: 140 ms) instead of per merge with a
  cache of decoded sides (230 ms; the dict lookups dominate).
* The garbage collector is paused while loading, which saves 60 ms.
* Rejected: decoding tokens through the bulk codec as well (no gain: the
  codec costs ~23 ns a character, about what ``decode_byte_level`` costs per
  token); a UTF-16 + big-integer conversion (~35 ms less on merges, too
  clever to keep). A compiled ``decode_byte_level`` that does not go
  through a ``bytearray`` memoryview, or a bulk variant, would remove most
  of the remaining mapping cost.

>>> meta = read_gguf_metadata(_tiny_gguf_for_doctest())
>>> meta.version, meta.kv["tokenizer.ggml.model"]
(3, 'gpt2')
"""

from __future__ import annotations

import array
import codecs
import dataclasses
import gc
import io
import os
import struct
import sys
from itertools import compress
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, BinaryIO, Optional, Union

from fasttok.shared._bytemap import bytes_to_unicode, decode_byte_level
from fasttok.errors import VocabularyFileError
from fasttok.vocab import TokenType, Vocabulary

__all__ = ["GGUFMetadata", "read_gguf_metadata", "load_gguf", "GGUFType"]

# A path, or the whole file already in memory.
Source = Union[str, os.PathLike, bytes, bytearray, memoryview]


class GGUFType:
    """GGUF value type codes, as written in the file.

    >>> GGUFType.STRING, GGUFType.ARRAY
    (8, 9)
    """

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


_TYPE_NAMES = {
    0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32",
    7: "bool", 8: "string", 9: "array", 10: "u64", 11: "i64", 12: "f64",
}
# Fixed-size scalar types: struct format (little-endian) and array typecode.
_SCALAR_FORMATS = {
    0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 10: "Q", 11: "q", 12: "d",
}
_SCALAR_STRUCTS = {code: struct.Struct("<" + fmt) for code, fmt in _SCALAR_FORMATS.items()}
_INTEGER_TYPES = frozenset({0, 1, 2, 3, 4, 5, 10, 11})
# The fewest bytes one element of each type can occupy; multiplying a count by
# this is what lets us reject a lying count before allocating for it.
_MIN_SIZE = {code: s.size for code, s in _SCALAR_STRUCTS.items()}
_MIN_SIZE.update({7: 1, 8: 8, 9: 12})

# array.array item sizes are platform C sizes; use arrays only where they match
# the file's widths (everywhere that matters), else fall back to struct.
_ARRAY_TYPECODES = {
    code: fmt for code, fmt in _SCALAR_FORMATS.items()
    if array.array(fmt).itemsize == _SCALAR_STRUCTS[code].size
}
_NEEDS_BYTESWAP = sys.byteorder != "little"

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_HEADER = struct.Struct("<4sIQQ")
_MAGIC = b"GGUF"
_SUPPORTED_VERSIONS = (2, 3)
_MAX_KEY_LENGTH = 65535
# gguf-py allows arrays of arrays; nothing real nests deeper than 2. The bound
# keeps a hostile file from recursing the interpreter to death.
_MAX_ARRAY_DEPTH = 8
# One KV pair is at least an 8-byte key length, a 4-byte type and a 1-byte
# value; one tensor info at least name length, n_dims, type and offset.
_MIN_KV_SIZE = 8 + 4 + 1
_MIN_TENSOR_INFO_SIZE = 8 + 4 + 4 + 8
# Caps that keep a hostile file's cost bounded even when it is huge (a sparse
# file costs its author nothing): the header and KV block must end within the
# first 256 MiB, and no array may hold more than 2**24 elements. Real GGUF
# tokenizers are far inside both (the largest known KV block is ~16 MB,
# gemma-4's 514906 merges the longest array).
_MAX_KV_BYTES = 256 << 20
_MAX_ARRAY_LEN = 1 << 24
_CHUNK = 1 << 20
_BLOCK = 4096


@dataclasses.dataclass(frozen=True)
class GGUFMetadata:
    """The header and key/value block of a GGUF file.

    ``kv`` maps each key to a Python value: ``int``, ``float``, ``bool``,
    ``str``; arrays of strings are ``list[str]``, arrays of numbers
    ``array.array`` (``list`` for bools and nested arrays). ``kv_types``
    gives each key's type code (:class:`GGUFType`), ``array_types`` the
    element type of array-valued keys, ``offsets`` the byte offset where
    each key's entry starts, and ``kv_end`` the offset just past the block.

    >>> meta = read_gguf_metadata(_tiny_gguf_for_doctest())
    >>> meta.kv_types["tokenizer.ggml.tokens"], meta.array_types["tokenizer.ggml.tokens"]
    (9, 8)
    """

    version: int
    tensor_count: int
    kv: Mapping
    kv_types: Mapping
    array_types: Mapping
    offsets: Mapping
    kv_end: int
    file_size: int
    source: str = ""


class _Stream:
    """A forward-only window over a binary file, refilled in chunks.

    ``buf[pos]`` is file byte ``base + pos``. Every ``need`` first checks the
    request against the file size and the KV-block cap, so a lying length
    fails before anything is read or allocated for it.
    """

    __slots__ = ("f", "path", "size", "limit", "buf", "pos", "base")

    def __init__(self, f: BinaryIO, path: str, size: int) -> None:
        self.f = f
        self.path = path
        self.size = size
        self.limit = min(size, _MAX_KV_BYTES)  # where the KV block must end by
        self.buf = b""
        self.pos = 0
        self.base = 0

    def offset(self) -> int:
        return self.base + self.pos

    def remaining(self) -> int:
        """Bytes the KV block may still use: to the end of file or the cap."""
        return self.limit - self.base - self.pos

    def fail(self, problem: str, key: Optional[str],
             offset: Optional[int] = None) -> VocabularyFileError:
        return VocabularyFileError(self.path, problem,
                                   offset=self.offset() if offset is None else offset, field=key)

    def need(self, n: int, what: str, key: Optional[str]) -> None:
        avail = len(self.buf) - self.pos
        if avail >= n:
            return
        if n > self.remaining():
            if n > self.size - self.offset():
                raise self.fail(f"file is truncated: {what} needs {n} bytes but only "
                                f"{self.size - self.offset()} remain", key)
            raise self.fail(f"{what} needs {n} bytes, past the {_MAX_KV_BYTES >> 20} MiB "
                            "limit for a GGUF key/value block", key)
        chunk = self.f.read(max(n - avail, _CHUNK))
        self.base += self.pos
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        if len(self.buf) < n:
            # The file shrank under us, or st_size lied (a special file).
            raise self.fail(f"file is truncated: {what} needs {n} bytes but the file ends "
                            f"{len(self.buf)} bytes later", key)

    def scalar(self, code: int, key: Optional[str], what: str) -> Any:
        st = _SCALAR_STRUCTS[code]
        self.need(st.size, what, key)
        value = st.unpack_from(self.buf, self.pos)[0]
        self.pos += st.size
        return value

    def u32(self, key: Optional[str], what: str) -> int:
        self.need(4, what, key)
        value = _U32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return value

    def u64(self, key: Optional[str], what: str) -> int:
        self.need(8, what, key)
        value = _U64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return value

    def string(self, key: Optional[str], what: str, limit: Optional[int] = None) -> str:
        start = self.offset()
        n = self.u64(key, f"{what} length")
        if limit is not None and n > limit:
            raise self.fail(f"{what} length {n} exceeds the GGUF limit of {limit}", key, start)
        self.need(n, what, key)
        try:
            text = str(self.buf[self.pos:self.pos + n], "utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"{what} is not valid UTF-8 ({exc.reason})", key,
                            self.offset() + exc.start) from None
        self.pos += n
        return text


def _type_name(code: int) -> str:
    return _TYPE_NAMES.get(code, f"unknown type {code}")


def _read_value(s: _Stream, vtype: int, key: str, depth: int) -> Any:
    if vtype in _SCALAR_STRUCTS:
        return s.scalar(vtype, key, f"{_type_name(vtype)} value")
    if vtype == GGUFType.BOOL:
        s.need(1, "bool value", key)
        b = s.buf[s.pos]
        if b > 1:
            raise s.fail(f"bool value is {b}, not 0 or 1", key)
        s.pos += 1
        return bool(b)
    if vtype == GGUFType.STRING:
        return s.string(key, "string value")
    if vtype == GGUFType.ARRAY:
        return _read_array(s, key, depth + 1)[1]
    raise s.fail(f"unknown value type {vtype} (GGUF defines 0-12)", key)


def _read_array(s: _Stream, key: str, depth: int, raw: bool = False) -> tuple:
    """Read ``u32 elem_type, u64 count, elements``; return ``(elem_type, value)``."""
    start = s.offset()
    if depth > _MAX_ARRAY_DEPTH:
        raise s.fail(f"arrays nested more than {_MAX_ARRAY_DEPTH} deep", key)
    etype = s.u32(key, "array element type")
    if etype not in _MIN_SIZE:
        raise s.fail(f"unknown array element type {etype} (GGUF defines 0-12)", key, start)
    count = s.u64(key, "array length")
    if count > _MAX_ARRAY_LEN:
        raise s.fail(f"array of {count} {_type_name(etype)} is longer than the "
                     f"{_MAX_ARRAY_LEN} elements allowed", key, start)
    least = count * _MIN_SIZE[etype]
    if least > s.remaining():
        raise s.fail(f"array of {count} {_type_name(etype)} needs at least {least} bytes "
                     f"but only {s.remaining()} are left for the key/value block", key, start)
    if etype in _SCALAR_STRUCTS:
        s.need(least, f"array of {count} {_type_name(etype)}", key)
        data = s.buf[s.pos:s.pos + least]
        s.pos += least
        code = _ARRAY_TYPECODES.get(etype)
        if code is None:
            fmt = "<%d%s" % (count, _SCALAR_FORMATS[etype])
            return etype, list(struct.unpack(fmt, data))
        values = array.array(code)
        values.frombytes(data)
        if _NEEDS_BYTESWAP:
            values.byteswap()
        return etype, values
    if etype == GGUFType.BOOL:
        s.need(count, f"array of {count} bool", key)
        data = s.buf[s.pos:s.pos + count]
        if data.translate(None, b"\x00\x01"):
            bad = next(i for i, b in enumerate(data) if b > 1)
            raise s.fail(f"bool element {bad} is {data[bad]}, not 0 or 1", key, s.offset() + bad)
        s.pos += count
        return etype, [b == 1 for b in data]
    if etype == GGUFType.STRING:
        return etype, _read_string_array(s, count, key, raw)
    return etype, [_read_array(s, key, depth + 1)[1] for _ in range(count)]


def _read_string_array(s: _Stream, count: int, key: str, raw: bool = False) -> list:
    """``count`` length-prefixed strings as ``str`` (or undecoded ``bytes`` if ``raw``)."""
    # The hot loop of the whole loader (a 256k-token vocabulary plus as many
    # merges). The inner ``for`` runs over whatever the buffer holds with one
    # comparison per element; a string that crosses the buffer's end (or a
    # length prefix that does, caught as struct.error) drops to the refill
    # below, which checks the length against the file size before reading.
    out: list = []
    append = out.append
    unpack = _U64.unpack_from
    buf, pos, end = s.buf, s.pos, len(s.buf)
    i = 0
    while i < count:
        try:
            if raw:
                for i in range(i, count):
                    stop = pos + 8 + unpack(buf, pos)[0]
                    if stop > end:
                        break
                    append(buf[pos + 8:stop])
                    pos = stop
                else:
                    break
            else:
                for i in range(i, count):
                    stop = pos + 8 + unpack(buf, pos)[0]
                    if stop > end:
                        break
                    append(buf[pos + 8:stop].decode())
                    pos = stop
                else:
                    break
        except struct.error:
            pass
        except UnicodeDecodeError as exc:
            s.pos = pos
            raise s.fail(f"string {i} of the array is not valid UTF-8 ({exc.reason})", key,
                         s.offset() + 8 + exc.start) from None
        s.pos = pos
        s.need(8, f"length of string {i} of {count}", key)
        n = _U64.unpack_from(s.buf, s.pos)[0]
        s.need(8 + n, f"string {i} of {count} ({n} bytes)", key)
        buf, pos, end = s.buf, s.pos, len(s.buf)
    s.pos = pos
    return out


def _open_source(source: Source) -> tuple:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        return io.BytesIO(data), "<bytes>", len(data)
    path = os.fspath(source)
    f = open(path, "rb")
    try:
        size = os.fstat(f.fileno()).st_size
    except BaseException:
        f.close()
        raise
    return f, str(path), size


def read_gguf_metadata(source: Source) -> GGUFMetadata:
    """Read the header and key/value block of a GGUF file.

    ``source`` is a path or the file's bytes. Only the header and the KV block
    are read; tensor infos and tensor data are never touched. Versions 2 and 3
    are accepted (they share a layout); version 1 and big-endian files are
    rejected. Errors opening the file propagate as ``OSError``; anything wrong
    inside it raises :class:`~fasttok.errors.VocabularyFileError`.

    >>> meta = read_gguf_metadata(_tiny_gguf_for_doctest())
    >>> meta.kv["tokenizer.ggml.tokens"][:3], meta.tensor_count
    (['a', 'b', 'ab'], 0)
    >>> read_gguf_metadata(b"GGML" + bytes(20))
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: <bytes>: byte 0: bad magic b'GGML': not a GGUF file
    """
    return _read(source, frozenset())


def _read(source: Source, raw_keys: frozenset) -> GGUFMetadata:
    # raw_keys: string-array keys returned as undecoded bytes, for load_gguf,
    # which splits and validates merges itself and so skips a str per merge.
    f, path, size = _open_source(source)
    with f:
        return _read_metadata(_Stream(f, path, size), raw_keys)


def _read_metadata(s: _Stream, raw_keys: frozenset) -> GGUFMetadata:
    if s.size < 4:
        raise s.fail(f"file is truncated: {s.size} bytes, too short for the GGUF magic", None)
    s.need(4, "magic", None)
    if s.buf[:4] != _MAGIC:
        raise s.fail(f"bad magic {bytes(s.buf[:4])!r}: not a GGUF file", None)
    s.need(_HEADER.size, "header", None)
    _, version, tensor_count, kv_count = _HEADER.unpack_from(s.buf, 0)
    if version & 0xFFFF == 0 and version:
        raise s.fail(f"big-endian GGUF not supported (version field reads 0x{version:08x})",
                     None, 4)
    if version == 1:
        raise s.fail("GGUF version 1 is not supported; re-convert the model with a current "
                     "llama.cpp (versions 2 and 3 are)", None, 4)
    if version not in _SUPPORTED_VERSIONS:
        raise s.fail(f"unknown GGUF version {version} (supported: 2, 3)", None, 4)
    s.pos = _HEADER.size
    if kv_count * _MIN_KV_SIZE > s.remaining():
        raise s.fail(f"header claims {kv_count} key/value pairs, needing at least "
                     f"{kv_count * _MIN_KV_SIZE} bytes, but only {s.remaining()} remain",
                     None, 16)
    if tensor_count * _MIN_TENSOR_INFO_SIZE > s.size - s.offset():
        raise s.fail(f"header claims {tensor_count} tensors, needing at least "
                     f"{tensor_count * _MIN_TENSOR_INFO_SIZE} bytes, but the file has only "
                     f"{s.size - s.offset()} more", None, 8)

    kv: dict = {}
    kv_types: dict = {}
    array_types: dict = {}
    offsets: dict = {}
    for index in range(kv_count):
        start = s.offset()
        key = s.string(None, f"key of entry {index}", limit=_MAX_KEY_LENGTH)
        if key in kv:
            raise s.fail(f"duplicate key (first at byte {offsets[key]})", key, start)
        vtype = s.u32(key, "value type")
        if vtype == GGUFType.ARRAY:
            etype, value = _read_array(s, key, 1, key in raw_keys)
            array_types[key] = etype
        elif vtype in _MIN_SIZE:
            value = _read_value(s, vtype, key, 0)
        else:
            raise s.fail(f"unknown value type {vtype} (GGUF defines 0-12)", key, s.offset() - 4)
        kv[key] = value
        kv_types[key] = vtype
        offsets[key] = start

    kv_end = s.offset()
    if tensor_count * _MIN_TENSOR_INFO_SIZE > s.size - kv_end:
        raise VocabularyFileError(
            s.path, f"header claims {tensor_count} tensors but only {s.size - kv_end} bytes "
            "follow the key/value block", offset=kv_end)
    return GGUFMetadata(
        version=version, tensor_count=tensor_count, kv=MappingProxyType(kv),
        kv_types=MappingProxyType(kv_types), array_types=MappingProxyType(array_types),
        offsets=MappingProxyType(offsets), kv_end=kv_end, file_size=s.size, source=s.path)


# ---------------------------------------------------------------------------
# tokenizer.* keys -> Vocabulary

_PREFIX = "tokenizer.ggml."

# GGUF tokenizer model -> (Vocabulary.model, byte_level)
_MODELS = {
    "gpt2": ("byte_bpe", True),
    "llama": ("sentencepiece_bpe", False),
    "t5": ("unigram", False),
    "bert": ("wordpiece", False),
    "gemma4": ("char_bpe", False),
}

# llama.cpp's defaults per model when a key is missing (llama-vocab.cpp,
# llama_vocab::impl::load). None = no such token. Ids out of range are dropped.
_DEFAULTS = {
    "gpt2": dict(bos=11, eos=11, unk=None, sep=None, pad=None, mask=None,
                 add_bos=False, add_eos=False, add_sep=False,
                 add_space_prefix=False, escape_whitespaces=False),
    "llama": dict(bos=1, eos=2, unk=0, sep=None, pad=None, mask=None,
                  add_bos=True, add_eos=False, add_sep=False,
                  add_space_prefix=True, escape_whitespaces=True),
    "bert": dict(bos=101, eos=None, unk=100, sep=102, pad=0, mask=103,
                 add_bos=True, add_eos=False, add_sep=True,
                 add_space_prefix=False, escape_whitespaces=True),
    "t5": dict(bos=None, eos=1, unk=2, sep=None, pad=0, mask=None,
               add_bos=False, add_eos=True, add_sep=False,
               add_space_prefix=False, escape_whitespaces=True),
    "gemma4": dict(bos=None, eos=None, unk=None, sep=None, pad=None, mask=None,
                   add_bos=True, add_eos=False, add_sep=False,
                   add_space_prefix=False, escape_whitespaces=True),
}

# What llama.cpp sets whatever the file says: gemma4 is its own `pre`, and
# its BOS is added even under add_bos_token = false (llama.cpp PR 21500).
_MODEL_PRE = {"gemma4": "gemma4"}
_FORCED_FLAGS = {"gemma4": dict(add_bos=True)}
# The models whose merges are required (llama.cpp throws without them).
_NEED_MERGES = frozenset({"gpt2", "gemma4"})

# Per-`pre` overrides llama.cpp applies to gpt2 vocabularies (data, not code).
_LLAMA3_LIKE = dict(add_bos=True, ignore_merges=True)
_PRE_OVERRIDES = {
    **{pre: _LLAMA3_LIKE for pre in (
        "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
        "midm-2.0", "lfm2")},
    "tekken": dict(add_bos=True, ignore_merges=True),
    "chameleon": dict(add_bos=True),
    "jina-v1-en": dict(add_sep=True),
    "jina-v2-code": dict(add_sep=True),
    "roberta-bpe": dict(add_sep=True),
    "glm4": dict(bos=None),
    "chatglm-bpe": dict(bos=None),
}

# Special-token id keys -> Vocabulary field. llama.cpp spells the separator
# key "seperator"; the GGUF spec document says "separator". Read both.
_ID_FIELDS = (
    ("bos_token_id", "bos"),
    ("eos_token_id", "eos"),
    ("unknown_token_id", "unk"),
    ("seperator_token_id", "sep"),
    ("separator_token_id", "sep"),
    ("padding_token_id", "pad"),
    ("mask_token_id", "mask"),
)
# Further id keys kept in metadata (deprecated prefix/suffix/middle included).
_METADATA_ID_KEYS = (
    "eot_token_id", "eom_token_id", "cls_token_id",
    "fim_pre_token_id", "fim_suf_token_id", "fim_mid_token_id",
    "fim_pad_token_id", "fim_rep_token_id", "fim_sep_token_id",
    "prefix_token_id", "suffix_token_id", "middle_token_id",
)
_FLAG_KEYS = (
    ("add_bos_token", "add_bos"),
    ("add_eos_token", "add_eos"),
    ("add_sep_token", "add_sep"),
    ("add_space_prefix", "add_space_prefix"),
)
# Keys turned into Vocabulary fields; everything else under tokenizer.* (and a
# few general.* names) goes to metadata.
_CONSUMED = frozenset(
    [_PREFIX + k for k in ("model", "pre", "tokens", "token_type", "scores", "merges",
                           "precompiled_charsmap", "remove_extra_whitespaces")]
    + [_PREFIX + k for k, _ in _ID_FIELDS] + [_PREFIX + k for k, _ in _FLAG_KEYS])
_GENERAL_KEYS = ("general.name", "general.architecture", "general.basename")
_SPECIAL_TYPES = frozenset({TokenType.CONTROL, TokenType.USER_DEFINED, TokenType.UNKNOWN})


class _Keys:
    """Typed access to the KV block, with errors that name the key and offset."""

    def __init__(self, meta: GGUFMetadata, path: str) -> None:
        self.meta = meta
        self.path = path

    def fail(self, key: str, problem: str) -> VocabularyFileError:
        return VocabularyFileError(self.path, problem, offset=self.meta.offsets.get(key), field=key)

    def type_name(self, key: str) -> str:
        vtype = self.meta.kv_types[key]
        if vtype == GGUFType.ARRAY:
            return f"array of {_type_name(self.meta.array_types[key])}"
        return _type_name(vtype)

    def string(self, key: str) -> Optional[str]:
        if key not in self.meta.kv:
            return None
        if self.meta.kv_types[key] != GGUFType.STRING:
            raise self.fail(key, f"expected a string, found {self.type_name(key)}")
        return self.meta.kv[key]

    def integer(self, key: str) -> Optional[int]:
        if key not in self.meta.kv:
            return None
        if self.meta.kv_types[key] not in _INTEGER_TYPES:
            raise self.fail(key, f"expected an integer, found {self.type_name(key)}")
        return self.meta.kv[key]

    def flag(self, key: str) -> Optional[bool]:
        if key not in self.meta.kv:
            return None
        vtype = self.meta.kv_types[key]
        value = self.meta.kv[key]
        if vtype == GGUFType.BOOL:
            return value
        if vtype in _INTEGER_TYPES and value in (0, 1):
            return bool(value)
        raise self.fail(key, f"expected a bool, found {self.type_name(key)} {value!r}")

    def array(self, key: str, allowed: frozenset, what: str, min_len: Optional[int] = None):
        if key not in self.meta.kv:
            return None
        if self.meta.kv_types[key] != GGUFType.ARRAY or self.meta.array_types[key] not in allowed:
            raise self.fail(key, f"expected {what}, found {self.type_name(key)}")
        value = self.meta.kv[key]
        if min_len is not None and len(value) < min_len:
            raise self.fail(key, f"has {len(value)} entries for {min_len} tokens")
        return value


def load_gguf(source: Source) -> Vocabulary:
    """Load the tokenizer of a GGUF file as a :class:`~fasttok.vocab.Vocabulary`.

    ``tokenizer.ggml.model`` picks the model: ``gpt2`` -> ``"byte_bpe"``
    (merges as pairs of raw bytes, priority = list order), ``llama`` ->
    ``"sentencepiece_bpe"``, ``t5`` -> ``"unigram"``, ``bert`` ->
    ``"wordpiece"``, ``gemma4`` -> ``"char_bpe"`` (BPE over UTF-8 text by
    merge-list priority, ``▁`` for a space). Missing keys get llama.cpp's defaults; an id key outside
    the vocabulary keeps the default, as in llama.cpp, and a note is added to
    ``metadata["warnings"]``.

    Representation (for the encoder core):

    * ``len(tokens)`` is always the GGUF vocabulary size; ``token_types``
      and ``scores`` (when present) are parallel to it.
    * byte_bpe: CONTROL / USER_DEFINED / UNKNOWN tokens are in
      ``special_tokens`` (text -> id) and ``None`` in ``tokens``. llama.cpp
      matches USER_DEFINED tokens in text even without ``parse_special``;
      check ``token_types`` for that distinction.
    * byte_bpe: a NORMAL token that is not byte-level text (command-r has
      1403) can never come out of byte-level BPE, in llama.cpp or Hugging
      Face. It is ``None`` in ``tokens`` and its UTF-8 bytes (what Hugging
      Face's ByteLevel decoder prints for it) are in
      ``metadata["decode_only_tokens"]`` (``{id: bytes}``). Had it stayed in
      ``tokens``, 43 of command-r's would duplicate the bytes of a real token.
      A repeated token string (llama.cpp rejects those) keeps its first id;
      later ids become decode-only too, and ``metadata["repeated_tokens"]``
      maps each to the first id. So ordinary token bytes are unique.
    * byte_bpe: merges that can never apply (no space, an empty side, a side
      outside the byte-level alphabet) are dropped; their GGUF indices are in
      ``metadata["unusable_merges"]``. None of the 18 test files has one.
    * other models: every piece stays in ``tokens`` as its UTF-8 bytes;
      special pieces are additionally listed in ``special_tokens``.
    * an empty token string becomes ``"[EMPTY_<id>]"`` as in llama.cpp.

    >>> v = load_gguf(_tiny_gguf_for_doctest())
    >>> v.model, v.tokens[:3], v.merges[0], v.special_tokens["<|end|>"]
    ('byte_bpe', (b'a', b'b', b'ab'), (b'a', b'b'), 3)
    """
    # Building ~1M small objects (command-r) triggers repeated full garbage
    # collections that scan the caller's whole heap; none of them can free
    # anything here. Pausing the collector saves 60 ms of command-r's 480.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _load(source)
    finally:
        if paused:
            gc.enable()


def _load(source: Source) -> Vocabulary:
    meta = _read(source, frozenset({_PREFIX + "merges"}))
    path = meta.source
    keys = _Keys(meta, path)

    gguf_model = keys.string(_PREFIX + "model")
    if gguf_model is None:
        raise VocabularyFileError(path, "no tokenizer.ggml.model key: this GGUF file has no "
                                  "tokenizer (supported models: " + ", ".join(_MODELS) + ")",
                                  field=_PREFIX + "model")
    if gguf_model not in _MODELS:
        raise keys.fail(_PREFIX + "model",
                        f"tokenizer model {gguf_model!r} is not supported (supported: "
                        + ", ".join(_MODELS) + ")")
    model, byte_level = _MODELS[gguf_model]
    pre_raw = keys.string(_PREFIX + "pre")
    pre = _MODEL_PRE.get(gguf_model, pre_raw or "default")
    warnings: list = []

    texts = keys.array(_PREFIX + "tokens", frozenset({GGUFType.STRING}), "an array of strings")
    if texts is None:
        raise VocabularyFileError(path, "no tokenizer.ggml.tokens key: the vocabulary is missing",
                                  field=_PREFIX + "tokens")
    n = len(texts)
    if n == 0:
        raise keys.fail(_PREFIX + "tokens", "the vocabulary is empty")

    types_arr = keys.array(_PREFIX + "token_type", _INTEGER_TYPES, "an array of integers", n)
    token_types = tuple(types_arr[:n]) if types_arr is not None else None
    scores_arr = keys.array(_PREFIX + "scores", frozenset({GGUFType.FLOAT32, GGUFType.INT32,
                                                          GGUFType.FLOAT64}),
                            "an array of f32", n)
    scores = None
    if scores_arr is not None:
        scores = tuple(map(float, scores_arr[:n]))

    texts = _rename_empty(texts)
    repeated: dict = {}
    if byte_level:
        tokens, special_tokens, decode_only = _byte_level_tokens(texts, token_types, warnings,
                                                                 repeated)
        _check_unrenderable(keys, decode_only, repeated)
    else:
        # SentencePiece / WordPiece pieces stay text; specials are also indexed.
        tokens = list(map(str.encode, texts))
        special_tokens = {}
        for i in _special_ids(token_types):
            special_tokens.setdefault(texts[i], i)
        decode_only = {}

    merges = None
    unusable: list = []
    merge_pieces = keys.array(_PREFIX + "merges", frozenset({GGUFType.STRING}),
                              "an array of strings")
    if merge_pieces is not None:
        merges = _parse_merges(merge_pieces, byte_level, keys, unusable)
    elif gguf_model in _NEED_MERGES and pre != "kimi-k2":
        raise VocabularyFileError(path, f"{gguf_model} tokenizer without tokenizer.ggml.merges",
                                  field=_PREFIX + "merges")

    charsmap = keys.array(_PREFIX + "precompiled_charsmap",
                          frozenset({GGUFType.UINT8, GGUFType.INT8}), "an array of u8")
    if charsmap is not None:
        charsmap = charsmap.tobytes() if isinstance(charsmap, array.array) else bytes(
            b & 0xFF for b in charsmap)
        if gguf_model == "t5":  # the only model llama.cpp reads it for
            _check_charsmap(charsmap, keys)

    settings = dict(_DEFAULTS[gguf_model])
    ignore_merges = False
    if gguf_model == "gpt2":
        overrides = dict(_PRE_OVERRIDES.get(pre, {}))
        ignore_merges = overrides.pop("ignore_merges", False)
        settings.update(overrides)
    ids = {}
    for field in ("bos", "eos", "unk", "sep", "pad", "mask"):
        default = settings[field]
        ids[field] = default if default is not None and default < n else None
    for key_suffix, field in _ID_FIELDS:
        value = keys.integer(_PREFIX + key_suffix)
        if value is None:
            continue
        if 0 <= value < n:
            ids[field] = value
        else:
            warnings.append(f"{_PREFIX}{key_suffix} = {value} is outside the vocabulary "
                            f"(0..{n - 1}); keeping {ids[field]}")
    flags = {field: settings[field] for _, field in _FLAG_KEYS}
    for key_suffix, field in _FLAG_KEYS:
        value = keys.flag(_PREFIX + key_suffix)
        if value is not None:
            flags[field] = value
    flags.update(_FORCED_FLAGS.get(gguf_model, {}))
    for flag, field, key_suffix in (("add_bos", "bos", "bos_token_id"),
                                    ("add_eos", "eos", "eos_token_id"),
                                    ("add_sep", "sep", "seperator_token_id")):
        if flags[flag] and ids[field] is None:
            # llama.cpp refuses such a file too.
            raise VocabularyFileError(path, f"{flag} is set but {_PREFIX}{key_suffix} is not",
                                      field=_PREFIX + key_suffix)
    remove_extra = keys.flag(_PREFIX + "remove_extra_whitespaces") or False

    metadata: dict = {"gguf_version": meta.version, "tokenizer.ggml.model": gguf_model,
                      "ignore_merges": ignore_merges}
    for key in _GENERAL_KEYS:
        if key in meta.kv:
            metadata[key] = meta.kv[key]
    for key, value in meta.kv.items():
        if not key.startswith("tokenizer.") or key in _CONSUMED:
            continue
        if key.startswith(_PREFIX) and key[len(_PREFIX):] in _METADATA_ID_KEYS:
            value = keys.integer(key)
            if not 0 <= value < n:
                warnings.append(f"{key} = {value} is outside the vocabulary; dropped")
                continue
        elif isinstance(value, (list, array.array)):
            value = tuple(value)
        metadata[key] = value
    if decode_only:
        metadata["decode_only_tokens"] = MappingProxyType(decode_only)
    if repeated:
        metadata["repeated_tokens"] = MappingProxyType(repeated)
    if unusable:
        metadata["unusable_merges"] = tuple(unusable)
    if warnings:
        metadata["warnings"] = tuple(warnings)

    byte_fallback = (model == "sentencepiece_bpe" and token_types is not None
                     and TokenType.BYTE in token_types)
    name = os.path.basename(path)
    if name.endswith(".gguf"):
        name = name[:-5]
    return Vocabulary(
        name=name, model=model, tokens=tuple(tokens), scores=scores, token_types=token_types,
        merges=merges, special_tokens=special_tokens, pre_tokenizer=pre,
        precompiled_charsmap=charsmap, add_dummy_prefix=flags["add_space_prefix"],
        remove_extra_whitespaces=remove_extra,
        escape_whitespaces=settings["escape_whitespaces"], byte_fallback=byte_fallback,
        bos_id=ids["bos"], eos_id=ids["eos"], unk_id=ids["unk"], pad_id=ids["pad"],
        sep_id=ids["sep"], mask_id=ids["mask"], add_bos=flags["add_bos"],
        add_eos=flags["add_eos"], add_sep=flags["add_sep"], byte_level=byte_level,
        source=path, metadata=metadata)


def _rename_empty(texts: list) -> list:
    # llama.cpp renames an empty token to "[EMPTY_<id>]" (it warns and goes on).
    if "" not in texts:
        return texts
    return [t or f"[EMPTY_{i}]" for i, t in enumerate(texts)]


def _special_ids(token_types: Optional[tuple]) -> list:
    if token_types is None:
        return []
    return list(compress(range(len(token_types)), map(_SPECIAL_TYPES.__contains__, token_types)))


def _byte_level_tokens(texts: list, token_types: Optional[tuple], warnings: list,
                       repeated: dict) -> tuple:
    """Split a gpt2 vocabulary into ordinary byte tokens, specials and decode-only ids.

    A token text seen before is decode-only too; ``repeated`` gets its id ->
    the first id.

    >>> repeated = {}
    >>> _byte_level_tokens(["a", "\u0120b", "<s>", "\u200d", "a"], (1, 1, 3, 1, 1), [], repeated)
    ([b'a', b' b', None, None, None], {'<s>': 2}, {3: b'\\xe2\\x80\\x8d', 4: b'a'})
    >>> repeated
    {4: 0}
    """
    n = len(texts)
    special_ids = _special_ids(token_types)
    special: dict = {}
    work = list(texts)
    for i in special_ids:
        text = work[i]
        if text in special:
            warnings.append(f"special token {text!r} repeated at ids {special[text]} and {i}; "
                            f"keeping {special[text]}")
        else:
            special[text] = i
        work[i] = ""  # decodes to b"" below, then becomes None
    decode_only: dict = {}
    tokens: list = []
    # Blocks of 4096 through the compiled decoder; a block holding a NORMAL
    # token that is not byte-level text (command-r has 1403, ids 264-1666)
    # is redone one token at a time. Byte-level BPE can never produce such a
    # token, so it is decode-only: Hugging Face's ByteLevel decoder gives its
    # UTF-8 bytes, and keeping it out of `tokens` keeps bytes -> id unique.
    for start in range(0, n, _BLOCK):
        block = work[start:start + _BLOCK]
        try:
            tokens += list(map(decode_byte_level, block))
            continue
        except ValueError:
            pass
        for i, text in enumerate(block, start):
            try:
                tokens.append(decode_byte_level(text))
            except ValueError:
                tokens.append(None)
                decode_only[i] = text.encode("utf-8")
    for i in special_ids:
        tokens[i] = None
    # Duplicate token strings (which llama.cpp rejects) would give duplicate
    # bytes; the byte-level map is one-to-one, so comparing texts suffices.
    placeholders = 1 if special_ids else 0
    if len(set(work)) != n - len(special_ids) + placeholders:
        seen: dict = {}
        for i, raw in enumerate(tokens):
            if raw is None:
                continue
            if raw in seen:
                warnings.append(f"token {work[i]!r} at ids {seen[raw]} and {i}; "
                                f"id {i} is decode-only")
                tokens[i] = None
                decode_only[i] = raw
                repeated[i] = seen[raw]
            else:
                seen[raw] = i
    return tokens, special, decode_only


def _array_data_offset(keys: _Keys, key: str) -> Optional[int]:
    # Where the elements of array-valued `key` start: past the key string,
    # the value type, the element type and the count.
    start = keys.meta.offsets.get(key)
    if start is None:
        return None
    return start + 8 + len(key.encode("utf-8")) + 4 + 4 + 8


# llama.cpp decodes a NORMAL gpt2 token outside the byte-level alphabet with
# llama_decode_text, which renders each character outside the alphabet as
# "[UNK_BYTE_0x<hex><the whole token>]": k such characters in a token of L
# bytes decode to ~k * L bytes. The real ones have 1 (command-r's 1403); the
# cap keeps a hostile token's rendering within ~16x its own size.
_MAX_UNRENDERABLE_CHARS = 16


def _check_unrenderable(keys: _Keys, decode_only: dict, repeated: dict) -> None:
    key = _PREFIX + "tokens"
    texts = keys.meta.kv[key]
    for i in decode_only:
        if i in repeated:
            continue
        outside = sum(ch not in _BYTE_LEVEL_SET for ch in texts[i])
        if outside > _MAX_UNRENDERABLE_CHARS:
            start = _array_data_offset(keys, key)
            raise VocabularyFileError(
                keys.path, f"token {i} has {outside} characters outside the byte-level alphabet; "
                "llama.cpp decodes each of them to a copy of the whole token, so it would "
                f"decode to ~{outside * len(texts[i].encode('utf-8'))} bytes (at most "
                f"{_MAX_UNRENDERABLE_CHARS} such characters are accepted)",
                offset=start + sum(8 + len(t.encode("utf-8")) for t in texts[:i]), field=key)


def _merge_offset(keys: _Keys, pieces: list, index: int) -> Optional[int]:
    # Only computed on error: where merge `index` starts in the file.
    start = _array_data_offset(keys, _PREFIX + "merges")
    if start is None:
        return None
    return start + sum(8 + len(p) for p in pieces[:index]) + 8


def _check_charsmap(blob: bytes, keys: _Keys) -> None:
    # The compiled normalizer's own checks, so that a charsmap it would refuse
    # fails here, naming the file, the key and the byte.
    from fasttok.shared._charsmap import CharsmapError, check_charsmap

    key = _PREFIX + "precompiled_charsmap"
    try:
        check_charsmap(blob)
    except CharsmapError as exc:
        raise VocabularyFileError(keys.path, exc.problem,
                                  offset=_array_data_offset(keys, key) + exc.offset,
                                  field=key) from None


def _merge_side(side: bytes, keys: _Keys, pieces: list, index: int, at: int) -> bytes:
    try:
        text = side.decode()
    except UnicodeDecodeError as exc:
        offset = _merge_offset(keys, pieces, index)
        raise VocabularyFileError(
            keys.path, f"merge {index} is not valid UTF-8 ({exc.reason})",
            offset=None if offset is None else offset + at + exc.start,
            field=_PREFIX + "merges") from None
    try:
        return decode_byte_level(text)
    except ValueError:
        return b""  # not byte-level text: the merge can never apply


_BYTE_LEVEL_CHARS = "".join(bytes_to_unicode()[b] for b in range(256))
_BYTE_LEVEL_SET = frozenset(_BYTE_LEVEL_CHARS)
_SEPARATOR_TABLES: dict = {}


def _byte_level_merges_bulk(pieces: list) -> Optional[tuple]:
    """All merges at C speed, or ``None`` if any needs the careful path.

    Every well-formed merge is ``left SP right`` with both sides byte-level
    text, and a real vocabulary's merges never use some byte-level
    characters (the 13 test files leave 51-79 of the 256 unused, control
    bytes among them). So: join all merges with two spaces, pick a byte
    ``X`` whose character occurs nowhere, and run one ``charmap`` codec that
    maps each byte-level character to its byte and the space to ``X``; the
    raw sides are then ``raw.split(X)``. Measured on command-r
    (253k merges): 140 ms against 230 ms for the per-merge loop.

    >>> _byte_level_merges_bulk(["\u0120 t".encode(), b"h e"])
    ((b' ', b't'), (b'h', b'e'))
    """
    m = len(pieces)
    if not m:
        return ()
    try:
        # Two spaces between merges: a merge boundary then shows up as an
        # empty side, so alignment is checked without a pass over the merges.
        text = b"  ".join(pieces).decode()
    except UnicodeDecodeError:
        return None
    for sep in range(256):
        if _BYTE_LEVEL_CHARS[sep] not in text:
            break
    else:
        return None
    table = _SEPARATOR_TABLES.get(sep)
    if table is None:
        table = _SEPARATOR_TABLES[sep] = codecs.charmap_build(
            _BYTE_LEVEL_CHARS[:sep] + " " + _BYTE_LEVEL_CHARS[sep + 1:])
    try:
        raw = codecs.charmap_encode(text, "strict", table)[0]
    except UnicodeEncodeError:
        return None
    sides = raw.split(bytes((sep,)))
    # Well formed iff the list is [left, right, b"", left, right, b"", ...]:
    # m - 1 empties, all of them in the boundary slots.
    if (len(sides) != 3 * m - 1 or sides.count(b"") != m - 1
            or sides[2::3].count(b"") != m - 1):
        return None
    return tuple(zip(sides[0::3], sides[1::3]))


def _parse_merges(pieces: list, byte_level: bool, keys: _Keys, unusable: list) -> tuple:
    """Merge strings (undecoded UTF-8 ``bytes``) -> ``(left, right)`` raw byte pairs.

    llama.cpp splits at the first space at index >= 1 and keeps merges it can
    never apply (no space, an empty side, a side outside the byte-level
    alphabet) as dead entries. Here they are dropped and their GGUF indices
    appended to ``unusable``; the survivors keep their relative order, which
    is all a merge rank means.
    """
    out: list = []
    append = out.append
    if not byte_level:
        try:
            # all at once (an ASCII byte between them, so that no character
            # can straddle two); merge by merge only to say where
            b" ".join(pieces).decode()
        except UnicodeDecodeError:
            for i, piece in enumerate(pieces):
                try:
                    piece.decode()
                except UnicodeDecodeError as exc:
                    offset = _merge_offset(keys, pieces, i)
                    raise VocabularyFileError(
                        keys.path, f"merge {i} is not valid UTF-8 ({exc.reason})",
                        offset=None if offset is None else offset + exc.start,
                        field=_PREFIX + "merges") from None
        for i, piece in enumerate(pieces):
            cut = piece.find(b" ", 1)
            if cut < 0 or cut == len(piece) - 1:
                unusable.append(i)
                continue
            append((piece[:cut], piece[cut + 1:]))
        return tuple(out)
    fast = _byte_level_merges_bulk(pieces)
    if fast is not None:
        return fast
    # The general path: every case llama.cpp tolerates, one merge at a time.
    # Sides repeat (llama-bpe: 560k sides, 62k distinct), so each distinct
    # side is validated and decoded once; b"" marks a dead side.
    cache: dict = {}
    get = cache.get
    for i, piece in enumerate(pieces):
        cut = piece.find(b" ", 1)
        if cut < 0:
            _merge_side(piece, keys, pieces, i, 0)  # still must be UTF-8
            unusable.append(i)
            continue
        left = piece[:cut]
        a = get(left)
        if a is None:
            a = cache[left] = _merge_side(left, keys, pieces, i, 0)
        right = piece[cut + 1:]
        b = get(right)
        if b is None:
            b = cache[right] = _merge_side(right, keys, pieces, i, cut + 1)
        if a and b:
            append((a, b))
        else:
            unusable.append(i)
    return tuple(out)


def _tiny_gguf_for_doctest() -> bytes:
    """A four-token gpt2 GGUF, built in memory for the examples above."""
    def s(text: str) -> bytes:
        raw = text.encode("utf-8")
        return struct.pack("<Q", len(raw)) + raw

    def kv(key: str, vtype: int, payload: bytes) -> bytes:
        return s(key) + struct.pack("<I", vtype) + payload

    toks = ["a", "b", "ab", "<|end|>"]
    entries = [
        kv("tokenizer.ggml.model", 8, s("gpt2")),
        kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, len(toks)) + b"".join(map(s, toks))),
        kv("tokenizer.ggml.token_type", 9, struct.pack("<IQ4i", 5, 4, 1, 1, 1, 3)),
        kv("tokenizer.ggml.merges", 9, struct.pack("<IQ", 8, 1) + s("a b")),
        kv("tokenizer.ggml.eos_token_id", 4, struct.pack("<I", 3)),
    ]
    return struct.pack("<4sIQQ", b"GGUF", 3, 0, len(entries)) + b"".join(entries)
