"""A word whose first code point starts no token is [UNK] without a walk of the automaton.

``Automaton.starts`` has a bit per BMP code point that some word-start token begins with; a word
whose first code point has none cannot be cut at its start. The shortcut must give what the
automaton gives, and must stand down where its premise fails (the word-start bytes alone a token,
a token cut inside a code point).
"""

from __future__ import annotations

import pytest

from fasttok.models._wordpiece import APPEND, SPACE, CodePointRules, WordPieceModel

START = b"\xc0"
RULES = CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])
BOX = "├" + "─" * 70 + "┤"  # en.txt's table rules: 216 bytes, no token starts with ├


def _model(*tokens: bytes) -> WordPieceModel:
    return WordPieceModel([b"[UNK]", *tokens], 0, word_start=START)


def test_a_long_word_no_token_starts_is_unk_without_automaton_steps():
    model = _model(START + "─".encode(), "─".encode())
    assert model.encode_with(BOX, RULES) == [0]
    assert model.trie_steps(BOX) == 0


def test_a_long_word_a_token_starts_is_cut_by_the_automaton():
    # with ├ a word-start token, the walk cuts the rest ([UNK]: ┤ is no token)
    model = _model(START + "├".encode(), "─".encode())
    assert model.encode_with(BOX, RULES) == [0]
    assert model.encode_with(BOX[:-1], RULES) == [1] + [2] * 70


@pytest.mark.parametrize("word", ["é" * 30, "b" * 30, "\u4e16" * 10, "ab" * 20, "a" + "é" * 30])
def test_the_shortcut_equals_the_automaton(word):
    # match_word runs the automaton alone
    model = _model(START + "a".encode(), "é".encode(), b"b", "\u4e16".encode())
    assert model.encode_with(word, RULES) == model.match_word(START + word.encode())


def test_a_token_cut_inside_a_code_point_turns_the_shortcut_off():
    # "\xc0\xe2" starts "─" (e2 94 80) and every other character from U+2000 to U+2FFF
    model = _model(START + b"\xe2", b"\x94\x80")
    assert model.encode_with("─", RULES) == [1, 2]
    assert model.encode_with("─" * 30, RULES) == [0]
