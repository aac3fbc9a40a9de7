"""GGUF ``gemma4`` vocabularies, tokenized as llama.cpp tokenizes them.

* ``vocab/gguf/ggml-vocab-gemma-4.gguf.inp/.out``: llama.cpp's own test pair,
  and ``goldens/gguf/gemma-4.jsonl`` where llama-cpp-python made it (both by
  ``tools/fetch_test_data.py``; the shared data folder lacks them, so the
  tests are skipped there).
* Synthetic files (``fuzzing.gguf_serialize``) pin what ``gemma4`` does
  unlike the byte-level ``gpt2`` BPE it shares llama.cpp's merge loop with:
  ``▁`` for a space, merges from characters, a newline run that is a token
  taken whole, ``<0xXX>`` byte fallback, a pair listed twice keeping its
  first rank, BOS always added.
"""

from __future__ import annotations

import pickle

import pytest

import fasttok
from conftest import DATA, Mismatches, describe_mismatch, missing_data_reason
from fasttok.errors import VocabularyFileError
from fuzzing import ARR, BOOL, I32, STR, U32, gguf_serialize
from test_gguf_models import compare

GEMMA4 = DATA / "vocab" / "gguf" / "ggml-vocab-gemma-4.gguf"
SEP = "\n__ggml_vocab_test__\n"

NORMAL, CONTROL, BYTE = 1, 3, 6
BYTES = [f"<0x{b:02X}>" for b in range(256)]


def _gemma4_file(tmp_path, tokens: list, merges: list, *, add_bos: bool = True):
    # "<bos>" is id 0 (CONTROL), the byte tokens follow, then ``tokens``
    texts = ["<bos>"] + BYTES + tokens
    types = [CONTROL] + [BYTE] * 256 + [NORMAL] * len(tokens)
    kvs = [["general.architecture", STR, "gemma4"],
           ["tokenizer.ggml.model", STR, "gemma4"],
           ["tokenizer.ggml.tokens", ARR, (STR, texts)],
           ["tokenizer.ggml.token_type", ARR, (I32, types)],
           ["tokenizer.ggml.bos_token_id", U32, 0],
           ["tokenizer.ggml.add_bos_token", BOOL, int(add_bos)]]
    if merges is not None:
        kvs.append(["tokenizer.ggml.merges", ARR, (STR, merges)])
    path = tmp_path / "gemma4.gguf"
    path.write_bytes(gguf_serialize([3, 0, kvs])[0])
    return path


def _id(token: str) -> int:
    return 257 + TOKENS.index(token)


TOKENS = ["▁", "h", "i", "hi", "▁hi", "\n", "\n\n", "\n\n\n", "é", "▁é"]
MERGES = ["h i", "▁ hi", "▁ é", "\n \n"]


@pytest.fixture
def gemma4(tmp_path):
    return fasttok.load(_gemma4_file(tmp_path, TOKENS, MERGES))


def test_a_space_is_u2581_and_merges_start_from_characters(gemma4):
    assert gemma4.encode(" hi hi", disallowed_special=()) == [_id("▁hi"), _id("▁hi")]
    assert gemma4.encode(" é", disallowed_special=()) == [_id("▁é")]


def test_a_newline_run_that_is_a_token_is_taken_whole(gemma4):
    # the merges alone would give "\n\n" + "\n"
    assert gemma4.encode("hi\n\n\nhi", disallowed_special=()) == [_id("hi"), _id("\n\n\n"), _id("hi")]
    assert gemma4.encode("\n\n\n\n", disallowed_special=()) == [_id("\n\n"), _id("\n\n")]


def test_a_character_without_a_token_falls_back_to_its_bytes(gemma4):
    assert gemma4.encode("hé€", disallowed_special=()) == [_id("h"), _id("é"), 1 + 0xE2, 1 + 0x82,
                                                           1 + 0xAC]


def test_bos_is_added_even_when_the_file_says_not_to(tmp_path):
    enc = fasttok.load(_gemma4_file(tmp_path, TOKENS, MERGES, add_bos=False))
    assert enc.encode("hi", disallowed_special=(), add_special_tokens=True) == [0, _id("hi")]


def test_decoding_turns_u2581_into_a_space_and_byte_tokens_into_bytes(gemma4):
    ids = gemma4.encode(" hi €\n\n", disallowed_special=())
    assert gemma4.decode(ids) == " hi €\n\n"


def test_encoding_pickles_and_rebuilds_the_gemma4_model(gemma4):
    assert pickle.loads(pickle.dumps(gemma4)).encode(" hi\n\n\n", disallowed_special=()) == \
        [_id("▁hi"), _id("\n\n\n")]


def test_a_pair_listed_twice_keeps_its_first_rank(tmp_path):
    # "h i" before "▁ h" at first, so " hi" is "▁" + "hi", not "▁h" + "i"
    tokens = ["▁", "h", "i", "hi", "▁h"]
    enc = fasttok.load(_gemma4_file(tmp_path, tokens, ["h i", "▁ h", "h i"]))
    assert enc.encode(" hi", disallowed_special=()) == [257, 257 + 3]


def test_a_gemma4_file_without_merges_is_refused(tmp_path):
    with pytest.raises(VocabularyFileError, match="gemma4 tokenizer without tokenizer.ggml.merges"):
        fasttok.load(_gemma4_file(tmp_path, TOKENS, None))


def test_a_merge_into_no_token_is_refused_naming_it_in_the_file(tmp_path):
    # merges 1 (no space: never applies) and 2 (listed before) are not the model's
    with pytest.raises(VocabularyFileError, match=r"tokenizer\.ggml\.merges\[3\]': the merged"):
        fasttok.load(_gemma4_file(tmp_path, TOKENS, ["h i", "hi", "h i", "i h"]))


@pytest.mark.skipif(not GEMMA4.exists(), reason=missing_data_reason(GEMMA4))
def test_inp_out_pair_matches_token_for_token():
    enc = fasttok.load(GEMMA4)
    texts = GEMMA4.with_name(GEMMA4.name + ".inp").read_text(encoding="utf-8").split(SEP)[:-1]
    lines = GEMMA4.with_name(GEMMA4.name + ".out").read_text(encoding="utf-8").split("\n")
    assert len(texts) >= 45
    bad = Mismatches("gemma-4.inp/.out")
    for text, line in zip(texts, lines):
        ids = [int(x) for x in line.split()]
        ours = enc.encode(text, disallowed_special=())
        bad.check(None if ours == ids else describe_mismatch(ours, ids, text), label=repr(text[:30]))
    bad.assert_none()


GOLDENS = [
    ("tokenize(add_special=False, parse_special=False)", "ids",
     lambda enc, text: enc.encode(text, disallowed_special=())),
    ("tokenize(add_special=True, parse_special=False)", "ids_add_special",
     lambda enc, text: enc.encode(text, disallowed_special=(), add_special_tokens=True)),
    ("tokenize(add_special=False, parse_special=True)", "ids_parse_special",
     lambda enc, text: enc.encode(text, allowed_special="all")),
]


@pytest.mark.skipif(not GEMMA4.exists(), reason=missing_data_reason(GEMMA4))
@pytest.mark.parametrize("what,key,run", GOLDENS, ids=[g[1] for g in GOLDENS])
def test_llama_cpp_goldens_match(what, key, run):
    compare("gemma-4", what, key, run)
