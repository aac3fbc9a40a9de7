"""WordPiece's automaton is built on the first word that needs it, and every entry point gives the
same ids whether a call builds it midway or finds it built.

Words that are tokens, and words of up to 24 bytes (cut by probes of the token index), never need
the automaton; a longer word is probed too while the model's allowance of probes lasts
(``probes_left``, see ``test_wordpiece_probe_allowance.py``). These models have none: a walk that
meets a longer word stops, the model builds it, and the walk starts again (see
``WordPieceModel._need_automaton``).
"""

from __future__ import annotations

import pytest

from fasttok.models._wordpiece import APPEND, SPACE, CodePointRules, WordPieceModel

START = b"\xc0"
TOKENS = [b"[UNK]", START + b"ab", START + b"c", b"d", "é".encode(), START + "é".encode()]
RULES = CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])
# LONG is no token and longer than probes take: only the automaton cuts it
LONG = "ab" + "d" * 30
TEXT = f"ab c ab abdé {LONG} c abd"
TEXTS = ["ab c", "c ab", TEXT, "abd c", "éé"]


def _fresh() -> WordPieceModel:
    model = WordPieceModel(TOKENS, 0, word_start=START)
    model.probes_left = 0
    return model


def _built() -> WordPieceModel:
    model = _fresh()
    model.find_token(b"d")  # asks the automaton
    assert model.n_states > 0
    return model


def test_a_new_model_has_no_automaton():
    assert _fresh().n_states == 0


def test_tokens_and_short_words_leave_the_automaton_unbuilt():
    model = _fresh()
    assert model.encode_with("ab c abd ab abdé", RULES) == [1, 2, 1, 3, 1, 1, 3, 4]
    assert model.n_states == 0


def test_a_word_only_the_automaton_cuts_builds_it():
    model = _fresh()
    assert model.encode_with(LONG, RULES) == [1] + [3] * 30
    assert model.n_states > 0


@pytest.mark.parametrize("offsets", [False, True])
def test_encode_with_building_midway_equals_built(offsets):
    expected = _built().encode_with(TEXT, RULES, None, offsets)
    assert _fresh().encode_with(TEXT, RULES, None, offsets) == expected


def test_encode_with_cuts_building_midway_equals_built():
    cuts = [(None, 0, 5), (9, 5, 7), (None, 7, len(TEXT))]
    expected = _built().encode_with(TEXT, RULES, cuts, True)
    assert _fresh().encode_with(TEXT, RULES, cuts, True) == expected


def test_encode_many_with_building_midway_equals_built():
    assert _fresh().encode_many_with(TEXTS, RULES) == _built().encode_many_with(TEXTS, RULES)


def test_encode_offsets_many_with_building_midway_equals_built():
    got = _fresh().encode_offsets_many_with(TEXTS, RULES)
    assert got == _built().encode_offsets_many_with(TEXTS, RULES)


def test_llama_cpp_calls_building_midway_equal_built():
    # encode / encode_many normalise with llama.cpp's BERT rule ("▁" starts a word)
    # (accents stripped: a word over PROBE_MAX bytes needs the automaton)
    tokens = [b"[UNK]", "\u2581ab".encode(), b"ab", b"d"]
    text = "ab d " + "ab" * 13 + " d"
    fresh, built = WordPieceModel(tokens, 0), WordPieceModel(tokens, 0)
    fresh.probes_left = 0
    built.find_token(b"d")
    assert fresh.encode(text) == built.encode(text)
    assert fresh.n_states > 0
    fresh = WordPieceModel(tokens, 0)
    fresh.probes_left = 0
    assert fresh.encode_many(["d", text, "ab"]) == built.encode_many(["d", text, "ab"])
    assert fresh.n_states > 0


def test_threads_meeting_the_unbuilt_automaton_at_once_give_the_serial_ids():
    # texts of 256 code units or more walk without the GIL: several threads
    # stop for the automaton, one builds it, each walks again
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"{TEXT} " * 40 + "c" * k for k in range(8)]
    model = _fresh()
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda text: model.encode_with(text, RULES), texts))
    built = _built()
    assert found == [built.encode_with(text, RULES) for text in texts]
