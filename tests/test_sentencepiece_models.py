"""SentencePiece ``.model`` files and GGUF ``llama``/``t5`` vocabularies against their references.

Where the expected answers come from:

* ``goldens/sentencepiece/<model>.jsonl``: sentencepiece 0.2.3's ids, pieces,
  normalized text and decoded text for the shared test strings, 7 models;
* the ``sentencepiece`` package itself (test extra), run side by side on every
  corpus file line by line, on hypothesis text, and on models this file trains
  with the real trainer across the options that change behaviour;
* llama.cpp's own answers for the GGUF ``llama`` (llama-spm, phi-3, baichuan)
  and ``t5`` (nomic-bert-moe) vocabularies: the ``.inp/.out`` pairs (Hugging
  Face ids, ``add_special_tokens=False``) and ``goldens/gguf``.

A mismatch report names the model, the input and the first differing token.
"""

from __future__ import annotations

import math
import random
import struct
import time
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, Mismatches, describe_mismatch, golden_file, read_jsonl, read_text, rewrite_pieces, missing_data_reason
from conftest import spm_model_path as model_path, spm_pair as pair
from fasttok.formats._sentencepiece import SentencePieceCore
from fasttok.normalizers._spm_normalizer import Normalizer
from fasttok.models._unigram import UnigramModel
from fasttok.loaders.sentencepiece_model import load_sentencepiece

spm = pytest.importorskip("sentencepiece")

SPM_DIR = DATA / "vocab" / "sentencepiece"
GGUF_DIR = DATA / "vocab" / "gguf"
CORPUS = DATA / "corpus"
MODELS = ("botchan_bpe_8000_bytefallback", "botchan_en_bpe_1000", "botchan_en_unigram_1000",
          "botchan_unigram_2000_userdef_cf", "botchan_unigram_4000_bytefallback",
          "botchan_unigram_5000", "kyoto_ja_unigram_8000")
UNIGRAM = tuple(m for m in MODELS if "unigram" in m)
CORPUS_FILES = ("en", "zh", "multi", "code", "adversarial")
# every line of these; the first LINES_PER_SLICE lines of the others
FULL_FILES = ("en", "zh", "multi")
LINES_PER_SLICE = 20000
GGUF_SPM = ("llama-spm", "phi-3", "baichuan", "nomic-bert-moe")
GGUF_WITH_PAIRS = ("llama-spm", "phi-3")

pytestmark = pytest.mark.skipif(not SPM_DIR.is_dir(), reason=missing_data_reason(SPM_DIR))


@lru_cache(maxsize=None)
def corpus_lines(name: str) -> list:
    lines = read_text(CORPUS / f"{name}.txt").split("\n")
    return lines if name in FULL_FILES else lines[:LINES_PER_SLICE]


@lru_cache(maxsize=None)
def shared_texts() -> list:
    return [rec["text"] for rec in read_jsonl(DATA / "testcases" / "lines.jsonl")]


def check_lines(what: str, enc, sp, lines) -> None:
    """ids for every line, pieces and decoded text for every 7th, against sentencepiece."""
    bad = Mismatches(what)
    ours_all = enc.encode_ordinary_batch(lines, num_threads=1)
    theirs_all = sp.encode(lines)
    for k, (text, ours, theirs) in enumerate(zip(lines, ours_all, theirs_all)):
        problem = None if ours == theirs else describe_mismatch(ours, theirs, text, what="ids")
        if problem is None and k % 7 == 0:
            pieces, expected = enc.encode_as_pieces(text), sp.encode(text, out_type=str)
            if pieces != expected:
                problem = f"pieces differ: {pieces[:20]} != {expected[:20]}; input {text[:200]!r}"
            elif enc.decode(theirs) != sp.decode(theirs):
                problem = f"decode differs: {enc.decode(theirs)[:100]!r} != " \
                          f"{sp.decode(theirs)[:100]!r}"
        bad.check(problem, label=f"line {k}")
    bad.assert_none()


