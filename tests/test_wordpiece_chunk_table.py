"""WordPiece's whitespace-chunk table gives exactly what the walk gives without it.

A walk of ids alone keeps each chunk's ids (the code units between two ASCII spaces, tabs, line
feeds or carriage returns) in the thread's chunk table (``_wordpiece._run_chunks``): an
``ft_piece_cache.h`` table of 4 times the pre-token cache's entries, keyed by the model's and
rules' identity, the key's width and the chunk's code units at the narrowest width holding them.
These tests hold it to ``tokenizers`` with the tables on, off and at their smallest, check that
keys of other widths, other rules and separators that do not end words never share an answer,
and bound the table by counts.
"""

from __future__ import annotations

import functools

import pytest

import fasttok
from conftest import DATA, missing_data_reason, read_text
from fasttok.models._wordpiece import (ALONE, APPEND, SPACE, CodePointRules, WordPieceModel,
                                       chunk_table_info)
from fasttok.shared import _piece_cache

tokenizers = pytest.importorskip("tokenizers")

MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"
START = b"\xc0"
LINES = 1500  # of each corpus file, walked as one text


@pytest.fixture
def cache_size():
    previous = _piece_cache.entries()
    yield _piece_cache.set_entries
    _piece_cache.set_entries(previous)


@functools.lru_cache(maxsize=None)
def _minilm():
    if not MINILM.is_file():
        pytest.skip(missing_data_reason(MINILM))
    return fasttok.load(MINILM)


@functools.lru_cache(maxsize=None)
def _reference():
    tok = tokenizers.Tokenizer.from_file(str(MINILM))
    tok.no_truncation()
    tok.no_padding()
    return tok


def _rules(*, tab_is_space=True, lower=False):
    def rule(cps):
        return [(SPACE, cp) if cp == 32 or (cp in (9, 10, 13) and tab_is_space) else
                (ALONE, cp) if cp == ord(",") else
                (APPEND, ord(chr(cp).lower()) if lower and chr(cp).lower().isascii() else cp)
                for cp in cps]
    return CodePointRules(rule)


@pytest.mark.parametrize("file", ["en", "code", "multi", "zh"])
@pytest.mark.parametrize("entries", [16384, 0, 1])
def test_corpus_text_walked_twice_is_tokenizers(file, entries, cache_size):
    # the second walk meets every chunk the first one kept
    path = DATA / "corpus" / f"{file}.txt"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    text = "".join(read_text(path).splitlines(True)[:LINES])
    expected = _reference().encode(text, add_special_tokens=False).ids
    cache_size(entries)
    for walk in range(2):
        assert _minilm().encode(text, allowed_special="all") == expected, f"walk {walk + 1}"


def test_a_chunk_gives_its_ids_in_strs_of_every_kind(cache_size):
    # "ab,c" is one key whether its str is of kind 1, 2 or 4 (narrowed)
    cache_size(16384)
    model = WordPieceModel([b"[UNK]", START + b"ab", START + b",", START + b"c"], 0,
                           word_start=START)
    rules = _rules()
    for text in ("ab,c x", "ab,c \u4e16", "ab,c \U0001f600", "ab,c"):
        assert model.encode_with(text, rules)[:3] == [1, 2, 3], text


def test_keys_of_other_widths_never_match(cache_size):
    # U+6261 is the bytes 61 62 ("ab") in a str of kind 2: its own owner keeps them apart
    cache_size(16384)
    model = WordPieceModel([b"[UNK]", START + b"ab", START + "\u6261".encode()], 0,
                           word_start=START)
    rules = _rules()
    for _ in range(2):
        assert model.encode_with("ab \u6261", rules) == [1, 2]
        assert model.encode_with("\u6261 ab", rules) == [2, 1]


def test_two_rules_of_one_model_never_share_a_chunk(cache_size):
    cache_size(16384)
    model = WordPieceModel([b"[UNK]", START + b"ab", START + b"AB"], 0, word_start=START)
    plain, lower = _rules(), _rules(lower=True)
    for _ in range(2):
        assert model.encode_with("AB ab", plain) == [2, 1]
        assert model.encode_with("AB ab", lower) == [1, 1]


def test_a_separator_the_rules_keep_in_words_cuts_no_chunk(cache_size):
    # a tab inside a word: the walk goes without the chunk table
    cache_size(16384)
    model = WordPieceModel([b"[UNK]", START + b"a\tb", START + b"a", START + b"b"], 0,
                           word_start=START)
    rules = _rules(tab_is_space=False)
    for _ in range(2):
        assert model.encode_with("a\tb a", rules) == [1, 2]


def test_ids_list_with_added_tokens_between_chunks(cache_size):
    # added tokens cut the text into stretches, each walked by chunks
    cache_size(16384)
    enc = _minilm()
    text = "Hello [SEP] hello,world [CLS]again " * 3
    expected = _reference().encode(text, add_special_tokens=False).ids
    for _ in range(2):
        assert enc.encode(text, allowed_special="all") == expected


def test_the_table_has_four_times_the_pretoken_entries(cache_size):
    cache_size(1024)
    WordPieceModel([b"[UNK]", START + b"a"], 0, word_start=START).encode_with("a a", _rules())
    info = chunk_table_info()
    assert info["entries"] == 4096
    assert info["bytes"] == 64 * 4096
    assert 1 <= info["used"] <= 2


@pytest.mark.parametrize("entries", [1, 16])
def test_the_table_never_holds_more_than_its_entries(cache_size, entries):
    cache_size(entries)
    model = WordPieceModel([b"[UNK]", START + b"w"] + [str(d).encode() for d in range(10)], 0,
                           word_start=START)
    words = " ".join(f"w{i}" for i in range(5000))
    assert model.encode_with(words, _rules()) == model.encode_with(words, _rules())
    info = chunk_table_info()
    assert info["entries"] == 4 * entries
    assert info["used"] <= 4 * entries


def test_off_the_walk_keeps_no_chunk(cache_size):
    cache_size(1024)
    model = WordPieceModel([b"[UNK]", START + b"a"], 0, word_start=START)
    model.encode_with("a a", _rules())
    used = chunk_table_info()["used"]
    cache_size(0)
    model.encode_with(" ".join(f"a{i}" for i in range(100)), _rules())
    assert chunk_table_info()["used"] == used


def test_offsets_walks_keep_no_chunk(cache_size):
    cache_size(1024)
    model = WordPieceModel([b"[UNK]", START + b"a"], 0, word_start=START)
    model.encode_with("a", _rules())
    used = chunk_table_info()["used"]
    model.encode_with(" ".join(f"a{i}" for i in range(100)), _rules(), offsets=True)
    assert chunk_table_info()["used"] == used
