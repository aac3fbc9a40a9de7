"""The .tiktoken reader and the vocabulary record: real files load exactly,
malformed ones raise VocabularyFileError naming the file and the line."""

from __future__ import annotations

import base64
import random

import pytest

import fasttok
from conftest import DATA, load_ranks
from fasttok.errors import FasttokError, UnknownEncodingError, VocabularyError, VocabularyFileError
from fasttok.loaders.tiktoken_file import load_tiktoken, load_tiktoken_ranks
from fasttok.registry import ENCODINGS
from fasttok.vocab import Vocabulary

VOCAB = DATA / "vocab" / "tiktoken"
FILES = ["cl100k_base", "o200k_base", "r50k_base", "p50k_base"]


def _line(token: bytes, rank: int) -> bytes:
    return base64.b64encode(token) + b" %d\n" % rank


BYTES_FILE = b"".join(_line(bytes([b]), r) for r, b in enumerate(reversed(range(256))))


@pytest.mark.parametrize("name", FILES)
@pytest.mark.usefixtures("data_dir")  # skipped without the test data
def test_real_file_loads_exactly_as_tiktoken_reads_it(name):
    assert load_tiktoken_ranks(VOCAB / f"{name}.tiktoken") == load_ranks(f"{name}.tiktoken")


def test_p50k_rank_hole_is_kept_and_n_vocab_counts_it():
    enc = fasttok.get_encoding("p50k_base")
    assert enc.n_vocab == 50281 and enc.vocabulary.tokens[50256] is None


def test_single_byte_ranks_are_not_byte_values():
    ranks = load_tiktoken_ranks(BYTES_FILE)
    assert ranks[b"\xff"] == 0 and ranks[b"\x00"] == 255


def test_sha256_mismatch_names_the_file(tmp_path):
    path = tmp_path / "x.tiktoken"
    path.write_bytes(BYTES_FILE)
    with pytest.raises(VocabularyFileError, match=r"x\.tiktoken: sha256 is [0-9a-f]{64}, expected"):
        load_tiktoken_ranks(path, expected_sha256="0" * 64)


def test_missing_file_is_a_vocabulary_file_error(tmp_path):
    with pytest.raises(VocabularyFileError, match="cannot read the file"):
        load_tiktoken_ranks(tmp_path / "absent.tiktoken")


@pytest.mark.parametrize("text, message", [
    (b"IQ==\n", "line 1: expected 'base64-token rank', found 1 fields"),
    (b"IQ== 0 7\n", "line 1: expected 'base64-token rank', found 3 fields"),
    (b"IQ== x\n", "line 1: rank b'x' is not a non-negative integer"),
    (b"IQ== -1\n", "line 1: rank b'-1' is not a non-negative integer"),
    (b"IQ== 0\n!!!! 1\n", "line 2: invalid base64 token"),
    (b"IQ== 0\nI=Q= 1\n", "line 2: invalid base64 token"),
    (b"IQ== 0\nIQ== 1\n", "line 2: token b'!' already has rank 0"),
    (b"IQ== 0\nIg== 0\n", "line 2: rank 0 appears twice"),
    (b"IQ== 4294967295\n", "line 1: rank 4294967295 does not fit in 32 bits"),
    (b"", "no tokens"),
    (b"\n\n", "no tokens"),
])
def test_malformed_line_is_named(text, message):
    with pytest.raises(VocabularyFileError, match="<bytes>: " + message.replace("(", r"\(")):
        load_tiktoken_ranks(text)


def _ends_a_line(data: bytes, cut: int) -> bool:
    """Whether ``data[:cut]`` is whole lines, the last one with or without its newline."""
    return cut > 0 and (data[cut - 1:cut] == b"\n" or data[cut:cut + 1] == b"\n")


@pytest.mark.usefixtures("data_dir")  # skipped without the test data
def test_a_real_file_cut_at_a_line_end_loads_the_lines_before_the_cut():
    data = (VOCAB / "r50k_base.tiktoken").read_bytes()[:3000]
    for cut in range(len(data) + 1):
        if _ends_a_line(data, cut):
            ranks = load_tiktoken_ranks(data[:cut])
            assert sorted(ranks.values()) == list(range(data[:cut].rstrip(b"\n").count(b"\n") + 1))