# ---------------------------------------------------------------- goldens


@pytest.mark.parametrize("name", MODELS)
def test_goldens_match_ids_pieces_normalized_and_decoded(name):
    enc = fasttok.load(model_path(name))
    bad = Mismatches(f"{name} goldens")
    for rec in read_jsonl(golden_file(DATA, "sentencepiece", name)):
        text = rec["text"]
        got = {"ids": enc.encode(text), "pieces": enc.encode_as_pieces(text),
               "normalized": enc._core.normalize(text), "decoded": enc.decode(rec["ids"]),
               "id_pieces": [enc._core.id_to_piece(i) for i in rec["ids"]]}
        problem = next((f"{key}: {got[key]!r:.200} != {rec[key]!r:.200}; input {text[:100]!r}"
                        for key in got if got[key] != rec[key]), None)
        bad.check(problem, label=str(rec["id"]))
    bad.assert_none()


def test_classic_strings_give_literal_ids():
    enc = fasttok.load(model_path("botchan_en_unigram_1000"))
    assert enc.encode("Hello world") == [151, 88, 21, 887]
    assert enc.encode_as_pieces("Hello world") == ["▁He", "ll", "o", "▁world"]
    enc = fasttok.load(model_path("botchan_bpe_8000_bytefallback"))
    assert enc.encode("龍") == [7924, 236, 193, 144]  # ▁ then the three UTF-8 bytes
    assert enc.decode([7924, 236, 193, 144]) == "龍"


# ---------------------------------------------------------------- differential: corpora


@pytest.mark.parametrize("corpus", CORPUS_FILES)
@pytest.mark.parametrize("name", MODELS)
def test_corpus_lines_match_sentencepiece(name, corpus):
    enc, sp = pair(model_path(name))
    lines = corpus_lines(corpus)
    check_lines(f"{name} on {corpus}.txt", enc, sp, lines)


@lru_cache(maxsize=None)
def adversarial_lines() -> tuple:
    return tuple(read_text(CORPUS / "adversarial.txt").split("\n"))


def digit_line(lines) -> int | None:
    """Index of the 100,000-digit line of adversarial.txt (60002 in the shared file)."""
    return next((k for k, t in enumerate(lines)
                 if len(t) == 100_000 and t.isascii() and t.isdigit()), None)


@pytest.mark.parametrize("name", UNIGRAM)
def test_unigram_100k_digit_line_matches_sentencepiece(name):
    # Path scores pass -1e5 many times over the line, where sentencepiece
    # rebases them (kScoreResetThreshold); the float rounding after each
    # rebase decides near-ties.
    lines = adversarial_lines()
    k = digit_line(lines)
    assert k is not None, "adversarial.txt should hold a line of 100,000 digits"
    enc, sp = pair(model_path(name))
    ours, theirs = enc.encode(lines[k]), sp.encode(lines[k])
    assert ours == theirs, describe_mismatch(ours, theirs, lines[k][:200])


def test_long_adversarial_lines_match_sentencepiece():
    lines = adversarial_lines()
    long = [t for t in lines if len(t) > 20_000]
    assert len(long) >= 7
    for name in UNIGRAM:
        enc, sp = pair(model_path(name))
        check_lines(f"{name} on long lines", enc, sp, long)


@pytest.mark.parametrize("corpus", CORPUS_FILES)
@pytest.mark.parametrize("name", UNIGRAM)
def test_whole_corpus_file_in_one_call_matches_sentencepiece(name, corpus):
    # One text of 1-3 MB: its path score is rebased each time it passes 1e5.
    enc, sp = pair(model_path(name))
    text = read_text(CORPUS / f"{corpus}.txt")
    ours, theirs = enc.encode(text), sp.encode(text)
    assert ours == theirs, describe_mismatch(ours, theirs, text)


