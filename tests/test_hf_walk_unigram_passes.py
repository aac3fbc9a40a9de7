"""The Unigram walk's passes over a text give ``tokenizers``' ids, offsets and
words where each takes a shortcut (``fasttok/models/_unigram.pyx``,
``UnigramWalk``):

* the charsmap aligns a run of characters without rules in one loop, and
  ends the run a character early where a combining mark follows it;
* a literal ``Replace`` (ALBERT's and XLNet's quote pairs) and the squeeze
  of spaces move the characters between their matches as blocks;
* the last ``" "`` -> ``"▁"`` Replace before Metaspace is not run (Metaspace
  treats both alike), and a lead of ``"▁"`` after it reads a space as one;
* a piece notes where its segments start as it is written (a whole text
  under a Metaspace that does not split is one piece of many segments);
* a cached piece's ids go straight to the output unless a node is unknown.
"""

from __future__ import annotations

import copy
import functools
import json

import pytest

import fasttok
from conftest import without_truncation_or_padding
from test_hf_walk_unigram import SHARED, _corpus, _shared, _answer
from fasttok.formats import hf_walks
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record

tokenizers = pytest.importorskip("tokenizers")

ALBERT = "botchan_unigram_5000.v4.57.6.AlbertTokenizer"
XLNET = "kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer"
SPM = "botchan_unigram_5000.v5.24.0.from_spm_proto"
T5 = "botchan_unigram_5000.v5.24.0.T5Tokenizer"


def _first_scheme() -> dict:
    # ALBERT prepending at the text's start alone: a quote pair there gives
    # its replacement the span of the pair's last character, not the start
    doc = copy.deepcopy(_shared(ALBERT))
    doc["pre_tokenizer"]["prepend_scheme"] = "first"
    return doc


def _lead_only() -> dict:
    # the SentencePiece conversion without its trim and squeeze: the lead
    # "\A▁" -> "▁▁" then meets a text's leading spaces
    doc = copy.deepcopy(_shared(SPM))
    doc["normalizer"]["normalizers"] = [
        n for n in doc["normalizer"]["normalizers"]
        if not (n["type"] == "Replace" and n["content"] in ("", " "))]
    return doc


@functools.lru_cache(maxsize=None)
def _pair(name: str) -> tuple:
    # (walk, tokenizers) of a shared file, "lead_only" or "first_scheme"
    made = {"lead_only": _lead_only, "first_scheme": _first_scheme}
    doc = made[name]() if name in made else _shared(name)
    text = json.dumps(doc)
    record = tokenizer_json_record(text, f"{name}.json")
    walk = hf_walks.walk_for(record, pipeline_from_document(record))
    theirs = without_truncation_or_padding(tokenizers.Tokenizer.from_str(text))
    return walk, theirs


def _first_difference(name: str, texts) -> str | None:
    walk, theirs = _pair(name)
    assert walk is not None
    for text in texts:
        encoding = theirs.encode(text, add_special_tokens=False)
        want = (encoding.ids, [tuple(o) for o in encoding.offsets], encoding.word_ids)
        if _answer(walk, text) != want or walk.ids(text, None) != encoding.ids:
            return f"{text!r}: walk {_answer(walk, text)} != tokenizers {want}"
    return None


@pytest.mark.parametrize("name", [ALBERT, XLNET, "first_scheme"])
def test_quote_pairs_anywhere_in_a_text_are_replaced_as_tokenizers_replaces_them(name):
    # (the ids alone take them from str.replace; with an added token, in
    # each stretch between tokens)
    texts = ["''", "``", "''x", "x``", "'''", "````", "''''", "`'`'", "' ' ` `", "a''b``c'd`e",
             "say ``hi'' and 'bye' " * 20, "x" * 70 + "''" + "y" * 70 + "``",
             "``a'' </s> ''b``", "<s>``x", "'' <s> ''" * 30]
    assert _first_difference(name, texts) is None


@pytest.mark.parametrize("name", [ALBERT, XLNET, SPM])
def test_added_tokens_first_characters_without_a_token_walk_as_tokenizers_walks_them(name):
    # the walk looks for the tokens' texts only where their first
    # characters occur, and cuts only where a text is found
    texts = ["a < b", "x<y</z>", "<s", "</ s>", "<<s>>", "a<s>b</s>", "<cls> [sep]",
             "if a<b: c[0] = '<p>'\n" * 30, "</s" + "x" * 300 + "<s>"]
    assert _first_difference(name, texts) is None


@pytest.mark.parametrize("name", [ALBERT, XLNET])
def test_runs_of_spaces_anywhere_in_a_text_are_squeezed_as_tokenizers_squeezes_them(name):
    texts = ["  ", "   a", "a   ", " a  b   c    d ", "a b  c", "  ''  ``  ",
             "    def f():\n        return  1\n" * 10]
    assert _first_difference(name, texts) is None


@pytest.mark.parametrize("name", [ALBERT, T5, SPM])
def test_a_combining_mark_joins_the_last_character_of_a_run_without_rules(name):
    # "''" makes ALBERT's charsmap read the early stages' buffer; "日" a
    # text of two bytes a character
    texts = ["abc\u0301", "abc\u0301d", "''abc\u0301", "\u65e5abc\u0301 x", "ab\u0301\u0308c",
             "x\u200dy", "a\u00e9\u0301b"]
    assert _first_difference(name, texts) is None


@pytest.mark.parametrize("name", [SPM, "lead_only"])
def test_spaces_and_replacements_at_the_start_walk_as_the_replace_stages_make_them(name):
    texts = [" x", "  x", "\u2581x", "\u2581\u2581x", " \u2581x", "\u2581 x", "x \u2581 y",
             "a  b", " ", "\u2581"]
    assert _first_difference(name, texts) is None


@pytest.mark.parametrize("name", SHARED)
def test_a_whole_text_of_many_lines_walks_as_tokenizers_walks_it(name):
    # the SentencePiece conversions make it one piece of a segment a word;
    # the split files many flushes of the pieces laid out at once
    text = "\n".join(_corpus("en", 150) + _corpus("code", 60))
    assert _first_difference(name, [text]) is None


@pytest.mark.parametrize("entries", [16384, 1])
def test_a_cached_word_holding_an_unknown_character_keeps_its_fused_unknown_run(entries):
    previous = fasttok.set_pretoken_cache(entries)
    try:
        texts = ["x\u4e00\u4e01y z", "\u4e00\u4e01 \u4e00\u4e01"]
        for _ in range(2):   # the second time from the cache
            assert _first_difference(T5, texts) is None
    finally:
        fasttok.set_pretoken_cache(previous)
