"""Subword regularization and n-best of SentencePiece ``.model`` files against sentencepiece 0.2.3.

* BPE-dropout (``encode(text, sample=True, alpha=...)`` on a BPE model) is
  sentencepiece's ``SampleEncode``: every merge popped from the score-ordered
  agenda is skipped with probability ``alpha``. ``alpha=0`` and ``alpha=1``
  are deterministic and compared id for id; in between, the distribution of
  segmentations over many seeds is compared with sentencepiece's own draws by
  total variation distance. The bound (0.05 with 20,000 draws on each side)
  sits far from the distances of the two classic mistakes, measured by
  building each into the compiled loop while this was written: re-queueing
  a skipped merge instead of dropping it (0.19-0.92 on these words) and
  drawing once per symbol whether it may merge at all (0.29-0.52), against
  0.002-0.022 for the implementation. The sentencepiece side is random (its
  generator is seeded once per thread), but by McDiarmid's inequality the
  chance that sampling noise alone lifts a distance of 0.022 over 0.05 is
  below 1e-6.
* n-best lists are sentencepiece's ``Lattice::NBest`` order, ties included:
  checked on a model whose scores were rounded to whole numbers, where most
  segmentations tie, and on texts long enough for the agenda to be shrunk.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import lru_cache

import pytest

import fasttok
from conftest import DATA, Mismatches, describe_mismatch, read_text, rewrite_pieces, missing_data_reason
from conftest import spm_model_path as model_path, spm_pair as pair
from fasttok.formats.sentencepiece import nbest_encode

spm = pytest.importorskip("sentencepiece")

SPM_DIR = DATA / "vocab" / "sentencepiece"
CORPUS = DATA / "corpus"
BPE_MODELS = ("botchan_en_bpe_1000", "botchan_bpe_8000_bytefallback")
UNIGRAM_MODELS = ("botchan_unigram_5000", "kyoto_ja_unigram_8000",
                  "botchan_unigram_2000_userdef_cf", "botchan_unigram_4000_bytefallback")
DRAWS = 20_000
TV_BOUND = 0.05

pytestmark = pytest.mark.skipif(not SPM_DIR.is_dir(), reason=missing_data_reason(SPM_DIR))


@lru_cache(maxsize=None)
def corpus_lines(name: str, count: int) -> list:
    return read_text(CORPUS / f"{name}.txt").split("\n")[:count]


@pytest.fixture(scope="module")
def variant_models(tmp_path_factory):
    """Models made for this file: BPE with UNUSED pieces, BPE trained with
    user-defined and control symbols, and Unigram with scores rounded to
    whole numbers (so that many segmentations tie)."""
    folder = tmp_path_factory.mktemp("spm_sampling")
    rnd = random.Random(7)
    unused = rewrite_pieces((SPM_DIR / "botchan_en_bpe_1000.model").read_bytes(),
                            lambda i, piece, score, kind:
                            (score, 5 if kind == 1 and len(piece) > 1 and rnd.random() < 0.3
                             else kind))
    tied = rewrite_pieces((SPM_DIR / "botchan_unigram_5000.model").read_bytes(),
                          lambda i, piece, score, kind: (float(round(score)), kind))
    paths = {"bpe_unused": folder / "bpe_unused.model",
             "unigram_tied": folder / "unigram_tied.model"}
    paths["bpe_unused"].write_bytes(unused)
    paths["unigram_tied"].write_bytes(tied)
    text = (SPM_DIR / "botchan.txt").read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
    lines = [t for t in text.split("\n") if t.strip()][:3000]
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_prefix=str(folder / "bpe_symbols"), vocab_size=600,
        minloglevel=2, num_threads=1, model_type="bpe", byte_fallback=True,
        user_defined_symbols=["<sep>", "[MASK]", "ab", "▁▁"], control_symbols=["<ctrl>"])
    paths["bpe_symbols"] = folder / "bpe_symbols.model"
    return {name: str(path) for name, path in paths.items()}


def total_variation(a: Counter, b: Counter) -> float:
    na, nb = sum(a.values()), sum(b.values())
    return sum(abs(a[k] / na - b[k] / nb) for k in set(a) | set(b)) / 2


# ---------------------------------------------------------------- BPE-dropout


@pytest.mark.parametrize("name", BPE_MODELS + ("bpe_unused", "bpe_symbols"))
def test_bpe_dropout_with_alpha_zero_is_encode(name, variant_models):
    enc, _ = pair(variant_models.get(name) or model_path(name))
    bad = Mismatches(f"{name} alpha=0")
    for k, text in enumerate(corpus_lines("multi", 3000) + corpus_lines("en", 2000)):
        ours, plain = enc.encode(text, sample=True, alpha=0.0, seed=k), enc.encode(text)
        bad.check(None if ours == plain else describe_mismatch(ours, plain, text), f"line {k}")
    bad.assert_none()


@pytest.mark.parametrize("name", BPE_MODELS + ("bpe_unused", "bpe_symbols"))
def test_bpe_dropout_with_alpha_one_merges_nothing_as_sentencepiece(name, variant_models):
    # Every merge skipped: characters, user-defined symbols whole, byte
    # fallback and unknown runs as in plain encode.
    enc, sp = pair(variant_models.get(name) or model_path(name))
    bad = Mismatches(f"{name} alpha=1")
    for k, text in enumerate(corpus_lines("multi", 3000) + ["a<sep>b [MASK]ab  c<ctrl>龍"]):
        ours = enc.encode(text, sample=True, alpha=1.0, seed=k)
        theirs = sp.encode(text, enable_sampling=True, alpha=1.0, nbest_size=-1)
        bad.check(None if ours == theirs else describe_mismatch(ours, theirs, text), f"line {k}")
    bad.assert_none()


@pytest.mark.parametrize(("name", "text", "alpha"), [
    ("botchan_en_bpe_1000", "hello", 0.1),
    ("botchan_en_bpe_1000", "hello", 0.3),
    ("botchan_en_bpe_1000", "things", 0.5),
    ("botchan_bpe_8000_bytefallback", "Mr. 龍", 0.2),
    ("bpe_unused", "that", 0.25),
    ("bpe_symbols", "the<sep>man", 0.3),
])
def test_bpe_dropout_draws_segmentations_as_often_as_sentencepiece(name, text, alpha,
                                                                   variant_models):
    enc, sp = pair(variant_models.get(name) or model_path(name))
    ours = Counter(tuple(enc.encode(text, sample=True, alpha=alpha, seed=k)) for k in range(DRAWS))
    theirs = Counter(tuple(sp.encode(text, enable_sampling=True, alpha=alpha, nbest_size=-1))
                     for _ in range(DRAWS))
    assert len(theirs) >= 4, "the word should have several segmentations to compare"
    distance = total_variation(ours, theirs)
    assert distance < TV_BOUND, (distance, ours.most_common(4), theirs.most_common(4))


def test_bpe_dropout_is_repeatable_with_a_seed():
    enc = fasttok.load(model_path("botchan_en_bpe_1000"))
    draws = {tuple(enc.encode("unbelievable things", sample=True, alpha=0.3, seed=42))
             for _ in range(5)}
    assert len(draws) == 1


def test_bpe_dropout_differs_between_seeds():
    enc = fasttok.load(model_path("botchan_en_bpe_1000"))
    draws = {tuple(enc.encode("unbelievable things", sample=True, alpha=0.3, seed=k))
             for k in range(20)}
    assert len(draws) > 10


def test_bpe_dropout_of_a_gguf_llama_vocabulary_at_alpha_0_is_its_encoding():
    enc = fasttok.load(DATA / "vocab" / "gguf" / "ggml-vocab-llama-spm.gguf")
    bad = Mismatches("ggml-vocab-llama-spm sample(alpha=0)")
    for k, text in enumerate(corpus_lines("en", 300) + corpus_lines("zh", 100) + ["a<s>b</s>"]):
        ours = enc.encode(text, allowed_special="all", sample=True, alpha=0.0, seed=k)
        plain = enc.encode(text, allowed_special="all")
        bad.check(None if ours == plain else describe_mismatch(ours, plain, text), f"line {k}")
    bad.assert_none()


def test_bpe_dropout_of_a_gguf_llama_vocabulary_decodes_to_the_text():
    enc = fasttok.load(DATA / "vocab" / "gguf" / "ggml-vocab-llama-spm.gguf")
    text = "unbelievable things happen"
    draws = {tuple(enc.encode(text, sample=True, alpha=0.3, seed=k)) for k in range(30)}
    assert len(draws) > 10
    assert {enc.decode(list(d)) for d in draws} == {text}


# ---------------------------------------------------------------- n-best


@pytest.mark.parametrize("name", UNIGRAM_MODELS + ("unigram_tied",))
def test_nbest_lists_segmentations_in_sentencepiece_order(name, variant_models):
    enc, sp = pair(variant_models.get(name) or model_path(name))
    bad = Mismatches(f"{name} n-best")
    texts = ["Hello world", "unbelievable", "New York", "tokenization", "the cat sat", "aaaa",
             "龍の国", "a<sep>b", ""] + [t[:40] for t in corpus_lines("en", 150)]
    for text in texts:
        for size in (2, 7, 40):
            ours = nbest_encode(enc._core, text, size)
            theirs = sp.nbest_encode(text, nbest_size=size)
            bad.check(None if ours == theirs else f"nbest_size={size}: {ours[:6]} != {theirs[:6]}",
                      repr(text))
    bad.assert_none()


def test_nbest_breaks_ties_as_sentencepiece(variant_models):
    # With whole-number scores many segmentations of a word score the same;
    # sentencepiece's agenda puts them in its heap's order.
    enc, sp = pair(variant_models["unigram_tied"])
    text = "Hello world"
    listed = nbest_encode(enc._core, text, 10, with_scores=True)
    assert len({score for _, score in listed}) < len(listed), "the list should hold ties"
    assert [ids for ids, _ in listed] == sp.nbest_encode(text, nbest_size=10)


def test_nbest_on_texts_that_shrink_the_agenda_matches_sentencepiece(variant_models):
    # 100-best of ~1000 characters fills sentencepiece's agenda past its
    # 10,000 hypotheses, which it then cuts to the best 512.
    enc, sp = pair(variant_models["unigram_tied"])
    lines = corpus_lines("en", 60)
    for k in range(0, 60, 20):
        text = " ".join(lines[k:k + 20])
        assert nbest_encode(enc._core, text, 100) == sp.nbest_encode(text, nbest_size=100), k


@pytest.mark.parametrize("size", [-1, 0, 1])
def test_nbest_below_two_is_the_best_segmentation(size):
    enc, sp = pair(model_path("botchan_unigram_5000"))
    assert nbest_encode(enc._core, "Hello world", size) == [enc.encode("Hello world")] \
        == sp.nbest_encode("Hello world", nbest_size=size)


def test_nbest_is_refused_for_bpe_models():
    enc = fasttok.load(model_path("botchan_en_bpe_1000"))
    with pytest.raises(fasttok.FasttokError, match="sample=True"):
        nbest_encode(enc._core, "hello", 3)


def test_sampling_among_the_nbest_uses_their_scores():
    # nbest_size > 1: one of the n best, weighted by exp(alpha * score), as
    # sentencepiece draws it; alpha=0 makes them equally likely.
    enc, sp = pair(model_path("botchan_unigram_5000"))
    text = "tokenization"
    ours = Counter(tuple(enc.encode(text, sample=True, alpha=0.0, nbest_size=4, seed=k))
                   for k in range(DRAWS))
    theirs = Counter(tuple(sp.encode(text, enable_sampling=True, alpha=0.0, nbest_size=4))
                     for _ in range(DRAWS))
    assert set(ours) == {tuple(ids) for ids in sp.nbest_encode(text, nbest_size=4)}
    assert total_variation(ours, theirs) < TV_BOUND
