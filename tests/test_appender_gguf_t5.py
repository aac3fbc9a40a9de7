"""``Encoding.appender`` on a GGUF ``t5`` (Unigram, llama.cpp UGM) vocabulary:
its Viterbi sums double scores from each fragment's start, so each window is
encoded from the whole text's score where it starts
(``GGUFSentencePiece.encode_scored``) and cut where no lattice node crosses,
inside words and text without whitespace too; every push gives llama.cpp's
ids (``goldens/gguf/nomic-bert-moe.jsonl``) and ``encode``'s."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, golden_file, read_jsonl
from fasttok.formats.sentencepiece import GGUFSentencePiece
from fasttok.vocab import Vocabulary

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

if not DATA_MISSING:
    from inference_kinds import check_split, load, pushed

# long enough that a window is cut (the longest piece and a margin before
# the end); the special tokens' texts, whitespace runs that llama.cpp's
# normalizer merges, what NFKC changes, CJK without whitespace
LONG_TEXTS = st.lists(st.sampled_from(["the", "quick", "unbelievable", " ", "  ", "\n", "\t",
                                       "I'm", "12", ".", "......", ",", "é", "e\u0301", "ß",
                                       "你好", "🎉", "\u00a0", "\u3000", "ｶﾞ", "①", "<unk>",
                                       "</s>", "<s>", "<mask>", " <mask>", "<pad>", "\u2581",
                                       "x", "日本語です", "。", "カタカナ", "、", "example.com/",
                                       "中文", "ﬁ", "\u200b", "ff", "f", "6"]),
                      min_size=20, max_size=200).map("".join)
SPECIALS = [dict(allowed_special="all"), dict(disallowed_special=())]


@pytest.mark.parametrize("special", SPECIALS, ids=["allowed", "not_allowed"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=LONG_TEXTS, more=LONG_TEXTS, data=st.data())
def test_a_gguf_t5_text_is_cut_exactly_however_it_was_split(special, text, more, data):
    check_split(load("gguf_t5"), text, more, data, **special)


def test_a_gguf_t5_run_pushed_seven_characters_at_a_time_keeps_its_ties():
    # the third of these runs split a tie otherwise when a window encoded
    # from 0 began inside it; a lattice node crosses every place of a run
    # of 6 and 8, so it is cut where the best paths to the places before
    # the margin converge, the window's Viterbi checked to give theirs
    enc = load("gguf_t5")
    rng = random.Random(4)
    for _ in range(3):
        text = "".join(rng.choice("68") for _ in range(rng.randint(600, 900)))
    a = enc.appender()
    for start in range(0, len(text), 7):
        a.push(text[start:start + 7])
    assert a.ids and len(a.pending) < len(text)
    assert a.flush() == enc.encode(text)


def _tiny_t5(add_space_prefix: bool, remove_extra_whitespaces: bool) -> GGUFSentencePiece:
    # pieces with and without ▁ whose scores tie but for rounding
    pieces = ["<unk>", "a", "b", "ab", "ba", "aa", "bb", "\u2581a", "\u2581b", "\u2581",
              "\u2581ab", "aab", "abb", "bab", "c"]
    scores = [0.0, -0.1, -0.2, -0.3, -0.1, -0.2, -0.3, -0.7, -1.1, -1.3, -0.7, -0.6, -0.4,
              -0.6, -1.1]
    return GGUFSentencePiece(Vocabulary(
        name="t5", model="unigram", byte_level=False, unk_id=0,
        add_dummy_prefix=add_space_prefix, remove_extra_whitespaces=remove_extra_whitespaces,
        escape_whitespaces=True, tokens=tuple(p.encode() for p in pieces),
        scores=tuple(scores), token_types=(2,) + (1,) * (len(pieces) - 1)))


@pytest.mark.parametrize("add_space_prefix", [True, False])
@pytest.mark.parametrize("remove_extra_whitespaces", [True, False])
@settings(max_examples=60, deadline=None)
@given(text=st.lists(st.sampled_from(["a", "b", "ab", " ", "  ", "x", "ba", "c", "\t"]),
                     min_size=50, max_size=300).map("".join),
       sizes=st.lists(st.integers(1, 40), min_size=1, max_size=20))
def test_each_whitespace_rule_of_llama_cpps_normalizer_is_cut_exactly(
        add_space_prefix, remove_extra_whitespaces, text, sizes):
    # with remove_extra_whitespaces llama.cpp puts a ▁ before every word, the
    # first too: a window that starts inside a word drops it; without, the
    # space prefix goes before the first word alone
    model = _tiny_t5(add_space_prefix, remove_extra_whitespaces)
    final: list = []
    pending, state, at = "", None, 0
    for size in itertools.cycle(sizes):
        if at >= len(text):
            break
        pending += text[at:at + size]
        at += size
        ids, k, c, at_c = model.encode_scored(pending, state)
        if c:
            final += ids[:k]
            pending, state = pending[c:], at_c
    assert final + model.encode_scored(pending, state, False)[0] == model.encode_ordinary(text)


def test_english_pushed_with_the_pending_ids_asked_keeps_a_short_pending_text():
    enc = load("gguf_t5")
    text = " ".join((DATA / "corpus" / "en.txt").read_text(encoding="utf-8").split())[:100_000]
    a = enc.appender()
    for start in range(0, len(text), 50):
        a.push(text[start:start + 50])
        a.pending_ids()
        assert len(a.pending) < 600
    assert a.flush() == enc.encode(text)


def test_a_cut_after_a_surrogate_pair_keeps_the_pairs_text():
    # the core counts a pair as one character; the cut is counted in the str
    enc = load("gguf_t5")
    text = ("word " * 40 + "\ud83d\ude00" + "中文" * 40 + "\ud800" + " more words" * 40)
    a = enc.appender()
    for start in range(0, len(text), 9):
        a.push(text[start:start + 9])
    assert a.ids and len(a.pending) < len(text)
    assert a.flush() == enc.encode(text)


def _goldens() -> list:
    return read_jsonl(golden_file(DATA, "gguf", "nomic-bert-moe"))


@pytest.mark.parametrize("key, special", [("ids", dict(disallowed_special=())),
                                          ("ids_parse_special", dict(allowed_special="all"))])
def test_pushed_text_gives_llama_cpps_ids(key, special):
    # llama.cpp (llama-cpp-python 0.3.36) on the shared strings, each pushed
    # in pieces of 1 to 9 characters
    enc = load("gguf_t5")
    rng = random.Random(7)
    for rec in _goldens():
        text = rec["text"]
        cuts = sorted({rng.randint(0, len(text)) for _ in range(rng.randint(0, 6))})
        a, stable = pushed(enc, text, cuts, **special)
        assert a.flush() == rec[key], rec["id"]


def test_pushed_fragments_between_special_tokens_give_llama_cpps_ids():
    # llama.cpp encodes each fragment between special tokens on its own, so
    # the shared strings joined by </s> give their ids joined by its id: a
    # text long enough to be cut inside fragments and after special tokens
    enc = load("gguf_t5")
    eos = enc.encode_single_token("</s>")
    recs = [r for r in _goldens() if "<" not in r["text"] and ">" not in r["text"]]
    text = "</s>".join(r["text"] for r in recs)
    expected: list = []
    for r in recs:
        expected += r["ids_parse_special"] + [eos]
    expected.pop()
    a = enc.appender(allowed_special="all")
    for start in range(0, len(text), 50):
        a.push(text[start:start + 50])
        a.pending_ids()
    assert len(a.pending) < 1_000
    assert a.flush() == expected
