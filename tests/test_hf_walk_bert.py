"""BERT's compiled walk (:func:`fasttok.formats.hf_bert.bert_walk`) against
``tokenizers`` and against the pipeline's own stages.

A walk of a BertNormalizer + BertPreTokenizer + WordPiece file gives, for a
text, exactly ``tokenizers``' ``encode(text, add_special_tokens=False)``:
its ``ids``, its ``offsets`` (characters of the text, through the
normalizer's alignment: lowercasing to two characters, stripped accents,
removed controls, padded CJK ideographs, ``[UNK]`` over a whole word) and
its ``word_ids`` (added tokens count as words) -- on all-MiniLM-L6-v2 and
on small documents of every BertNormalizer setting. ``walk.ids`` is the
ids of ``walk.encode``; both equal the stages' for both faces of the
pipeline (with the special tokens kept out of the model, ``fasttok.load``'s,
and without, ``fasttok.hf``'s), whatever added tokens are allowed.
"""

from __future__ import annotations

import functools
import json
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, missing_data_reason, read_jsonl, read_text, without_truncation_or_padding
from fasttok.formats.hf import control_ids
from fasttok.formats.hf_bert import BertWalk, bert_walk
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.formats.hf_walks import walk_for
from fasttok.loaders.hf_tokenizer_json import load_tokenizer_json, tokenizer_json_record
from fasttok.models._wordpiece import OTHER
from fasttok.models.hf_wordpiece import WordPiece

tokenizers = pytest.importorskip("tokenizers")

MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"
CORPUS = ("en", "code", "zh", "multi", "adversarial")
# the characters whose rule is the hard case: marks NFD keeps, strips or
# reorders, Hangul (three jamo), İ (two when not stripped), CJK, controls,
# whitespace tokenizers counts and str.isspace does not, astral characters
HARD = ("aAzZ09 \t\n\r\x00\x0b\x1c\x7f\x85\u00ad\ufffd\u200b,.!?'\"-_()[]{}~`$^|"
        "éÉ\u0301\u0323\u0345\U0001D165\U0001D16D\u0f71\u0f72İıΣςß"
        "한국어\u1100\u3000\u00a0世界\u4e00\U00020000\uf900ﬁ①Ⅻ٣😀\U0001F3FB")
TEXT = st.text(st.sampled_from(HARD), max_size=40) | st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


def _theirs(tok, text: str) -> tuple:
    e = tok.encode(text, add_special_tokens=False)
    return e.ids, [x for span in e.offsets for x in span], e.word_ids


def _ours(walk, text: str, allowed=None) -> tuple:
    found = walk.encode(text, allowed)
    assert found is not None, repr(text)
    ids, offsets, words = found
    return list(ids), list(offsets), list(words)


def _staged(pipeline, text: str, allowed=None) -> tuple:
    # the pipeline's stages one by one (the oracle of every walk): a pipeline
    # given no walk runs them
    pipeline.walk = None
    e = pipeline._encode_one(text, 0, None, allowed)
    return e.ids, [x for span in e.offsets for x in span], e.word_ids


def _same_or_declined(walk, theirs, text: str) -> None:
    # the walk's answer is tokenizers', or none for a text holding a code
    # point whose normalization the rule leaves to the stages
    found = walk.encode(text, None)
    if found is None:
        assert walk.ids(text, None) is None
        assert any(walk.rules.map_code_point(ord(c))[0] == OTHER for c in text), repr(text)
        return
    assert (list(found[0]), list(found[1]), list(found[2])) == _theirs(theirs, text), repr(text)
    assert walk.ids(text, None) == list(found[0]), repr(text)


@functools.lru_cache(maxsize=None)
def _minilm() -> tuple:
    """(walk of fasttok.hf's face, tokenizers' tokenizer)"""
    if not MINILM.is_file():
        pytest.skip(missing_data_reason(MINILM))
    record = load_tokenizer_json(str(MINILM))
    theirs = without_truncation_or_padding(tokenizers.Tokenizer.from_file(str(MINILM)))
    return walk_for(record, pipeline_from_document(record)), theirs