def test_whole_bpe_corpus_file_matches_sentencepiece():
    # BPE has no score arithmetic to drift: one call on a whole file agrees too,
    # though fasttok cuts the text where no merge can cross.
    enc, sp = pair(model_path("botchan_bpe_8000_bytefallback"))
    text = read_text(CORPUS / "en.txt")[:1_000_000]
    ours, theirs = enc.encode(text), sp.encode(text)
    assert ours == theirs, describe_mismatch(ours, theirs, text)


def test_bpe_cut_at_spaces_equals_whole_text_agenda():
    v = load_sentencepiece(model_path("botchan_bpe_8000_bytefallback"))
    cut, whole = SentencePieceCore(v), SentencePieceCore(v, exact_agenda=True)
    text = read_text(CORPUS / "multi.txt")[:200_000]
    assert cut.encode_ordinary(text) == whole.encode_ordinary(text)


def test_offsets_match_sentencepiece_offset_mapping():
    bad = Mismatches("offsets")
    for name in ("botchan_unigram_4000_bytefallback", "botchan_bpe_8000_bytefallback",
                 "botchan_unigram_2000_userdef_cf"):
        enc, sp = pair(model_path(name))
        for k, text in enumerate(shared_texts()):
            om = sp.encode(text, return_type="offset_mapping")
            expected = [(i, a, b) for i, (a, b) in zip(om["ids"], om["offsets"])]
            ids, spans = enc.encode_with_offsets(text)
            ours = [(i, a, b) for i, (a, b) in zip(ids, spans)]
            bad.check(None if ours == expected else f"{name}: {ours[:8]} != {expected[:8]} for "
                      f"{text[:80]!r}", label=f"{name}:{k}")
    bad.assert_none()


# ---------------------------------------------------------------- differential: hypothesis

# Characters that exercise the normalizer and the models: ASCII, spaces of
# every kind, the space symbol itself, compatibility characters, combining
# marks, CJK and kana (unknown to the botchan models), emoji, user-defined
# symbols and byte-piece look-alikes.
_ALPHABET = st.sampled_from(
    list("abcdeHWxyz019 ,.!?-'\"()") + [" ", "  ", "\t", "\n", "\r\n", "\u3000", "\xa0", "\u2581",
    "\u2581\u2581", "ｗ", "①", "ﬁ", "™", "Å", "e\u0301", "\u0301", "龍", "の", "カ", "한", "😀",
    "👍🏽", "\u200d", "\ufffd", "<sep>", "[MASK]", "<s>", "</s>", "<0x41>", "<unk>", "ß", "İ"])
_TEXT = st.lists(_ALPHABET, max_size=24).map("".join)


@pytest.mark.parametrize("name", MODELS)
def test_hypothesis_text_matches_sentencepiece(name):
    enc, sp = pair(model_path(name))

    @settings(max_examples=250, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_TEXT)
    def check(text):
        ids = sp.encode(text)
        assert enc.encode(text) == ids, describe_mismatch(enc.encode(text), ids, text)
        assert enc.encode_as_pieces(text) == sp.encode(text, out_type=str)
        assert enc.decode(ids) == sp.decode(ids)

    check()


# ---------------------------------------------------------------- models trained here

_TRAIN_CONFIGS = {
    "unigram": dict(model_type="unigram"),
    "bpe": dict(model_type="bpe"),
    "unigram_no_dummy_prefix_keep_spaces": dict(model_type="unigram", add_dummy_prefix=False,
                                                remove_extra_whitespaces=False),
    "bpe_identity_byte_fallback_split_digits": dict(model_type="bpe",
                                                    normalization_rule_name="identity",
                                                    byte_fallback=True, split_digits=True),
    "unigram_nfkc_cf_byte_fallback": dict(model_type="unigram",
                                          normalization_rule_name="nmt_nfkc_cf",
                                          byte_fallback=True),
    "unigram_whitespace_suffix": dict(model_type="unigram", treat_whitespace_as_suffix=True),
    "bpe_whitespace_suffix_ws_pieces": dict(model_type="bpe", treat_whitespace_as_suffix=True,
                                            allow_whitespace_only_pieces=True,
                                            remove_extra_whitespaces=False),
    "bpe_nfkc_user_defined": dict(model_type="bpe", normalization_rule_name="nfkc",
                                  user_defined_symbols=["<sep>", "[MASK]", "ab", "▁▁"],
                                  control_symbols=["<ctrl>"]),
}


