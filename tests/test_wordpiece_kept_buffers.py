"""Short texts walk in buffers the WordPiece model keeps between calls: a
call gives what the same call gives on a model just made, whatever the
calls before it asked for (a long word, offsets or not, words or not).
"""

from __future__ import annotations

from fasttok.models._wordpiece import APPEND, SPACE, CodePointRules, WordPieceModel

START = "\u2581".encode()
TOKENS = [b"[UNK]", START + b"a", b"a", START + b"b", b"b"]


def _rules():
    return CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])


def _arrays(found):
    return tuple(list(a) for a in found)


def test_offsets_after_a_long_word_without_them_equal_a_new_model():
    rules = _rules()
    kept = WordPieceModel(TOKENS, 0)
    kept.encode_with("a" * 200, rules)  # the word buffer grows, offsets off
    text = "b" + "a" * 180 + " ab"
    expected = _arrays(WordPieceModel(TOKENS, 0).encode_with(text, _rules(), None, True))
    assert _arrays(kept.encode_with(text, rules, None, True)) == expected


def test_each_kind_of_call_in_turn_equals_a_new_model():
    rules = _rules()
    kept = WordPieceModel(TOKENS, 0)
    calls = [((), {}), ((None, True), {}), ((), {"words": True}), ((None, True, True), {})]
    for text in ["ab a", "a" * 150, "b a b", "", "a " * 100]:
        for args, kwargs in calls:
            fresh = WordPieceModel(TOKENS, 0).encode_with(text, _rules(), *args, **kwargs)
            found = kept.encode_with(text, rules, *args, **kwargs)
            assert repr(found) == repr(fresh), (text, args, kwargs)