def _bert_doc(normalizer, max_chars: int = 100, added: tuple = ()) -> str:
    vocab = {"[UNK]": 0, "a": 1, "##b": 2, "à": 3, "!": 4, "世": 5, "##a": 6, "A": 7, "##B": 8,
             "i": 9, "##̇": 10, "ᄒ": 11, "##ᅡ": 12, "##ᆫ": 13, "[X]": 14, "é": 15}
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added),
        "normalizer": normalizer, "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": None, "decoder": None,
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": max_chars, "vocab": vocab}})


def _added(content: str, token_id: int, **flags) -> dict:
    spec = {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}
    spec.update(flags)
    return spec


def _doc_walk(doc: str) -> tuple:
    record = tokenizer_json_record(doc, "tokenizer.json")
    return bert_walk(record, pipeline_from_document(record)), tokenizers.Tokenizer.from_str(doc)


DEFAULT = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
           "strip_accents": None, "lowercase": True}


@pytest.mark.parametrize("name", CORPUS)
def test_walk_equals_tokenizers_on_corpus_lines(name):
    walk, theirs = _minilm()
    path = DATA / "corpus" / f"{name}.txt"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    for line in read_text(path).split("\n")[:300]:
        assert _ours(walk, line) == _theirs(theirs, line), repr(line)


def test_walk_equals_tokenizers_on_a_whole_corpus_file():
    walk, theirs = _minilm()
    path = DATA / "corpus" / "multi.txt"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    text = read_text(path)[:20000]  # long enough to run without the GIL, with its own cache
    assert _ours(walk, text) == _theirs(theirs, text)


def test_walk_equals_tokenizers_on_the_shared_test_lines():
    walk, theirs = _minilm()
    path = DATA / "testcases" / "lines.jsonl"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    for case in read_jsonl(path):
        assert _ours(walk, case["text"]) == _theirs(theirs, case["text"]), case["id"]


def test_walk_equals_tokenizers_on_hypothesis_text_with_added_tokens():
    walk, theirs = _minilm()

    @settings(max_examples=150, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(TEXT | st.sampled_from(["[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", " "]),
                    max_size=5))
    def check(parts):
        _same_or_declined(walk, theirs, "".join(parts))

    check()


@pytest.mark.parametrize("text", ["", " ", "\t\n ", "\x00\u200b", "[CLS]", "[CLS][SEP]"])
def test_walk_of_text_with_no_word_equals_tokenizers(text):
    walk, theirs = _minilm()
    assert _ours(walk, text) == _theirs(theirs, text)


@pytest.mark.parametrize("word", ["a", "é", "e\u0301", "İ", "한", "\x00a", "ab\u0301c"])
@pytest.mark.parametrize("length", [100, 101])
def test_unk_of_a_word_over_max_input_chars_per_word_spans_the_whole_word(word, length):
    walk, theirs = _minilm()
    text = f"x {word * length}, y"
    assert _ours(walk, text) == _theirs(theirs, text)


@pytest.mark.parametrize("syllables", [33, 34])
def test_max_input_chars_per_word_counts_the_jamo_a_hangul_syllable_becomes(syllables):
    walk, theirs = _minilm()
    text = "가" * syllables  # two jamo each: 66 or 68 characters, 99 or 102 with 각
    for word in (text, "각" * syllables):
        assert _ours(walk, word) == _theirs(theirs, word)