@pytest.fixture(scope="session")
def trained_models(tmp_path_factory):
    text = (SPM_DIR / "botchan.txt").read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
    lines = [t for t in text.split("\n") if t.strip()][:3000]
    folder = tmp_path_factory.mktemp("spm")
    paths = {}
    for name, spec in _TRAIN_CONFIGS.items():
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(folder / name),
                                       vocab_size=600, minloglevel=2, num_threads=1, **spec)
        paths[name] = str(folder / f"{name}.model")
    return paths


@pytest.mark.parametrize("config", list(_TRAIN_CONFIGS))
def test_trained_model_matches_sentencepiece(trained_models, config):
    enc, sp = pair(trained_models[config])
    lines = shared_texts() + [t for f in CORPUS_FILES for t in corpus_lines(f)[:1500]]
    check_lines(config, enc, sp, lines)


def _retype(data: bytes, new_type) -> bytes:
    # the .model with each piece's type replaced by new_type(index, piece, type)
    return rewrite_pieces(data, lambda i, piece, score, kind: (score, new_type(i, piece, kind)))


@pytest.mark.parametrize("name", ("botchan_en_bpe_1000", "botchan_bpe_8000_bytefallback",
                                  "botchan_unigram_5000"))
def test_unused_pieces_are_resegmented_like_sentencepiece(name, tmp_path):
    rnd = random.Random(7)
    data = _retype((SPM_DIR / f"{name}.model").read_bytes(),
                   lambda i, piece, kind: 5 if kind == 1 and len(piece) > 1 and rnd.random() < 0.3
                   else kind)
    path = tmp_path / f"{name}_unused.model"
    path.write_bytes(data)
    enc, sp = fasttok.load(path), spm.SentencePieceProcessor(model_file=str(path))
    assert any(sp.is_unused(i) for i in range(sp.vocab_size()))
    check_lines(f"{name} with UNUSED pieces", enc, sp, shared_texts() + corpus_lines("en")[:3000])


def test_user_defined_pieces_score_by_length_like_sentencepiece(tmp_path):
    # sentencepiece 0.2.3 scores a user-defined piece 0.1 * (bytes - 1); the
    # rule of older releases (len * max_score - 0.1) split about a quarter of
    # the lines of en.txt and multi.txt differently.
    rnd = random.Random(7)
    data = _retype((SPM_DIR / "botchan_unigram_5000.model").read_bytes(),
                   lambda i, piece, kind: 4 if kind == 1 and len(piece) > 1 and rnd.random() < 0.05
                   else kind)
    path = tmp_path / "botchan_unigram_5000_user_defined.model"
    path.write_bytes(data)
    enc, sp = fasttok.load(path), spm.SentencePieceProcessor(model_file=str(path))
    check_lines("botchan_unigram_5000 with user-defined pieces", enc, sp,
                shared_texts() + corpus_lines("en")[:3000])


# ---------------------------------------------------------------- GGUF llama / t5


@lru_cache(maxsize=None)
def gguf(name: str) -> fasttok.Encoding:
    return fasttok.load(GGUF_DIR / f"ggml-vocab-{name}.gguf")


def read_pairs(name: str) -> list:
    """``(text, ids)`` of a ``.inp/.out`` pair, split as llama.cpp's test-tokenizer-0 does."""
    base = GGUF_DIR / f"ggml-vocab-{name}.gguf"
    inp = Path(f"{base}.inp").read_bytes().decode("utf-8")
    lines = Path(f"{base}.out").read_bytes().decode("utf-8").split("\n")
    sep, texts, pos = "\n__ggml_vocab_test__\n", [], 0
    while (at := inp.find(sep, pos)) >= 0:
        texts.append(inp[pos:at])
        pos = at + len(sep)
    return [(t, [int(x) for x in lines[i].split()]) for i, t in enumerate(texts)]


