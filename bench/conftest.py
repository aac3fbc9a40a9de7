"""Benchmarks: fasttok against its peers, on the same input, in the same process.

How to run (not part of the default test run, which only collects ``tests/``)::

    python -m pytest bench --benchmark-enable -q
    python -m pytest bench --benchmark-enable -q -k "cl100k_base and whole"   # a subset
    python -m pytest bench --benchmark-enable -q --benchmark-columns=median,ops

Needs ``pytest-benchmark`` and the reference ``tiktoken`` (``pip install -e .[bench]``).
The other peers run when installed and are skipped otherwise: ``quicktok-v1``
(imported as ``quicktok``), ``rs-bpe`` (``rs_bpe``), ``bpe-openai`` (``bpe_openai``),
Hugging Face ``tokenizers`` (``hf_tokenizers``; its BPE model is built offline from the
same rank files, see ``_hf_tokenizer``).

Data: ``FASTTOK_DATA`` (default ``<repo>/../shared/data``; rebuild it with
``python tools/fetch_test_data.py DIR``). fasttok reads its rank files from
``FASTTOK_VOCAB_DIR``, which is pointed at ``<data>/vocab/tiktoken`` here. tiktoken
is built offline from the same files (``vocab/tiktoken/encodings.json`` and the
``.tiktoken`` rank files it names), so every library
encodes with identical ranks.

Before anything is timed, each peer's ids are compared with fasttok's on that very
input; a difference fails that benchmark (it is not timed) and is listed at the end.
(Known, and listed in ``KNOWN_PEER_BUGS`` as expected failures: rs_bpe 0.1.0's
``encode_batch_parallel`` keeps using the first encoding it was called with in the
process, so its o200k_base batch results after cl100k_base are wrong; its
single-string ``encode`` is exact.)
When the session ends, a table of ``peer time / fasttok time`` (medians; above 1
means fasttok is faster) per encoding, corpus file and mode is printed, and for
the pathological inputs the ratio of each input's time to the time of 1 MB of
English. If fasttok cannot be imported, tiktoken is the baseline instead and the
table says so.
"""

from __future__ import annotations

import base64
import functools
import gc
import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("FASTTOK_DATA") or (REPO_ROOT.parent / "shared" / "data")).resolve()
VOCAB_DIR = DATA / "vocab" / "tiktoken"

# Must be set before fasttok loads its first encoding.
os.environ["FASTTOK_VOCAB_DIR"] = str(VOCAB_DIR)

# Use an in-place build when fasttok is not installed.
if importlib.util.find_spec("fasttok") is None:
    sys.path.insert(0, str(REPO_ROOT))


def _fasttok_error() -> str | None:
    """None when fasttok's public API is importable, else why not."""
    try:
        import fasttok
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        return f"import fasttok failed: {exc}"
    if not hasattr(fasttok, "get_encoding"):
        return "fasttok has no get_encoding() yet"
    return None


FASTTOK_ERROR = _fasttok_error()
BASELINE = "fasttok" if FASTTOK_ERROR is None else "tiktoken"


def read_text(path: Path) -> str:
    """A corpus file, byte-exact (CR, VT, FF and U+2028 are kept)."""
    return path.read_bytes().decode("utf-8")


def split_lines(text: str) -> list[str]:
    """Split on LF only, keeping the LF on each line (what a line reader yields)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


# ---------------------------------------------------------------------------- implementations


def _tiktoken_spec(name: str) -> tuple[dict, dict[bytes, int]]:
    """``encodings.json``'s entry for ``name`` and the ranks of the ``.tiktoken`` file it names."""
    spec = json.loads((VOCAB_DIR / "encodings.json").read_text(encoding="utf-8"))[name]
    ranks = {}
    for line in (VOCAB_DIR / spec["file"]).read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return spec, ranks


def _tiktoken_encoding(name: str):
    """The real tiktoken.Encoding, built offline from ``encodings.json`` and the
    ``.tiktoken`` rank files (the same way as ``tests/conftest.py``), so it works
    with the shared data and with a folder made by ``tools/fetch_test_data.py``."""
    import tiktoken

    spec, ranks = _tiktoken_spec(name)
    kwargs = {}
    if "explicit_n_vocab" in spec:
        kwargs["explicit_n_vocab"] = spec["explicit_n_vocab"]
    return tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=ranks,
                             special_tokens=spec["special_tokens"], **kwargs)


