"""Load time of ``tokenizer.json`` files in fresh processes: ``tokenizers``'
``Tokenizer.from_file`` against fasttok's two faces of one reading,
``fasttok.hf.Tokenizer.from_file`` and ``fasttok.load``, each with no table
cache, on a first load (which writes the cache) and on a second (which
reads it); and, with no cache, the load and the first ``encode`` of one
line together (what a first call costs: what the load leaves to the first
encode, built then, counts), and the import and the load together
(``import tokenizers`` / ``import fasttok.hf`` / ``import fasttok`` and the
load: a face is not faster for importing at ``import`` what its load uses).

    python bench/hf_load_time.py [--runs 3] [--data DIR] [--wall] [name ...]

DIR (default ``$FASTTOK_DATA``, else ``shared/data`` beside the repository,
whatever the current folder) holds ``vocab/hf``; the names default to every
``tokenizer.json`` there and the Unigram conversions (``unigram/*.json``), and
a name given selects every file whose name starts with it (``botchan``: the
four botchan conversions). Each run is a new interpreter, the kinds
interleaved; the time is CPU time (``time.process_time``; ``--wall`` for
``perf_counter``) of the load call after ``import tokenizers`` /
``import fasttok``. ``fasttok.load`` imports its pipeline modules on first
use, inside the call; the ``imports`` column is what that import alone
costs (``import fasttok.hf`` after ``import fasttok``), which the drop-in's
figures do not include, as ``tokenizers``' do not include its import.
The children read compiled bytecode, as an installed package does: they
write and read it under a private ``PYTHONPYCACHEPREFIX`` (warmed first),
whatever ``PYTHONDONTWRITEBYTECODE`` says (with it set, every module edited
since its ``.pyc`` was written is compiled again on each import: 100-150 ms
instead of 35-45 for ``import fasttok.hf`` in a development checkout).
Prints the fastest and the median of each kind, in ms, and the ratios of the
fastest uncached loads to ``tokenizers``', alone, with the first encode and
with the import.
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
kind, path, clock = sys.argv[1], sys.argv[2], getattr(time, sys.argv[3])
face, _, extra = kind.partition("+")  # extra: "encode", "import" or ""
LINE = "The quick brown fox, 3 times: \"jumps\" over the lazy dog's back!"
t = clock()  # kept when the import is timed too
if face == "tokenizers":
    import tokenizers
    t = t if extra == "import" else clock()
    tok = tokenizers.Tokenizer.from_file(path)
    if extra == "encode":
        tok.encode(LINE)
elif face == "imports":
    import fasttok
    t = clock()
    import fasttok.hf
elif face == "hf":
    import fasttok.hf
    t = t if extra == "import" else clock()
    tok = fasttok.hf.Tokenizer.from_file(path)
    if extra == "encode":
        tok.encode(LINE)
else:
    import fasttok
    t = t if extra == "import" else clock()
    enc = fasttok.load(path)
    if extra == "encode":
        enc.encode(LINE)
print(json.dumps({"ms": (clock() - t) * 1000}))
"""

# (column, child kind, cache: "off", "first" (an empty folder) or "cached")
KINDS = (("tokenizers", "tokenizers", "off"), ("tokenizers+encode", "tokenizers+encode", "off"),
         ("imports", "imports", "off"),
         ("hf, no cache", "hf", "off"), ("hf, first", "hf", "first"), ("hf, cached", "hf", "cached"),
         ("hf+encode", "hf+encode", "off"),
         ("load, no cache", "load", "off"), ("load, first", "load", "first"),
         ("load, cached", "load", "cached"), ("load+encode", "load+encode", "off"),
         ("tokenizers+import", "tokenizers+import", "off"), ("hf+import", "hf+import", "off"),
         ("load+import", "load+import", "off"))


_PYCACHE = tempfile.mkdtemp(prefix="hf-load-time-pycache-")


def run(kind: str, path: Path, cache_dir: str, cache: str, clock: str) -> float:
    env = dict(os.environ, FASTTOK_CACHE_DIR=cache_dir, PYTHONPYCACHEPREFIX=_PYCACHE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cache == "off":
        env["FASTTOK_CACHE"] = "0"
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(path), clock], env=env,
                         check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout)["ms"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", default=os.environ.get(
        "FASTTOK_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    parser.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    # absolute: the children run in another folder
    folder = Path(args.data).resolve() / "vocab" / "hf"
    files = {p.parent.name: p for p in sorted(folder.glob("*/tokenizer.json"))}
    files |= {p.stem: p for p in sorted((folder / "unigram").glob("*.json"))}
    names = [n for n in files if not args.names or n.startswith(tuple(args.names))]
    if not names:
        parser.error(f"no tokenizer.json in {folder} is named {' or '.join(args.names)}...")
    clock = "perf_counter" if args.wall else "process_time"
    for kind in ("imports", "tokenizers"):  # compiles the bytecode the runs read
        run(kind, files[names[0]], _PYCACHE, "off", clock)
    print(f"{'file':44} " + " ".join(f"{k[0]:>16}" for k in KINDS)
          + "   hf/tok load/tok  +encode: hf/tok load/tok  +import: hf/tok load/tok")
    for name in names:
        times: dict = {k[0]: [] for k in KINDS}
        for _ in range(args.runs):
            for face in ("hf", "load"):
                with tempfile.TemporaryDirectory() as cache_dir:
                    for column, kind, cache in KINDS:
                        if kind.split("+")[0] == face or (face == "hf" and kind.split("+")[0] in (
                                "tokenizers", "imports")):
                            times[column].append(run(kind, files[name], cache_dir, cache, clock))
        best = {k: min(v) for k, v in times.items()}
        print(f"{name[:44]:44} " + " ".join(
            f"{best[k]:>7.0f} / {statistics.median(v):>6.0f}" for k, v in times.items())
            + f"   {best['hf, no cache'] / best['tokenizers']:>6.2f}"
            + f" {best['load, no cache'] / best['tokenizers']:>8.2f}"
            + f"           {best['hf+encode'] / best['tokenizers+encode']:>6.2f}"
            + f" {best['load+encode'] / best['tokenizers+encode']:>8.2f}"
            + f"           {best['hf+import'] / best['tokenizers+import']:>6.2f}"
            + f" {best['load+import'] / best['tokenizers+import']:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
