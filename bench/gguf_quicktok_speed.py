"""GGUF byte-level vocabularies against quicktok-v1's bundled copies of the same models.

    python bench/gguf_quicktok_speed.py [--data DIR] [--lines 20000]

``ggml-vocab-llama-bpe.gguf`` against ``quicktok.get_encoding("llama3")`` and
``ggml-vocab-qwen2.gguf`` against ``"qwen3"`` (the same vocabulary and
pattern), on the first ``--lines`` lines of each corpus file, whole and one
call a line. The ids are checked equal first; a file where they differ is
reported, not timed. CPU time, best of 3; a ratio above 1 means fasttok is
faster.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import fasttok

PAIRS = [("llama-bpe", "llama3"), ("qwen2", "qwen3")]


def best(call, runs: int = 3) -> float:
    found = float("inf")
    for _ in range(runs):
        start = time.process_time()
        call()
        found = min(found, time.process_time() - start)
    return found


def main() -> None:
    import quicktok

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_data = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("FASTTOK_DATA") or default_data))
    parser.add_argument("--lines", type=int, default=20_000)
    args = parser.parse_args()
    for gguf, name in PAIRS:
        ours = fasttok.load(args.data / "vocab" / "gguf" / f"ggml-vocab-{gguf}.gguf")
        theirs = quicktok.get_encoding(name)
        for path in sorted((args.data / "corpus").glob("*.txt")):
            text = "\n".join(path.read_bytes().decode("utf-8").split("\n")[:args.lines])
            lines = [line + "\n" for line in text.split("\n")]
            if ours.encode_ordinary(text) != theirs.encode_ordinary(text):
                print(f"{gguf:10} {path.stem:12} the ids differ: not timed")
                continue
            whole = best(lambda: ours.encode_ordinary(text))
            each = best(lambda: [ours.encode_ordinary(line) for line in lines])
            size = len(text.encode("utf-8")) / 1e6
            print(f"{gguf:10} {path.stem:12} whole {size / whole:6.1f} MB/s "
                  f"{best(lambda: theirs.encode_ordinary(text)) / whole:5.2f}x  lines "
                  f"{size / each:6.1f} MB/s "
                  f"{best(lambda: [theirs.encode_ordinary(line) for line in lines]) / each:5.2f}x")


if __name__ == "__main__":
    main()
