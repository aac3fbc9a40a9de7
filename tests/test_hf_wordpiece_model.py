"""The Hugging Face ``WordPiece`` model (fasttok.models.hf_wordpiece) against tokenizers' own.

The reference is a ``tokenizers.Tokenizer`` holding only the model (null
normalizer, pre-tokenizer and post-processor), so the model sees each input
whole, as one word; ids, tokens and character offsets must be equal. Inputs:
the words of ``testcases/lines.jsonl`` (split on whitespace, and as
tokenizers' BertPreTokenizer splits them) and its whole lines, the words
of the corpus files (ids only), hypothesis
text, with ``all-MiniLM-L6-v2``'s vocabulary; small hand-made vocabularies
pin the rules: unknown words, ``max_input_chars_per_word`` at and past the
limit, prefix-only tokens, prefixed tokens at a word's start, another prefix
or none, a missing unknown token, the JSON fields; and the token strings
made only when ``tokenize`` first asks for them (an encode reads none).
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
from fasttok.models.hf_wordpiece import WordPiece, wordpiece_from_json

tokenizers = pytest.importorskip("tokenizers")

MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"
LINES = DATA / "testcases" / "lines.jsonl"
needs_data = pytest.mark.skipif(not MINILM.is_file() or not LINES.is_file(),
                                reason=missing_data_reason(MINILM))


@functools.lru_cache(maxsize=None)
def minilm() -> tuple:
    spec = json.loads(MINILM.read_text(encoding="utf-8"))["model"]
    return wordpiece_from_json(spec, "$.model", fail), reference(spec)


def line_words() -> list:
    """Each line whole, lowercased, and its words: split on whitespace, and as
    BertNormalizer + BertPreTokenizer would hand them to the model."""
    normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    pre = tokenizers.pre_tokenizers.BertPreTokenizer()
    out = []
    for case in read_jsonl(LINES):
        text = case["text"]
        out += [text, text.lower()] + text.split()
        out += [w for w, _ in pre.pre_tokenize_str(normalizer.normalize_str(text))]
    return out


@needs_data
def test_lines_and_words_match_tokenizers():
    texts = line_words()
    assert len(texts) > 3000
    assert_all_agree(minilm(), texts, "WordPiece all-MiniLM-L6-v2")


@needs_data
def test_corpus_words_match_tokenizers():
    for name, words in corpus_words(DATA, 20_000).items():
        for form in (words, [w.lower() for w in words]):
            found = words_problem(minilm(), form)
            assert found is None, f"{name}: {found}"


text_strategy = st.text(st.characters(exclude_categories=("Cs",)), max_size=30) | st.text(
    st.sampled_from("abcdefghij#\u00e9\u4e16\U0001F600"), max_size=120)


@needs_data
@settings(max_examples=150, deadline=None)
@given(text_strategy)
def test_hypothesis_words_match_tokenizers(text):
    ours, ref = minilm()
    assert problem(ours, ref, text) is None


# -- small vocabularies: one rule each ------------------------------------------------

def small(vocab, unk_token="[UNK]", prefix="##", limit=100):
    spec = {"type": "WordPiece", "unk_token": unk_token, "continuing_subword_prefix": prefix,
            "max_input_chars_per_word": limit, "vocab": vocab}
    return wordpiece_from_json(spec, "$.model", fail), reference(spec)


BANANA = {"[UNK]": 0, "ba": 1, "##na": 2, "b": 3, "##a": 4, "##n": 5, "n": 6}


def test_empty_input_gives_no_tokens():
    ours, ref = small(BANANA)
    assert ours.tokenize("") == ours.tokenize_ids("") == []
    assert_same((ours, ref), "")


def test_greedy_longest_match_first():
    ours, _ = small(BANANA)
    assert ours.tokenize("banana") == [(1, "ba", (0, 2)), (2, "##na", (2, 4)),
                                       (2, "##na", (4, 6))]
    for text in ("banana", "bananan", "bn", "nana", "b", "nab"):
        assert_same(small(BANANA), text)


def test_a_position_without_a_token_makes_the_whole_word_unk():
    ours, _ = small(BANANA)
    assert ours.tokenize("banxna") == [(0, "[UNK]", (0, 6))]
    assert_same(small(BANANA), "banax")
    assert_same(small(BANANA), "\u00e9ba")


def test_a_word_of_max_input_chars_is_cut_and_one_more_is_unk():
    pair = small({"[UNK]": 0, "\u00e9": 1, "##\u00e9": 2}, limit=5)
    assert pair[0].tokenize_ids("\u00e9" * 5) == [1, 2, 2, 2, 2]
    assert pair[0].tokenize("\u00e9" * 6) == [(0, "[UNK]", (0, 6))]
    for n in (4, 5, 6, 7, 9):
        assert_same(pair, "\u00e9" * n)
    assert_same(small({"[UNK]": 0, "a": 1}, limit=0), "a")


def test_prefix_only_tokens_match_only_as_a_word():
    vocab = {"[UNK]": 0, "##": 1, "a": 2, "##a": 3, "#": 4, "###": 5}
    for text in ("##", "a##", "###", "a###", "#a", "####", "a#", "##a"):
        assert_same(small(vocab), text)


def test_prefixed_tokens_match_at_a_word_start_as_their_own_text():
    vocab = {"[UNK]": 0, "##ab": 1, "##c": 2, "c": 3}
    ours, _ = small(vocab)
    assert ours.tokenize("##abc") == [(1, "##ab", (0, 4)), (2, "##c", (4, 5))]
    for text in ("##abc", "cab", "c##ab", "##c"):
        assert_same(small(vocab), text)


def test_other_prefixes_and_the_empty_prefix():
    vocab = {"<unk>": 0, "un": 1, "@@aff": 2, "@@able": 3, "aff": 4, "": 5, "@@": 6}
    for prefix in ("@@", "", "\u2581", "un"):
        for text in ("unaffable", "affable", "@@aff", "unun", "unx"):
            assert_same(small(vocab, unk_token="<unk>", prefix=prefix), text)


def test_the_start_marker_never_leaks_into_matches():
    # texts holding U+2581 or U+00FF must not match differently from tokenizers
    vocab = {"[UNK]": 0, "\u2581": 1, "\u2581a": 2, "##\u2581a": 3, "\u00ff": 4, "##\u00ff": 5}
    for text in ("\u2581a\u2581a", "\u00ff\u00ff", "\u2581", "a"):
        assert_same(small(vocab), text)


def test_without_the_unknown_token_an_unknown_word_is_an_error():
    pair = small({"a": 0, "##b": 1}, limit=3)
    for text in ("ab", "ac", "b", "abbb"):
        assert_same_outcome(pair, text)
    with pytest.raises(FasttokError, match="Missing"):
        pair[0].tokenize_ids("ac")


def test_ids_may_repeat_and_have_gaps():
    vocab = {"[UNK]": 7, "a": 100, "b": 100, "##b": 3}
    for text in ("ab", "bb", "ba", "c"):
        assert_same(small(vocab), text)


def test_vocabulary_lookups_match_tokenizers():
    ours, ref = small({"[UNK]": 0, "a": 5, "##a": 2})
    assert ours.get_vocab() == ref.get_vocab(with_added_tokens=False)
    assert ours.get_vocab_size() == ref.get_vocab_size(with_added_tokens=False)
    for token in ("a", "##a", "b"):
        assert ours.token_to_id(token) == ref.token_to_id(token)
    for i in (0, 1, 2, 5, 6):
        assert ours.id_to_token(i) == ref.id_to_token(i)


# -- the JSON fields -------------------------------------------------------------------

GOOD = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
        "max_input_chars_per_word": 100, "vocab": {"a": 0}}


@pytest.mark.parametrize("change, where", [
    ({"unk_token": None}, "$.model.unk_token"),
    ({"continuing_subword_prefix": 3}, "$.model.continuing_subword_prefix"),
    ({"max_input_chars_per_word": -5}, "$.model.max_input_chars_per_word"),
    ({"max_input_chars_per_word": 1.5}, "$.model.max_input_chars_per_word"),
    ({"vocab": [["a", 0]]}, "$.model.vocab"),
    ({"vocab": {"a": -1}}, "$.model.vocab['a']"),
    ({"vocab": {"a": 2 ** 32}}, "$.model.vocab['a']"),
])
def test_bad_fields_fail_naming_their_path_as_tokenizers_refuses_them(change, where):
    spec = {**GOOD, **change}
    with pytest.raises(ValueError, match=f"^{re.escape(where)}: "):
        wordpiece_from_json(spec, "$.model", fail)
    with pytest.raises(Exception):
        reference(spec)


@pytest.mark.parametrize("field", ["unk_token", "continuing_subword_prefix",
                                   "max_input_chars_per_word", "vocab"])
def test_every_field_is_required_as_tokenizers_requires_it(field):
    spec = {k: v for k, v in GOOD.items() if k != field}
    with pytest.raises(ValueError, match=f"^\\$\\.model\\.{field}: missing"):
        wordpiece_from_json(spec, "$.model", fail)
    with pytest.raises(Exception):
        reference(spec)


def test_another_type_fails():
    with pytest.raises(ValueError, match=r"^\$\.model\.type: "):
        wordpiece_from_json({**GOOD, "type": "WordLevel"}, "$.model", fail)


def test_type_may_be_left_out():
    spec = {k: v for k, v in GOOD.items() if k != "type"}
    assert wordpiece_from_json(spec, "$.model", fail).tokenize_ids("a") == [0]
    assert wordpiece_from_json(None, "$.model", fail) is None


def test_model_class_direct_use():
    assert WordPiece({"[UNK]": 0, "a": 1}).tokenize_ids("aa") == [0]


def _packed_and_plain(vocab: dict) -> tuple:
    from fasttok.loaders.hf_tokenizer_json import ModelObject
    from fasttok.shared._json_reader import PackedVocab, read_tokenizer_document

    spec = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": vocab}
    doc, packed = read_tokenizer_document(json.dumps({"model": spec}).encode())
    model = ModelObject(packed)
    assert type(model["vocab"]) is PackedVocab  # kept packed by the reader
    return (wordpiece_from_json(model, "$.model", fail, frozenset({3})),
            wordpiece_from_json(spec, "$.model", fail, frozenset({3})))


def test_a_model_of_a_packed_vocabulary_answers_as_the_model_of_its_dict():
    vocab = {"[UNK]": 0, "é": 1, "##ab": 2, "[CLS]": 3, "a": 4}
    packed, plain = _packed_and_plain(vocab)
    for model in (packed, plain):
        assert model.tokenize("éab") == [(1, "é", (0, 1)), (2, "##ab", (1, 3))]
        assert model.tokenize_ids("[CLS]") == [0]  # a never id matches no word
        assert [model.token_to_id(t) for t in ("é", "b")] == [1, None]
        assert [model.id_to_token(i) for i in (2, 9)] == ["##ab", None]
        assert model.get_vocab() == model.vocab == vocab and model.get_vocab_size() == 5
    assert packed.texts_by_id == tuple(vocab) and plain.texts_by_id is None


def test_the_compiled_model_is_built_once_on_first_use_whichever_thread_asks(monkeypatch):
    import threading

    from fasttok.models import _wordpiece

    built = []
    real = _wordpiece.WordPieceModel

    def counted(*args, **kwargs):
        built.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(_wordpiece, "WordPieceModel", counted)
    model = WordPiece({"[UNK]": 0, "a": 1, "##b": 2})
    assert built == [] and model.token_to_id("a") == 1  # lookups need no build
    start = threading.Barrier(4)
    found = []

    def encode():
        start.wait()
        found.append(model.tokenize("abb"))

    threads = [threading.Thread(target=encode) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [[(1, "a", (0, 1)), (2, "##b", (1, 2)), (2, "##b", (2, 3))]] * 4
    assert len(built) == 1


@pytest.mark.parametrize("never", [frozenset(), frozenset({0, 6}), frozenset({2, 5}), frozenset({4}),
                                   frozenset({-(1 << 70), 3, 1 << 70}), frozenset({1 << 70})])
def test_the_automaton_texts_of_a_packed_vocabulary_are_those_of_its_dict(never):
    from fasttok.models._wordpiece import wordpiece_texts
    from fasttok.shared._json_reader import read_tokenizer_document

    # the empty token, the prefix alone and prefixed tokens of two-byte characters
    vocab = {"[UNK]": 0, "a": 1, "##b": 2, "": 3, "##": 4, "é": 5, "##é": 6}
    doc, packed = read_tokenizer_document(json.dumps({"model": {"vocab": vocab}}).encode())
    assert wordpiece_texts(packed.vocab, "##", never, b"\xc0") == \
        wordpiece_texts(vocab, "##", never, b"\xc0")


@pytest.mark.parametrize("packed", [False, True], ids=["dict", "packed"])
def test_token_strings_are_made_when_tokenize_first_asks_for_them(packed):
    # the automaton's texts keep their places in the vocabulary; an encode
    # (match_word) reads no token string, tokenize spells them from there
    from fasttok.shared._json_reader import read_tokenizer_document

    vocab = {"[UNK]": 0, "": 1, "##b": 2, "a": 3, "##": 4, "é": 5, "##é": 6}
    if packed:
        vocab = read_tokenizer_document(json.dumps({"model": {"vocab": vocab}}).encode())[1].vocab
    model = WordPiece(vocab)
    assert model.tokenize_ids("abéb") == [3, 2, 6, 2]
    assert "_values" not in vars(model)
    assert model.tokenize("abéb") == [(3, "a", (0, 1)), (2, "##b", (1, 2)), (6, "##é", (2, 3)),
                                      (2, "##b", (3, 4))]
