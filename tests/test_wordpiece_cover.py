"""CodePointRules asks its rule for every code point past Latin-1 that a walked str holds, wherever
it stands: the scan skips sixteen, then four, Latin-1 code units of a str of kind 2 at a time. A
walk that meets a code point not asked yet has the whole text covered at once and walks again."""

from __future__ import annotations

import pytest

from fasttok.models._wordpiece import APPEND, SPACE, CodePointRules, WordPieceModel


def _recording_rules():
    asked = set()

    def rule(cps):
        asked.update(cps)
        return [(SPACE if cp == 32 else APPEND, cp) for cp in cps]
    return CodePointRules(rule), asked


@pytest.mark.parametrize("offset", range(9))
def test_every_code_point_past_latin1_is_asked_at_every_alignment(offset):
    rules, asked = _recording_rules()
    model = WordPieceModel([b"[UNK]", b"\xc0a"], 0, word_start=b"\xc0")
    text = "a" * offset + "\u20ac" + "b" * 5 + "\ud83d\ude00" + "é" * offset + "\u4e16"
    model.encode_with(text, rules)
    assert {0x20AC, 0xD83D, 0xDE00, 0x1F600, 0x4E16} <= asked


@pytest.mark.parametrize("offset", range(40))
def test_a_code_point_past_latin1_is_asked_anywhere_in_a_long_latin1_run(offset):
    rules, asked = _recording_rules()
    model = WordPieceModel([b"[UNK]", b"\xc0a"], 0, word_start=b"\xc0")
    text = "a" * offset + "\u0101" + "é" * (40 - offset) + "\u4e16"
    model.encode_with(text, rules)
    assert {0x101, 0x4E16} <= asked


def _counting_rules():
    calls = []

    def rule(cps):
        calls.append(list(cps))
        return [(SPACE if cp == 32 else APPEND, cp) for cp in cps]
    return CodePointRules(rule), calls


@pytest.mark.parametrize("chunks", [0, 1 << 10])
@pytest.mark.parametrize("at", [0, 5, 300, 5000])
def test_a_walk_meeting_a_code_point_not_asked_yet_asks_for_the_whole_text_once_and_walks_again(
        chunks, at):
    # the walk stops at the first code point whose rule is not known, the
    # text is covered then (one call of the rule for every new code point),
    # and the ids are those of a model whose rules knew them all before
    tokens = [b"[UNK]", "\u2581a".encode(), "\u2581\u4e16".encode(), "\u2581\u20ac".encode()]
    text = "a " * at + "\u4e16 " + "a " * 7 + "\u20ac \u4e16\U0001f600 a"
    expected = [1] * at + [2] + [1] * 7 + [3, 0, 1]
    for offsets in (False, True):
        model = WordPieceModel(tokens, 0)
        model.chunk_cache_entries = chunks
        rules, calls = _counting_rules()
        model.encode_with("a", rules)
        del calls[:]
        got = model.encode_with(text, rules, offsets=offsets)
        assert list(got[0] if offsets else got) == expected
        assert len(calls) == 1 and {0x4E16, 0x20AC, 0x1F600} <= set(calls[0])
        assert model.encode_with(text, rules, offsets=offsets) == got
        assert len(calls) == 1, "a text of code points asked before asks nothing"
