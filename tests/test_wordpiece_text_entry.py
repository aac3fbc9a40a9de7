"""The compiled ids entry of BERT's walk (:class:`fasttok.models._wordpiece.TextEntry`).

A ``str`` in which none of the added tokens' texts occurs is walked at once
(no Python code runs); any other call, a text that holds one or is no
``str``, goes to the Python path that cuts at the added tokens, whatever the
number of texts and of their first characters (the search is the texts'
compiled ``LiteralCut``). A BERT file without added tokens of the normalized
pass binds it as ``walk.ids``, and its batch calls walk their texts together.
"""

from __future__ import annotations

from array import array

import pytest

from conftest import DATA
from fasttok.models._wordpiece import (APPEND, OTHER, SPACE, CodePointRules, TextEntry,
                                       WordPieceModel)
from fasttok.shared._literal_cut import LiteralCut

MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"


def _model() -> WordPieceModel:
    return WordPieceModel([b"[UNK]", b"\xc0a"], 0, word_start=b"\xc0")


def _rules() -> CodePointRules:
    return CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])


def _entry(texts, calls: list):
    def other(text, allowed):
        calls.append((text, allowed))
        return "other"
    return TextEntry(_model(), _rules(), LiteralCut(texts), other).ids


def test_a_text_without_a_first_character_is_walked_without_the_python_path():
    calls: list = []
    assert _entry("[<", calls)("a b a", None) == [1, 0, 1]
    assert calls == []


def test_a_text_holding_a_first_character_goes_to_the_python_path_with_its_allowed_set():
    calls: list = []
    allowed = frozenset({7})
    assert _entry("[<", calls)("a <b", allowed) == "other"
    assert calls == [("a <b", allowed)]


def test_a_first_character_without_its_text_is_walked_without_the_python_path():
    calls: list = []
    ids = _entry(["[X]", "[Y]"], calls)
    assert ids("a [a] [Z", None) == [1, 0, 0] and ids("[Y]", None) == "other"
    assert calls == [("[Y]", None)]


def test_any_number_of_texts_is_searched_for_before_the_python_path():
    calls: list = []
    many = [f"[{i}]" for i in range(40)]
    assert _entry(many, calls)("a [a]", None) == [1, 0]
    assert _entry(many, calls)("a [39]", None) == "other"
    assert len(calls) == 1


def test_a_first_character_past_latin1_is_found_in_a_wide_text():
    calls: list = []
    ids = _entry("\u4e16", calls)
    assert ids("a \u4e16", None) == "other" and ids("a \u4e17", None) == [1, 0]
    assert len(calls) == 1


def test_texts_of_many_first_characters_send_only_a_text_holding_one_to_the_python_path():
    calls: list = []
    assert _entry("abcdefghi", calls)("zz", None) == [0]
    assert _entry("abcdefghi", calls)("z i", None) == "other"
    assert len(calls) == 1


def test_a_text_that_is_no_str_goes_to_the_python_path():
    calls: list = []
    assert _entry("[", calls)(b"a", None) == "other"


def test_the_model_must_be_a_compiled_wordpiece_model():
    with pytest.raises(TypeError, match="WordPieceModel"):
        TextEntry(_model().encode_with, _rules(), LiteralCut("["), print)


@pytest.mark.skipif(not MINILM.exists(), reason="all-MiniLM-L6-v2 not found")
def test_minilm_binds_the_entry_and_matches_added_tokens_through_the_python_path():
    import fasttok

    tokenizers = pytest.importorskip("tokenizers")
    enc = fasttok.load(MINILM)
    text = "Hello [SEP] world [MASK]!"
    reference = tokenizers.Tokenizer.from_file(str(MINILM))
    reference.no_padding()
    assert enc.encode(text, allowed_special="all") == \
        reference.encode(text, add_special_tokens=False).ids
    assert type(enc._core.pipeline.walk.ids.__self__) is TextEntry


def test_ids_many_walks_the_plain_texts_and_sends_the_others_to_the_python_path():
    calls: list = []
    ids_many = TextEntry(_model(), _rules(), LiteralCut(["[X]"]),
                         lambda text, allowed: calls.append(text) or "other").ids_many
    assert ids_many(["a a", "[X]", b"a", "b", "[a"], None) == \
        [[1, 1], "other", None, [0], [0]]
    assert calls == ["[X]"]


def _minilm():
    import fasttok

    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.Tokenizer.from_file(str(MINILM))
    reference.no_padding()
    reference.no_truncation()
    return fasttok.load(MINILM), reference


@pytest.mark.skipif(not MINILM.exists(), reason="all-MiniLM-L6-v2 not found")
def test_minilm_batch_of_plain_lines_encodes_none_of_them_one_by_one(monkeypatch):
    enc, reference = _minilm()
    lines = ["Hello world!\n", "Ünïcödé, 世界 ok", "", "tabs\tand  spaces", "x[i] = [SEP"]
    one_by_one: list = []
    encode = enc._core.encode
    monkeypatch.setattr(enc._core, "encode", lambda *a: one_by_one.append(a) or encode(*a))
    got = enc.encode_ordinary_batch(lines, num_threads=1)
    assert got == [reference.encode(t, add_special_tokens=False).ids for t in lines]
    assert one_by_one == []


