"""BERT's compiled string path (:mod:`fasttok.formats.hf_bert`) against ``tokenizers``.

``fasttok.load`` of a BertNormalizer + BertPreTokenizer + WordPiece file
(all-MiniLM-L6-v2, and small documents of other settings) must give
``tokenizers``' ``encode(text, add_special_tokens=False).ids``: on corpus
lines and whole files, and on hypothesis text made of the characters whose
per-code-point rule is the hard case (marks NFD keeps and reorders, Hangul
that decomposes, İ that lowercases to two, CJK ideographs, controls, lone
and paired surrogates are left out: tokenizers takes no surrogates), words
over ``max_input_chars_per_word``, and the file's added tokens spliced in.
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, data_file, missing_data_reason, read_text, \
    without_truncation_or_padding
from fasttok.models.hf_bert_rule import bert_rule
from fasttok.models._wordpiece import ALONE, APPEND, OTHER, SKIP, SPACE
from fasttok.normalizers.bert import BertNormalizer
from fasttok.pre_tokenizers.split import BertPreTokenizer

tokenizers = pytest.importorskip("tokenizers")

MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"
CORPUS = sorted((DATA / "corpus").glob("*.txt")) if not DATA_MISSING else []
HARD = ("aAzZ09 \t\n\r\x00\x0b\x7f\u00ad\ufffd\u200b,.!?'\"-_()[]{}~`$^|"
        "éÉ\u0301\u0323\u0345\U0001D165\U0001D16D\u0f71\u0f72İıΣςß"
        "한국어\u1100\u3000\u00a0世界\u4e00\U00020000\uf900ﬁ①Ⅻ٣")
TEXT = st.text(st.sampled_from(HARD), max_size=40) | st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@functools.lru_cache(maxsize=None)
def _minilm() -> tuple:
    path = str(data_file(MINILM))
    return fasttok.load(path), without_truncation_or_padding(tokenizers.Tokenizer.from_file(path))


def _ids(theirs, text: str) -> list:
    return theirs.encode(text, add_special_tokens=False).ids


def test_minilm_ids_equal_tokenizers_on_every_corpus_file_whole_and_by_line():
    ours, theirs = _minilm()
    if not CORPUS:
        pytest.skip(missing_data_reason(DATA / "corpus"))
    for path in CORPUS:
        text = "\n".join(read_text(path).split("\n")[:2000])
        assert ours.encode(text, allowed_special="all") == _ids(theirs, text), path.name
        lines = text.split("\n")
        assert ours.encode_batch(lines, allowed_special="all") == \
            [e.ids for e in theirs.encode_batch(lines, add_special_tokens=False)], path.name


def test_minilm_ids_equal_tokenizers_on_hypothesis_text_with_added_tokens():
    ours, theirs = _minilm()
    specials = sorted(ours.special_tokens_set)

    @settings(max_examples=150, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(TEXT | st.sampled_from(specials), max_size=5))
    def check(parts):
        text = "".join(parts)
        assert ours.encode(text, allowed_special="all") == _ids(theirs, text), repr(text)

    check()


@pytest.mark.parametrize("length", [99, 100, 101, 250])
def test_a_word_over_max_input_chars_per_word_is_unk(length):
    ours, theirs = _minilm()
    text = "a" * length + " b " + "é" * length
    assert ours.encode(text, allowed_special="all") == _ids(theirs, text)


def _doc(normalizer: dict, max_chars: int = 100) -> str:
    vocab = {"[UNK]": 0, "a": 1, "##b": 2, "à": 3, "!": 4, "世": 5, "##a": 6, "A": 7, "##B": 8}
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": normalizer, "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": None, "decoder": None,
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": max_chars, "vocab": vocab}})


@pytest.mark.parametrize("clean_text", [False, True])
@pytest.mark.parametrize("chinese", [False, True])
@pytest.mark.parametrize("strip_accents", [None, False, True])
@pytest.mark.parametrize("lowercase", [False, True])
def test_every_bert_normalizer_setting_gives_tokenizers_ids(tmp_path, clean_text, chinese,
                                                            strip_accents, lowercase):
    doc = _doc({"type": "BertNormalizer", "clean_text": clean_text,
                "handle_chinese_chars": chinese, "strip_accents": strip_accents,
                "lowercase": lowercase})
    path = tmp_path / "tokenizer.json"
    path.write_text(doc, encoding="utf-8")
    ours, theirs = fasttok.load(str(path)), tokenizers.Tokenizer.from_str(doc)
    for text in ["ab Ab AB àb À\u0301b a!b 世a a世b \x00a\x7fb\tab\u3000a", HARD, ""]:
        assert ours.encode(text, allowed_special="all") == _ids(theirs, text), repr(text)


def test_max_input_chars_per_word_zero_makes_every_word_unk(tmp_path):
    doc = _doc({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                "strip_accents": None, "lowercase": True}, max_chars=0)
    path = tmp_path / "tokenizer.json"
    path.write_text(doc, encoding="utf-8")
    ours, theirs = fasttok.load(str(path)), tokenizers.Tokenizer.from_str(doc)
    assert ours.encode("a ! b", allowed_special="all") == _ids(theirs, "a ! b") == [0, 0, 0]


def test_the_rule_appends_several_characters_and_leaves_reordered_marks_to_the_stages():
    rules = bert_rule(BertNormalizer(), BertPreTokenizer())

    def rule(cp):
        return rules([cp])[0]

    assert rule(ord("한")) == (APPEND, (0x1112, 0x1161, 0x11AB))  # three jamo
    assert rule(ord("İ")) == (APPEND, ord("i"))  # NFD, then the dot is stripped
    unstripped = bert_rule(BertNormalizer(strip_accents=False), BertPreTokenizer())
    assert unstripped([ord("İ")])[0] == (APPEND, (ord("i"), 0x307))  # lowercased to two
    assert rule(0x1D165)[0] == OTHER        # a mark NFD keeps and may reorder
    assert rule(0xD800)[0] == OTHER         # a lone surrogate
    assert rule(ord("世")) == (ALONE, ord("世"))
    assert rule(ord("É")) == (APPEND, ord("e"))
    assert rule(0x3000)[0] == SPACE and rule(0x200B)[0] == SKIP


def test_threads_computing_the_rule_table_together_give_tokenizers_ids():
    if not MINILM.is_file():
        pytest.skip(missing_data_reason(MINILM))
    theirs = _minilm()[1]
    ours = fasttok.load(str(MINILM))  # a new table: its blocks are computed by the threads
    texts = ["".join(chr(0x4E00 + 37 * i + k) + " é—x" for k in range(20)) for i in range(300)]
    texts += ["word " * 1000 + chr(0x3400 + i) for i in range(8)]  # long: run without the GIL
    assert ours.encode_batch(texts, allowed_special="all", num_threads=2) == \
        [e.ids for e in theirs.encode_batch(texts, add_special_tokens=False)]
