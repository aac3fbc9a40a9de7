"""Load time and memory of a named encoding in fresh processes: tiktoken
against fasttok from the rank files shipped in the package.

    python bench/load_time.py [--runs 21] [--data DIR]

DIR (default ``$FASTTOK_DATA`` or ``../shared/data``) supplies tiktoken's
rank files, placed in a ``TIKTOKEN_CACHE_DIR`` under the names tiktoken
gives its downloads, so ``tiktoken.get_encoding`` reads them as it would
after its first download (and checks their sha256, as fasttok does). Four
kinds, interleaved, each run in a new interpreter: tiktoken; fasttok with
no table cache (parses the shipped gzip copy); fasttok's first load (parses
and writes the cache); its second load (reads the cache). Load is the time
of the ``get_encoding`` call, after the imports; RSS held is the resident
set after it minus before it, peak the high-water mark minus the same start
(Linux ``/proc``). Prints the fastest and the median of each.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, os, sys, time
def rss():
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024
library, name = sys.argv[1], sys.argv[2]
if library == "tiktoken":
    import tiktoken as lib
else:
    import fasttok as lib
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the high-water mark to the current resident set
before, _ = rss()
t = time.perf_counter()
enc = lib.get_encoding(name)
elapsed = time.perf_counter() - t
after, peak = rss()
assert enc.decode(enc.encode("hello world")) == "hello world"
print(json.dumps({"ms": elapsed * 1000, "held": after - before, "peak": peak - before}))
"""

URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def run(kind: str, name: str, env: dict) -> dict:
    library = "tiktoken" if kind == "tiktoken" else "fasttok"
    out = subprocess.run([sys.executable, "-c", CHILD, library, name], env=env, check=True,
                         capture_output=True, text=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--data", type=Path, default=Path(
        os.environ.get("FASTTOK_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"))
    parser.add_argument("names", nargs="*", default=["cl100k_base", "o200k_base"])
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="fasttok-load-"))
    try:
        tiktoken_cache = scratch / "tiktoken"
        tiktoken_cache.mkdir()
        for name in args.names:
            key = hashlib.sha1(URL.format(name).encode()).hexdigest()
            shutil.copy(args.data / "vocab" / "tiktoken" / f"{name}.tiktoken", tiktoken_cache / key)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("FASTTOK_", "TIKTOKEN_"))}
        base["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache)
        # an empty vocabulary folder: fasttok must find its own copy
        base["FASTTOK_VOCAB_DIR"] = str(scratch / "no-vocab")
        kinds = ["tiktoken", "fasttok, no cache", "fasttok, first load", "fasttok, second load"]
        results = {(n, k): [] for n in args.names for k in kinds}
        for i in range(args.runs):
            for name in args.names:
                cache = scratch / f"cache-{i}-{name}"
                for kind in kinds:
                    env = dict(base, FASTTOK_CACHE_DIR=str(cache))
                    if kind == "fasttok, no cache":
                        env["FASTTOK_CACHE"] = "0"
                    results[name, kind].append(run(kind, name, env))
        print(f"fresh processes, {args.runs} of each; fastest (median)")
        print("| encoding | " + " | ".join(kinds) + " |")
        print("|---|" + "---|" * len(kinds))
        for name in args.names:
            for field, label in [("ms", "load ms"), ("held", "RSS held MiB"), ("peak", "RSS peak MiB")]:
                cells = []
                for kind in kinds:
                    values = [r[field] for r in results[name, kind]]
                    cells.append(f"{min(values):.0f} ({statistics.median(values):.0f})")
                print(f"| {name} {label} | " + " | ".join(cells) + " |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
