"""BPE-dropout of byte-level BPE (tiktoken encodings, GGUF ``gpt2``) against
Hugging Face tokenizers 0.23.3, whose BPE ``dropout`` is the reference.

A merge popped from the (priority, position) queue is skipped with
probability ``alpha`` and waits until the next merge is made, when it goes
back to the queue. ``alpha=0`` must give ``encode``'s ids exactly; in
between, the distribution of segmentations over many seeds is compared with
tokenizers' own draws by total variation distance, as the SentencePiece
sampling tests do (0.05 with 20,000 draws on each side).
"""

from __future__ import annotations

from collections import Counter

import pytest

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, Mismatches, describe_mismatch
from conftest import read_text

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

GPT2_GGUF = DATA / "vocab" / "gguf" / "ggml-vocab-gpt-2.gguf"
DRAWS = 20_000
TV_BOUND = 0.05
WORDS = ("unbelievable", " tokenization", " everything", "Hello")


def corpus_lines(name: str, count: int) -> list:
    return read_text(DATA / "corpus" / f"{name}.txt").split("\n")[:count]


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_dropout_at_alpha_0_is_the_encoding_of_a_tiktoken_vocabulary(name):
    enc = fasttok.get_encoding(name)
    bad = Mismatches(f"{name} sample(alpha=0)")
    for k, text in enumerate(corpus_lines("multi", 500) + corpus_lines("code", 300)
                             + ["a<|endoftext|>b"]):
        ours = enc.encode(text, allowed_special="all", sample=True, alpha=0.0, seed=k)
        plain = enc.encode(text, allowed_special="all")
        bad.check(None if ours == plain else describe_mismatch(ours, plain, text), f"line {k}")
    bad.assert_none()


@pytest.mark.parametrize("file", ["ggml-vocab-gpt-2.gguf", "ggml-vocab-qwen2.gguf",
                                  "ggml-vocab-falcon.gguf"])
def test_dropout_at_alpha_0_is_the_encoding_of_a_gguf_gpt2_vocabulary(file):
    enc = fasttok.load(DATA / "vocab" / "gguf" / file)
    bad = Mismatches(f"{file} sample(alpha=0)")
    for k, text in enumerate(corpus_lines("multi", 400) + corpus_lines("zh", 100)):
        ours = enc.encode(text, sample=True, alpha=0.0, seed=k)
        plain = enc.encode(text)
        bad.check(None if ours == plain else describe_mismatch(ours, plain, text), f"line {k}")
    bad.assert_none()


def test_dropout_at_alpha_1_leaves_pieces_that_are_no_token_as_bytes():
    enc = fasttok.get_encoding("r50k_base")
    ids = enc.encode(" unbelievablx", sample=True, alpha=1.0, seed=3)
    assert ids == [enc.encode_single_token(bytes([b])) for b in b" unbelievablx"]


def test_dropout_keeps_a_piece_that_is_a_token_whole_in_tiktoken_vocabularies():
    # tiktoken's whole-piece lookup comes first, as tokenizers' ignore_merges
    enc = fasttok.get_encoding("cl100k_base")
    assert enc.encode(" hello", sample=True, alpha=1.0, seed=3) == enc.encode(" hello")


def test_dropout_draws_decode_to_the_text():
    enc = fasttok.get_encoding("cl100k_base")
    text = "Tokenization of unbelievable things, 你好世界!"
    draws = {tuple(enc.encode(text, sample=True, alpha=0.4, seed=k)) for k in range(50)}
    assert len(draws) > 10
    assert {enc.decode(list(d)) for d in draws} == {text}


def test_dropout_is_repeatable_with_a_seed():
    enc = fasttok.load(GPT2_GGUF)
    assert len({tuple(enc.encode(" unbelievable", sample=True, alpha=0.3, seed=9))
                for _ in range(5)}) == 1


def test_dropout_honours_allowed_special_tokens():
    enc = fasttok.get_encoding("cl100k_base")
    ids = enc.encode("ab<|endoftext|>cd", allowed_special="all", sample=True, alpha=0.5, seed=1)
    assert enc.eot_token in ids
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode("ab<|endoftext|>", sample=True, alpha=0.5)


def _hf_gpt2_model(alpha: float):
    tokenizers = pytest.importorskip("tokenizers")
    from fasttok.loaders.gguf import read_gguf_metadata

    meta = read_gguf_metadata(str(GPT2_GGUF)).kv
    vocab = {text: i for i, text in enumerate(meta["tokenizer.ggml.tokens"])}
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    return tokenizers.models.BPE(vocab, merges, dropout=alpha)


def _byte_level(text: str) -> str:
    from fasttok.shared._bytemap import encode_byte_level

    return encode_byte_level(text.encode("utf-8"))


@pytest.mark.parametrize("alpha", [0.1, 0.4])
def test_dropout_draws_segmentations_as_tokenizers_does(alpha):
    enc = fasttok.load(GPT2_GGUF)
    model = _hf_gpt2_model(alpha)
    for word in WORDS:
        ours = Counter(tuple(enc.encode(word, sample=True, alpha=alpha, seed=k))
                       for k in range(DRAWS))
        chars = _byte_level(word)
        theirs = Counter(tuple(t.id for t in model.tokenize(chars)) for _ in range(DRAWS))
        tv = sum(abs(ours[s] - theirs[s]) for s in ours.keys() | theirs.keys()) / (2 * DRAWS)
        assert tv < TV_BOUND, (word, alpha, tv, ours.most_common(3), theirs.most_common(3))


def test_wordpiece_refuses_to_sample_and_says_why():
    enc = fasttok.load(DATA / "vocab" / "gguf" / "ggml-vocab-bert-bge.gguf")
    with pytest.raises(fasttok.FasttokError, match="cannot sample"):
        enc.encode("hello", sample=True)


def test_dropout_of_a_vocabulary_with_spread_out_ranks_gives_its_ids():
    base = fasttok.get_encoding("r50k_base")
    spread = fasttok.Encoding("spread", pat_str=base._pat_str,
                              mergeable_ranks={t: 7 * r for t, r in base._mergeable_ranks.items()},
                              special_tokens={})
    for k, text in enumerate(corpus_lines("multi", 200)):
        expected = [7 * i for i in base.encode_ordinary(text)]
        assert spread.encode(text, sample=True, alpha=0.0, seed=k) == expected
        assert spread.decode(spread.encode(text, sample=True, alpha=0.5, seed=k)) == text
