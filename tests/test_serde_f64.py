"""A JSON number read as tokenizers reads it into an f64 (serde_json without
``float_roundtrip``): the first digits that fit a u64, made a double, times
or divided by one power of ten. ``serde_f64`` takes the digits whole when
they fit; the oracle here walks them one by one, as serde does.
"""

from __future__ import annotations

import math
import re

from hypothesis import given, settings, strategies as st

from fasttok.models.hf_fields import serde_f64

_U64 = (1 << 64) - 1


def _serde_oracle(text: str) -> float:
    sign, whole, fraction, exponent = re.fullmatch(
        r"(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?", text).groups()
    significand = shift = 0
    for digit in whole:
        # past the first digit that does not fit, serde's parse_long_integer
        # only counts the integer part's digits
        if shift or significand > (_U64 - int(digit)) // 10:
            shift += 1
        else:
            significand = significand * 10 + int(digit)
    for digit in fraction or "":
        if significand > (_U64 - int(digit)) // 10:
            break
        significand = significand * 10 + int(digit)
        shift -= 1
    shift += int(exponent or 0)
    value = float(significand)
    if not value:  # zero at any exponent, as f64_from_parts leaves it
        return -0.0 if sign else 0.0
    while shift > 308 and value:
        value, shift = value * 1e308, shift - 308
    while shift < -308 and value:
        value, shift = value / 1e308, shift + 308
    # serde's table holds each power of ten rounded once (10.0 ** 23 is not)
    value = value * float(10 ** shift) if shift >= 0 else value / float(10 ** -shift)
    return -value if sign else value


_DIGITS = st.text("0123456789", min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.booleans(), _DIGITS, st.none() | _DIGITS, st.none() | st.integers(-30, 30))
def test_serde_f64_equals_serdes_digit_by_digit_reading(negative, whole, fraction, exponent):
    text = ("-" if negative else "") + whole + ("." + fraction if fraction else "") + (
        "" if exponent is None else f"e{exponent}")
    assert serde_f64(text) == _serde_oracle(text)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_serde_f64_of_a_float_reads_its_shortest_spelling(value):
    assert serde_f64(value) == _serde_oracle(repr(float(value)))


def test_serde_f64_is_one_step_off_pythons_reading_of_seventeen_digits():
    assert serde_f64("-3.2940776348114014") == -3.294077634811402 != -3.2940776348114014


def test_serde_f64_reads_thousands_of_digits():
    assert serde_f64("0." + "0" * 5000 + "1") == 0.0
    assert math.isinf(serde_f64("1" + "0" * 5000))


# the compiled reading a Unigram tokenizer.json's scores go through
@settings(max_examples=500, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.floats(
    allow_nan=False, allow_infinity=False, width=32) | st.integers(-2**53, 2**53), max_size=20))
def test_the_compiled_scores_of_unigram_pieces_are_serde_f64s_bit_for_bit(values):
    from fasttok.models._unigram import tokenizers_scores

    scores = tokenizers_scores([[f"p{i}", v] for i, v in enumerate(values)])
    expected = [serde_f64(v) for v in values]
    if not all(map(math.isfinite, expected)):  # serde's scaling past a double
        assert type(scores) is int and not math.isfinite(expected[scores])
        return
    assert [math.copysign(1, s) for s in scores] == [math.copysign(1, e) for e in expected]
    assert list(scores) == expected


def test_the_compiled_scores_count_the_digit_of_an_integral_doubles_dot_zero():
    # "7787469671406591.0" is 77874696714065910 tenths: past 2**53, one step off
    from fasttok.models._unigram import tokenizers_scores

    assert list(tokenizers_scores([["a", 7787469671406591.0]])) == [7787469671406590.0]


def test_the_compiled_scores_name_the_first_entry_that_is_no_pair_of_a_string_and_a_number():
    from fasttok.models._unigram import tokenizers_scores

    for bad in (["a"], ["a", True], ["a", "1"], [1, 1.0], ("a", 1.0), ["a", 1.0, 2.0],
                ["a", math.inf], ["a", 10**400]):
        assert tokenizers_scores([["ok", 0.0], list(bad) if type(bad) is list else bad]) == 1, bad


@settings(max_examples=300, deadline=None)
@given(st.booleans(), _DIGITS, st.none() | _DIGITS, st.none() | st.integers(-400, 400))
def test_the_compiled_reading_of_a_files_number_is_serdes_digit_by_digit(negative, whole,
                                                                          fraction, exponent):
    # a file read packed keeps each score's text, which is read as serde reads it
    from fasttok.models._unigram import tokenizers_scores
    from fasttok.shared._json_reader import read_tokenizer_document

    text = ("-" if negative else "") + (whole.lstrip("0") or "0") + (
        "." + fraction if fraction else "") + ("" if exponent is None else f"e{exponent}")
    packed = read_tokenizer_document(b'{"model": {"vocab": [["p", %s]]}}' % text.encode())[1]
    scores = tokenizers_scores(packed.vocab)
    expected = _serde_oracle(text)
    if not math.isfinite(expected):  # serde refuses the number
        assert scores == 0
        return
    assert [(s, math.copysign(1, s)) for s in scores] == [(expected, math.copysign(1, expected))]


def test_the_compiled_reading_scales_by_each_power_of_ten_rounded_once():
    # 1eK and 1e-K for every K the table holds (float(10 ** K), made by the
    # C compiler from the literal 1eK) and past it (two steps), read packed
    from fasttok.models._unigram import tokenizers_scores
    from fasttok.shared._json_reader import read_tokenizer_document

    texts = [f"1e{k}" for k in range(309)] + [f"1e-{k}" for k in range(1, 330)] + [
        f"3e-{k}" for k in range(300, 330)]
    vocab = b",".join(b'["p%d", %s]' % (i, t.encode()) for i, t in enumerate(texts))
    packed = read_tokenizer_document(b'{"model": {"vocab": [%s]}}' % vocab)[1]
    assert list(tokenizers_scores(packed.vocab)) == [_serde_oracle(t) for t in texts]
