#!/usr/bin/env python3
"""Write the rank files that ship in the package, ``fasttok/ranks/*.tiktoken.gz``.

    python tools/embed_rank_files.py SRC    # SRC holds the four .tiktoken files,
                                            # e.g. shared/data/vocab/tiktoken

Each file must hash to OpenAI's sha256 (the pins in ``fasttok/embedded.py``)
or nothing is written. The gzip stream is written with mtime 0 and no file
name, so the same input gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path, help="folder holding the .tiktoken files")
    args = parser.parse_args(argv)
    embedded = runpy.run_path(str(ROOT / "fasttok" / "embedded.py"))
    files = {}
    for filename, pin in embedded["SHA256"].items():
        data = (args.src / filename).read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if got != pin:
            print(f"{args.src / filename}: sha256 {got}, expected OpenAI's {pin}", file=sys.stderr)
            return 1
        files[filename] = data
    folder = Path(embedded["FOLDER"])
    folder.mkdir(exist_ok=True)
    for filename, data in files.items():
        packed = gzip.compress(data, compresslevel=9, mtime=0)
        (folder / f"{filename}.gz").write_bytes(packed)
        print(f"{filename}.gz: {len(data):,} -> {len(packed):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
