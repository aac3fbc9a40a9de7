"""``tokenize_ids`` of fasttok's Hugging Face Unigram and WordPiece models
against tokenizers' model alone, one word at a time, on corpus words.

    python bench/hf_models_speed.py [--words 100000] [--data DIR]

The words of each ``corpus/*.txt`` file (split on whitespace, the first
``--words``): behind ``▁`` for the Unigram models (as Metaspace hands them
over), lowercased for all-MiniLM-L6-v2's WordPiece. fasttok: one
``tokenize_ids`` call per word from Python. tokenizers, built from a document
holding only the model: ``encode(words, is_pretokenized=True)`` (one call, the
model run on each word: its fastest way to run the model alone) and one
``encode`` per word. CPU time, best of 3 (1 for tokenizers' per-word calls);
the ids are checked to be the same first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import timeit
from pathlib import Path

from fasttok.models.hf_unigram import unigram_from_json
from fasttok.models.hf_wordpiece import wordpiece_from_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from hf_model_pairs import reference as model_alone  # noqa: E402  (the tests' reference)

MODELS = (("unigram/botchan_unigram_5000.v5.24.0.from_spm_proto.json", unigram_from_json),
          ("unigram/kyoto_ja_unigram_8000.v5.24.0.from_spm_proto.json", unigram_from_json),
          ("all-MiniLM-L6-v2/tokenizer.json", wordpiece_from_json))


def cpu_time(call, runs: int) -> float:
    return min(timeit.repeat(call, repeat=runs, number=1, timer=time.process_time))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=100_000)
    default_data = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("FASTTOK_DATA") or default_data))
    args = parser.parse_args()
    print(f"{'model':24} {'file':16} {'words':>7} {'fasttok':>8} {'tk batch':>8} {'tk each':>8}"
          f" {'batch/ft':>8} {'each/ft':>8}")
    for name, factory in MODELS:
        spec = json.loads((args.data / "vocab" / "hf" / name).read_text(encoding="utf-8"))["model"]
        ours, ref = factory(spec, "$.model", ValueError), model_alone(spec)
        unigram = spec["type"] == "Unigram"
        label = Path(name).parent.name if name.endswith("tokenizer.json") else Path(name).stem
        for path in sorted((args.data / "corpus").glob("*.txt")):
            words = path.read_text(encoding="utf-8").split()[:args.words]
            words = ["\u2581" + w for w in words] if unigram else [w.lower() for w in words]
            ids = ours.tokenize_ids
            got = [i for word in words for i in ids(word)]
            if got != ref.encode(words, is_pretokenized=True, add_special_tokens=False).ids:
                raise SystemExit(f"{name} {path.name}: the ids differ")
            t_ours = cpu_time(lambda: [ids(word) for word in words], 3)
            t_batch = cpu_time(lambda: ref.encode(words, is_pretokenized=True,
                                                  add_special_tokens=False), 3)
            t_each = cpu_time(lambda: [ref.encode(w, add_special_tokens=False) for w in words], 1)
            print(f"{label[:24]:24} {path.name:16} {len(words):7} {t_ours:7.3f}s"
                  f" {t_batch:7.3f}s {t_each:7.3f}s {t_batch / t_ours:7.1f}x"
                  f" {t_each / t_ours:7.1f}x")


if __name__ == "__main__":
    main()
