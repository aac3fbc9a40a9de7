"""Bulk throughput, issue 25's protocol: fasttok against the bulk peers, ids checked first.

Run as a script (one run prints the tables; nothing here is collected by the
default test run)::

    python bench/test_bulk_bench.py                 # everything, best of 3 rounds
    python bench/test_bulk_bench.py --rounds 1 --vocabs cl100k llama3 --corpora en
    python bench/test_bulk_bench.py --libs fasttok gigatoken --no-files  # (and the reference)
    python bench/test_bulk_bench.py --files-only    # the ~100 MB encode_files run
    python bench/test_bulk_bench.py --files-only --jsonl  # ... and as JSON Lines

Batches. A document is a line of a shared corpus file (``en``, ``code``,
``zh``, ``multi``). Every measurement is a fresh process (``--child``), so
no library starts with another's caches or thread pools, and its threads are
set before it is imported (``RAYON_NUM_THREADS``, ``TOKENIZERS_PARALLELISM``)
and in its call. In that process the library is loaded (not timed), then:

* **cold**: its batch call on the first 1.5 MB of lines, the first text it
  ever encodes;
* **steady**: warmed on the first half of the file, its batch call on the
  unseen second half.

Each gives wall time and CPU time (the process's, all threads), on one
thread and on all (``os.cpu_count()``). The rounds take the libraries in turn
(round-robin), and a figure is the best of the rounds; the machine is
shared, so the load average is printed with the tables. Each library's ids
(flat ids and per-document lengths, hashed) are compared with the reference
library's on the very same input: ``tiktoken`` for cl100k/o200k,
``tokenizers`` for the ``tokenizer.json`` files; a library whose ids differ
is printed with a ``*``; one that cannot load the file is left out and
listed. Peers and their batch calls:

* fasttok: ``encode_ordinary_batch(lines, num_threads=N, flat=True)``;
* tiktoken: ``encode_ordinary_batch(lines, num_threads=N)``;
* tokenizers: ``encode_batch_fast(lines, add_special_tokens=False)``;
* gigatoken 0.10.0: ``Tokenizer(...).encode_batch(lines, parallel=N > 1)``;
* nanotoken 0.1.0 (WordPiece): ``encode_batch(lines, add_special_tokens=False, parallel=N > 1)``;
* quicktok-v1: ``get_encoding(name).encode_batch(lines, threads=N)`` (its
  bundled vocabularies);
* tokie: ``encode_batch_flat(lines, add_special_tokens=False)``;
* kitoken: ``encode_all(lines)``.

Files. ``--files`` builds a corpus of about 100 MB from the four corpus files
(repeated, in a temporary folder, removed after) and times
``Encoding.encode_files(path)`` against gigatoken's
``encode_files(TextFileSource([path], separator="\\n"))`` on 1 and 2
threads, with the process's peak RSS (``resource.getrusage``) before and
after. gigatoken drops empty lines where fasttok keeps them as empty
documents, so their ids are compared with empty documents left out. Under
the table: each library's 2-thread speed over its 1-thread speed, and what
two threads of plain compute-bound work, and of reads at random places of a
table of 8 MiB each, cost each other on this machine
(:func:`machine_scaling`), the bounds on any library's scaling.
``--jsonl`` also times the same corpus as JSON Lines (each line
``{"text": line}``, non-ASCII as ``\\u`` escapes): ``encode_files(path,
format="jsonl")`` against gigatoken's ``JsonlFileSource([path])``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

DATA = Path(os.environ.get("FASTTOK_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
CORPUS = DATA / "corpus"
HF = DATA / "vocab" / "hf"
TIKTOKEN = DATA / "vocab" / "tiktoken"
CORPORA = ("en", "code", "zh", "multi")
COLD_BYTES = 1_500_000
FILES_BYTES = 100_000_000

# vocabulary -> (where it is, the reference library, the libraries timed)
VOCABS = {
    "cl100k": ("cl100k_base", "tiktoken",
               ("fasttok", "tiktoken", "gigatoken", "quicktok", "kitoken")),
    "o200k": ("o200k_base", "tiktoken",
              ("fasttok", "tiktoken", "gigatoken", "quicktok", "kitoken")),
    "llama3": ("llama3", "tokenizers",
               ("fasttok", "tokenizers", "gigatoken", "quicktok", "tokie", "kitoken")),
    "qwen3": ("qwen3", "tokenizers",
              ("fasttok", "tokenizers", "gigatoken", "quicktok", "tokie", "kitoken")),
    "minilm": ("all-MiniLM-L6-v2", "tokenizers",
               ("fasttok", "tokenizers", "nanotoken", "tokie", "kitoken")),
}


def _tiktoken_file(name: str) -> str:
    return str(TIKTOKEN / f"{name}.tiktoken")


def _json_file(name: str) -> str:
    return str(HF / name / "tokenizer.json")


# ------------------------------------------------------------- the libraries
# Each loader takes (vocabulary, threads) and returns lines -> a result that
# FLATTEN turns into (ids, lengths) after the timing.

def _fasttok(vocab: str, threads: int):
    import fasttok

    where = VOCABS[vocab][0]
    enc = fasttok.get_encoding(where) if VOCABS[vocab][1] == "tiktoken" else \
        fasttok.load(_json_file(where))
    return lambda lines: enc.encode_ordinary_batch(lines, num_threads=threads, flat=True)


def _tiktoken(vocab: str, threads: int):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    name = VOCABS[vocab][0]
    spec = json.loads((TIKTOKEN / "encodings.json").read_text())[name]
    enc = tiktoken.Encoding(name, pat_str=spec["pat_str"],
                            mergeable_ranks=load_tiktoken_bpe(_tiktoken_file(name)),
                            special_tokens=spec["special_tokens"])
    return lambda lines: enc.encode_ordinary_batch(lines, num_threads=threads)


def _tokenizers(vocab: str, threads: int):
    import tokenizers

    tok = tokenizers.Tokenizer.from_file(_json_file(VOCABS[vocab][0]))
    tok.no_truncation()
    tok.no_padding()
    return lambda lines: tok.encode_batch_fast(lines, add_special_tokens=False)


def _gigatoken(vocab: str, threads: int):
    import gigatoken

    where = VOCABS[vocab][0]
    tok = gigatoken.Tokenizer.from_tiktoken(_tiktoken_file(where)) \
        if VOCABS[vocab][1] == "tiktoken" else gigatoken.Tokenizer(_json_file(where))
    return lambda lines: tok.encode_batch(lines, parallel=threads > 1)


def _nanotoken(vocab: str, threads: int):
    import nanotoken

    tok = nanotoken.Tokenizer(_json_file(VOCABS[vocab][0]))
    return lambda lines: tok.encode_batch(lines, add_special_tokens=False, parallel=threads > 1)


def _quicktok(vocab: str, threads: int):
    import quicktok

    tok = quicktok.get_encoding(VOCABS[vocab][0])
    return lambda lines: tok.encode_batch(lines, threads=threads)


def _tokie(vocab: str, threads: int):
    import tokie

    tok = tokie.Tokenizer.from_json(_json_file(VOCABS[vocab][0]))
    return lambda lines: tok.encode_batch_flat(lines, add_special_tokens=False)


def _kitoken(vocab: str, threads: int):
    import kitoken

    where = VOCABS[vocab][0]
    if VOCABS[vocab][1] == "tiktoken":
        tok = kitoken.Kitoken.from_tiktoken_file(_tiktoken_file(where))
    else:
        tok = kitoken.Kitoken.from_tokenizers_file(_json_file(where))
        config = tok.config()
        config["processing"] = [step for step in config.get("processing", [])
                                if not {"Pad", "Truncate"} & set(step)]
        tok.set_config(config)
    return lambda lines: tok.encode_all(lines)


LOADERS = {"fasttok": _fasttok, "tiktoken": _tiktoken, "tokenizers": _tokenizers,
           "gigatoken": _gigatoken, "nanotoken": _nanotoken, "quicktok": _quicktok,
           "tokie": _tokie, "kitoken": _kitoken}


def _from_offsets(ids, offsets) -> tuple:
    offsets = list(offsets)
    return array("I", list(ids)), array("Q", [b - a for a, b in zip(offsets, offsets[1:])])


def _from_lists(docs) -> tuple:
    docs = [doc.ids if hasattr(doc, "ids") else doc for doc in docs]
    return array("I", [i for doc in docs for i in doc]), array("Q", [len(doc) for doc in docs])


def _from_awkward(result) -> tuple:
    import awkward as ak

    return array("I", ak.to_numpy(ak.flatten(result)).tolist()), \
        array("Q", ak.num(result).to_numpy().tolist())


# each library's batch result -> (ids, lengths), after the timing
FLATTEN = {"fasttok": lambda r: _from_offsets(*r), "quicktok": lambda r: _from_offsets(*r),
           "nanotoken": lambda r: _from_offsets(r.ids, r.offsets),
           "tokie": lambda r: (array("I", r[0].tolist()), array("Q", r[1].tolist())),
           "gigatoken": _from_awkward, "tiktoken": _from_lists, "tokenizers": _from_lists,
           "kitoken": _from_lists}


def _digest(lib: str, result) -> str:
    ids, lengths = FLATTEN[lib](result)
    return hashlib.blake2b(ids.tobytes() + b"|" + lengths.tobytes(), digest_size=12).hexdigest()


def _lines(corpus: str) -> tuple:
    text = (CORPUS / f"{corpus}.txt").read_text(encoding="utf-8")
    lines = text.split("\n")
    sizes = [len(line.encode("utf-8")) + 1 for line in lines]
    total, cold, half, run = sum(sizes), None, None, 0
    for i, size in enumerate(sizes):
        run += size
        if cold is None and run > COLD_BYTES:
            cold = i
        if half is None and run > total // 2:
            half = i
    cold = len(lines) if cold is None else cold
    return lines[:cold], lines[:half], lines[half:]


def _timed(call, arg) -> tuple:
    wall, cpu = time.perf_counter(), time.process_time()
    result = call(arg)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def _utf8_size(lines) -> int:
    return sum(len(line.encode("utf-8")) for line in lines) + len(lines)


def child_batch(lib: str, vocab: str, corpus: str, threads: int) -> dict:
    """One library, fresh: cold on the first 1.5 MB, steady on the second half."""
    try:
        encode = LOADERS[lib](vocab, threads)
    except Exception as exc:  # noqa: BLE001 - a peer's refusal is reported
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:100] if str(exc) else ''}"}
    cold, first, second = _lines(corpus)
    got_cold, cold_wall, cold_cpu = _timed(encode, cold)
    encode(first)
    got_steady, wall, cpu = _timed(encode, second)
    return {"cold": [cold_wall, cold_cpu, _utf8_size(cold)], "steady": [wall, cpu, _utf8_size(second)],
            "digest": [_digest(lib, got_cold), _digest(lib, got_steady)]}


def child_files(lib: str, path: str, threads: int) -> dict:
    """encode_files over the big corpus; peak RSS before and after."""
    import resource

    vocab = "cl100k"
    jsonl = path.endswith(".jsonl")
    if lib == "fasttok":
        import fasttok

        enc = fasttok.get_encoding(VOCABS[vocab][0])
        call = lambda: enc.encode_files(path, num_threads=threads, disallowed_special=(),  # noqa: E731
                                        format="jsonl" if jsonl else "text")
    else:
        import gigatoken

        tok = gigatoken.Tokenizer.from_tiktoken(_tiktoken_file(VOCABS[vocab][0]))
        source = gigatoken.JsonlFileSource([path]) if jsonl else \
            gigatoken.TextFileSource([path], separator="\n")
        call = lambda: tok.encode_files(source, parallel=threads > 1)  # noqa: E731
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result, wall, cpu = _timed(lambda _: call(), None)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ids, lengths = FLATTEN[lib]((result.ids, result.offsets) if lib == "fasttok" else result)
    lengths = array("Q", [n for n in lengths if n])  # gigatoken drops empty documents
    return {"wall": wall, "cpu": cpu, "rss_before_kb": before, "rss_after_kb": after,
            "tokens": len(ids), "bytes": os.path.getsize(path),
            "digest": hashlib.blake2b(ids.tobytes() + lengths.tobytes(), digest_size=12).hexdigest()}


# ------------------------------------------------------------------ the parent

def _run_child(args: list, threads: int) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), RAYON_RS_NUM_THREADS=str(threads),
               TOKENIZERS_PARALLELISM="false" if threads == 1 else "true")
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(args)], env=env,
                         capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=900)
    if out.returncode:
        return {"error": f"exit {out.returncode}: {out.stderr.strip().splitlines()[-1:]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(runs: list, key: str) -> list:
    return [min(r[key][0] for r in runs), min(r[key][1] for r in runs), runs[0][key][2]]


def _timed_libs(vocab: str, libs) -> list:
    # the libraries a vocabulary is timed with: libs (None: all of them),
    # and always its reference library, whose ids the others' are checked against
    return [lib for lib in VOCABS[vocab][2]
            if libs is None or lib in libs or lib == VOCABS[vocab][1]]


def batches(vocabs, corpora, thread_counts, rounds, save, libs=None) -> None:
    results: dict = {}
    for _ in range(rounds):
        for vocab in vocabs:
            for corpus in corpora:
                for threads in thread_counts:
                    for lib in _timed_libs(vocab, libs):
                        found = _run_child(["batch", lib, vocab, corpus, threads], threads)
                        results.setdefault(f"{vocab} {corpus} {threads} {lib}", []).append(found)
        if save:
            Path(save).write_text(json.dumps(results))
    print_batches(results, vocabs, corpora, thread_counts)


def print_batches(results: dict, vocabs, corpora, thread_counts) -> None:
    """The tables: MB/s by wall time (by CPU time) and the peer's speed over
    fasttok's, by CPU time on one thread (the work done, which the other
    processes of a shared machine disturb least) and by wall time on more."""
    rounds = max(len(runs) for runs in results.values())
    print(f"\n## Batches (load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, "
          f"best of {rounds}); MB/s by wall time (by CPU time); ×: peer speed / fasttok speed, "
          f"by CPU time on 1 thread, by wall time on more")
    notes = []
    for vocab in vocabs:
        reference = VOCABS[vocab][1]
        for threads in thread_counts:
            for phase in ("cold", "steady"):
                index = 0 if phase == "cold" else 1
                print(f"\n{vocab}, {threads} thread(s), {phase}")
                print("| library | " + " | ".join(corpora) + " |")
                print("|---|" + "---|" * len(corpora))
                for lib in VOCABS[vocab][2]:
                    if not any(key.endswith(f" {lib}") and key.startswith(f"{vocab} ")
                               for key in results):
                        continue  # not timed (--libs)
                    cells, mark = [], ""
                    for corpus in corpora:
                        every = results.get(f"{vocab} {corpus} {threads} {lib}", [])
                        runs = [r for r in every if "error" not in r]
                        notes += [f"{lib} on {vocab}/{corpus}/{threads}: {r['error']}"
                                  for r in every if "error" in r]
                        refs = [r for r in results.get(f"{vocab} {corpus} {threads} {reference}", [])
                                if "error" not in r]
                        ours = [r for r in results.get(f"{vocab} {corpus} {threads} fasttok", [])
                                if "error" not in r]
                        if not runs:
                            cells.append("—")
                            continue
                        if refs and any(r["digest"][index] != refs[0]["digest"][index] for r in runs):
                            mark = "*"
                            notes.append(f"{lib} ids differ from {reference} on {vocab}/{corpus}/{phase}")
                        wall, cpu, size = _best(runs, phase)
                        ratio = ""
                        if lib != "fasttok" and ours:
                            best = _best(ours, phase)
                            ratio = f" ×{best[1] / cpu:.2f}" if threads == 1 else f" ×{best[0] / wall:.2f}"
                        cells.append(f"{size / wall / 1e6:.1f} ({size / cpu / 1e6:.1f}){ratio}")
                    print(f"| {lib}{mark} | " + " | ".join(cells) + " |")
    for note in dict.fromkeys(notes):
        print("-", note)


def machine_scaling(rounds: int = 5, table_mib: int = 0) -> float:
    """The CPU a unit of work takes on each of two threads at once over what
    it takes on one alone, best of ``rounds``, the GIL released. With
    ``table_mib`` 0 the work is compute-bound (sha256 of a buffer that stays
    in L1): 1.0 on two free cores, up to 2 where the two CPUs are one core's
    hardware threads or other work takes turns with them. Otherwise it reads
    a table of ``table_mib`` MiB of each thread's own at random places
    (numpy's ``take``), as encode_files' threads read their pre-token caches:
    above the first figure where the caches the cores share do not hold both
    tables. No encoder's two threads scale better than these let them."""
    import hashlib
    import threading

    if table_mib:
        import numpy as np

        tables = [np.arange((table_mib << 20) // 8, dtype=np.int64) for _ in range(2)]
        places = np.random.default_rng(0).integers(0, len(tables[0]) // 8, 1 << 20) * 8

        def unit(k: int) -> None:
            for _ in range(8):
                tables[k].take(places).sum()
    else:
        data = b"x" * 16384

        def unit(k: int) -> None:
            for _ in range(3000):
                hashlib.sha256(data).digest()

    def work(k: int, spent: list) -> None:
        start = time.thread_time()
        unit(k)
        spent.append(time.thread_time() - start)

    one = two = float("inf")
    for _ in range(rounds):
        spent: list = []
        work(0, spent)
        one = min(one, spent[0])
        spent = []
        pair = [threading.Thread(target=work, args=(k, spent)) for k in range(2)]
        for t in pair:
            t.start()
        for t in pair:
            t.join()
        two = min(two, max(spent))
    return two / one


def files(thread_counts, rounds, jsonl: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="fasttok-bulk-") as folder:
        path = os.path.join(folder, "corpus100.txt")
        parts = [(CORPUS / f"{c}.txt").read_bytes().rstrip(b"\n") + b"\n" for c in CORPORA]
        with open(path, "wb") as f:
            written = 0
            while written < FILES_BYTES:
                for part in parts:
                    written += f.write(part)
        paths = {"text": path}
        if jsonl:
            paths["jsonl"] = path[:-len(".txt")] + ".jsonl"
            with open(path, encoding="utf-8") as lines, open(paths["jsonl"], "w") as out:
                for line in lines:
                    out.write(json.dumps({"text": line[:-1]}) + "\n")
        results: dict = {}
        for _ in range(rounds):
            for kind, one in paths.items():
                for threads in thread_counts:
                    for lib in ("fasttok", "gigatoken"):
                        results.setdefault((kind, threads, lib), []).append(
                            _run_child(["files", lib, one, threads], threads))
    print(f"\n## encode_files, {written / 1e6:.0f} MB of text, cl100k (load average "
          f"{os.getloadavg()[0]:.2f}, best of {rounds}; peak RSS in MB before / after the "
          f"call; the ids alone are 4 bytes a token)")
    print("| format | threads | library | MB/s wall | MB/s CPU | peak RSS before / after "
          "| ids MB | ids |")
    print("|---|---|---|---|---|---|---|---|")
    digests = {r["digest"] for runs in results.values() for r in runs if "error" not in r}
    for (kind, threads, lib), every in sorted(results.items()):
        runs = [r for r in every if "error" not in r]
        for r in every:
            if "error" in r:
                print(f"- {lib} on {kind}, {threads} thread(s): {r['error']}")
        if not runs:
            continue
        wall, cpu = min(r["wall"] for r in runs), min(r["cpu"] for r in runs)
        r = runs[0]
        print(f"| {kind} | {threads} | {lib} | {r['bytes'] / wall / 1e6:.1f} | "
              f"{r['bytes'] / cpu / 1e6:.1f} | {r['rss_before_kb'] / 1e3:.0f} / "
              f"{max(x['rss_after_kb'] for x in runs) / 1e3:.0f} | "
              f"{4 * r['tokens'] / 1e6:.0f} | {'same' if len(digests) == 1 else r['digest']} |")
    for kind in paths:
        for lib in ("fasttok", "gigatoken"):
            walls = [min((r["wall"] for r in results.get((kind, t, lib), []) if "error" not in r),
                         default=None) for t in (1, 2)]
            if None not in walls:
                print(f"- {kind}, {lib}: 2 threads {walls[0] / walls[1]:.2f}x one thread (wall)")
    print(f"- this machine: two threads of a compute-bound loop at once take "
          f"{machine_scaling():.2f}x the CPU a unit of one alone (1.00: two free cores); "
          f"reading tables of 8 MiB each at random places (fasttok's pre-token caches on two "
          f"threads), {machine_scaling(table_mib=8):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--vocabs", nargs="*", default=list(VOCABS))
    parser.add_argument("--corpora", nargs="*", default=list(CORPORA))
    parser.add_argument("--threads", nargs="*", type=int, default=sorted({1, os.cpu_count() or 1}))
    parser.add_argument("--libs", nargs="*",
                        help="time only these libraries (and each vocabulary's reference library)")
    parser.add_argument("--files-only", action="store_true")
    parser.add_argument("--no-files", action="store_true")
    parser.add_argument("--jsonl", action="store_true",
                        help="also time the files corpus as JSON Lines")
    parser.add_argument("--save", help="write the batches' raw results (JSON) here, round by round")
    parser.add_argument("--load", help="print the tables of results --save wrote, and stop")
    args = parser.parse_args()
    if args.load:
        print_batches(json.loads(Path(args.load).read_text()), args.vocabs, args.corpora,
                      args.threads)
        return
    if args.child:
        kind, *rest = json.loads(args.child)
        print(json.dumps(child_batch(*rest) if kind == "batch" else child_files(*rest)))
        return
    if not args.files_only:
        batches(args.vocabs, args.corpora, args.threads, args.rounds, args.save, args.libs)
    if not args.no_files:
        files(sorted({1, 2} | set(args.threads)), args.rounds, args.jsonl)


if __name__ == "__main__":
    main()
