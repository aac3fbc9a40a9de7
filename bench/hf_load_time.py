"""Load time of ``tokenizer.json`` files in fresh processes: ``tokenizers``'
``Tokenizer.from_file`` against ``fasttok.load``, with no table cache, on a
first load (which writes the cache) and on a second (which reads it).

    python bench/hf_load_time.py [--runs 5] [--data DIR] [name ...]

DIR (default ``$FASTTOK_DATA`` or ``../shared/data``) holds ``vocab/hf``;
the names default to every model there. Each run is a new interpreter,
the four kinds interleaved; the time is that of the load call after
``import fasttok`` / ``import tokenizers`` (fasttok's call includes
importing its pipeline modules, which it does on first use). Prints the
fastest and the median of each, in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
kind, path = sys.argv[1], sys.argv[2]
if kind == "tokenizers":
    import tokenizers
    t = time.perf_counter()
    tokenizers.Tokenizer.from_file(path)
else:
    import fasttok
    t = time.perf_counter()
    fasttok.load(path)
print(json.dumps({"ms": (time.perf_counter() - t) * 1000}))
"""

KINDS = ("tokenizers", "fasttok, no cache", "fasttok, first load", "fasttok, cached")


def run(kind: str, path: Path, cache_dir: str) -> float:
    env = dict(os.environ, FASTTOK_CACHE_DIR=cache_dir)
    if kind == "fasttok, no cache":
        env["FASTTOK_CACHE"] = "0"
    out = subprocess.run([sys.executable, "-c", CHILD, kind.split(",")[0], str(path)], env=env,
                         check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout)["ms"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", default=os.environ.get("FASTTOK_DATA", "../shared/data"))
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    folder = Path(args.data) / "vocab" / "hf"
    names = args.names or sorted(p.parent.name for p in folder.glob("*/tokenizer.json"))
    print(f"{'file':20} " + " ".join(f"{k:>24}" for k in KINDS))
    for name in names:
        path = folder / name / "tokenizer.json"
        times: dict = {k: [] for k in KINDS}
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as cache_dir:
                for kind in KINDS:
                    times[kind].append(run(kind, path, cache_dir))
        print(f"{name:20} " + " ".join(
            f"{min(times[k]):>11.0f} / {statistics.median(times[k]):>10.0f}" for k in KINDS))


if __name__ == "__main__":
    main()