class Impl:
    """One library behind the three calls the benchmarks time.

    ``whole(text)`` encodes one string, ``loop(lines)`` calls the single-string API
    once per line from Python, ``batch(lines, threads)`` uses the library's own batch
    call. ``as_lists`` turns a batch result into ``list[list[int]]`` for the
    exactness check (done outside the timed region).
    """

    def __init__(self, name, whole, batch, as_lists=lambda result: result):
        self.name = name
        self.whole = whole
        self.batch = batch
        self.as_lists = as_lists

    def loop(self, lines):
        whole = self.whole
        return [whole(line) for line in lines]


def _make_fasttok(enc_name: str) -> Impl:
    if FASTTOK_ERROR is not None:
        pytest.skip(FASTTOK_ERROR)
    import fasttok

    enc = fasttok.get_encoding(enc_name)
    return Impl("fasttok", enc.encode_ordinary,
                lambda lines, threads: enc.encode_ordinary_batch(lines, num_threads=threads))


def _make_tiktoken(enc_name: str) -> Impl:
    pytest.importorskip("tiktoken")
    enc = _tiktoken_encoding(enc_name)
    return Impl("tiktoken", enc.encode_ordinary,
                lambda lines, threads: enc.encode_ordinary_batch(lines, num_threads=threads))


def _make_quicktok(enc_name: str) -> Impl:
    # PyPI quicktok-v1; its own bundled rank data (checked by the exactness test).
    quicktok = pytest.importorskip("quicktok")
    enc = quicktok.get_encoding(enc_name)

    def as_lists(result):
        tokens, offsets = result  # flat uint32 array + int64 offsets (no Python lists built)
        flat = tokens.tolist()
        bounds = offsets.tolist()
        return [flat[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]

    return Impl("quicktok", enc.encode_ordinary,
                lambda lines, threads: enc.encode_batch(lines, threads, False), as_lists)


def _make_rs_bpe(enc_name: str) -> Impl:
    pytest.importorskip("rs_bpe")
    from rs_bpe.bpe import openai

    constructors = {"cl100k_base": openai.cl100k_base, "o200k_base": openai.o200k_base}
    if enc_name not in constructors:
        pytest.skip(f"rs_bpe has no {enc_name}")
    tok = constructors[enc_name]()

    def batch(lines, threads):
        options = openai.ParallelOptions(min_batch_size=1, chunk_size=256, max_threads=threads)
        return tok.encode_batch_parallel(lines, options)

    return Impl("rs_bpe", tok.encode, batch, lambda result: result[0])


def _make_bpe_openai(enc_name: str) -> Impl:
    # Refuses strings of 1M+ characters and results over 200k tokens (ValueError /
    # TokenLimitError); the exactness check turns that into a skip.
    bpe_openai = pytest.importorskip("bpe_openai")
    enc = bpe_openai.get_encoding(enc_name)
    return Impl("bpe_openai", enc.encode_ordinary,
                lambda lines, threads: enc.encode_ordinary_batch(lines, num_threads=threads))


def _byte_level_chars() -> str:
    """The character HF's ``ByteLevel`` pre-tokenizer writes for each byte value (GPT-2's
    table): printable Latin-1 bytes stand for themselves, the other 68 take U+0100 on,
    in byte order."""
    shown = {*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)}
    moved = iter(range(0x100, 0x144))
    return "".join(chr(b) if b in shown else chr(next(moved)) for b in range(256))


