"""CodePointRules asks its rule for every code point past Latin-1 that a walked str holds, wherever
it stands: the scan skips sixteen, then four, Latin-1 code units of a str of kind 2 at a time."""

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