@pytest.mark.usefixtures("data_dir")  # skipped without the test data
def test_a_real_file_cut_inside_a_line_or_to_nothing_is_refused():
    data = (VOCAB / "r50k_base.tiktoken").read_bytes()[:3000]
    for cut in range(len(data) + 1):
        if not _ends_a_line(data, cut):
            with pytest.raises(VocabularyFileError):
                load_tiktoken_ranks(data[:cut])


@pytest.mark.usefixtures("data_dir")  # skipped without the test data
def test_random_byte_garbling_loads_every_rank_or_raises_the_fasttok_error():
    raw = (VOCAB / "r50k_base.tiktoken").read_bytes()[:4000]
    data = raw[:raw.rfind(b"\n") + 1]  # whole lines: an ungarbled copy loads
    lines = data.count(b"\n")
    rng = random.Random(20261130)
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(2000):
        garbled = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            garbled[rng.randrange(len(garbled))] = rng.randrange(256)
        try:
            ranks = load_tiktoken_ranks(bytes(garbled))
        except VocabularyFileError:
            outcomes["refused"] += 1
        else:
            assert len(ranks) == lines  # a digit may change a rank, never drop a line
            outcomes["loaded"] += 1
    # a byte of a token's base64 may become another valid one; most damage is refused
    assert outcomes["loaded"] and outcomes["refused"], outcomes


def test_truncated_file_cannot_build_a_byte_level_encoding(tmp_path):
    path = tmp_path / "short.tiktoken"
    path.write_bytes(b"".join(BYTES_FILE.splitlines(keepends=True)[:40]))
    with pytest.raises(VocabularyFileError, match=r"short\.tiktoken: .*lacks single-byte tokens"):
        load_tiktoken(path, pat_str=ENCODINGS["gpt2"].pat_str)


def test_explicit_n_vocab_mismatch_is_rejected():
    with pytest.raises(VocabularyFileError, match="explicit_n_vocab is 300"):
        load_tiktoken(BYTES_FILE, pat_str=".", explicit_n_vocab=300)


def test_vocabulary_rejects_a_special_id_taken_by_an_ordinary_token():
    vocab = Vocabulary(name="v", model="byte_bpe", tokens=tuple(bytes([b]) for b in range(256)),
                       special_tokens={"<s>": 5})
    with pytest.raises(VocabularyError, match="also the ordinary token"):
        vocab.validate()


def test_vocabulary_rejects_duplicate_ranks():
    vocab = Vocabulary(name="v", model="byte_bpe", byte_level=False, tokens=(b"a", b"b"),
                       ranks=(3, 3))
    with pytest.raises(VocabularyError, match="rank 3 is given to ids 0 and 1"):
        vocab.validate()


def test_unknown_encoding_lists_the_known_ones():
    with pytest.raises(UnknownEncodingError, match="known: gpt2, r50k_base"):
        fasttok.get_encoding("nope")


def test_missing_rank_file_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setattr("fasttok.registry.vocab_search_path",
                        lambda: [str(tmp_path), str(tmp_path / "cache" / "fasttok")])
    with pytest.raises(FasttokError, match=r"plugin\.tiktoken was not found; looked in: .*FASTTOK_VOCAB_DIR"):
        fasttok.registry.find_vocab_file("plugin.tiktoken")


@pytest.mark.usefixtures("data_dir")  # skipped without the test data
def test_load_dispatches_a_tiktoken_file_by_suffix():
    enc = fasttok.load(VOCAB / "cl100k_base.tiktoken")
    assert enc.name == "cl100k_base" and enc.encode("hello world") == [15339, 1917]


def test_load_of_an_unknown_tiktoken_file_asks_for_pat_str(tmp_path):
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(BYTES_FILE)
    with pytest.raises(UnknownEncodingError, match="pass pat_str="):
        fasttok.load(path)
    assert fasttok.load(path, pat_str=r"\S+|\s+").encode("hi") == [255 - ord("h"), 255 - ord("i")]
