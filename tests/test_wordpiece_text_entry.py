"""The compiled ids entry of BERT's walk (:class:`fasttok.models._wordpiece.TextEntry`).

A ``str`` in which none of the added tokens' first characters is walked at
once (no Python code runs); any other call, a text that holds one or is no
``str``, goes to the Python path that finds the added tokens, and so does
every call when there are more than eight first characters. A BERT file
without added tokens of the normalized pass binds it as ``walk.ids``.
"""

from __future__ import annotations

import pytest

from conftest import DATA
from fasttok.models._wordpiece import APPEND, SPACE, CodePointRules, TextEntry, WordPieceModel

MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"


def _model() -> WordPieceModel:
    return WordPieceModel([b"[UNK]", b"\xc0a"], 0, word_start=b"\xc0")


def _rules() -> CodePointRules:
    return CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])


def _entry(firsts, calls: list):
    def other(text, allowed):
        calls.append((text, allowed))
        return "other"
    return TextEntry(_model().encode_with, _rules(), firsts, other).ids


def test_a_text_without_a_first_character_is_walked_without_the_python_path():
    calls: list = []
    assert _entry("[<", calls)("a b a", None) == [1, 0, 1]
    assert calls == []


def test_a_text_holding_a_first_character_goes_to_the_python_path_with_its_allowed_set():
    calls: list = []
    allowed = frozenset({7})
    assert _entry("[<", calls)("a <b", allowed) == "other"
    assert calls == [("a <b", allowed)]


def test_a_first_character_past_latin1_is_found_in_a_wide_text():
    calls: list = []
    ids = _entry("\u4e16", calls)
    assert ids("a \u4e16", None) == "other" and ids("a \u4e17", None) == [1, 0]
    assert len(calls) == 1


def test_more_than_eight_first_characters_send_every_text_to_the_python_path():
    calls: list = []
    assert _entry("abcdefghi", calls)("zz", None) == "other"
    assert _entry("abcdefgh", calls)("zz", None) == [0]
    assert len(calls) == 1


def test_a_text_that_is_no_str_goes_to_the_python_path():
    calls: list = []
    assert _entry("[", calls)(b"a", None) == "other"


def test_walk_must_be_a_models_encode_with():
    with pytest.raises(ValueError, match="encode_with"):
        TextEntry(_model().encode_many_with, _rules(), "[", print)


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
