"""Tests for ``fasttok.loaders.gguf``: the GGUF metadata reader and the Vocabulary mapping.

Three groups:

* the 18 real vocab-only GGUF files under ``$FASTTOK_DATA/vocab/gguf``
  (default ``../shared/data`` next to the repository), checked against the
  ``index.json`` written from gguf-py, and against the ``.inp/.out`` pairs:
  the expected ids, decoded through our token bytes, must give back the text;
* small GGUF files written by ``_gguf`` below, for every value type, the
  llama.cpp defaults and the representation choices;
* hostile files: truncation at every offset, seeded random byte flips,
  absurd counts, and one malformed field at a time. Anything but a
  ``VocabularyFileError`` (or a hang) fails.
"""

from __future__ import annotations

import json
import os
import random
import struct
import time
import unicodedata
from base64 import b64decode
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import missing_data_reason
from fasttok.errors import VocabularyFileError
from fasttok.loaders.gguf import GGUFType, load_gguf, read_gguf_metadata
from fasttok.vocab import TokenType

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("FASTTOK_DATA", REPO.parent / "shared" / "data"))
GGUF_DIR = DATA / "vocab" / "gguf"
GGUF_FILES = sorted(p.name for p in GGUF_DIR.glob("*.gguf")) if GGUF_DIR.is_dir() else []
needs_data = pytest.mark.skipif(not GGUF_FILES, reason=missing_data_reason(GGUF_DIR))

# llama.cpp's defaults when a key is missing (FORMATS.md, "Defaults when keys
# are missing"), written out independently of the loader's own table.
EXPECTED_MODEL = {"gpt2": "byte_bpe", "llama": "sentencepiece_bpe", "t5": "unigram",
                  "bert": "wordpiece"}
DEFAULT_IDS = {  # bos, eos, unk
    "gpt2": (11, 11, None), "llama": (1, 2, 0), "bert": (101, None, 100), "t5": (None, 1, 2)}
DEFAULT_ADD_BOS = {"gpt2": False, "llama": True, "bert": True, "t5": False}
DEFAULT_ADD_EOS = {"gpt2": False, "llama": False, "bert": False, "t5": True}
SPECIAL_TYPES = (TokenType.CONTROL, TokenType.USER_DEFINED, TokenType.UNKNOWN)
LLAMA3_PRE = {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
              "lfm2", "tekken", "chameleon"}


