"""fasttok's ``Encoding`` against ``tokenizers.Encoding``, method by method.

Both sides start from the same post-processed encoding (a WordLevel
``tokenizers.Tokenizer`` under a template, and fasttok's post-processing of
the same model output, :mod:`hf_encodings`); then ``truncate``, ``pad``,
``merge`` and ``set_sequence_id`` must leave them equal field by field, and
every look-up (``char_to_token``, ``char_to_word``, ``token_to_chars``,
``token_to_word``, ``token_to_sequence``, ``word_to_tokens``,
``word_to_chars``) must answer the same for every index, one past the ends
included, in both sequences.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_encodings import attempt, compare, inputs, reference, text_of

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import processors  # noqa: E402

from fasttok.errors import FasttokError  # noqa: E402
from fasttok.post_processors.encoding import Encoding  # noqa: E402
from fasttok.post_processors.pipeline import post_process  # noqa: E402
from fasttok.post_processors.template import TemplateProcessing  # noqa: E402

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
VOCAB = "a bb c ddd e".split()
WORDS = st.lists(st.sampled_from(VOCAB), max_size=8)
SINGLE, PAIR = "[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"
SPECIALS = [("[CLS]", 101), ("[SEP]", 102)]


def _both(a_words, b_words, template: bool = True):
    """The same encoding from tokenizers and from fasttok."""
    tok = reference(VOCAB)
    if template:
        tok.post_processor = processors.TemplateProcessing(SINGLE, PAIR, SPECIALS)
    a = text_of(a_words)
    b = None if b_words is None else text_of(b_words)
    enc, pair = inputs(tok, a, b)
    ours = post_process(enc, pair, True, TemplateProcessing(SINGLE, PAIR, SPECIALS)
                        if template else None)
    return ours, tok.encode(a, b)


ENCODINGS = st.tuples(WORDS, st.none() | WORDS, st.booleans())


@SETTINGS
@given(ENCODINGS, st.integers(0, 12), st.integers(0, 4), st.sampled_from(("left", "right")))
def test_truncate_matches_tokenizers(made, max_length, stride, direction):
    ours, theirs = _both(*made)
    got = attempt(ours.truncate, max_length, stride, direction)
    ref = attempt(theirs.truncate, max_length, stride, direction)
    if isinstance(ref, BaseException):
        assert isinstance(got, FasttokError), (ref, got)
        return
    assert compare(ours, theirs) is None


@SETTINGS
@given(ENCODINGS, st.integers(0, 14), st.sampled_from(("left", "right")), st.integers(0, 5),
       st.integers(0, 2), st.integers(0, 6))
def test_pad_matches_tokenizers(made, length, direction, pad_id, pad_type_id, cut):
    ours, theirs = _both(*made)
    if cut:
        ours.truncate(cut)
        theirs.truncate(cut)
    ours.pad(length, direction=direction, pad_id=pad_id, pad_type_id=pad_type_id,
             pad_token="<p>")
    theirs.pad(length, direction=direction, pad_id=pad_id, pad_type_id=pad_type_id,
               pad_token="<p>")
    assert compare(ours, theirs) is None


# merging truncated encodings multiplies their overflowing parts (hundreds
# for three), so fewer examples keep this test at a few seconds
@settings(SETTINGS, max_examples=50)
@given(st.lists(ENCODINGS, min_size=0, max_size=3), st.booleans(), st.integers(0, 5))
def test_merge_matches_tokenizers(made, growing_offsets, cut):
    pairs = [_both(*m) for m in made]
    if cut:
        for ours, theirs in pairs:
            ours.truncate(cut)
            theirs.truncate(cut)
    merged = Encoding.merge([o for o, _ in pairs], growing_offsets)
    reference_merge = tokenizers.Encoding.merge([t for _, t in pairs], growing_offsets)
    assert compare(merged, reference_merge) is None


@SETTINGS
@given(ENCODINGS, st.integers(0, 3))
def test_set_sequence_id_matches_tokenizers(made, sequence_id):
    ours, theirs = _both(*made)
    ours.set_sequence_id(sequence_id)
    theirs.set_sequence_id(sequence_id)
    assert compare(ours, theirs) is None


@SETTINGS
@given(ENCODINGS, st.integers(0, 4))
def test_look_ups_match_tokenizers(made, cut):
    ours, theirs = _both(*made)
    if cut:
        ours.truncate(cut)
        theirs.truncate(cut)
    n = len(theirs)
    last_char = max([e for _, e in theirs.offsets] + [0])
    for i in range(n + 2):
        assert ours.token_to_sequence(i) == theirs.token_to_sequence(i), i
        assert ours.token_to_chars(i) == theirs.token_to_chars(i), i
        assert ours.token_to_word(i) == theirs.token_to_word(i), i
    for seq in (0, 1):
        for c in range(last_char + 2):
            assert ours.char_to_token(c, seq) == theirs.char_to_token(c, seq), (c, seq)
            assert ours.char_to_word(c, seq) == theirs.char_to_word(c, seq), (c, seq)
        for w in range(len(made[0]) + 2):
            assert ours.word_to_tokens(w, seq) == theirs.word_to_tokens(w, seq), (w, seq)
            assert ours.word_to_chars(w, seq) == theirs.word_to_chars(w, seq), (w, seq)


def test_words_is_word_ids():
    ours, theirs = _both(["a", "bb"], None)
    assert ours.words == ours.word_ids == theirs.word_ids


def test_truncate_to_zero_moves_everything_to_overflowing():
    ours, theirs = _both(["a", "bb", "c"], ["e"])
    ours.truncate(0)
    theirs.truncate(0)
    assert ours.ids == [] and compare(ours, theirs) is None


def test_truncate_with_stride_not_below_max_length_is_an_error():
    ours, _ = _both(["a", "bb", "c"], None)
    with pytest.raises(FasttokError, match="stride"):
        ours.truncate(2, stride=2)


def test_unknown_direction_is_an_error():
    ours, _ = _both(["a"], None)
    with pytest.raises(FasttokError, match="direction"):
        ours.pad(4, direction="up")