@pytest.mark.skipif(not MINILM.exists(), reason="all-MiniLM-L6-v2 not found")
def test_minilm_batch_matches_added_tokens_and_encodes_declined_texts_alone():
    enc, reference = _minilm()
    lines = ["a [SEP] b [MASK]", "lone \ud800 surrogate", "plain"]
    flat, offsets = enc.encode_batch(lines, allowed_special="all", num_threads=1, flat=True)
    assert [list(flat[offsets[i]:offsets[i + 1]]) for i in range(len(lines))] == \
        [enc.encode(t, allowed_special="all") for t in lines]
    assert enc.encode_batch(lines[::2], allowed_special="all", num_threads=1) == \
        [reference.encode(t, add_special_tokens=False).ids for t in lines[::2]]


def _flat_entry(calls: list):
    rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else OTHER if cp == 63 else APPEND, cp)
                                        for cp in cps])
    def other(text, allowed):
        calls.append(text)
        return [7, 7] if text == "[X]" else None
    return TextEntry(_model(), rules, LiteralCut(["[X]"]), other)


def test_ids_many_flat_puts_walked_other_and_filled_texts_in_order_in_one_array():
    calls: list = []
    filled: list = []
    got = _flat_entry(calls).ids_many_flat(
        ["a a", "[X]", "?", b"a", "", "b", "[X] ?"], None, lambda text: filled.append(text) or [9])
    assert got == (array("I", [1, 1, 7, 7, 9, 9, 0, 9]), array("Q", [0, 2, 4, 5, 6, 6, 7, 8]))
    assert calls == ["[X]", b"a", "[X] ?"] and filled == [b"a", "[X] ?", "?"]


def test_ids_many_flat_of_walked_texts_alone_fills_none():
    got = _flat_entry([]).ids_many_flat(["a a", "", "b"], None, lambda text: 1 / 0)
    assert got == (array("I", [1, 1, 0]), array("Q", [0, 2, 2, 3]))


@pytest.mark.skipif(not MINILM.exists(), reason="all-MiniLM-L6-v2 not found")
@pytest.mark.parametrize("at", [0, 3, 7])
def test_minilm_flat_batch_is_the_walks_arrays_with_declined_and_added_token_texts_anywhere(
        at, monkeypatch):
    enc, reference = _minilm()
    lines = ["Hello world!", "Ünïcödé, 世界 ok", "", "tabs\tand  spaces", "x[i] = [SEP",
             "naïve café", "emoji \U0001f600 here"]
    plain = [list(reference.encode(t, add_special_tokens=False).ids) for t in lines]
    lines[at:at] = ["lone \ud800 surrogate", "a [SEP] b"]
    plain[at:at] = [enc.encode("lone \ud800 surrogate"), enc.encode("a [SEP] b", allowed_special="all")]
    monkeypatch.setattr(enc._core, "encode_many", lambda *a: 1 / 0)
    flat, offsets = enc.encode_batch(lines, allowed_special="all", num_threads=1, flat=True)
    assert type(flat) is array and len(offsets) == len(lines) + 1
    assert [list(flat[offsets[i]:offsets[i + 1]]) for i in range(len(lines))] == plain


def test_ids_array_walks_a_plain_text_and_copies_the_python_paths_ids():
    calls: list = []
    entry = _flat_entry(calls)
    assert entry.ids_array("a a b", None) == array("I", [1, 1, 0]) and calls == []
    assert entry.ids_array("[X]", None) == array("I", [7, 7])
    assert entry.ids_array("a ?", None) is None and calls == ["[X]"]


@pytest.mark.skipif(not MINILM.exists(), reason="all-MiniLM-L6-v2 not found")
@pytest.mark.parametrize("text", ["Hello world!\n" * 3000 + "Ünïcödé, 世界 ok \U0001f600",
                                  "a [SEP] b [MASK]", "lone \ud800 surrogate", ""],
                         ids=["long", "added", "declined", "empty"])
def test_minilm_encode_to_array_is_the_walks_array_with_no_list_between(text, monkeypatch):
    enc, _ = _minilm()
    expected = enc.encode(text, allowed_special="all")
    walk = enc._core.pipeline.walk
    if "\ud800" not in text:
        # no list of the walk's: encode_to_array fails if it asks the list's
        # entry (a declined text is repaired and walked again by it)
        monkeypatch.setattr(walk, "ids", lambda *a: 1 / 0)
    got = enc.encode_to_array(text, allowed_special="all")
    assert type(got) is array and got.typecode == "I" and list(got) == expected


@pytest.mark.skipif(not MINILM.exists(), reason="all-MiniLM-L6-v2 not found")
def test_minilm_long_list_takes_one_reference_an_id_and_gives_them_back():
    # a list of 16k ids or more takes its ints' references by count
    import sys

    enc, reference = _minilm()
    text = "Hello world, the cat sat on the mat!\n" * 3000 + "Ünïcödé, 世界 ok"
    the = enc.encode("the")[0]
    before = sys.getrefcount(the)
    for _ in range(2):
        ids = enc.encode(text, allowed_special="all")
        assert len(ids) >= 1 << 14 and ids == reference.encode(text, add_special_tokens=False).ids
        assert sys.getrefcount(the) - before == ids.count(the) == 6000
        del ids
        assert sys.getrefcount(the) == before
