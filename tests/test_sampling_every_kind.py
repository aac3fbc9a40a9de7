"""``encode(text, sample=True, alpha=..., nbest_size=..., seed=...)`` on every vocabulary kind.

Every kind with a BPE model samples with BPE-dropout (each merge skipped
with probability ``alpha``), every kind with a Unigram model as
sentencepiece samples its lattice (``alpha`` the smoothing, ``nbest_size``
the candidates: -1 all), a WordPiece model refuses (it has one
segmentation). On each:

* a seed repeats its draw, and every draw decodes to the text's decode;
* draws differ between seeds, and the setting that draws nothing encodes: BPE-dropout with ``alpha=0``, a
  Unigram model with ``nbest_size`` 0 or 1. A Unigram model with ``alpha=0``
  is not that: it draws every segmentation alike, as sentencepiece does
  (compared by total variation over 4,000 draws a side: ~0.04-0.05 between
  two fair samplers over the 18-28 segmentations of a word, ~0.9 for an
  encoding).
"""

from __future__ import annotations

import importlib.resources
from collections import Counter

import pytest

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, ONE_FILE_PER_KIND

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

HF_DIR = DATA / "vocab" / "hf"
SPM_DIR = DATA / "vocab" / "sentencepiece"
BPE = {"tiktoken": ONE_FILE_PER_KIND["tiktoken"], "gguf_gpt2": ONE_FILE_PER_KIND["gguf_gpt2"],
       "gguf_llama": ONE_FILE_PER_KIND["gguf_llama"], "spm_bpe": ONE_FILE_PER_KIND["spm_bpe"],
       "hf_byte_bpe": ONE_FILE_PER_KIND["hf_byte_bpe"], "hf_metaspace_bpe": HF_DIR / "llama2" / "tokenizer.json",
       "tekken": importlib.resources.files("mistral_common") / "data" / "tekken_240911.json"}
UNIGRAM = {"gguf_t5": ONE_FILE_PER_KIND["gguf_t5"], "spm_unigram": ONE_FILE_PER_KIND["spm_unigram"],
           "hf_unigram_t5": HF_DIR / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json",
           "hf_unigram_albert": HF_DIR / "unigram" / "botchan_unigram_5000.v4.57.6.AlbertTokenizer.json",
           "hf_unigram_xlnet": HF_DIR / "unigram" / "kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json"}
WORDPIECE = {"gguf_bert": ONE_FILE_PER_KIND["gguf_bert"],
             "hf_wordpiece": HF_DIR / "all-MiniLM-L6-v2" / "tokenizer.json"}
TEXTS = ("Hello there, my friend.", "I  don't   understand it!", "",
         "\u65e5\u672c\u8a9e\u306e\u6587\u3067\u3059\u3002", "caf\u00e9 x")
SPM_MODEL = SPM_DIR / "botchan_unigram_5000.model"
SPM_TWIN = HF_DIR / "unigram" / "botchan_unigram_5000.v5.24.0.from_spm_proto.json"
DRAWS = 4000
TV_BOUND = 0.1
_LOADED: dict = {}


def _load(path) -> fasttok.Encoding:
    if str(path) not in _LOADED:
        _LOADED[str(path)] = fasttok.load(str(path))
    return _LOADED[str(path)]


def _total_variation(a: Counter, b: Counter) -> float:
    n, m = sum(a.values()), sum(b.values())
    return 0.5 * sum(abs(a[x] / n - b[x] / m) for x in set(a) | set(b))


@pytest.mark.parametrize("kind", sorted(BPE | UNIGRAM))
def test_a_seed_repeats_its_draw(kind):
    enc = _load((BPE | UNIGRAM)[kind])
    for text in TEXTS:
        assert enc.encode(text, sample=True, alpha=0.3, seed=5) == \
            enc.encode(text, sample=True, alpha=0.3, seed=5)


@pytest.mark.parametrize("kind", sorted(BPE | UNIGRAM))
def test_every_draw_decodes_to_the_text(kind):
    enc = _load((BPE | UNIGRAM)[kind])
    for text in TEXTS:
        want = enc.decode(enc.encode(text))
        for seed in range(6):
            for alpha in (0.1, 0.5):
                assert enc.decode(enc.encode(text, sample=True, alpha=alpha, seed=seed)) == want


@pytest.mark.parametrize("kind", sorted(BPE))
def test_draws_of_bpe_dropout_differ_and_at_alpha_0_are_the_encoding(kind):
    enc = _load(BPE[kind])
    for text in TEXTS:
        assert enc.encode(text, sample=True, alpha=0.0, seed=7) == enc.encode(text)
    # a word that is no token (tiktoken and tekken keep a piece that is one whole)
    word = "unbelievablenesses"
    assert len({tuple(enc.encode(word, sample=True, alpha=0.5, seed=s)) for s in range(10)}) > 1


@pytest.mark.parametrize("kind", sorted(UNIGRAM))
@pytest.mark.parametrize("nbest_size", [0, 1])
def test_unigram_draws_among_one_candidate_are_the_encoding(kind, nbest_size):
    enc = _load(UNIGRAM[kind])
    for text in TEXTS:
        assert enc.encode(text, sample=True, alpha=0.5, nbest_size=nbest_size, seed=7) == enc.encode(text)


@pytest.mark.parametrize("path", [SPM_MODEL, SPM_TWIN], ids=["model", "tokenizer.json"])
def test_unigram_at_alpha_0_draws_every_segmentation_alike_as_sentencepiece(path):
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor(model_file=str(SPM_MODEL))
    enc = _load(path)
    ours = Counter(tuple(enc.encode("Hello", sample=True, alpha=0.0, seed=s)) for s in range(DRAWS))
    theirs = Counter(tuple(sp.encode("Hello", enable_sampling=True, alpha=0.0, nbest_size=-1))
                     for _ in range(DRAWS))
    assert len(ours) == len(theirs) > 10
    assert _total_variation(ours, theirs) < TV_BOUND


@pytest.mark.parametrize("kind", sorted(WORDPIECE))
def test_a_wordpiece_model_refuses_to_sample_and_says_why(kind):
    with pytest.raises(fasttok.FasttokError, match="one seg"):
        _load(WORDPIECE[kind]).encode("Hello", sample=True, alpha=0.1)