@lru_cache(maxsize=None)
def _index() -> dict:
    return json.loads((GGUF_DIR / "index.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _load(name: str):
    return load_gguf(GGUF_DIR / name)


# ---------------------------------------------------------------------------
# A tiny GGUF writer, enough to build any KV block by hand.

_FMT = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 10: "Q", 11: "q", 12: "d"}


def _s(text) -> bytes:
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _value(vtype: int, value) -> bytes:
    if vtype in _FMT:
        return struct.pack("<" + _FMT[vtype], value)
    if vtype == GGUFType.BOOL:
        return bytes([value])
    if vtype == GGUFType.STRING:
        return _s(value)
    if vtype == GGUFType.ARRAY:
        etype, items = value
        return struct.pack("<IQ", etype, len(items)) + b"".join(_value(etype, x) for x in items)
    raise AssertionError(vtype)


def _gguf(kvs, *, version: int = 3, tensor_count: int = 0, tail: bytes = b"") -> bytes:
    """Header + ``[(key, type, value), ...]`` + ``tail`` (tensor infos, data)."""
    body = b"".join(_s(k) + struct.pack("<I", t) + _value(t, v) for k, t, v in kvs)
    return struct.pack("<4sIQQ", b"GGUF", version, tensor_count, len(kvs)) + body + tail


STR, ARR, BOOL = GGUFType.STRING, GGUFType.ARRAY, GGUFType.BOOL
U32, I32 = GGUFType.UINT32, GGUFType.INT32


def _tokenizer(model="gpt2", tokens=("a", "b", "ab", "\u0120", "\u0120a", "<|end|>"),
               types=(1, 1, 1, 1, 1, 3), merges=("a b", "\u0120 a"), extra=()) -> list:
    kvs = [("tokenizer.ggml.model", STR, model),
           ("tokenizer.ggml.tokens", ARR, (STR, list(tokens)))]
    if types is not None:
        kvs.append(("tokenizer.ggml.token_type", ARR, (I32, list(types))))
    if merges is not None:
        kvs.append(("tokenizer.ggml.merges", ARR, (STR, list(merges))))
    return kvs + list(extra)


# Every value type, a nested array and a working gpt2 tokenizer: the seed for
# truncation and byte-flip fuzzing (a few hundred bytes).
ALL_TYPES_KVS = [
    ("general.architecture", STR, "llama"),
    ("t.u8", 0, 200), ("t.i8", 1, -100), ("t.u16", 2, 60000), ("t.i16", 3, -30000),
    ("t.u32", 4, 4_000_000_000), ("t.i32", 5, -2_000_000_000), ("t.f32", 6, 1.5),
    ("t.bool", 7, 1), ("t.u64", 10, 2**63 + 5), ("t.i64", 11, -(2**62)), ("t.f64", 12, 0.1),
    ("t.arr_u8", ARR, (0, [1, 2, 255])),
    ("t.arr_bool", ARR, (BOOL, [1, 0, 1])),
    ("t.nested", ARR, (ARR, [(I32, [1, -2]), (STR, ["x", "\u00e9"]), (ARR, [(0, [7])])])),
] + _tokenizer(extra=[("tokenizer.ggml.bos_token_id", U32, 5),
                      ("tokenizer.ggml.eos_token_id", I32, 5),
                      ("tokenizer.ggml.add_bos_token", BOOL, 0)])
ALL_TYPES = _gguf(ALL_TYPES_KVS)


def _only_fasttok_errors(data: bytes, label: str, outcomes: dict) -> None:
    """Read and load ``data``; fail on any exception but ``VocabularyFileError``.

    ``outcomes[(function name, "read" or "refused")]`` counts what happened, so
    that a test can check that its damaged files took both paths.
    """
    for fn in (read_gguf_metadata, load_gguf):
        try:
            fn(data)
        except VocabularyFileError:
            outcomes[fn.__name__, "refused"] = outcomes.get((fn.__name__, "refused"), 0) + 1
        except Exception as exc:  # noqa: BLE001 - the point is to catch everything else
            pytest.fail(f"{label}: {fn.__name__} raised {type(exc).__name__}: {exc}")
        else:
            outcomes[fn.__name__, "read"] = outcomes.get((fn.__name__, "read"), 0) + 1


def _took_both_paths(outcomes: dict) -> bool:
    return all(outcomes.get((fn, way)) for fn in ("read_gguf_metadata", "load_gguf")
               for way in ("read", "refused"))


# ---------------------------------------------------------------------------
# Real files

@needs_data
@pytest.mark.parametrize("name", GGUF_FILES)
def test_real_file_matches_index(name):
    entry = _index()[name]
    v = _load(name)
    gguf_model = entry["tokenizer.ggml.model"]
    assert v.model == EXPECTED_MODEL[gguf_model]
    assert v.byte_level == (gguf_model == "gpt2")
    assert v.metadata["gguf_version"] == entry["gguf_version"]
    assert v.metadata["general.architecture"] == entry["general.architecture"]
    assert v.pre_tokenizer == (entry["tokenizer.ggml.pre"] or "default")
    assert len(v.tokens) == entry["n_tokens"]
    assert len(v.token_types) == entry["n_tokens"]
    assert (v.scores is not None) == entry["has_scores"]
    if entry["n_merges"]:
        assert len(v.merges) == entry["n_merges"]
        assert "unusable_merges" not in v.metadata
    else:
        assert v.merges is None
    bos, eos, unk = DEFAULT_IDS[gguf_model]
    assert v.bos_id == (entry["bos_token_id"] if entry["bos_token_id"] is not None else bos)
    assert v.eos_id == (entry["eos_token_id"] if entry["eos_token_id"] is not None else eos)
    assert v.unk_id == (entry["unknown_token_id"] if entry["unknown_token_id"] is not None else unk)
    add_bos = DEFAULT_ADD_BOS[gguf_model] or v.pre_tokenizer in LLAMA3_PRE
    assert v.add_bos == (entry["add_bos_token"] if entry["add_bos_token"] is not None else add_bos)
    add_eos = DEFAULT_ADD_EOS[gguf_model]
    assert v.add_eos == (entry["add_eos_token"] if entry["add_eos_token"] is not None else add_eos)
    prefix = gguf_model == "llama"
    assert v.add_dummy_prefix == (
        entry["add_space_prefix"] if entry["add_space_prefix"] is not None else prefix)
    for key in entry["other_tokenizer_keys"]:
        if key == "tokenizer.ggml.precompiled_charsmap":
            assert v.precompiled_charsmap
        elif key == "tokenizer.ggml.remove_extra_whitespaces":
            assert v.remove_extra_whitespaces
        else:
            assert key in v.metadata
    assert v.source == str(GGUF_DIR / name)
    assert v.name == name[:-len(".gguf")]
    assert "warnings" not in v.metadata


@needs_data
@pytest.mark.parametrize("name", GGUF_FILES)
def test_real_file_reader_agrees_with_index(name):
    entry = _index()[name]
    meta = read_gguf_metadata(GGUF_DIR / name)
    assert meta.version == entry["gguf_version"]
    assert meta.tensor_count == 0
    assert meta.kv_end == meta.file_size  # vocab-only: the KV block is the whole file
    assert meta.kv["tokenizer.ggml.model"] == entry["tokenizer.ggml.model"]
    assert len(meta.kv["tokenizer.ggml.tokens"]) == entry["n_tokens"]
    assert meta.array_types["tokenizer.ggml.token_type"] == GGUFType.INT32


@needs_data
@pytest.mark.parametrize("name", GGUF_FILES)
def test_real_file_record_is_consistent(name):
    # Everything validate() checks except the 256-byte alphabet, which seven
    # real byte-level vocabularies lack (bytes 0xC0, 0xC1, 0xF5-0xFF never
    # occur in UTF-8; falcon also lacks control bytes) -- see the report.
    v = _load(name)
    v.replace(byte_level=False).validate()
    ordinary = [t for t in v.tokens if t is not None]
    if v.model == "byte_bpe":
        assert len(set(ordinary)) == len(ordinary)
        for text, i in v.special_tokens.items():
            assert v.tokens[i] is None
            assert v.token_types[i] in SPECIAL_TYPES
    else:
        assert len(ordinary) == len(v.tokens)


@needs_data
@pytest.mark.parametrize("name", [n for n in GGUF_FILES if (GGUF_DIR / (n + ".inp")).exists()
                                  and "bert" not in n])
def test_real_file_decodes_reference_ids_back_to_text(name):
    # The .out ids are Hugging Face's encodings of the .inp strings; byte-level
    # BPE and SentencePiece are lossless, so our bytes must rebuild the text.
    # (WordPiece lowercases and drops spaces: bert files are left out.)
    v = _load(name)
    texts = (GGUF_DIR / (name + ".inp")).read_text(encoding="utf-8").split(
        "\n__ggml_vocab_test__\n")[:-1]
    lines = (GGUF_DIR / (name + ".out")).read_bytes().decode("utf-8").split("\n")
    special = {i: t.encode() for t, i in v.special_tokens.items()}
    decode_only = v.metadata.get("decode_only_tokens", {})
    for text, line in zip(texts, lines):
        parts = []
        for i in map(int, line.split()):
            tok = v.tokens[i]
            if v.model == "byte_bpe":
                parts.append(tok if tok is not None else special.get(i) or decode_only[i])
            elif v.token_types[i] == TokenType.BYTE:
                parts.append(bytes([int(tok[3:5], 16)]))
            else:
                parts.append(tok.replace("\u2581".encode(), b" "))
        got = b"".join(parts)
        if v.model != "byte_bpe" and got.startswith(b" "):
            got = got[1:]  # the dummy prefix
        assert got == text.encode(), text


@needs_data
def test_llama_bpe_has_128256_tokens_and_280147_merges():
    v = _load("ggml-vocab-llama-bpe.gguf")
    assert len(v.tokens) == 128256
    assert len(v.merges) == 280147
    assert v.merges[0] == (b" ", b" ")
    assert v.special_tokens["<|begin_of_text|>"] == 128000 == v.bos_id
    assert v.add_bos and v.metadata["ignore_merges"]


@needs_data
def test_bert_bge_sep_id_comes_from_the_misspelt_key():
    meta = read_gguf_metadata(GGUF_DIR / "ggml-vocab-bert-bge.gguf")
    assert "tokenizer.ggml.seperator_token_id" in meta.kv
    v = _load("ggml-vocab-bert-bge.gguf")
    assert (v.sep_id, v.pad_id, v.mask_id, v.unk_id) == (102, 0, 103, 100)
    assert v.bos_id == 101  # no key: llama.cpp's BERT default
    assert v.add_bos and v.add_sep
    assert v.special_tokens["[SEP]"] == 102


@needs_data
def test_aquila_is_gguf_version_2():
    assert read_gguf_metadata(GGUF_DIR / "ggml-vocab-aquila.gguf").version == 2
    assert _load("ggml-vocab-aquila.gguf").metadata["gguf_version"] == 2


@needs_data
def test_gpt2_tokens_equal_tiktoken_r50k_ranks():
    v = _load("ggml-vocab-gpt-2.gguf")
    lines = (DATA / "vocab" / "tiktoken" / "r50k_base.tiktoken").read_bytes().split(b"\n")
    ranks = {int(rank): b64decode(tok) for tok, rank in (ln.split() for ln in lines if ln)}
    assert len(ranks) == 50256
    assert all(v.tokens[rank] == tok for rank, tok in ranks.items())
    assert v.tokens[50256] is None and v.special_tokens == {"<|endoftext|>": 50256}


@needs_data
def test_command_r_non_byte_level_tokens_are_decode_only():
    v = _load("ggml-vocab-command-r.gguf")
    decode_only = v.metadata["decode_only_tokens"]
    assert len(decode_only) == 1403
    assert v.tokens[264] is None and decode_only[264] == "\u200d".encode()
    assert v.tokens[35927] == "\u200d".encode()  # the byte-level spelling BPE can reach
    assert len(v.special_tokens) == 1008
    assert v.special_tokens["<BOS_TOKEN>"] == 5 == v.bos_id
    assert v.metadata["tokenizer.chat_template"].startswith("{{")


@needs_data
def test_deepseek_user_defined_tokens_stay_raw_utf8():
    # USER_DEFINED tokens are stored unmapped: "õ" is the character, not byte 0xF5.
    v = _load("ggml-vocab-deepseek-coder.gguf")
    assert v.special_tokens["\u00f5"] == 32000
    assert v.token_types[32000] == TokenType.USER_DEFINED
    assert b"\xf5" not in v.tokens


@needs_data
def test_llama_spm_pieces_stay_text():
    v = _load("ggml-vocab-llama-spm.gguf")
    assert v.tokens[13] == b"<0x0A>" and v.token_types[13] == TokenType.BYTE
    assert v.tokens[29871] == "\u2581".encode()
    assert v.byte_fallback and v.add_dummy_prefix and v.escape_whitespaces
    assert (v.bos_id, v.eos_id, v.unk_id) == (1, 2, 0)
    assert v.special_tokens == {"<unk>": 0, "<s>": 1, "</s>": 2}


@needs_data
def test_nomic_t5_carries_the_charsmap_as_bytes():
    v = _load("ggml-vocab-nomic-bert-moe.gguf")
    blob = v.precompiled_charsmap
    assert isinstance(blob, bytes)
    (trie_size,) = struct.unpack_from("<I", blob)
    assert trie_size % 4 == 0 and 4 + trie_size < len(blob)
    assert v.remove_extra_whitespaces and v.add_dummy_prefix
    assert (v.bos_id, v.eos_id, v.unk_id, v.sep_id, v.mask_id) == (0, 2, 3, 2, 250001)


@needs_data
def test_command_r_keeps_its_non_byte_level_tokens_for_decoding_only():
    # The largest file (256000 tokens, 253333 merges, 10.9 MB; its load time is
    # bench/test_gguf_bench.py's test_gguf_load): 1403 NORMAL tokens that are
    # not byte-level text get no ``tokens`` slot and decode as their UTF-8.
    v = _load("ggml-vocab-command-r.gguf")
    decode_only = v.metadata["decode_only_tokens"]
    assert len(decode_only) == 1403
    assert all(v.tokens[i] is None and v.token_types[i] == TokenType.NORMAL for i in decode_only)
    assert len(v.tokens) == 256000 and len(v.merges) == 253333


# ---------------------------------------------------------------------------
# The reader on hand-written files

def test_every_value_type_round_trips():
    meta = read_gguf_metadata(ALL_TYPES)
    kv = meta.kv
    assert (kv["t.u8"], kv["t.i8"], kv["t.u16"], kv["t.i16"]) == (200, -100, 60000, -30000)
    assert (kv["t.u32"], kv["t.i32"]) == (4_000_000_000, -2_000_000_000)
    assert (kv["t.u64"], kv["t.i64"]) == (2**63 + 5, -(2**62))
    assert kv["t.f32"] == 1.5 and kv["t.f64"] == 0.1 and kv["t.bool"] is True
    assert list(kv["t.arr_u8"]) == [1, 2, 255] and kv["t.arr_bool"] == [True, False, True]
    nested = kv["t.nested"]
    assert list(nested[0]) == [1, -2] and nested[1] == ["x", "\u00e9"] and list(nested[2][0]) == [7]
    assert meta.kv_types["t.nested"] == GGUFType.ARRAY
    assert meta.array_types["t.nested"] == GGUFType.ARRAY
    assert meta.kv_end == len(ALL_TYPES) == meta.file_size
    assert meta.offsets["general.architecture"] == 24


def test_string_arrays_cross_read_chunk_edges(tmp_path):
    # Far more than one 1 MiB read: strings and length prefixes straddle the
    # buffer's end many times, and one string is bigger than a whole chunk.
    rng = random.Random(7)
    words = ["".join(rng.choice("ab\u00e9\u4e2d") for _ in range(rng.randint(0, 12)))
             for _ in range(200_000)]
    big = "x" * (3 << 20)
    path = tmp_path / "chunks.gguf"
    path.write_bytes(_gguf([("a.words", ARR, (STR, words)), ("a.big", STR, big),
                            ("a.tail", U32, 9)]))
    meta = read_gguf_metadata(path)
    assert meta.kv["a.words"] == words
    assert meta.kv["a.big"] == big and meta.kv["a.tail"] == 9


class _CountingFile:
    """A binary file that counts the bytes read from it."""

    def __init__(self, f) -> None:
        self.f = f
        self.bytes_read = 0

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.bytes_read += len(data)
        return data

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.f.close()


@pytest.fixture
def files_opened(monkeypatch) -> list:
    """The files the GGUF reader opens from now on, each a :class:`_CountingFile`."""
    opened: list = []

    def counting_open(path, mode="r", *args, **kwargs):
        opened.append(_CountingFile(open(path, mode, *args, **kwargs)))
        return opened[-1]

    # the reader module's own name "open", which shadows the builtin there
    monkeypatch.setitem(read_gguf_metadata.__globals__, "open", counting_open)
    return opened


READ_CHUNK = 1 << 20  # the reader's read size (loaders/gguf.py's _CHUNK)


def test_only_header_and_kv_block_are_read(tmp_path, files_opened):
    # A "10 GB model": two tensor infos, then a sparse hole where the weights
    # would be. Loading reads one chunk, never the hole beyond it.
    infos = b"".join(_s(name) + struct.pack("<I2QIQ", 2, 4096, 4096, 0, off)
                     for name, off in (("tok_embd.weight", 0), ("output.weight", 1 << 26)))
    data = _gguf(_tokenizer() + [("general.alignment", U32, 32)], tensor_count=2, tail=infos)
    path = tmp_path / "huge.gguf"
    with open(path, "wb") as f:
        f.write(data)
        f.truncate(10 * 2**30)
    v = load_gguf(path)
    assert [f.bytes_read for f in files_opened] == [READ_CHUNK]
    meta = read_gguf_metadata(path)
    assert meta.tensor_count == 2 and meta.file_size == 10 * 2**30
    assert meta.kv_end == len(data) - len(infos)
    assert v.tokens[:3] == (b"a", b"b", b"ab")


def test_bytes_and_path_sources_agree(tmp_path):
    path = tmp_path / "t.gguf"
    path.write_bytes(ALL_TYPES)
    a, b = load_gguf(ALL_TYPES), load_gguf(path)
    assert a.tokens == b.tokens and a.merges == b.merges and a.source == "<bytes>"


def test_missing_file_raises_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_gguf_metadata(tmp_path / "nope.gguf")


# ---------------------------------------------------------------------------
# Mapping to Vocabulary

def test_gpt2_tokens_are_byte_level_decoded_and_specials_split_off():
    kvs = _tokenizer(tokens=["a", "\u0120b", "<|end|>", "\u00f5", "\u200d", ""],
                     types=[1, 0, 3, 4, 1, 1], merges=["\u0120 b"])
    v = load_gguf(_gguf(kvs))
    assert v.tokens == (b"a", b" b", None, None, None, b"[EMPTY_5]")
    assert v.special_tokens == {"<|end|>": 2, "\u00f5": 3}
    assert v.metadata["decode_only_tokens"] == {4: b"\xe2\x80\x8d"}
    assert v.merges == ((b" ", b"b"),)


def test_gpt2_repeated_token_string_keeps_first_id():
    v = load_gguf(_gguf(_tokenizer(tokens=["a", "b", "a"], types=[1, 1, 1], merges=[])))
    assert v.tokens == (b"a", b"b", None)
    assert v.metadata["decode_only_tokens"] == {2: b"a"}
    assert any("ids 0 and 2" in w for w in v.metadata["warnings"])


def test_merges_split_at_first_space_after_index_0():
    merges = ["a b", "ab \u0120", "\u0120\u0120 \u0120", " a b", "ab", "a \u2581", "a "]
    v = load_gguf(_gguf(_tokenizer(merges=merges)))
    assert v.merges == ((b"a", b"b"), (b"ab", b" "), (b"  ", b" "))
    # " a b" splits into " a" | "b" and " a" is not byte-level text; "ab" has
    # no space; "\u2581" is outside the alphabet; "a " has an empty side.
    assert v.metadata["unusable_merges"] == (3, 4, 5, 6)


def test_spm_merges_stay_utf8_pairs():
    kvs = _tokenizer(model="llama", tokens=["<unk>", "<s>", "</s>", "\u2581", "a", "\u2581a"],
                     types=[2, 3, 3, 1, 1, 1], merges=["\u2581 a", "  a"])
    v = load_gguf(_gguf(kvs))
    assert v.merges == (("\u2581".encode(), b"a"), (b" ", b"a"))
    assert v.tokens[3] == "\u2581".encode()
    assert v.special_tokens == {"<unk>": 0, "<s>": 1, "</s>": 2}


@pytest.mark.parametrize("model, expected", [
    ("gpt2", dict(bos_id=11, eos_id=11, unk_id=None, add_bos=False, add_eos=False,
                  add_dummy_prefix=False)),
    ("llama", dict(bos_id=1, eos_id=2, unk_id=0, add_bos=True, add_eos=False,
                   add_dummy_prefix=True)),
    ("bert", dict(bos_id=101, eos_id=None, unk_id=100, sep_id=102, pad_id=0, mask_id=103,
                  add_bos=True, add_sep=True)),
    ("t5", dict(bos_id=None, eos_id=1, unk_id=2, pad_id=0, add_bos=False, add_eos=True)),
])
def test_missing_keys_get_llama_cpp_defaults(model, expected):
    tokens = [f"t{i}" for i in range(120)]
    v = load_gguf(_gguf(_tokenizer(model=model, tokens=tokens, types=[1] * 120,
                                   merges=[] if model == "gpt2" else None)))
    assert {k: getattr(v, k) for k in expected} == expected
    assert v.pre_tokenizer == "default"


def test_llama3_pre_turns_on_add_bos_and_ignore_merges():
    tokens = [f"t{i}" for i in range(20)]
    kvs = _tokenizer(tokens=tokens, types=[1] * 20, merges=[],
                     extra=[("tokenizer.ggml.pre", STR, "llama-bpe")])
    v = load_gguf(_gguf(kvs))
    assert v.add_bos and v.metadata["ignore_merges"] and v.pre_tokenizer == "llama-bpe"


def test_default_id_outside_a_small_vocabulary_is_dropped():
    v = load_gguf(_gguf(_tokenizer()))  # 6 tokens: gpt2's default bos/eos 11 do not exist
    assert v.bos_id is None and v.eos_id is None


def test_id_keys_accept_any_integer_type_and_ignore_out_of_range():
    extra = [("tokenizer.ggml.bos_token_id", GGUFType.UINT8, 0),
             ("tokenizer.ggml.eos_token_id", GGUFType.INT64, 5),
             ("tokenizer.ggml.padding_token_id", I32, -1),
             ("tokenizer.ggml.separator_token_id", GGUFType.UINT16, 1),
             ("tokenizer.ggml.eot_token_id", U32, 5),
             ("tokenizer.ggml.fim_pre_token_id", U32, 99)]
    v = load_gguf(_gguf(_tokenizer(extra=extra)))
    assert (v.bos_id, v.eos_id, v.pad_id, v.sep_id) == (0, 5, None, 1)
    assert v.metadata["tokenizer.ggml.eot_token_id"] == 5
    assert "tokenizer.ggml.fim_pre_token_id" not in v.metadata
    assert len(v.metadata["warnings"]) == 2


def test_add_bos_without_a_bos_token_is_rejected():
    kvs = _tokenizer(extra=[("tokenizer.ggml.add_bos_token", BOOL, 1)])
    with pytest.raises(VocabularyFileError, match="add_bos is set"):
        load_gguf(_gguf(kvs))


def test_charsmap_from_i8_array_becomes_bytes():
    kvs = _tokenizer(model="t5", tokens=["<pad>", "</s>", "<unk>", "a"], types=[3, 3, 2, 1],
                     merges=None, extra=[("tokenizer.ggml.precompiled_charsmap", ARR,
                                          (GGUFType.INT8, [4, 0, 0, 0, 0, 0, 0, 0, -1, 127]))])
    v = load_gguf(_gguf(kvs))
    assert v.precompiled_charsmap == b"\x04\x00\x00\x00\x00\x00\x00\x00\xff\x7f"


def test_t5_piece_spelled_twice_builds_and_keeps_its_last_id():
    # The Unigram trie builder once read past a key that ended twice at one
    # node (SIGSEGV); llama.cpp's trie overwrites on insert, so the last id wins.
    from fasttok.core import Encoding

    kvs = _tokenizer(model="t5", tokens=["<pad>", "</s>", "<unk>", "\u2581a", "a", "b", "\u2581a"],
                     types=[3, 3, 2, 1, 1, 1, 1], merges=None,
                     extra=[("tokenizer.ggml.scores", ARR,
                             (GGUFType.FLOAT32, [0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -4.0])),
                            ("tokenizer.ggml.unknown_token_id", U32, 2)])
    enc = Encoding.from_vocabulary(load_gguf(_gguf(kvs)))
    assert enc.encode_ordinary("a ab") == [4, 6, 5]


def test_unsupported_model_lists_the_supported_ones():
    with pytest.raises(VocabularyFileError, match="gpt2, llama, t5, bert") as err:
        load_gguf(_gguf(_tokenizer(model="rwkv")))
    assert err.value.field == "tokenizer.ggml.model" and err.value.offset == 24


def test_wrong_key_types_are_named():
    kvs = _tokenizer(extra=[("tokenizer.ggml.bos_token_id", STR, "1")])
    with pytest.raises(VocabularyFileError, match="expected an integer") as err:
        load_gguf(_gguf(kvs))
    assert err.value.field == "tokenizer.ggml.bos_token_id"
    kvs = [("tokenizer.ggml.model", STR, "gpt2"), ("tokenizer.ggml.tokens", ARR, (U32, [1]))]
    with pytest.raises(VocabularyFileError, match="array of strings"):
        load_gguf(_gguf(kvs))


def test_gpt2_without_merges_is_rejected():
    with pytest.raises(VocabularyFileError, match="merges"):
        load_gguf(_gguf(_tokenizer(merges=None)))


# ---------------------------------------------------------------------------
# Hostile input

def _error(data: bytes) -> VocabularyFileError:
    with pytest.raises(VocabularyFileError) as err:
        read_gguf_metadata(data)
    return err.value


def test_bad_magic():
    err = _error(b"GGML" + ALL_TYPES[4:])
    assert err.offset == 0 and "bad magic" in str(err)


@pytest.mark.parametrize("version, message", [
    (1, "version 1 is not supported"), (4, "unknown GGUF version 4"),
    (0x03000000, "big-endian GGUF not supported")])
def test_unsupported_versions(version, message):
    err = _error(_gguf(ALL_TYPES_KVS, version=version))
    assert message in str(err) and err.offset == 4


def test_every_truncation_raises_vocabulary_file_error(tmp_path):
    cases = 0
    for cut in range(len(ALL_TYPES)):
        with pytest.raises(VocabularyFileError):
            read_gguf_metadata(ALL_TYPES[:cut])
        with pytest.raises(VocabularyFileError):
            load_gguf(ALL_TYPES[:cut])
        cases += 1
    # The same through real files, on a sample of cut points.
    for cut in range(0, len(ALL_TYPES), 37):
        path = tmp_path / f"cut{cut}.gguf"
        path.write_bytes(ALL_TYPES[:cut])
        with pytest.raises(VocabularyFileError) as err:
            load_gguf(path)
        assert str(path) in str(err.value)
        cases += 1
    assert cases > 400


def test_random_byte_flips_raise_only_vocabulary_file_error():
    rng = random.Random(20240611)
    cases, outcomes = 3000, {}
    for case in range(cases):
        data = bytearray(ALL_TYPES)
        for _ in range(rng.randint(1, 4)):
            value = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
            data[rng.randrange(len(data))] = value
        _only_fasttok_errors(bytes(data), f"flip case {case}", outcomes)
    assert _took_both_paths(outcomes), outcomes  # flips land in values as well as in structure


def test_random_length_fields_raise_only_vocabulary_file_error():
    # Byte flips rarely make a plausible-but-wrong length; write whole u64s
    # (huge, boundary, or about the file size) at random offsets instead.
    rng = random.Random(99)
    interesting = (0, 1, 7, 8, 255, 2**31, 2**32 - 1, 2**32, 2**40, 2**62, 2**63, 2**64 - 1,
                   len(ALL_TYPES), len(ALL_TYPES) // 8)
    cases, outcomes = 2000, {}
    for case in range(cases):
        data = bytearray(ALL_TYPES)
        value = rng.choice(interesting + (rng.randrange(2**64),))
        struct.pack_into("<Q", data, rng.randrange(len(data) - 8), value)
        _only_fasttok_errors(bytes(data), f"u64 case {case} value {value}", outcomes)
    assert _took_both_paths(outcomes), outcomes


def test_absurd_array_length_fails_before_allocating():
    kvs = [("a", ARR, (0, []))]
    data = bytearray(_gguf(kvs))
    struct.pack_into("<Q", data, len(data) - 8, 2**63)
    err = _error(bytes(data))
    assert "array of 9223372036854775808 u8" in str(err) and err.field == "a"
    assert err.offset == 24 + 8 + 1 + 4


def test_absurd_string_length_fails_before_reading():
    data = bytearray(_gguf([("s", STR, "")]))
    struct.pack_into("<Q", data, len(data) - 8, 2**40)
    err = _error(bytes(data))
    assert "truncated" in str(err) and err.field == "s"


def test_absurd_string_array_count_fails_before_looping():
    data = bytearray(_gguf([("tokenizer.ggml.tokens", ARR, (STR, []))]))
    struct.pack_into("<Q", data, len(data) - 8, 1000)
    err = _error(bytes(data))
    assert "needs at least 8000 bytes" in str(err) and err.field == "tokenizer.ggml.tokens"
    struct.pack_into("<Q", data, len(data) - 8, 2**62)
    assert "longer than the 16777216 elements allowed" in str(_error(bytes(data)))


def test_huge_sparse_file_cannot_make_the_reader_read_gigabytes(tmp_path, files_opened):
    # In a 10 GB file an 8 GiB string "fits"; the 256 MiB cap on the KV block
    # stops it before anything past the first chunk is read, as does a
    # 2**24 + 1 element array.
    path = tmp_path / "hostile.gguf"
    for kvs, offset, message in (
            ([("s", STR, "")], 8, "past the 256 MiB limit"),
            ([("a", ARR, (STR, []))], 8, "longer than the 16777216"),
    ):
        data = bytearray(_gguf(kvs))
        struct.pack_into("<Q", data, len(data) - offset, 2**33 if kvs[0][1] == STR else 2**24 + 1)
        with open(path, "wb") as f:
            f.write(data)
            f.truncate(10 * 2**30)
        with pytest.raises(VocabularyFileError, match=message):
            read_gguf_metadata(path)
        assert files_opened[-1].bytes_read == READ_CHUNK


def test_absurd_kv_and_tensor_counts():
    data = bytearray(ALL_TYPES)
    struct.pack_into("<Q", data, 16, 2**64 - 1)
    assert "key/value pairs" in str(_error(bytes(data)))
    data = bytearray(ALL_TYPES)
    struct.pack_into("<Q", data, 8, 2**40)
    assert "tensors" in str(_error(bytes(data)))


def test_key_longer_than_65535_is_rejected():
    err = _error(_gguf([("k" * 65536, U32, 1)]))
    assert "65535" in str(err) and err.offset == 24


def test_unknown_value_type_names_key_and_offset():
    data = _gguf([("ok", U32, 1)]) + _s("bad") + struct.pack("<I", 13) + b"\0" * 8
    data = bytearray(data)
    struct.pack_into("<Q", data, 16, 2)
    err = _error(bytes(data))
    assert "unknown value type 13" in str(err) and err.field == "bad"
    assert err.offset == 24 + 8 + 2 + 4 + 4 + 8 + 3


def test_unknown_array_element_type():
    data = bytearray(_gguf([("a", ARR, (0, []))]))
    struct.pack_into("<I", data, len(data) - 12, 99)
    err = _error(bytes(data))
    assert "unknown array element type 99" in str(err) and err.field == "a"


def test_non_utf8_string_names_the_exact_byte():
    data = _gguf([("s", STR, b"ok\xff")])
    err = _error(data)
    assert "not valid UTF-8" in str(err) and err.field == "s"
    assert err.offset == len(data) - 1


def test_non_utf8_token_in_array_names_its_index():
    data = _gguf([("tokenizer.ggml.tokens", ARR, (STR, ["a", b"b\xc3"]))])
    err = _error(data)
    assert "string 1 of the array" in str(err) and err.offset == len(data) - 1


def test_non_utf8_merge_is_rejected_by_load():
    # load_gguf reads merges undecoded and validates them itself.
    data = _gguf(_tokenizer(merges=["a b", b"a \xff"]))
    with pytest.raises(VocabularyFileError, match="merge 1 is not valid UTF-8") as err:
        load_gguf(data)
    assert err.value.offset == len(data) - 1


def test_non_utf8_key_is_rejected():
    err = _error(_gguf([(b"k\xff", U32, 1)]))
    assert "key of entry 0" in str(err) and err.offset == 24 + 8 + 1


def test_bool_must_be_0_or_1():
    assert "bool value is 2" in str(_error(_gguf([("b", BOOL, 2)])))
    assert "bool element 1 is 7" in str(_error(_gguf([("b", ARR, (BOOL, [1, 7]))])))


def test_duplicate_key_points_at_the_second_entry():
    data = _gguf([("k", U32, 1), ("k", U32, 2)])
    err = _error(data)
    assert "duplicate key (first at byte 24)" in str(err)
    assert err.field == "k" and err.offset == 24 + 8 + 1 + 4 + 4


def test_arrays_nested_too_deep_are_rejected():
    value = (0, [1])
    for _ in range(7):
        value = (ARR, [value])
    assert read_gguf_metadata(_gguf([("ok", ARR, value)])).kv["ok"]  # 8 levels
    err = _error(_gguf([("deep", ARR, (ARR, [value]))]))  # 9 levels
    assert "nested more than 8 deep" in str(err) and err.field == "deep"


def test_empty_file_and_short_header():
    assert "too short" in str(_error(b""))
    assert "truncated" in str(_error(b"GGUF\x03\x00\x00\x00"))


# ---------------------------------------------------------------------------
# Through fasttok.load: the checks made when the model is set up

def _byte_tokens() -> list:
    from fasttok.shared._bytemap import bytes_to_unicode
    return [bytes_to_unicode()[b] for b in range(256)]


def test_gpt2_token_repeating_a_non_utf8_byte_decodes_to_that_byte(tmp_path):
    import fasttok
    path = tmp_path / "repeat.gguf"
    tokens = _byte_tokens() + ["\u00ff"]  # byte 0xFF again
    path.write_bytes(_gguf(_tokenizer(tokens=tokens, types=[1] * 257, merges=[])))
    enc = fasttok.load(path)
    assert enc.vocabulary.metadata["repeated_tokens"] == {256: 0xFF}
    assert enc.decode_single_token_bytes(256) == b"\xff"
    assert enc.encode("\u00ff", disallowed_special=()) == [0xC3, 0xBF]


def test_unknown_gguf_pre_tokenizer_is_a_file_error_at_the_pre_key(tmp_path):
    import fasttok
    path = tmp_path / "pre.gguf"
    path.write_bytes(_gguf(_tokenizer(extra=[("tokenizer.ggml.pre", STR, "martian")])))
    with pytest.raises(VocabularyFileError, match="unknown GGUF pre-tokenizer 'martian'") as err:
        fasttok.load(path)
    assert err.value.field == "tokenizer.ggml.pre"
    assert err.value.offset == read_gguf_metadata(path).offsets["tokenizer.ggml.pre"]


def test_t5_charsmap_unit_pointing_outside_the_trie_is_rejected_at_its_byte():
    blob = struct.pack("<3I", 8, 0, 256 << 10)  # unit 1: offset 256, outside one block
    data = _gguf(_tokenizer(model="t5", tokens=["<pad>", "</s>", "<unk>", "a"], types=[3, 3, 2, 1],
                            merges=None, extra=[("tokenizer.ggml.precompiled_charsmap", ARR,
                                                 (GGUFType.UINT8, list(blob)))]))
    with pytest.raises(VocabularyFileError, match="trie unit 1 points outside") as err:
        load_gguf(data)
    assert err.value.field == "tokenizer.ggml.precompiled_charsmap"
    assert err.value.offset == data.index(blob) + 8


def test_gpt2_token_whose_llama_decoding_explodes_is_rejected():
    # llama.cpp decodes each of the 17 characters outside the byte-level
    # alphabet to a copy of the whole token
    tokens = ["a", "\u2581" * 16, "\u2581" * 17]
    data = _gguf(_tokenizer(tokens=tokens, types=[1, 1, 1], merges=[]))
    with pytest.raises(VocabularyFileError, match="token 2 has 17 characters outside") as err:
        load_gguf(data)
    assert err.value.field == "tokenizer.ggml.tokens"
    assert data[err.value.offset:].startswith(struct.pack("<Q", 51) + "\u2581".encode() * 17)
