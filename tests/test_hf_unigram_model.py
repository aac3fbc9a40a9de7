"""The Hugging Face ``Unigram`` model (fasttok.models.hf_unigram) against tokenizers' own.

The reference is a ``tokenizers.Tokenizer`` holding only the model (null
normalizer, pre-tokenizer and post-processor), so both see each input whole;
ids, tokens and character offsets must be equal. Inputs: every line of
``testcases/lines.jsonl`` whole, with its spaces as ``▁`` (as Metaspace
would hand them over) and split into words; the words of the corpus files
(ids only); hypothesis text from every plane;
for each ``vocab/hf/unigram/*.json`` model. Small hand-made vocabularies pin
the rules: runs of unknown characters fused into one token, byte fallback
(4-byte characters too), ties, a missing ``unk_id``, the JSON fields.
"""

from __future__ import annotations

import functools
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA, missing_data_reason, read_jsonl
from hf_model_pairs import (assert_all_agree, assert_same, assert_same_outcome, corpus_words,
                            fail, problem, reference, words_problem)
from fasttok.errors import FasttokError
from fasttok.models.hf_unigram import Unigram, unigram_from_json
from fasttok.shared._json_reader import PackedPieces, read_tokenizer_document

tokenizers = pytest.importorskip("tokenizers")

UNIGRAM_DIR = DATA / "vocab" / "hf" / "unigram"
LINES = DATA / "testcases" / "lines.jsonl"
MODEL_FILES = sorted(UNIGRAM_DIR.glob("*.json")) if UNIGRAM_DIR.is_dir() else []
needs_data = pytest.mark.skipif(not MODEL_FILES or not LINES.is_file(),
                                reason=missing_data_reason(UNIGRAM_DIR))


@functools.lru_cache(maxsize=None)
def model_pair(path: str) -> tuple:
    """(fasttok model, tokenizers model alone) for a shared tokenizer.json."""
    spec = json.loads(open(path, encoding="utf-8").read())["model"]
    return unigram_from_json(spec, "$.model", fail), reference(spec)


def read_packed(spec: dict) -> dict:
    """The model object ``spec`` as a file load reads it: its vocab the
    reader's :class:`PackedPieces`, not ``json.loads``' lists."""
    model = read_tokenizer_document(json.dumps({"model": spec}).encode())[1].object(made=False)
    assert type(model["vocab"]) is PackedPieces
    return model


def line_inputs() -> list:
    """Every line whole, with spaces as ``▁``, and its words (bare and ``▁``-led)."""
    out = []
    for case in read_jsonl(LINES):
        text = case["text"]
        out += [text, text.replace(" ", "\u2581"), "\u2581" + text.replace(" ", "\u2581")]
        for word in text.split():
            out += [word, "\u2581" + word]
    return out


@needs_data
@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.name)
def test_lines_and_words_match_tokenizers(path):
    texts = line_inputs()
    assert len(texts) > 3000
    assert_all_agree(model_pair(str(path)), texts, f"Unigram {path.name}")


@needs_data
@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.name)
def test_a_model_read_packed_matches_tokenizers(path):
    spec = json.loads(open(path, encoding="utf-8").read())["model"]
    ours, ref = unigram_from_json(read_packed(spec), "$.model", fail), model_pair(str(path))[1]
    assert ours.vocab == model_pair(str(path))[0].vocab
    assert_all_agree((ours, ref), line_inputs(), f"Unigram {path.name} read packed")


@needs_data
@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.name)
def test_corpus_words_match_tokenizers(path):
    pair = model_pair(str(path))
    for name, words in corpus_words(DATA, 20_000).items():
        found = words_problem(pair, ["\u2581" + w for w in words])
        assert found is None, f"{name}: {found}"


@needs_data
@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.name)
def test_scores_are_read_as_tokenizers_reads_json(path):
    ours, ref = model_pair(str(path))
    theirs = json.loads(ref.to_str())["model"]["vocab"]
    assert [score for _, score in ours.vocab] == [score for _, score in theirs]