@pytest.mark.parametrize("clean_text", [False, True])
@pytest.mark.parametrize("chinese", [False, True])
@pytest.mark.parametrize("strip_accents", [None, False, True])
@pytest.mark.parametrize("lowercase", [False, True])
def test_every_bert_normalizer_setting_gives_tokenizers_offsets(clean_text, chinese,
                                                                 strip_accents, lowercase):
    walk, theirs = _doc_walk(_bert_doc({
        "type": "BertNormalizer", "clean_text": clean_text, "handle_chinese_chars": chinese,
        "strip_accents": strip_accents, "lowercase": lowercase}))
    for text in ["ab Ab AB àb À\u0301b a!b 世a a世b \x00a\x7fb\tab\u3000a", "İi\u0307 한한",
                 "a\u0301\u0323b e\u0301", HARD, ""]:
        _same_or_declined(walk, theirs, text)


def test_walk_without_a_normalizer_gives_tokenizers_offsets():
    walk, theirs = _doc_walk(_bert_doc(None))
    for text in ["ab AB à 世a!", HARD]:
        _same_or_declined(walk, theirs, text)


@pytest.mark.parametrize("flags", [{}, {"lstrip": True}, {"rstrip": True},
                                   {"lstrip": True, "rstrip": True}, {"single_word": True}])
def test_added_tokens_cut_the_text_and_count_as_words_as_in_tokenizers(flags):
    walk, theirs = _doc_walk(_bert_doc(DEFAULT, added=(_added("[X]", 14, **flags),
                                                       _added("<z>", 20, **flags))))
    for text in ["a [X] b", "a[X]b", "[X]", "  [X]  <z>  ", "ab<z>[X]ba", "<z> a\u0301 <z>"]:
        assert _ours(walk, text) == _theirs(theirs, text), repr(text)
        assert walk.ids(text, None) == _theirs(theirs, text)[0], repr(text)


@functools.lru_cache(maxsize=None)
def _face(face: str) -> tuple:
    """(pipeline, its walk) of all-MiniLM-L6-v2 as fasttok.hf or fasttok.load builds it"""
    if not MINILM.is_file():
        pytest.skip(missing_data_reason(MINILM))
    record = load_tokenizer_json(str(MINILM))
    never = control_ids(record) if face == "fasttok.load" else frozenset()
    pipeline = pipeline_from_document(record, never=never)
    walk = bert_walk(record, pipeline)
    pipeline.walk = None  # its ids and encodings from the stages
    return pipeline, walk


@pytest.mark.parametrize("face", ["fasttok.hf", "fasttok.load"])
@pytest.mark.parametrize("allowed", [None, frozenset(), frozenset({101}), frozenset({102, 103})])
def test_walk_equals_the_stages_of_both_faces_whatever_is_allowed(face, allowed):
    pipeline, walk = _face(face)
    for text in ["[CLS] Hello, wörld! [SEP]", "[cls] x[MASK]y [UNK] [PAD]", "unk [UNK]",
                 "한국어 [SEP]世界", "A" * 120 + "[SEP]"]:
        staged = _staged(pipeline, text, allowed)
        assert _ours(walk, text, allowed) == staged, text
        assert walk.ids(text, allowed) == pipeline.encode_ids(text, allowed) == staged[0]


@pytest.mark.parametrize("text", ["a\U0001D165b", "a\ud800b", "\udc00"])
def test_walk_declines_text_holding_a_reordered_mark_or_a_lone_surrogate(text):
    walk, _ = _minilm()
    # U+1D165 keeps its combining class through strip_accents (NFD may move
    # it); a lone surrogate has no UTF-8 (the stages say what it does)
    assert walk.encode(text, None) is None
    assert walk.ids(text, None) is None


def test_threads_walking_together_give_each_text_its_serial_answer():
    walk, _ = _minilm()
    # short texts share the model's word cache under the GIL; long ones run
    # without it, each with a cache of its own; new code points are computed
    texts = [f"word{i} {chr(0x4E00 + 7 * i)}é—x [SEP] " * (1 + i % 3) for i in range(200)]
    texts += ["many words here " * 400 + chr(0xAC00 + i) for i in range(6)]
    serial = [_ours(walk, t) for t in texts]
    answers: dict = {}

    def run(k: int) -> None:
        answers[k] = [_ours(walk, t) for t in (texts if k % 2 else texts[::-1])]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, found in answers.items():
        assert found == (serial if k % 2 else serial[::-1])