@functools.cache
def _hf_tokenizer(enc_name: str):
    """A ``tokenizers.Tokenizer`` that encodes like tiktoken's ``enc_name``, built from
    its rank file and ``pat_str`` (about 1 s for cl100k_base, 2 s for o200k_base).

    The vocabulary is the ranks spelt in ByteLevel characters. Each token gets one
    merge per split into two tokens ranked below it, and the merges are listed by the
    rank of the token they make: HF applies the earliest-listed merge available,
    tiktoken the one whose result has the lowest rank. ``ignore_merges`` makes a
    piece that is itself a token come out whole, as tiktoken's lookup does.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    spec, ranks = _tiktoken_spec(enc_name)
    table = str.maketrans(dict(enumerate(_byte_level_chars())))

    def spell(token: bytes) -> str:
        return token.decode("latin-1").translate(table)

    merges = []
    for token, rank in ranks.items():
        for cut in range(1, len(token)):
            left, right = ranks.get(token[:cut]), ranks.get(token[cut:])
            if left is not None and right is not None and left < rank and right < rank:
                merges.append((rank, left, right, token[:cut], token[cut:]))
    merges.sort()
    model = models.BPE({spell(token): rank for token, rank in ranks.items()},
                       [(spell(a), spell(b)) for *_, a, b in merges], ignore_merges=True)

    # Oniguruma, HF's regex engine (Ruby syntax), reads cl100k's "\p{N}{1,3}+" as "one or
    # more runs of 1-3 digits" instead of a possessive interval, which keeps long numbers
    # in one piece; an atomic group is the possessive it means. "\s++$" needs no change:
    # Ruby's "$" also matches before a newline, but "\s++" has already taken any newline.
    pattern = re.sub(r"(\\p\{\w+\}\{\d+(?:,\d*)?\})\+", r"(?>\1)", spec["pat_str"])
    tok = Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    return tok


def _make_hf_tokenizers(enc_name: str) -> Impl:
    """Hugging Face ``tokenizers`` running ``_hf_tokenizer(enc_name)``, without special tokens.

    Its batch call takes no thread count. ``TOKENIZERS_PARALLELISM``, read on every call
    (tokenizers 0.23), only switches its rayon pool on or off, and the pool's size is
    fixed at first use (``RAYON_NUM_THREADS``, else one thread per core; not set here,
    as every rayon-based peer in the process reads it). So ``threads=1`` is exact and
    any larger count means the whole pool: two threads on a 2-core machine.
    """
    pytest.importorskip("tokenizers")
    tok = _hf_tokenizer(enc_name)

    def encode(text):
        return tok.encode(text, add_special_tokens=False).ids

    def batch(lines, threads):
        os.environ["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
        return tok.encode_batch(lines, add_special_tokens=False)

    return Impl("hf_tokenizers", encode, batch, lambda result: [e.ids for e in result])


IMPL_FACTORIES = {
    "fasttok": _make_fasttok,
    "tiktoken": _make_tiktoken,
    "quicktok": _make_quicktok,
    "rs_bpe": _make_rs_bpe,
    "bpe_openai": _make_bpe_openai,
    "hf_tokenizers": _make_hf_tokenizers,
}


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA / "corpus").is_dir() or not VOCAB_DIR.is_dir():
        pytest.skip(f"benchmark data not found in {DATA} (set FASTTOK_DATA, or build it with "
                    f"`python tools/fetch_test_data.py DIR`)")
    return DATA


@pytest.fixture(scope="session")
def corpus(data_dir):
    """``name -> text`` of ``<data>/corpus/<name>.txt`` (read once per session)."""
    cache: dict[str, str] = {}

    def load(name: str) -> str:
        if name not in cache:
            path = data_dir / "corpus" / f"{name}.txt"
            if not path.exists():
                pytest.skip(f"{path} not found")
            cache[name] = read_text(path)
        return cache[name]

    return load


@pytest.fixture(scope="session")
def corpus_lines(corpus):
    """``name -> list of lines`` (LF kept) of a corpus file."""
    cache: dict[str, list[str]] = {}

    def load(name: str) -> list[str]:
        if name not in cache:
            cache[name] = split_lines(corpus(name))
        return cache[name]

    return load


@pytest.fixture(scope="session")
def implementation(data_dir):
    """``(impl, encoding) -> Impl``; skips when that library is not installed."""
    cache: dict[tuple[str, str], Impl] = {}

    def get(impl: str, enc_name: str) -> Impl:
        key = (impl, enc_name)
        if key not in cache:
            cache[key] = IMPL_FACTORIES[impl](enc_name)
        return cache[key]

    return get


# Peer bugs that show as mismatches: impl -> (parts of the benchmark label, why).
# Their mismatches are still listed, but as expected failures, so that a run
# of the benchmarks fails only on something new.
KNOWN_PEER_BUGS = {
    "rs_bpe": (("o200k_base/", "/batch"), "rs_bpe 0.1.0's encode_batch_parallel keeps using "
                                          "the first encoding of the process (cl100k_base here)"),
}

_REFERENCE_IDS: dict[tuple, object] = {}
MISMATCHES: list[str] = []
EXACT_OK: list[str] = []
# Lines a benchmark file wants in the closing summary (what it left out and why).
NOTES: list[str] = []


def first_difference(ours, theirs) -> str:
    """Where two id sequences (or lists of them) first part."""
    ours, theirs = list(ours), list(theirs)
    if ours and isinstance(ours[0], list):
        for i, (a, b) in enumerate(zip(ours, theirs)):
            if a != b:
                return f"line {i}: " + first_difference(a, b)
        return f"{len(ours)} vs {len(theirs)} lines"
    n = min(len(ours), len(theirs))
    i = next((k for k in range(n) if ours[k] != theirs[k]), n)
    return (f"{len(ours)} vs {len(theirs)} ids, first difference at index {i}: "
            f"{ours[max(0, i - 2):i + 4]} vs {theirs[max(0, i - 2):i + 4]}")


@pytest.fixture(scope="session")
def check_exact(implementation):
    """``(label, impl_name, enc_name, key, run) -> None``.

    ``run(impl)`` produces ids (or a list of id lists) for the input called ``key``.
    The baseline's result for ``key`` is computed once and cached; a peer that
    disagrees fails the test, a peer that refuses the input is skipped.
    """

    def check(label: str, impl_name: str, enc_name: str, key: tuple, run) -> None:
        impl = implementation(impl_name, enc_name)
        try:
            got = run(impl)
        except Exception as exc:  # noqa: BLE001 - a peer's refusal is a skip
            if impl_name == BASELINE:
                raise
            pytest.skip(f"{impl_name} refuses this input: {type(exc).__name__}: {str(exc)[:120]}")
        ref_key = (enc_name,) + key
        if impl_name == BASELINE:
            _REFERENCE_IDS.setdefault(ref_key, got)
        if ref_key not in _REFERENCE_IDS:
            _REFERENCE_IDS[ref_key] = run(implementation(BASELINE, enc_name))
        # The kept results are millions of lists and ints by the end of a run;
        # frozen, the collections that timed code sets off no longer walk them
        # (unfrozen, per-line loops late in a run took up to twice as long).
        gc.freeze()
        expected = _REFERENCE_IDS[ref_key]
        if got != expected:
            message = f"{label}: {impl_name} != {BASELINE}: {first_difference(got, expected)}"
            known = KNOWN_PEER_BUGS.get(impl_name)
            if known and all(part in label for part in known[0]):
                MISMATCHES.append(f"{message} (known: {known[1]})")
                pytest.xfail(message)
            MISMATCHES.append(message)
            pytest.fail(message, pytrace=False)
        if impl_name != BASELINE:
            EXACT_OK.append(label)

    return check


# ---------------------------------------------------------------------------- summary


def _median(bench) -> float | None:
    try:
        return bench.stats.median
    except AttributeError:
        return None


def _ratio_table(benchmarks, fastest: bool = False) -> list[str]:
    # fastest: of each benchmark's fastest round, which on a shared machine
    # moves less than the median (what else runs there only adds time)
    rows: dict[tuple, dict[str, tuple[float, int]]] = {}
    for bench in benchmarks:
        info = bench.extra_info or {}
        if info.get("kind") != "encode" or _median(bench) is None:
            continue
        key = (info["encoding"], info["file"], info["mode"])
        rows.setdefault(key, {})[info["impl"]] = (bench.stats.min if fastest else _median(bench),
                                                  info.get("bytes", 0))
    if not rows:
        return []
    # the peers of the shared factories first, then any a benchmark file runs itself
    seen = [p for r in rows.values() for p in r]
    peers = [p for p in dict.fromkeys([*IMPL_FACTORIES, *seen]) if p != BASELINE and p in seen]
    widths = [max(12, len(p) + 2) for p in peers]
    head = (f"{'encoding':<12} {'file':<6} {'mode':<7} {BASELINE + ' MB/s':>13}"
            + "".join(f"{p:>{w}}" for p, w in zip(peers, widths)))
    stat = "fastest rounds" if fastest else "medians"
    out = [f"peer time / {BASELINE} time ({stat}; > 1 means {BASELINE} is faster)", head,
           "-" * len(head)]
    for key in sorted(rows):
        times = rows[key]
        base = times.get(BASELINE)
        speed = f"{base[1] / base[0] / 1e6:13.1f}" if base and base[0] > 0 and base[1] else f"{'-':>13}"
        cells = []
        for peer, w in zip(peers, widths):
            if base and peer in times and base[0] > 0:
                cells.append(f"{times[peer][0] / base[0]:{w}.2f}")
            else:
                cells.append(f"{'-':>{w}}")
        out.append(f"{key[0]:<12} {key[1]:<6} {key[2]:<7} {speed}" + "".join(cells))
    return out


def _thread_scaling_table(benchmarks) -> list[str]:
    # The fastest round as well as the median: a second thread shares the
    # machine's caches and memory with whatever else runs on it, so its
    # rounds spread more than single-thread ones.
    times: dict[tuple, dict[str, tuple[float, float]]] = {}
    for bench in benchmarks:
        info = bench.extra_info or {}
        if (info.get("kind") == "encode" and info.get("impl") == BASELINE
                and info.get("mode") in ("batch1", "batch2") and _median(bench) is not None):
            times.setdefault((info["encoding"], info["file"]), {})[info["mode"]] = (
                bench.stats.min, _median(bench))
    out = [f"{BASELINE} batch1 time / batch2 time: the speed-up of a second thread",
           f"  {'encoding':<12} {'file':<6} {'fastest':>8} {'median':>8}"]
    for (enc_name, file), modes in sorted(times.items()):
        if "batch1" in modes and "batch2" in modes and min(modes["batch2"]) > 0:
            one, two = modes["batch1"], modes["batch2"]
            out.append(f"  {enc_name:<12} {file:<6} {one[0] / two[0]:8.2f} {one[1] / two[1]:8.2f}")
    return out if len(out) > 2 else []


def _pathological_table(benchmarks) -> list[str]:
    by_enc: dict[str, dict[str, tuple[float, int]]] = {}
    for bench in benchmarks:
        info = bench.extra_info or {}
        if info.get("kind") == "pathological" and _median(bench) is not None:
            by_enc.setdefault(info["encoding"], {})[info["case"]] = (_median(bench), info.get("bytes", 0))
    out = []
    for enc_name in sorted(by_enc):
        cases = by_enc[enc_name]
        english = cases.get("english_1mb")
        out.append(f"{enc_name}: fasttok time / time of 1 MB of English"
                   + ("" if english else " (English not measured)"))
        for case, (median, size) in cases.items():
            ratio = f"{median / english[0]:8.2f}" if english and english[0] > 0 else f"{'-':>8}"
            out.append(f"  {case:<28} {size:>10,} B  {median * 1e3:10.1f} ms  x{ratio}")
    return out


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    session = getattr(config, "_benchmarksession", None)
    benchmarks = list(getattr(session, "benchmarks", []) or [])
    lines = []
    if FASTTOK_ERROR is not None:
        lines.append(f"fasttok not measured ({FASTTOK_ERROR}); peers are compared with tiktoken")
    lines += _ratio_table(benchmarks)
    fastest = _ratio_table(benchmarks, fastest=True)
    if fastest:
        lines += [""] + fastest
    scaling = _thread_scaling_table(benchmarks)
    if scaling:
        lines += [""] + scaling
    patho = _pathological_table(benchmarks)
    if patho:
        lines += [""] + patho
    if NOTES:
        lines += [""] + NOTES
    if EXACT_OK:
        lines.append(f"\nexactness: {len(EXACT_OK)} peer results equal to {BASELINE}'s")
    if MISMATCHES:
        lines.append(f"exactness: {len(MISMATCHES)} MISMATCHES (not timed):")
        lines += [f"  {m}" for m in MISMATCHES]
    if lines:
        terminalreporter.write_sep("=", "fasttok vs peers")
        for line in lines:
            terminalreporter.write_line(line)