def test_a_tie_up_to_rounding_goes_as_tokenizers_rounds_the_scores():
    # scores of botchan_unigram_5000 that serde_json reads one step off
    vocab = [["<unk>", 0.0], ["\u2581", -4.692657947540283], ["0", -8.680115699768066],
             ["00", -10.589752197265625], ["\u2581the", -3.2940776348114014]]
    for text in ("\u25810000000", "\u2581000000010", "\u2581the000"):
        assert_same(small(vocab), text)


text_strategy = st.text(st.characters(exclude_categories=("Cs",)), max_size=60) | st.text(
    st.sampled_from("ab \u2581\u0301\u00e9\u4e16\U0001F600.,\n\t"), max_size=40)


@needs_data
@settings(max_examples=100, deadline=None)
@given(st.sampled_from(MODEL_FILES or [None]), text_strategy)
def test_hypothesis_text_matches_tokenizers(path, text):
    ours, ref = model_pair(str(path))
    assert problem(ours, ref, text) is None


# -- small vocabularies: one rule each ------------------------------------------------

def small(vocab, unk_id=0, byte_fallback=False, packed=False):
    spec = {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": byte_fallback}
    return (unigram_from_json(read_packed(spec) if packed else spec, "$.model", fail),
            reference(spec))


ABC = [["<unk>", 0.0], ["a", -1.0], ["b", -2.0], ["c", -2.5], ["ab", -2.5], ["abc", -4.0]]


def test_empty_input_gives_no_tokens():
    assert_same(small(ABC), "")
    assert small(ABC)[0].tokenize("") == []


def test_consecutive_unknown_characters_are_one_unk_token():
    ours, _ = small(ABC)
    assert ours.tokenize("axyz\u00e9b") == [(1, "a", (0, 1)), (0, "xyz\u00e9", (1, 5)),
                                            (2, "b", (5, 6))]
    assert_same(small(ABC), "xxaxx\U0001F600\U0001F600b")


def test_the_unknown_piece_itself_fuses_with_unknown_characters():
    spelled = ABC + [[c, -1.0] for c in "<unk>"]
    for text in ("<unk>", "x<unk>", "<unk>x", "a<unk>b", "<unk><unk>"):
        assert_same(small(spelled), text)
        assert_same(small(ABC), text)


def test_ties_go_to_the_path_found_first():
    vocab = [["<unk>", 0.0], ["a", -1.0], ["b", -1.0], ["ab", -2.0], ["aab", -3.0], ["aa", -2.0]]
    for text in ("ab", "aab", "aaab", "abab", "aaaa"):
        assert_same(small(vocab), text)


def test_f64_scores_are_not_rounded_to_float():
    # -1.0000000001 rounds to -1.0 as a float, which would tie "ab" with "a" + "b"
    vocab = [["<unk>", 0.0], ["a", -0.5], ["b", -0.5], ["ab", -1.0000000001]]
    ours, _ = small(vocab)
    assert ours.tokenize_ids("ab") == [1, 2]
    assert_same(small(vocab), "ab")
    assert_same(small([["<unk>", 0.0], ["a", -0.5], ["b", -0.5], ["ab", -0.9999999999]]), "ab")


def test_unknown_score_is_min_score_minus_ten_over_every_piece():
    # an unknown "x" costs -20 - 10; "xy" beats "x" + unk "y" only if -25 > -30 - 1
    vocab = [["<unk>", -20.0], ["x", -1.0], ["xy", -25.0]]
    assert_same(small(vocab), "xy")
    vocab = [["<unk>", -20.0], ["x", -1.0], ["xy", -32.0]]
    assert_same(small(vocab), "xy")


BYTES = [["<unk>", 0.0], ["a", -1.0]] + [[f"<0x{b:02X}>", -5.0] for b in range(256)]


@pytest.mark.parametrize("packed", [False, True])
def test_byte_fallback_spells_an_unknown_run_in_byte_pieces(packed):
    ours, _ = small(BYTES, byte_fallback=True, packed=packed)
    got = ours.tokenize("a\u00e9\U0001F600a")
    assert [t[1] for t in got] == ["a", "<0xC3>", "<0xA9>", "<0xF0>", "<0x9F>", "<0x98>",
                                   "<0x80>", "a"]
    assert {t[2] for t in got[1:-1]} == {(1, 3)}
    for text in ("\U0001F600", "x\U00010348y", "a\u4e16", "\u4e16\u754c"):
        assert_same(small(BYTES, byte_fallback=True, packed=packed), text)


def test_byte_fallback_with_a_byte_piece_missing_gives_unk():
    vocab = [v for v in BYTES if v[0] != "<0x98>"]
    ours, _ = small(vocab, byte_fallback=True)
    assert ours.tokenize_ids("\U0001F600") == [0]
    assert ours.tokenize_ids("\u00e9") == [2 + 0xC3 - 1, 2 + 0xA9 - 1]
    for text in ("\U0001F600", "\u00e9\U0001F600", "a\U0001F600a"):
        assert_same(small(vocab, byte_fallback=True), text)


def test_byte_pieces_are_matched_as_text_too():
    assert_same(small(BYTES, byte_fallback=True), "<0x41>a<0x4")


def test_without_unk_id_an_unknown_character_fails_where_its_node_would_be_written():
    # tokenizers fails where its Viterbi would store an unknown node as the
    # best path to a position, even if no final path goes through it
    vocab = [["a", -1.0], ["b", -1.0], ["d", -1.0], ["abc", -1.0], ["abcd", -5.0]]
    ours, ref = small(vocab, unk_id=None)
    for text in ("abab", "abc", "abcd", "abcdc", "c", "cab", "xa"):
        assert_same_outcome((ours, ref), text)
    with pytest.raises(FasttokError, match="unk_id"):
        ours.tokenize_ids("c")


pieces = st.lists(st.sampled_from("abc"), min_size=1, max_size=3).map("".join)
small_vocabularies = st.lists(st.tuples(pieces, st.sampled_from([-1.0, -2.0, -3.5, -12.0, 0.5])),
                              min_size=1, max_size=12).map(lambda v: [list(p) for p in v])


@settings(max_examples=100, deadline=None)
@given(small_vocabularies, st.sampled_from([None, 0]), st.text("abcd", max_size=12),
       st.booleans())
def test_random_small_vocabularies_match_tokenizers(vocab, unk_id, text, packed):
    assert_same_outcome(small(vocab, unk_id=unk_id, packed=packed), text)


@pytest.mark.parametrize("packed", [False, True])
def test_a_piece_spelled_twice_keeps_its_last_id(packed):
    vocab = [["<unk>", 0.0], ["a", -1.0], ["a", -3.0], ["b", -1.0]]
    assert_same(small(vocab, packed=packed), "aab")
    assert small(vocab, packed=packed)[0].token_to_id("a") == 2


@pytest.mark.parametrize("packed", [False, True])
def test_texts_by_id_are_each_ids_piece_made_once(packed):
    # what an encoding spells its tokens with; read packed, the pieces' str
    # are made on first use, once
    vocab = ABC + [["a", -9.0]]
    ours, ref = small(vocab, packed=packed)
    assert ours.texts_by_id == [ref.id_to_token(i) for i in range(len(vocab))]
    assert ours.texts_by_id is ours.texts_by_id


def test_vocabulary_lookups_match_tokenizers():
    spec = {"type": "Unigram", "unk_id": 0, "vocab": ABC + [["a", -9.0]]}
    ours, ref = unigram_from_json(spec, "$.model", fail), reference(spec)
    assert ours.get_vocab() == ref.get_vocab(with_added_tokens=False)
    assert ours.get_vocab_size() == ref.get_vocab_size(with_added_tokens=False)
    for token in ("a", "abc", "zz", ""):
        assert ours.token_to_id(token) == ref.token_to_id(token)
    for i in (0, 1, 5, 6, 7, 100):
        assert ours.id_to_token(i) == ref.id_to_token(i)


def test_positive_scores_and_empty_pieces_are_taken_as_tokenizers_takes_them():
    vocab = [["<unk>", 0.0], ["", 5.0], ["a", 1.0], ["aa", 1.5], ["b", 3.0]]
    for text in ("aaaa", "ab", "ba", "xa"):
        assert_same(small(vocab), text)


# -- the JSON fields -------------------------------------------------------------------

def test_optional_fields_take_tokenizers_defaults():
    m = unigram_from_json({"type": "Unigram", "vocab": [["a", -1]]}, "$.model", fail)
    assert (m.unk_id, m.byte_fallback) == (None, False)
    assert unigram_from_json(None, "$.model", fail) is None


@pytest.mark.parametrize("spec, where", [
    ({"type": "BPE", "vocab": []}, "$.model.type"),
    ({"type": "Unigram"}, "$.model.vocab"),
    ({"vocab": {"a": 1}}, "$.model.vocab"),
    ({"vocab": [["a", "x"]]}, "$.model.vocab[0]"),
    ({"vocab": [["a", -1.0, 3]]}, "$.model.vocab[0]"),
    ({"vocab": [["a", -1.0]], "unk_id": -1}, "$.model.unk_id"),
    ({"vocab": [["a", -1.0]], "unk_id": 0.0}, "$.model.unk_id"),
    ({"vocab": [["a", -1.0]], "unk_id": 1}, "$.model.unk_id"),
    ({"vocab": [], "unk_id": 0}, "$.model.vocab"),
    ({"vocab": [["a", -1.0]], "byte_fallback": None}, "$.model.byte_fallback"),
    ({"vocab": [["a", -1.0]], "byte_fallback": 1}, "$.model.byte_fallback"),
])
def test_bad_fields_fail_naming_their_path_as_tokenizers_refuses_them(spec, where):
    spec = {"type": "Unigram", **spec}
    with pytest.raises(ValueError, match=f"^{re.escape(where)}: "):
        unigram_from_json(spec, "$.model", fail)
    with pytest.raises(Exception):
        reference(spec)


def test_an_empty_vocabulary_without_unk_id_loads_and_refuses_text():
    ours, ref = small([], unk_id=None)
    assert_same((ours, ref), "")
    with pytest.raises(FasttokError):
        ours.tokenize_ids("a")


def test_model_class_direct_use():
    m = Unigram([("<unk>", 0), ("a", -1)], unk_id=0)
    assert m.tokenize_ids("ab") == [1, 0]


def test_scores_in_range_are_read_by_the_first_use_not_the_load(monkeypatch):
    # the model imports the compiled reader when it reads them
    from fasttok.models import _unigram
    calls = []
    read = _unigram.tokenizers_scores
    monkeypatch.setattr(_unigram, "tokenizers_scores", lambda vocab: calls.append(1) or read(vocab))
    spec = {"type": "Unigram", "unk_id": 0, "vocab": ABC}
    ours = unigram_from_json(read_packed(spec), "$.model", fail)
    assert calls == []
    assert ours.tokenize_ids("abcab") == reference(spec).encode("abcab").ids
    assert calls == [1]


@pytest.mark.parametrize("score", [b"1e400", b"-1" + b"0" * 400])
def test_a_score_past_a_double_fails_at_load_read_packed(score):
    data = b'{"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0], ["b", %s]]}}' % score
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_str(data.decode())
    model = read_tokenizer_document(data)[1].object(made=False)
    with pytest.raises(ValueError, match=r"^\$\.model\.vocab\[1\]: the score is out of the range"):
        unigram_from_json(model, "$.model", fail)