@pytest.mark.parametrize("name", GGUF_WITH_PAIRS)
def test_gguf_inp_out_pairs_match_token_for_token(name):
    pairs = read_pairs(name)
    assert len(pairs) == 46
    bad = Mismatches(f"{name}.inp/.out")
    for text, ids in pairs:
        ours = gguf(name).encode(text, disallowed_special=())
        bad.check(None if ours == ids else describe_mismatch(ours, ids, text), label=repr(text[:30]))
    bad.assert_none()


_GGUF_CALLS = {
    "ids": lambda enc, rec: enc.encode(rec["text"], disallowed_special=()),
    "ids_add_special": lambda enc, rec: enc.encode(rec["text"], disallowed_special=(),
                                                   add_special_tokens=True),
    "ids_parse_special": lambda enc, rec: enc.encode(rec["text"], allowed_special="all"),
    "pieces_hex": lambda enc, rec: [enc.decode_single_token_bytes(i).hex() for i in rec["ids"]],
    "decoded_hex": lambda enc, rec: enc.decode_bytes(rec["ids"]).hex(),
}


@pytest.mark.parametrize("key", list(_GGUF_CALLS))
@pytest.mark.parametrize("name", GGUF_SPM)
def test_gguf_goldens_match_llama_cpp(name, key):
    enc = gguf(name)
    bad = Mismatches(f"{name} {key}")
    for rec in read_jsonl(golden_file(DATA, "gguf", name)):
        ours = _GGUF_CALLS[key](enc, rec)
        bad.check(None if ours == rec[key] else f"{ours!r:.200} != {rec[key]!r:.200} for "
                  f"{rec['text'][:80]!r}", label=str(rec["id"]))
    bad.assert_none()


def test_gguf_spm_space_prefix_follows_each_special_token():
    # llama.cpp's SPM prefixes the first fragment and every fragment after a
    # special token: "<s>" parsed, then "a" gets "▁a" again.
    enc = gguf("llama-spm")
    assert enc.encode("a<s>a", allowed_special="all") == enc.encode("a") + [1] + enc.encode("a")


# ---------------------------------------------------------------- properties


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.dictionaries(st.text("ab▁", min_size=1, max_size=3),
                       st.integers(-64, -1), min_size=1, max_size=10),
       st.text("ab▁", max_size=8))
def test_viterbi_finds_the_best_scoring_segmentation(pieces, text):
    # Brute force over every segmentation; scores are multiples of 1/8, so
    # float sums are exact and only the best score is compared (ties may
    # split either way).
    tokens = [b"<unk>"] + [p.encode() for p in pieces]
    scores = [0.0] + [s / 8 for s in pieces.values()]
    model = UnigramModel(tokens, scores, [2] + [1] * len(pieces), 0)
    unk = min(scores[1:]) - 10
    table = {p: s / 8 for p, s in pieces.items()}

    def best(rest: str) -> float:
        if not rest:
            return 0.0
        options = [table[rest[:k]] + best(rest[k:]) for k in range(1, len(rest) + 1)
                   if rest[:k] in table]
        if rest[0] not in table:
            options.append(unk + best(rest[1:]))
        return max(options)

    got = sum(scores[i] if i else unk for _, i in model.segment(text))
    assert got == best(text)


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _encode_optimized(pieces: dict, unk_score: float, text: str) -> list:
    """sentencepiece 0.2.3's ``EncodeOptimized`` in float32, written plainly
    (one-character text, so byte and character positions coincide): pieces
    from each start shortest first, strictly better only, path scores rebased
    once they leave [-1e5, 1e5]."""
    n = len(text)
    score, start = [0.0] * (n + 1), [-1] * (n + 1)
    for pos in range(n):
        here = score[pos]
        if abs(here) > 1e5:
            for i in range(pos + 1, n + 1):
                if start[i] >= 0:
                    score[i] = _f32(score[i] - here)
            here = 0.0
        ends = [(pos + k, pieces[text[pos:pos + k]]) for k in range(1, n - pos + 1)
                if text[pos:pos + k] in pieces]
        if text[pos] not in pieces:
            ends.insert(0, (pos + 1, unk_score))
        for end, value in ends:
            cand = _f32(here + value)
            if start[end] < 0 or cand > score[end]:
                score[end], start[end] = cand, pos
    cuts, end = [], n
    while end > 0:
        cuts.append(end)
        end = start[end]
    return sorted(cuts)


