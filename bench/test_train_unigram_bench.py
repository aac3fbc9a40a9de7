"""Training a Unigram model: fasttok against ``sentencepiece``'s own trainer.

Both read the same text file (one sentence a line) with the same settings
(``model_type="unigram"``, ``normalization_rule_name="identity"``, the
defaults otherwise) and the same thread count. Before anything is timed
the two models are compared on the corpus they were trained on: the total
number of tokens and the log-likelihood (the sum of the Viterbi pieces'
scores), each model's encoding done by sentencepiece; fasttok's may be no
more than 1% worse on either, or the benchmark fails. The corpora: English
(``en.txt``) at 8000 and 1000 pieces, and every corpus file together at
16000 (at 8000 sentencepiece refuses it: its 0.9995 character coverage
needs 8005 characters). Peak memory is each trainer run alone in a fresh
process (``VmHWM`` minus the resident size before training; Linux only).

    python -m pytest bench/test_train_unigram_bench.py --benchmark-enable -q -s
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA

spm = pytest.importorskip("sentencepiece")

FILES = ("en", "code", "zh", "multi", "adversarial")
CASES = {"en-8000": ("en", 8000), "en-1000": ("en", 1000), "all-16000": ("all", 16000)}
MARGIN = 0.01


@functools.lru_cache(maxsize=None)
def corpus_path(name: str) -> str:
    if name != "all":
        path = DATA / "corpus" / f"{name}.txt"
        if not path.is_file():
            pytest.skip(f"{path} not found")
        return str(path)
    import tempfile

    out = Path(tempfile.mkdtemp()) / "all.txt"
    out.write_text("".join(Path(corpus_path(f)).read_text(encoding="utf-8") for f in FILES),
                   encoding="utf-8")
    return str(out)


def train_fasttok(path: str, vocab_size: int, threads: int) -> bytes:
    from fasttok.trainers.unigram import train_unigram

    with open(path, encoding="utf-8") as f:
        lines = (line[:-1] if line.endswith("\n") else line for line in f)
        return train_unigram(lines, vocab_size=vocab_size, num_threads=threads).model_bytes()


def train_sentencepiece(path: str, vocab_size: int, threads: int) -> bytes:
    import io

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(input=path, model_writer=out, vocab_size=vocab_size,
                                   model_type="unigram", normalization_rule_name="identity",
                                   num_threads=threads, minloglevel=2)
    return out.getvalue()


IMPLS = {"fasttok": train_fasttok, "sentencepiece": train_sentencepiece}


def quality(model: bytes, path: str) -> tuple:
    sp = spm.SentencePieceProcessor(model_proto=model)
    scores = [sp.get_score(i) for i in range(sp.get_piece_size())]
    with open(path, encoding="utf-8") as f:
        rows = sp.encode(f.read().split("\n"))
    return sum(map(len, rows)), sum(scores[i] for row in rows for i in row)


@functools.lru_cache(maxsize=None)
def reference_quality(case: str) -> tuple:
    name, vocab_size = CASES[case]
    return quality(train_sentencepiece(corpus_path(name), vocab_size, 2), corpus_path(name))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("impl", list(IMPLS))
@pytest.mark.parametrize("case", list(CASES))
def test_train_unigram(benchmark, case, impl, threads):
    name, vocab_size = CASES[case]
    path = corpus_path(name)
    if impl == "fasttok":
        tokens, ll = quality(train_fasttok(path, vocab_size, threads), path)
        ref_tokens, ref_ll = reference_quality(case)
        print(f"\n{case}: tokens {tokens} vs sentencepiece {ref_tokens} "
              f"({tokens / ref_tokens:.4f}), log-likelihood {ll:.0f} vs {ref_ll:.0f} "
              f"({ll / ref_ll:.4f})")
        assert tokens <= ref_tokens * (1 + MARGIN), "more tokens than sentencepiece's model"
        assert ll >= ref_ll * (1 + MARGIN), "lower likelihood than sentencepiece's model"
        benchmark.extra_info.update(tokens=tokens, log_likelihood=ll,
                                    reference_tokens=ref_tokens, reference_log_likelihood=ref_ll)
    benchmark.group = f"train-unigram-{case}-{threads}t"
    benchmark.extra_info.update(kind="train-unigram", impl=impl, threads=threads)
    benchmark.pedantic(IMPLS[impl], args=(path, vocab_size, threads), rounds=2, iterations=1)


_RSS = """
import sys
sys.path.insert(0, {bench!r})
import test_train_unigram_bench as b
def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field))
path = b.corpus_path({name!r})
base = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
b.IMPLS[{impl!r}](path, {vocab_size}, {threads})
print(base, status("VmHWM:"))
"""


@pytest.mark.parametrize("case", list(CASES))
def test_train_unigram_peak_memory(case):
    name, vocab_size = CASES[case]
    bench = str(Path(__file__).parent)
    corpus_path(name)
    out = {}
    for impl in IMPLS:
        result = subprocess.run([sys.executable, "-c", _RSS.format(
            bench=bench, impl=impl, name=name, vocab_size=vocab_size, threads=2)],
            capture_output=True, text=True, check=True)
        base, peak = map(int, result.stdout.split())
        out[impl] = (peak - base) / 1024
    print(f"\npeak RSS while training, {case}, 2 threads: "
          + ", ".join(f"{impl} {mib:.0f} MiB" for impl, mib in out.items()))