NORMALIZED_ADDED = {
    "one": ["HeY"],
    "with a space": ["ab cd", "HeY"],
    "all whitespace": ["\u3000", "HeY"],        # nothing to look for in the words
    "many": [f"tok{i}x" for i in range(40)] + ["HeY"],  # more than are looked for one by one
}


@pytest.mark.parametrize("tokens", list(NORMALIZED_ADDED))
@pytest.mark.parametrize("normalizer", [DEFAULT, None])
def test_walk_declines_only_texts_where_a_normalized_added_token_occurs(normalizer, tokens):
    added = [_added(t, 20 + i, normalized=True, special=False)
             for i, t in enumerate(NORMALIZED_ADDED[tokens])]
    doc = _bert_doc(normalizer, added=(*added, _added("[X]", 14)))
    walk, theirs = _doc_walk(doc)
    pipeline = pipeline_from_document(tokenizer_json_record(doc, "tokenizer.json"))
    normalized_ids = {t.id for t in pipeline.added.tokens if t.normalized}
    for text in ["a hex b [X] he y", "ab[X]", "", "世界é", "abcd ab  cd", "ab\tcd", "tok1 x",
                 "a HEY b", "ahEyb [X]", "HeY", "AB cd", "tok39x", "a\u3000b"]:
        staged = _staged(pipeline, text)
        assert staged == _theirs(theirs, text), repr(text)
        found = walk.encode(text, None)
        assert (found is None) == any(i in normalized_ids for i in staged[0]), repr(text)
        assert (walk.ids(text, None) is None) == (found is None), repr(text)
        if found is not None:
            _same_or_declined(walk, theirs, text)


def test_walk_with_normalized_added_tokens_on_hypothesis_text_declines_only_where_they_occur():
    tokens = ["HeY", "ab cd", "世!"]
    doc = _bert_doc(DEFAULT, added=(*[_added(t, 20 + i, normalized=True, special=False)
                                      for i, t in enumerate(tokens)], _added("[X]", 14)))
    walk, theirs = _doc_walk(doc)
    pipeline = pipeline_from_document(tokenizer_json_record(doc, "tokenizer.json"))
    normalized_ids = {t.id for t in pipeline.added.tokens if t.normalized}

    @settings(max_examples=100, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(TEXT | st.sampled_from(tokens + ["HEY", "AB\tCD", "[X]", " "]), max_size=5))
    def check(parts):
        text = "".join(parts)
        staged = _staged(pipeline, text)
        assert staged == _theirs(theirs, text)
        if any(i in normalized_ids for i in staged[0]):
            assert walk.encode(text, None) is None
        else:
            _same_or_declined(walk, theirs, text)

    check()


def test_no_walk_without_the_unknown_token_in_the_model():
    # fasttok's loader refuses such a file; a pipeline built by hand may have one
    record = tokenizer_json_record(_bert_doc(DEFAULT), "tokenizer.json")
    pipeline = pipeline_from_document(record)
    pipeline._model = WordPiece({"a": 0}, unk_token="[UNK]")
    assert bert_walk(record, pipeline) is None


def test_no_walk_for_another_pre_tokenizer():
    doc = json.loads(_bert_doc(DEFAULT))
    doc["pre_tokenizer"] = {"type": "Whitespace"}
    assert _doc_walk(json.dumps(doc))[0] is None


def test_minilm_gets_the_bert_walk():
    assert isinstance(_minilm()[0], BertWalk)


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS)
def test_walk_equals_tokenizers_on_every_corpus_line(name):
    walk, theirs = _minilm()
    path = DATA / "corpus" / f"{name}.txt"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    for line in read_text(path).split("\n"):
        _same_or_declined(walk, theirs, line)
