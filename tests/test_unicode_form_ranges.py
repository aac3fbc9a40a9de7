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
from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
def test_every_character_of_the_ranges_is_assigned(form):
    # an unassigned code point passes the test above, but a later Unicode
    # (the tokenizers crate's) may make it a combining mark
    unassigned = [hex(cp) for first, last in STABLE_RANGES[form] for cp in range(first, last + 1)
                  if unicodedata.category(chr(cp)) == "Cn"]
    assert not unassigned


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


@pytest.mark.parametrize("line", ["한국어 문장입니다.", "Привет, мир — «цитата»…", "Γειά σου",
                                  "مرحبا بالعالم", "┌──┐ ① ✓ ★", "emoji 🎉🚀 and 🤖"])
def test_lines_of_other_scripts_and_emoji_go_to_the_core_without_the_quick_check(line):
    # a four-byte str (the emoji) is read unit by unit too
    assert not _asked(line)
    assert _asked(line + "e\u0301")


def test_a_character_outside_the_ranges_is_left_to_the_quick_check():
    entry = _entry("NFC")
    assert normal_first("你好e\u0301", entry) == "normalized first"  # a mark that composes
    assert normal_first("你好\u0301", entry) == "core"  # one that does not: the check says so
    assert normal_first("한국어", entry) == "core"  # Hangul: the quick check says yes
    assert normal_first("\u1100\u1161", entry) == "normalized first"  # jamo that compose
    assert normal_first("ｔｅｓｔ", _entry("NFKC")) == "normalized first"  # fullwidth


def _asked(text: str, form: str = "NFC") -> bool:
    # whether normal_first asks the quick check for text (it answers yes)
    asked = []
    entry = _entry(form)
    entry = entry[:3] + (lambda t: asked.append(t) or True,) + entry[4:]
    normal_first(text, entry)
    return bool(asked)


@pytest.mark.parametrize("at", [0, 31, 32, 33, 70, 95])
@pytest.mark.parametrize("outside", ["\u0301", "\u20ac"])
def test_one_character_outside_the_ranges_is_found_wherever_it_stands_in_a_long_line(at, outside):
    # 96 characters: three blocks of the test that passes a block by its
    # greatest unit, the one outside at a block's edge, inside one, last
    for inside in ("a", "\u00e9", "\u2014"):  # ASCII, Latin-1 (a 1-byte str), a dash (2-byte)
        text = inside * 96
        assert not _asked(text)
        assert _asked(text[:at] + outside + text[at + 1:])


@given(st.text(alphabet="ae\u00e9\u2014\u4e00\u0301\u20ac\uff41", max_size=120))
def test_the_quick_check_is_asked_when_some_character_lies_outside_the_ranges(text):
    ranges = STABLE_RANGES["NFC"]
    assert _asked(text) == any(not any(a <= ord(c) <= b for a, b in ranges) for c in text)


def _edges() -> list:
    # each range's first and last code point and their neighbours, and
    # the ends of the pages around them (the entry reads 256 at a time)
    found = set()
    for first, last in STABLE_RANGES["NFC"]:
        for cp in (first - 1, first, first + 1, last - 1, last, last + 1,
                   first & ~255, (first & ~255) - 1, last | 255, (last | 255) + 1):
            if 0 <= cp < 0x110000 and not 0xD800 <= cp < 0xE000:
                found.add(chr(cp))
    return sorted(found)


@given(st.text(alphabet=st.sampled_from(_edges()), max_size=80))
def test_characters_at_the_edges_of_ranges_and_pages_are_placed_exactly(text):
    ranges = STABLE_RANGES["NFC"]
    assert _asked(text) == any(not any(a <= ord(c) <= b for a, b in ranges) for c in text)


def test_ranges_that_do_not_hold_0_pass_only_their_own_characters():
    ranges = array("I", [0x4E00, 0x9FFF]).tobytes()
    entry = (lambda text, a: "core", None, lambda text, a: "normalized first",
             lambda text: False, ranges)
    assert normal_first("\u4e00\u4e01" * 40, entry) == "core"
    assert normal_first("\u4e00\u4e01" * 40 + "\x00", entry) == "normalized first"
    assert normal_first("a\u4e00", entry) == "normalized first"
