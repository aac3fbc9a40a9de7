"""The byte-level BPE walk (Llama 3, Qwen 3, GPT-4o ``tokenizer.json``):
ids, character offsets and word indices from one compiled walk
(``CoreBPE.encode_offsets``), equal to ``tokenizers``' and to the pipeline's
stages for both faces (``fasttok.load``'s, whose model never gives a control
id, and ``tokenizers``').
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, missing_data_reason, read_jsonl, read_text, without_truncation_or_padding
from fasttok.formats.hf import control_ids
from fasttok.formats.hf_byte_level import ByteLevelWalk, build_hf_byte_bpe, byte_level_walk
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.loaders.hf_tokenizer_json import load_tokenizer_json, tokenizer_json_record
from fasttok.pre_tokenizers.patterns import QWEN2
from fasttok.shared._bytemap import bytes_to_unicode

tokenizers = pytest.importorskip("tokenizers")

# GPT-4o's 200k tokens take seconds to load twice: its runs are slow tests
FILES = ("llama3", "qwen3", pytest.param("gpt4o", marks=pytest.mark.slow))
LINES_PER_CORPUS = 300


def _path(name: str) -> str:
    path = DATA / "vocab" / "hf" / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return str(path)


@functools.lru_cache(maxsize=None)
def _file(name: str) -> tuple:
    # (record, {face: (pipeline, walk)}, tokenizers' tokenizer)
    path = _path(name)
    record = load_tokenizer_json(path)
    model = build_hf_byte_bpe(record)
    faces = {}
    for face, never in (("tokenizers", frozenset()), ("fasttok.load", control_ids(record))):
        # the stages' Python BPE model is built when a test runs them
        pipeline = pipeline_from_document(record, lazy_model=True, never=never)
        faces[face] = (pipeline, byte_level_walk(record, pipeline, model))
    theirs = without_truncation_or_padding(tokenizers.Tokenizer.from_file(path))
    return record, faces, theirs


@functools.lru_cache(maxsize=None)
def _texts() -> tuple:
    texts = []
    for corpus in ("en", "code", "zh", "multi", "adversarial"):
        path = DATA / "corpus" / f"{corpus}.txt"
        if path.is_file():
            texts += read_text(path).split("\n")[:LINES_PER_CORPUS]
    path = DATA / "testcases" / "lines.jsonl"
    if path.is_file():
        texts += [row["text"] for row in read_jsonl(path)]
    return tuple(texts)


def _spans(offsets) -> list:
    return [(offsets[i], offsets[i + 1]) for i in range(0, len(offsets), 2)]


def _walked(walk, text, allowed=None) -> tuple:
    ids, offsets, words = walk.encode(text, allowed)
    return list(ids), _spans(offsets), list(words)


def _theirs(tok, text) -> tuple:
    e = tok.encode(text, add_special_tokens=False)
    return e.ids, e.offsets, e.word_ids


def _first_mismatch(walk, expected, texts, allowed=None) -> str | None:
    for text in texts:
        mine, want = _walked(walk, text, allowed), expected(text)
        if mine != want:
            at = next(i for i, pair in enumerate(zip(zip(*mine), zip(*want)))
                      if pair[0] != pair[1]) if mine[0] and want[0] else 0
            return f"{text!r}: first difference at token {at}: {mine} != {want}"
    return None


@pytest.fixture(scope="module", params=FILES)
def shared(request):
    return _file(request.param)


def test_shared_byte_level_files_have_the_walk(shared):
    _, faces, _ = shared
    assert all(type(walk) is ByteLevelWalk for _, walk in faces.values())


def test_offsets_and_words_equal_tokenizers_on_corpus_lines(shared):
    _, faces, theirs = shared
    walk = faces["tokenizers"][1]
    assert _first_mismatch(walk, functools.partial(_theirs, theirs), _texts()) is None


def test_ids_alone_equal_the_ids_with_offsets_and_tokenizers(shared):
    _, faces, theirs = shared
    walk = faces["fasttok.load"][1]
    for text in _texts():
        assert walk.ids(text, None) == list(walk.encode(text, None)[0]) \
            == theirs.encode(text, add_special_tokens=False).ids, text


@pytest.mark.parametrize("text", [
    "\U0001F600", "a\U0001F44D\U0001F3FDb", "\U0001F9D1\u200d\U0001F4BB code",
    "日本語のテキスト", "  \n\n\t x  ", "", "<|endoftext|>", "e\u0301 x\u0327\u0308 \u212b",
])
def test_a_character_split_over_tokens_spans_the_whole_character(shared, text):
    _, faces, theirs = shared
    assert _walked(faces["tokenizers"][1], text) == _theirs(theirs, text)


def test_a_long_text_through_the_piece_cache_equals_tokenizers(shared):
    # past CACHE_MIN_BYTES the core copies a repeated piece's ids from the cache
    _, faces, theirs = shared
    text = "\n".join(_texts()[:400]) + " e\u0301<|endoftext|>x\u0308"
    assert _walked(faces["tokenizers"][1], text) == _theirs(theirs, text)


_PARTS = ["a", "b", "e", " ", "  ", "\n", "\t", "\r\n", "\u00a0", "\u3000", "1", "23", "'s", "'S",
          "!", ".", "\u0301", "\u0327", "\u0308", "\u07fd", "é", "日", "한", "\u1100\u1161",
          "\U0001F600", "\U0001F44D\U0001F3FD", "\u212b", "\u0958", "\ufb01", "\ufffd"]


@st.composite
def _text_and_allowed(draw, record):
    added = [content for content, _, _ in record.metadata["added_tokens"]]
    parts = _PARTS + added[:4] + added[-2:]
    text = "".join(draw(st.lists(st.sampled_from(parts), max_size=12)))
    ids = sorted(i for _, i, _ in record.metadata["added_tokens"])
    allowed = draw(st.one_of(st.none(), st.sets(st.sampled_from(ids)).map(frozenset)))
    return text, allowed


@pytest.mark.parametrize("name, face", [
    ("llama3", "tokenizers"), ("qwen3", "fasttok.load"),
    # each face's Python BPE model takes most of a second to build
    pytest.param("llama3", "fasttok.load", marks=pytest.mark.slow),
    pytest.param("qwen3", "tokenizers", marks=pytest.mark.slow),
    pytest.param("gpt4o", "tokenizers", marks=pytest.mark.slow),
    pytest.param("gpt4o", "fasttok.load", marks=pytest.mark.slow)])
def test_walk_equals_the_stages_of_each_face(name, face):
    record, faces, _ = _file(name)
    pipeline, walk = faces[face]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_text_and_allowed(record))
    def check(case):
        text, allowed = case
        staged = pipeline._encode_staged(text, 0, None, allowed)
        assert _walked(walk, text, allowed) == (staged.ids, staged.offsets, staged.word_ids)
        assert walk.ids(text, allowed) == staged.ids

    check()


def test_text_the_normalizer_changes_takes_its_alignment():
    _, faces, theirs = _file("qwen3")
    walk = faces["tokenizers"][1]
    text = "Cafe\u0301 \u212bngstro\u0308m <|im_start|>n\u0303 \u0958 e\u0327\u0301"
    assert _walked(walk, text) == _theirs(theirs, text)


def test_a_surrogate_pair_is_left_to_the_stages():
    # one code point in UTF-8 for two characters of the str: no exact offsets
    _, faces, _ = _file("llama3")
    assert faces["tokenizers"][1].encode("a\ud83d\ude00", None) is None


# ---------------------------------------------------------------- configurations declined

_ALPHABET = bytes_to_unicode()
_BYTE_VOCAB = {_ALPHABET[b]: b for b in range(256)}


def _added(token_id: int, content: str) -> dict:
    return {"id": token_id, "content": content, "special": True, "single_word": False,
            "lstrip": False, "rstrip": False, "normalized": False}


def _document(**changes) -> dict:
    # "é" and the first two bytes of an emoji merge: a character split over tokens
    doc = {"model": {"type": "BPE", "vocab": _BYTE_VOCAB | {"hi": 256, "Ã©": 257, "ðŁ": 258},
                     "merges": [["h", "i"], ["Ã", "©"], ["ð", "Ł"]]},
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                             "trim_offsets": False, "use_regex": True},
           "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                       "use_regex": True},
           "added_tokens": [_added(259, "<e>")]}
    doc.update(changes)
    return doc


def _walk_of(doc: dict):
    record = tokenizer_json_record(json.dumps(doc), "t.json")
    return byte_level_walk(record, pipeline_from_document(record))


def test_the_small_byte_level_document_has_the_walk():
    assert _walk_of(_document()).ids("hi<e>é", None) == [256, 259, 257]


def _split(behavior: str, invert: bool) -> dict:
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": QWEN2}, "behavior": behavior, "invert": invert},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
         "use_regex": False}]}


_SHAPES = {
    "ByteLevel's own regex": {},
    "Split, Isolated": {"pre_tokenizer": _split("Isolated", False)},
    "Split, inverted Removed": {"pre_tokenizer": _split("Removed", True)},
    "NFC, then Split": {"pre_tokenizer": _split("Isolated", False), "normalizer": {"type": "NFC"}},
}


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_each_byte_level_shape_equals_tokenizers(shape):
    doc = _document(**_SHAPES[shape])
    walk = _walk_of(doc)
    theirs = tokenizers.Tokenizer.from_str(json.dumps(doc))
    parts = ["hi", " hi", "<e>", "é", "e\u0301", " ", "  ", "\n", "\U0001F600", "日本", "!", "'s",
             "12345", "\u212b"]

    @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(parts), max_size=10).map("".join))
    def check(text):
        assert _walked(walk, text) == _theirs(theirs, text)

    check()


def test_a_split_regex_without_a_compiled_scanner_is_left_to_the_stages():
    split = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "[a-z]+|[^a-z]+"}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
         "use_regex": False}]}
    assert _walk_of(_document(pre_tokenizer=split)) is None


def test_text_where_a_merge_may_make_an_added_tokens_entry_is_left_to_the_stages():
    # tokenizers' model may give 256 for "hi" when the added token is not matched
    walk = _walk_of(_document(added_tokens=[_added(256, "hi")]))
    assert walk.encode("hi", frozenset()) is None
    assert walk.ids("hi", None) == [256]


def test_added_tokens_given_lstrip_after_loading_cut_as_the_stages_cut():
    from fasttok.added_tokens.hf_added import AddedToken, AddedTokens

    record = tokenizer_json_record(json.dumps(_document()), "t.json")
    pipeline = pipeline_from_document(record)
    pipeline.set_added(AddedTokens([AddedToken("<e>", 259, special=True, lstrip=True)]))
    staged = pipeline._encode_staged("hi  <e>", 0, None)
    assert _walked(byte_level_walk(record, pipeline), "hi  <e>") == \
        (staged.ids, staged.offsets, staged.word_ids)


def test_an_added_token_tokenizers_numbers_anew_takes_the_pipelines_id():
    # id 257 is a hole in the vocabulary: tokenizers gives "<e>" the
    # vocabulary's size as its id (the pipeline follows), the record keeps 257
    doc = _document(added_tokens=[_added(257, "<e>")])
    doc["model"]["vocab"] = _BYTE_VOCAB | {"hi": 256, "Ã©": 258, "ðŁ": 259}
    theirs = tokenizers.Tokenizer.from_str(json.dumps(doc))
    assert _walked(_walk_of(doc), "hi<e>é") == _theirs(theirs, "hi<e>é")
