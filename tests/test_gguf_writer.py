"""Vocabulary-only GGUF files written by fasttok read back as the vocabulary that was written.

A trained byte-level vocabulary is written, read back by fasttok's GGUF
loader (llama.cpp's semantics, with the ``tokenizer.ggml.pre`` the writer
chose) and must hold the same tokens, merges and specials and encode every
shared test line and a slice of each corpus file to the same ids as the
trained encoding. Files that cannot be written faithfully raise.
"""

from __future__ import annotations

import functools

import pytest

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, read_jsonl, read_text
from fasttok.errors import FasttokError
from fasttok.loaders.gguf_writer import PRE_FOR_PATTERN, gguf_bytes, write_gguf
from fasttok.pre_tokenizers.tiktoken_patterns import CL100K, GPT2, O200K
from fasttok.vocab import Vocabulary

SPECIALS = ("<|endoftext|>", "<|pad|>")


def _texts() -> list:
    if DATA_MISSING:
        pytest.skip(MISSING_DATA_REASON)
    texts = [row["text"] for row in read_jsonl(DATA / "testcases" / "lines.jsonl")]
    for path in sorted((DATA / "corpus").glob("*.txt")):
        texts += read_text(path).split("\n")[:300]
    return texts


@functools.lru_cache(maxsize=None)
def _trained(pattern: str) -> fasttok.Encoding:
    return fasttok.train(_texts(), vocab_size=1200, pattern=pattern, special_tokens=SPECIALS,
                         num_threads=1)


def _round_trip(enc: fasttok.Encoding, tmp_path, **options) -> fasttok.Encoding:
    path = tmp_path / "trained.gguf"
    write_gguf(str(path), enc.vocabulary, **options)
    return fasttok.load(str(path))


@pytest.mark.parametrize("pattern", [CL100K, GPT2], ids=["cl100k", "gpt2"])
def test_a_written_vocabulary_reads_back_with_the_same_tokens_merges_and_specials(
        pattern, tmp_path):
    enc = _trained(pattern)
    back = _round_trip(enc, tmp_path)
    assert back.vocabulary.mergeable_ranks == enc.vocabulary.mergeable_ranks
    assert back.vocabulary.merges == enc.vocabulary.merges
    assert dict(back.vocabulary.special_tokens) == dict(enc.vocabulary.special_tokens)
    assert back.vocabulary.pre_tokenizer == PRE_FOR_PATTERN[pattern]


@pytest.mark.parametrize("pattern", [CL100K, GPT2], ids=["cl100k", "gpt2"])
def test_a_written_vocabulary_encodes_like_the_trained_one(pattern, tmp_path):
    enc = _trained(pattern)
    back = _round_trip(enc, tmp_path)
    texts = _texts()
    differ = [t for t in texts if back.encode_ordinary(t) != enc.encode_ordinary(t)]
    assert not differ, f"{len(differ)} of {len(texts)} differ; first: {differ[0]!r:.200}"


@pytest.mark.parametrize("pattern", [CL100K, GPT2], ids=["cl100k", "gpt2"])
def test_llama_cpp_loads_a_written_vocabulary_and_tokenizes_like_fasttok(pattern, tmp_path):
    # llama-cpp-python compiles llama.cpp, so it is not in the test extra;
    # where it is installed, its vocab_only load is the reference reader
    llama_cpp = pytest.importorskip("llama_cpp")
    enc = _trained(pattern)
    path = tmp_path / "trained.gguf"
    write_gguf(str(path), enc.vocabulary)
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    assert llm.n_vocab() == enc.n_vocab
    texts = _texts()
    differ = [t for t in texts
              if llm.tokenize(t.encode("utf-8", "surrogatepass"), add_bos=False, special=False)
              != enc.encode_ordinary(t)]
    assert not differ, f"{len(differ)} of {len(texts)} differ; first: {differ[0]!r:.200}"
    marked = "<|endoftext|>x<|pad|>"
    assert llm.tokenize(marked.encode(), add_bos=False, special=True) == \
        enc.encode(marked, allowed_special="all")


def test_nothing_is_added_to_a_text_unless_asked(tmp_path):
    back = _round_trip(_trained(CL100K), tmp_path)
    assert back.encode("hi", add_special_tokens=True) == back.encode_ordinary("hi")


def test_a_bos_token_can_be_named_and_added(tmp_path):
    enc = _trained(CL100K)
    back = _round_trip(enc, tmp_path, bos_token="<|endoftext|>", add_bos=True)
    bos = enc.vocabulary.special_tokens["<|endoftext|>"]
    assert back.encode("hi", add_special_tokens=True) == [bos] + enc.encode_ordinary("hi")


def test_an_eos_token_can_be_named(tmp_path):
    enc = _trained(CL100K)
    back = _round_trip(enc, tmp_path, eos_token="<|endoftext|>")
    assert back.vocabulary.eos_id == enc.vocabulary.special_tokens["<|endoftext|>"]


def test_an_id_no_token_holds_is_written_as_a_placeholder_text_cannot_produce(tmp_path):
    enc = _trained(CL100K)
    ranks = dict(enc.vocabulary.mergeable_ranks)
    gap = ranks.pop(max(ranks, key=ranks.get))
    sparse = Vocabulary.from_ranks("sparse", ranks, pat_str=CL100K,
                                   special_tokens={"<|end|>": gap + 1}
                                   ).replace(merges=enc.vocabulary.merges[:-1])
    back = _round_trip(fasttok.Encoding.from_vocabulary(sparse), tmp_path)
    assert gap not in back.vocabulary.mergeable_ranks.values()
    assert back.vocabulary.mergeable_ranks == ranks
    assert back.vocabulary.special_tokens["<|end|>"] == gap + 1


@pytest.mark.parametrize("pattern", [r"\w+|\s", O200K], ids=["own", "o200k"])
def test_a_pattern_no_gguf_pre_tokenizer_splits_like_is_refused(pattern):
    enc = fasttok.train(["ab ab"], vocab_size=257, pattern=pattern)
    with pytest.raises(FasttokError, match="cannot hold a pattern"):
        gguf_bytes(enc.vocabulary)


def test_a_named_pre_tokenizer_is_written_as_given(tmp_path):
    enc = fasttok.train(_texts()[:50], vocab_size=300, pattern=O200K)
    assert _round_trip(enc, tmp_path, pre="gpt-4o").vocabulary.pre_tokenizer == "gpt-4o"


def test_a_vocabulary_without_merges_is_refused():
    with pytest.raises(FasttokError, match="no merge list"):
        gguf_bytes(fasttok.get_encoding("r50k_base").vocabulary)


def test_a_role_token_must_be_a_special_token():
    with pytest.raises(FasttokError, match="not one of the vocabulary's special tokens"):
        gguf_bytes(_trained(CL100K).vocabulary, eos_token="<|nope|>")


def test_add_bos_without_a_bos_token_is_refused():
    with pytest.raises(FasttokError, match="add_bos needs a bos_token"):
        gguf_bytes(_trained(CL100K).vocabulary, add_bos=True)