def test_viterbi_rebases_scores_as_sentencepiece_does():
    # Scores near -1000 pass -1e5 within a few hundred characters, where
    # float32 steps are 1/128: near-ties decided there come out the other
    # way without the rebase.
    rnd = random.Random(11)
    pieces = {"a": -1000.0, "b": -1000.0078125, "ab": -2000.0, "ba": -2000.0078125,
              "aab": -3000.0078125, "bb": -2000.01171875}
    tokens = [b"<unk>"] + [p.encode() for p in pieces]
    scores = [0.0] + [_f32(v) for v in pieces.values()]
    model = UnigramModel(tokens, scores, [2] + [1] * len(pieces), 0)
    table = dict(zip(pieces, scores[1:]))
    for _ in range(40):
        text = "".join(rnd.choice("aab") for _ in range(rnd.randint(150, 600)))
        cuts = []
        for piece, _ in model.segment(text):
            cuts.append((cuts[-1] if cuts else 0) + len(piece))
        assert cuts == _encode_optimized(table, model.unk_score, text), text


def test_batch_on_threads_equals_serial():
    enc = fasttok.load(model_path("botchan_unigram_4000_bytefallback"))
    lines = corpus_lines("multi")[:4000]
    assert enc.encode_ordinary_batch(lines, num_threads=4) == \
        [enc.encode_ordinary(t) for t in lines]


def test_malformed_charsmap_raises_or_normalizes_never_crashes():
    blob = load_sentencepiece(model_path("botchan_unigram_5000")).precompiled_charsmap
    rnd = random.Random(1234)
    outcomes = {"refused": 0, "normalized": 0}
    for _ in range(1500):
        data = bytearray(blob[:4 + 4096] if rnd.random() < 0.5 else blob)
        for _ in range(rnd.randint(1, 8)):
            data[rnd.randrange(len(data))] = rnd.randrange(256)
        try:
            n = Normalizer(bytes(data), add_dummy_prefix=True, remove_extra_whitespaces=True,
                           escape_whitespaces=True)
        except ValueError:
            outcomes["refused"] += 1
            continue
        for text in ("Hello  Ｗｏｒｌｄ ﬁ e\u0301", "龍の\x00\t", "\ufffd😀"):
            assert isinstance(n.normalize(text), str)
        outcomes["normalized"] += 1
    # the damage reaches the checked structure as well as the replacement text
    assert outcomes["refused"] and outcomes["normalized"], outcomes


@pytest.mark.parametrize("unit", ["a", "ab ", "龍", " "], ids=["a", "ab_space", "cjk", "space"])
@pytest.mark.parametrize("name", ["botchan_unigram_5000", "botchan_bpe_8000_bytefallback"])
def test_doubling_a_repetitive_text_again_adds_twice_the_ids_the_first_doubling_added(name, unit):
    # A long text of one repeated unit (one long merge problem for BPE, one
    # long Viterbi pass for Unigram) grows its ids linearly: the ids a
    # doubling adds are those of the repeats alone. The time it takes is
    # bench/test_sentencepiece_bench.py's test_sentencepiece_long_input.
    enc = fasttok.load(model_path(name))
    repeats = 50_000 // len(unit)
    once, twice, four_times = (Counter(enc.encode(unit * (k * repeats))) for k in (1, 2, 4))
    assert once <= twice <= four_times, (name, unit)
    added = twice - once
    assert four_times - twice == added + added, (name, unit, (four_times - twice).most_common(3),
                                                 added.most_common(3))


