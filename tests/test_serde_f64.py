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
        if significand > (_U64 - int(digit)) // 10:
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
