"""Subword regularization of Unigram ``tokenizer.json`` files:
``fasttok.load(path).encode(text, sample=True, alpha=..., nbest_size=...)``
samples as sentencepiece samples a Unigram ``.model`` (the one sampler of
:mod:`fasttok.models.unigram_sampling`), piece by piece after the file's
normalizer and pre-tokenizer, added tokens kept whole.

The distributions are compared with sentencepiece's own draws on the
``.model`` file the ``from_spm_proto`` conversion was made from, by total
variation distance: 4,000 draws a side give 0.01-0.03 (measured while this
was written), a sampler with alpha half as large again gives 0.19, so the
bound 0.08 separates them with room for the sentencepiece side's noise (its
generator is not seeded).
"""

from __future__ import annotations

from collections import Counter

import pytest

import fasttok
from conftest import DATA, missing_data_reason
from fasttok.models.hf_unigram import Unigram

UNIGRAM_DIR = DATA / "vocab" / "hf" / "unigram"
FILES = ("botchan_unigram_5000.v5.24.0.T5Tokenizer",
         "botchan_unigram_5000.v5.24.0.from_spm_proto",
         "botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto",
         "kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer")
SPM_TWIN = "botchan_unigram_5000.v5.24.0.from_spm_proto"
SPM_MODEL = DATA / "vocab" / "sentencepiece" / "botchan_unigram_5000.model"
TEXTS = ["Hello there, my friend.", "I  don't   understand it!", "",
         "\u65e5\u672c\u8a9e\u306e\u6587\u3067\u3059\u3002", "caf\u00e9 \U0001f600 x"]
DRAWS = 4000
TV_BOUND = 0.08

_LOADED: dict = {}


def _load(name: str):
    path = UNIGRAM_DIR / f"{name}.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    if name not in _LOADED:
        _LOADED[name] = fasttok.load(str(path))
    return _LOADED[name]


def _draws(encode, text: str, alpha: float, nbest_size: int) -> Counter:
    return Counter(tuple(encode(text, alpha, nbest_size, seed)) for seed in range(DRAWS))


def _total_variation(a: Counter, b: Counter) -> float:
    n, m = sum(a.values()), sum(b.values())
    return 0.5 * sum(abs(a[x] / n - b[x] / m) for x in set(a) | set(b))


@pytest.mark.parametrize("name", FILES)
def test_a_seed_repeats_the_draw(name):
    enc = _load(name)
    for text in TEXTS:
        first = enc.encode(text, sample=True, alpha=0.1, seed=11)
        assert enc.encode(text, sample=True, alpha=0.1, seed=11) == first


def test_seeds_draw_different_segmentations():
    enc = _load(SPM_TWIN)
    draws = {tuple(enc.encode(TEXTS[0], sample=True, alpha=0.1, seed=s)) for s in range(20)}
    assert len(draws) > 1


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("nbest_size", [-1, 4])
def test_every_draw_decodes_as_the_encoding_does(name, nbest_size):
    enc = _load(name)
    for text in TEXTS:
        want = enc.decode(enc.encode(text))
        for seed in range(8):
            ids = enc.encode(text, sample=True, alpha=0.1, nbest_size=nbest_size, seed=seed)
            assert enc.decode(ids) == want, (text, seed, ids)


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("nbest_size", [0, 1])
def test_nbest_size_one_or_zero_is_the_encoding(name, nbest_size):
    enc = _load(name)
    for text in TEXTS:
        assert enc.encode(text, sample=True, nbest_size=nbest_size, seed=3) == enc.encode(text)


def test_added_tokens_stay_whole_in_a_draw():
    enc = _load("botchan_unigram_5000.v5.24.0.T5Tokenizer")
    eos = enc.encode("</s>", allowed_special="all")
    assert len(eos) == 1
    for seed in range(10):
        ids = enc.encode("a </s> b", allowed_special="all", sample=True, alpha=0.5, seed=seed)
        assert eos[0] in ids


@pytest.mark.skipif(not SPM_MODEL.is_file(), reason=missing_data_reason(SPM_MODEL))
@pytest.mark.parametrize("nbest_size", [-1, 5])
def test_draws_are_as_often_as_sentencepiece_on_the_model_the_file_came_from(nbest_size):
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor(model_file=str(SPM_MODEL))
    enc = _load(SPM_TWIN)
    ours = _draws(lambda t, a, n, s: enc.encode(t, sample=True, alpha=a, nbest_size=n, seed=s),
                  "Hello", 0.3, nbest_size)
    theirs = _draws(lambda t, a, n, s: sp.encode(t, enable_sampling=True, alpha=a, nbest_size=n),
                    "Hello", 0.3, nbest_size)
    assert len(ours) > 3
    assert _total_variation(ours, theirs) < TV_BOUND


@pytest.mark.skipif(not SPM_MODEL.is_file(), reason=missing_data_reason(SPM_MODEL))
def test_draws_are_as_often_as_the_model_file_sampler():
    model = fasttok.load(str(SPM_MODEL))
    enc = _load(SPM_TWIN)
    ours = _draws(lambda t, a, n, s: enc.encode(t, sample=True, alpha=a, nbest_size=n, seed=s),
                  "Hello", 0.3, -1)
    theirs = _draws(lambda t, a, n, s: model.encode(t, sample=True, alpha=a, nbest_size=n,
                                                    seed=s), "Hello", 0.3, -1)
    assert _total_variation(ours, theirs) < TV_BOUND


@pytest.mark.parametrize("alpha, nbest_size, error", [
    (float("nan"), -1, fasttok.FasttokError), (float("inf"), -1, fasttok.FasttokError),
    ("0.1", -1, TypeError), (True, -1, TypeError), (0.1, True, TypeError),
    (0.1, 2**31, fasttok.FasttokError), (0.1, 1.5, TypeError)])
def test_bad_sampling_arguments_are_refused_as_for_model_files(alpha, nbest_size, error):
    enc = _load(SPM_TWIN)
    with pytest.raises(error):
        enc.encode("Hello", sample=True, alpha=alpha, nbest_size=nbest_size)


def test_unknown_nodes_drawn_are_one_token_as_the_encoding_makes_them():
    model = Unigram([("<unk>", 0.0), ("a", -1.0), ("xy", -90.0)], unk_id=0)
    for seed in range(20):
        # x and y drawn as unknown nodes fuse back into the piece "xy"
        assert model.sample_ids("xya", (0.01, -1), seed) == [2, 1]
        assert model.sample_ids("zwa", (0.1, -1), seed) == [0, 1]


def test_an_unknown_character_without_unk_id_is_an_error_as_in_encoding():
    model = Unigram([("a", -1.0)])
    with pytest.raises(fasttok.FasttokError, match="unk_id"):
        model.sample_ids("ab", (0.1, -1), 0)