def test_surrogates_are_repaired_as_tiktoken_does():
    enc = fasttok.load(model_path("botchan_unigram_5000"))
    assert enc.encode("a\ud800b") == enc.encode("a\ufffdb")
    assert enc.encode("\ud83d\ude00") == enc.encode("😀")


def test_pieces_are_refused_for_models_without_them():
    enc = fasttok.Encoding.from_vocabulary(fasttok.Vocabulary(
        name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
    with pytest.raises(fasttok.FasttokError, match="SentencePiece"):
        enc.encode_as_pieces("hi")


# ---------------------------------------------------------------- sampling and n-best


def _segmentations(enc, text: str) -> dict:
    """Every segmentation of ``text`` (ids) with its summed score, from the lattice."""
    core = enc._core
    nodes = core.lattice(text)
    n = len(core.normalize(text).encode("utf-8"))
    by_start: dict = {}
    for start, end, token, score in nodes:
        by_start.setdefault(start, []).append((end, token, score))
    out: dict = {}

    def walk(pos: int, ids: tuple, score: float) -> None:
        if pos == n:
            out[ids] = score
            return
        for end, token, s in by_start.get(pos, ()):
            walk(end, ids + (token,), score + s)

    walk(0, (), 0.0)
    return out


def test_sampling_follows_the_lattice_distribution():
    # P(segmentation) is proportional to exp(alpha * score); 4000 seeded draws
    # of a short word must land within a total variation distance of 0.05,
    # and so must sentencepiece's own sampler.
    enc, sp = pair(model_path("botchan_unigram_5000"))
    text, alpha, draws = "Hello", 0.5, 4000
    segs = _segmentations(enc, text)
    assert 5 <= len(segs) <= 200
    z = sum(math.exp(alpha * s) for s in segs.values())
    expected = {ids: math.exp(alpha * s) / z for ids, s in segs.items()}
    ours = Counter(tuple(enc.encode(text, sample=True, alpha=alpha, seed=k)) for k in range(draws))
    spm.set_random_generator_seed(1)
    theirs = Counter(tuple(sp.encode(text, enable_sampling=True, alpha=alpha, nbest_size=-1))
                     for _ in range(draws))
    for counts in (ours, theirs):
        assert set(counts) <= set(expected)
        tv = sum(abs(counts[k] / draws - p) for k, p in expected.items()) / 2
        assert tv < 0.05, (tv, counts.most_common(5))


def test_sampling_is_repeatable_with_a_seed():
    enc = fasttok.load(model_path("kyoto_ja_unigram_8000"))
    draws = {tuple(enc.encode("unbelievable", sample=True, alpha=0.1, seed=42)) for _ in range(5)}
    assert len(draws) == 1


def test_nbest_matches_sentencepiece_on_words_without_ties():
    from fasttok.formats.sentencepiece import nbest_encode
    enc, sp = pair(model_path("botchan_unigram_5000"))
    for text in ("Hello world", "unbelievable", "New York", "tokenization"):
        assert nbest_encode(enc._core, text, 6) == sp.nbest_encode(text, nbest_size=6)
    assert enc.encode("Hello", sample=True, nbest_size=1) == enc.encode("Hello")


def _kib(field: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's VmHWM reset")
def test_a_long_piece_costs_trie_memory_linear_in_its_length():
    # 20 kB of high bytes: each node of the piece's chain once took ~350
    # fresh units (8 MB a kB of piece)
    tokens = [b"<unk>", b"a", "\u2581a日".encode() * 2000]
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak RSS
    before = _kib("VmRSS")
    model = UnigramModel(tokens, [0.0, -1.0, -2.0], [2, 1, 1], 0)
    assert (_kib("VmHWM") - before) < 16 << 10
    assert model.n_pieces == 3
