"""Before WordPiece's automaton is built, an ASCII word of over 24 bytes that is no token is cut by
probes of the token index too (where no token text is longer than 24 bytes), drawing on the
model's allowance (``WordPieceModel.probes_left``, about what building costs); the word that would
overdraw it, or any longer word of other characters (cut a character or two a piece, where probing
costs most), builds the automaton. Either way the ids are the automaton's greedy longest match,
and a place takes at most as many probes as the longest token has bytes.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fasttok.models._wordpiece import APPEND, SPACE, CodePointRules, WordPieceModel

START = b"\xc0"
# overlapping word-initial and continuation pieces, none longer than 4 bytes, none for "c"
TOKENS = [b"[UNK]", START + b"a", START + b"ab", START + b"abb", b"a", b"b", b"ab", b"ba",
          b"bab", b"abab", b"bb"]
LONGEST = 4
RULES = CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])
LONG = "ab" + "ba" * 20  # 42 bytes, no token


def _model(probes_left=None) -> WordPieceModel:
    model = WordPieceModel(TOKENS, 0, word_start=START)
    if probes_left is not None:
        model.probes_left = probes_left
    return model


def _automaton_ids(text: str) -> list:
    built = _model()
    built.find_token(b"a")  # asks the automaton: it is built
    assert built.n_states > 0
    return [i for word in text.split() for i in built.match_word(START + word.encode())]


def test_a_new_model_cuts_a_long_word_by_probes_without_building():
    model = _model()
    assert model.encode_with(LONG, RULES) == _automaton_ids(LONG)
    assert model.n_states == 0


def test_probes_of_long_words_are_taken_from_the_allowance():
    model = _model(10_000)
    model.encode_with(LONG, RULES)
    spent = 10_000 - model.probes_left
    assert 0 < spent <= len(START + LONG.encode()) * LONGEST


def test_short_words_take_nothing_from_the_allowance():
    model = _model(10_000)
    model.encode_with("abba " * 10, RULES)
    assert model.probes_left == 10_000


def test_the_word_that_would_overdraw_the_allowance_builds_the_automaton():
    model = _model(100)
    model.chunk_cache_entries = 0  # (else LONG's ids are kept after the first text)
    texts = [LONG] * 10
    assert model.encode_many_with(texts, RULES) == [_automaton_ids(LONG)] * 10
    assert model.n_states > 0


def test_a_long_word_of_other_characters_builds_the_automaton_whatever_the_allowance():
    tokens = TOKENS + ["é".encode(), START + "é".encode()]
    model = WordPieceModel(tokens, 0, word_start=START)
    assert model.encode_with("é" * 13, RULES) == [12] + [11] * 12
    assert model.n_states > 0


def test_a_vocabulary_with_a_text_over_24_bytes_builds_the_automaton_for_a_long_word():
    # a probe hashes up to the longest text's bytes: 'a' * n against a token of
    # 100,000 a's would cost far more than building
    model = WordPieceModel(TOKENS + [b"b" * 25], 0, word_start=START)
    assert model.encode_with(LONG, RULES) == _automaton_ids(LONG)
    assert model.n_states > 0


def test_no_allowance_builds_the_automaton_on_the_first_long_word():
    model = _model(0)
    assert model.encode_with(f"ab {LONG}", RULES) == _automaton_ids(f"ab {LONG}")
    assert model.n_states > 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from("abc"), min_size=25, max_size=80), min_size=1,
                max_size=4),
       st.sampled_from([None, 0, 50, 400]))
def test_long_words_cut_by_probes_or_the_automaton_give_the_automaton_ids(words, allowance):
    text = " ".join(words)
    assert _model(allowance).encode_with(text, RULES) == _automaton_ids(text)
