"""The stable ranges of the normal-form stages (``unicode_forms.STABLE_RANGES``).

The compiled entry of a normalizing byte-level file sends a text whose
characters all lie in its stage's ranges straight to the core, without the
quick check. That is exact only if each such character is in the form
alone, has combining class 0 (nothing reorders around it) and is never the
second half of a canonical composition (nothing before it composes with
it): then ``unicodedata.is_normalized`` answers yes for any text of them,
which these tests check for every code point of every range.
"""

from __future__ import annotations

import functools
import unicodedata

import pytest

from fasttok.models._model_base import normal_first
from fasttok.normalizers.unicode_forms import FORMS, STABLE_RANGES


@functools.lru_cache(maxsize=None)
def _composes_after_something() -> frozenset:
    # every character that is a later part of a canonical decomposition
    found = set()
    for cp in range(0x110000):
        mapping = unicodedata.decomposition(chr(cp))
        if mapping and not mapping.startswith("<"):
            found.update(int(part, 16) for part in mapping.split()[1:])
    return frozenset(found)


@pytest.mark.parametrize("form", sorted(STABLE_RANGES))
def test_every_character_of_the_ranges_is_in_the_form_and_starts_nothing(form):
    later = _composes_after_something()
    wrong = [hex(cp) for first, last in STABLE_RANGES[form] for cp in range(first, last + 1)
             if unicodedata.normalize(form, chr(cp)) != chr(cp)
             or unicodedata.combining(chr(cp)) or cp in later]
    assert not wrong


@pytest.mark.parametrize("form", sorted(STABLE_RANGES))
def test_each_form_stage_carries_its_ranges_packed_for_the_entry(form):
    stage = FORMS[form]()
    words = memoryview(stage.stable_ranges).cast("I").tolist()
    assert words == [cp for r in STABLE_RANGES[form] for cp in r]


def _entry(form: str) -> tuple:
    stage = FORMS[form]()
    return (lambda text, a: "core", None, lambda text, a: "normalized first",
            stage.is_normalized, stage.stable_ranges)


def test_a_line_of_chinese_goes_to_the_core_without_the_quick_check():
    entry = _entry("NFC")
    asked = []
    entry = entry[:3] + (lambda text: asked.append(text) or True,) + entry[4:]
    assert normal_first("你好，世界。“引号”——ｔｅｓｔ！\n", entry) == "core"
    assert asked == []


def test_a_character_outside_the_ranges_is_left_to_the_quick_check():
    entry = _entry("NFC")
    assert normal_first("你好e\u0301", entry) == "normalized first"  # a mark that composes
    assert normal_first("你好\u0301", entry) == "core"  # one that does not: the check says so
    assert normal_first("한국어", entry) == "core"  # Hangul: the quick check says yes
    assert normal_first("\u1100\u1161", entry) == "normalized first"  # jamo that compose
    assert normal_first("ｔｅｓｔ", _entry("NFKC")) == "normalized first"  # fullwidth
