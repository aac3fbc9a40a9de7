"""WordPiece (GGUF ``bert``): fasttok against ``tokie`` on the same vocabulary, and 1 MB of one letter.

fasttok runs ``vocab/gguf/ggml-vocab-bert-bge.gguf`` as llama.cpp does; ``tokie``
0.1.4 (PyPI) loads ``vocab/hf/all-MiniLM-L6-v2/tokenizer.json`` with truncation
and padding off and no special tokens added. Both files hold the same 30,522
bert-base-uncased tokens: the GGUF spells a word-initial piece ``▁piece`` and a
continuation bare where ``tokenizer.json`` has ``piece`` and ``##piece``, and
keeps the 999 bracketed texts (``[PAD]``, ``[unused0]``, ...) as they are;
:func:`_vocabularies_agree` checks that before anything runs.

The two normalisers differ, so some lines of a corpus file get other ids; they
are counted, put down to their cause, left out, and both libraries are timed
on the rest of the file (and checked to agree on it first). The causes:

* ``hangul``: llama.cpp's "NFD" keeps only the first code point of a
  decomposition, so a Hangul syllable becomes its leading consonant jamo;
  BertNormalizer decomposes it fully and keeps the vowel and final jamo.
* ``spacing or enclosing mark``: llama.cpp drops every mark (M*) when it
  strips accents; BertNormalizer drops only nonspacing ones (Mn), so
  Devanagari, Bengali or Tamil vowel signs (Mc) and U+20E3 (Me) stay.
* ``word over 100 characters``: tokenizer.json's ``max_input_chars_per_word``
  makes such a word ``[UNK]``; llama.cpp has no limit.
* ``other``: anything else (none on the shared corpus files).

Modes: ``whole`` (one call on the whole text), ``lines`` (one call per line
from Python), ``batch2`` (each library's batch call over the lines, 2 threads
for fasttok; tokie's batch uses its own thread pool, one thread per core).

The drop-in pair (issue 25's target, at least 1.5x ``nanotoken``): both
libraries load ``all-MiniLM-L6-v2/tokenizer.json``; fasttok's
``fasttok.load(path).encode(text, allowed_special="all")`` (added tokens in
the text matched, as ``tokenizers`` matches them) against ``nanotoken`` 0.1.0's
``Tokenizer(path).encode(text, add_special_tokens=False)`` (a uint32 array,
its added tokens matched alike), and fasttok's ``encode_to_array`` (an
``array('I')``, the like-for-like output) beside its list; every answer is first checked against
``tokenizers``' ``encode(text, add_special_tokens=False)`` with the file's
truncation off (a peer that differs is marked ``*``). Each corpus file is cut
in two halves: ``steady`` encodes the first half (the same mode) to warm both
libraries' caches, then times the second; ``cold`` times the second half on a
tokenizer just loaded (nanotoken's per-thread caches cleared too; fasttok's
model gets a new identity in the pre-token cache, and builds its
longest-match automaton inside the timed call only where the text needs
it: a long word of other scripts than ASCII, as in multi.txt, or more
probes of long ASCII words than building costs; the process-wide table of
BERT's per-code-point rules stays
filled: a fresh process's first call fills it too, see
``bench/test_bulk_bench.py`` for cold in a fresh process). Modes:
``whole`` (one call on the half), ``lines`` (one call per line).

    python bench/test_wordpiece_bench.py   # the drop-in table, the libraries taking turns

The pathological pair is fasttok's alone: 1 MB of ``a`` against the first MB of
``corpus/en.txt``, with the vocabulary as it is and with one token replaced by
``'a' * 100_000`` (where a longest match bounded by the longest token goes
quadratic); the closing table gives each time over the English one.

    python -m pytest bench/test_wordpiece_bench.py --benchmark-enable -q
"""

from __future__ import annotations

import collections
import functools
import gc
import unicodedata

import pytest

from conftest import DATA, NOTES, first_difference, read_text, split_lines

GGUF_PATH = DATA / "vocab" / "gguf" / "ggml-vocab-bert-bge.gguf"
HF_JSON = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"
FILES = ["en", "code", "multi", "zh"]
MODES = ["whole", "lines", "batch2"]
MB = 1_000_000
VOCAB = "bert-bge"
LONG_VOCAB = "bert-bge+100k-a"  # one token replaced by 'a' * 100_000
MAX_CHARS_PER_WORD = 100


@functools.cache
def _fasttok(vocab: str = VOCAB):
    import fasttok
    from fasttok.formats.gguf import load_gguf_vocabulary

    if not GGUF_PATH.exists():
        pytest.skip(f"{GGUF_PATH} not found")
    if vocab == VOCAB:
        return fasttok.load(GGUF_PATH)
    v = load_gguf_vocabulary(str(GGUF_PATH))
    tokens = list(v.tokens)
    tokens[-1] = b"a" * 100_000
    return fasttok.Encoding.from_vocabulary(v.replace(tokens=tuple(tokens)))


@functools.cache
def _tokie():
    tokie = pytest.importorskip("tokie")
    if not HF_JSON.exists():
        pytest.skip(f"{HF_JSON} not found")
    tok = tokie.Tokenizer.from_json(str(HF_JSON))
    tok.no_truncation()
    tok.no_padding()
    assert _vocabularies_agree(tok), "bert-bge.gguf and all-MiniLM-L6-v2 hold different tokens"
    return tok


def _vocabularies_agree(tok) -> bool:
    ours = _fasttok()
    for i in range(ours.n_vocab):
        text = ours.decode_single_token_bytes(i).decode("utf-8")
        hf = tok.id_to_token(i)
        if hf.startswith("[") and hf.endswith("]"):
            spelled = hf
        else:
            spelled = hf[2:] if hf.startswith("##") else " " + hf
        if text != spelled:
            return False
    return True


def _encode_fasttok(text: str) -> list:
    return _fasttok().encode_ordinary(text)


def _encode_tokie(text: str) -> list:
    return _tokie().encode(text, add_special_tokens=False).ids


def _cause(line: str) -> str:
    """Why the two normalisers give ``line`` different ids (see the module notes)."""
    if any(0xAC00 <= ord(c) <= 0xD7A3 for c in line):
        return "hangul"
    if any(unicodedata.category(c) in ("Mc", "Me") for c in line):
        return "spacing or enclosing mark"
    if any(len(w) > MAX_CHARS_PER_WORD for w in _fasttok()._core.words(line)):
        return f"word over {MAX_CHARS_PER_WORD} characters"
    return "other"


@functools.cache
def _agreeing_lines(file: str) -> tuple:
    """The lines of ``file`` both libraries give the same ids, after noting the others."""
    path = DATA / "corpus" / f"{file}.txt"
    if not path.exists():
        pytest.skip(f"{path} not found")
    lines = split_lines(read_text(path))
    kept, causes = [], collections.Counter()
    for line in lines:
        if _encode_fasttok(line) == _encode_tokie(line):
            kept.append(line)
        else:
            causes[_cause(line)] += 1
    dropped = len(lines) - len(kept)
    why = ", ".join(f"{n} {cause}" for cause, n in causes.most_common()) or "none"
    NOTES.append(f"{VOCAB} vs tokie, {file}: {dropped} of {len(lines)} lines differ and are "
                 f"left out ({why}); timed on the other {sum(len(x.encode()) for x in kept):,} B")
    return tuple(kept)


def _calls(impl: str, mode: str):
    """``(run, input)`` for one library and mode."""
    if impl == "fasttok":
        enc = _fasttok()
        return {"whole": enc.encode_ordinary,
                "lines": lambda xs: [enc.encode_ordinary(x) for x in xs],
                "batch2": lambda xs: enc.encode_ordinary_batch(xs, num_threads=2)}[mode]
    tok = _tokie()
    return {"whole": lambda t: tok.encode(t, add_special_tokens=False).ids,
            "lines": lambda xs: [tok.encode(x, add_special_tokens=False).ids for x in xs],
            "batch2": lambda xs: [e.ids for e in tok.encode_batch(xs, add_special_tokens=False)]}[mode]


@pytest.mark.parametrize("impl", ["fasttok", "tokie"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("file", FILES)
def test_wordpiece_encode(benchmark, file, mode, impl):
    _tokie()  # skips when tokie or its file is missing, for fasttok's runs too
    lines = list(_agreeing_lines(file))
    arg = "".join(lines) if mode == "whole" else lines
    run = _calls(impl, mode)
    theirs = _calls("tokie" if impl == "fasttok" else "fasttok", mode)
    got, expected = run(arg), theirs(arg)
    assert got == expected, f"{file}/{mode}: {impl}'s ids differ from the other library's"
    benchmark.group = f"wordpiece-{file}-{mode}"
    benchmark.extra_info.update(kind="encode", encoding=VOCAB, file=file, mode=mode, impl=impl,
                                bytes=sum(len(x.encode("utf-8")) for x in lines))
    benchmark.pedantic(run, args=(arg,), rounds=9, iterations=1, warmup_rounds=1)


def _pathological_text(case: str) -> str:
    if case == "english_1mb":
        en = read_text(DATA / "corpus" / "en.txt")
        return (en * (MB // len(en) + 1))[:MB]
    return "a" * MB


@pytest.mark.parametrize("case", ["english_1mb", "a_x1m"])
@pytest.mark.parametrize("vocab", [VOCAB, LONG_VOCAB])
def test_wordpiece_pathological(benchmark, vocab, case):
    enc = _fasttok(vocab)
    text = _pathological_text(case)
    ids = enc.encode_ordinary(text)
    if case == "a_x1m":
        assert enc.decode(ids).lstrip(" ") == text, f"{vocab}/{case}: the pieces do not spell the text"
    elif vocab == VOCAB:
        assert ids == _encode_tokie(text), f"{vocab}/{case}: ids differ from tokie's"
    benchmark.group = f"pathological-{vocab}"
    benchmark.extra_info.update(kind="pathological", encoding=vocab, case=case, impl="fasttok",
                                bytes=len(text.encode("utf-8")))
    benchmark.pedantic(enc.encode_ordinary, args=(text,), rounds=5, iterations=1, warmup_rounds=1)


# ------------------------------------------------------------------ drop-in: nanotoken

DROP_IN_MODES = ["whole", "lines"]
DROP_IN_IMPLS = ["fasttok", "nanotoken", "fasttok-array"]
ROUNDS = 5


def _hf_path() -> str:
    if not HF_JSON.exists():
        pytest.skip(f"{HF_JSON} not found")
    return str(HF_JSON)


def _drop_in_load(impl: str):
    """A freshly loaded encoder: ``text -> ids`` (a list or a uint32 array)."""
    if impl.startswith("fasttok"):
        import fasttok

        enc = fasttok.load(_hf_path())
        if impl == "fasttok-array":
            return lambda text: enc.encode_to_array(text, allowed_special="all")
        return lambda text: enc.encode(text, allowed_special="all")
    nanotoken = pytest.importorskip("nanotoken")
    tok = nanotoken.Tokenizer(_hf_path())
    tok.backend.clear_cache()
    return lambda text: tok.encode(text, add_special_tokens=False)


@functools.cache
def _drop_in_loaded(impl: str):
    return _drop_in_load(impl)


@functools.cache
def _halves(file: str) -> tuple:
    """The first and second halves of a corpus file, cut at a line end."""
    path = DATA / "corpus" / f"{file}.txt"
    if not path.exists():
        pytest.skip(f"{path} not found")
    text = read_text(path)
    cut = text.find("\n", len(text) // 2) + 1 or len(text)
    return text[:cut], text[cut:]


def _drop_in_input(file: str, mode: str, half: int = 1):
    text = _halves(file)[half]
    return text if mode == "whole" else split_lines(text)


def _drop_in_run(encode, arg, mode: str):
    return encode(arg) if mode == "whole" else [encode(x) for x in arg]


@functools.cache
def _drop_in_reference(file: str, mode: str) -> list:
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer.from_file(_hf_path())
    tok.no_truncation()
    tok.no_padding()
    encode = lambda text: tok.encode(text, add_special_tokens=False).ids  # noqa: E731
    return _drop_in_run(encode, _drop_in_input(file, mode), mode)


@functools.cache
def _drop_in_exact(impl: str, file: str, mode: str) -> bool:
    """Whether ``impl`` gives tokenizers' ids on this input (a peer that does not is noted)."""
    got = _drop_in_run(_drop_in_loaded(impl), _drop_in_input(file, mode), mode)
    got = list(got) if mode == "whole" else [list(x) for x in got]
    expected = _drop_in_reference(file, mode)
    if got == expected:
        return True
    NOTES.append(f"all-MiniLM-L6-v2 {file}/{mode}: {impl} differs from tokenizers, "
                 + first_difference(got, expected))
    return False


@pytest.mark.parametrize("impl", DROP_IN_IMPLS)
@pytest.mark.parametrize("state", ["steady", "cold"])
@pytest.mark.parametrize("mode", DROP_IN_MODES)
@pytest.mark.parametrize("file", FILES)
def test_wordpiece_drop_in(benchmark, file, mode, state, impl):
    exact = _drop_in_exact(impl, file, mode)
    assert exact or impl == "nanotoken", f"{file}/{mode}: {impl}'s ids differ from tokenizers'"
    arg = _drop_in_input(file, mode)
    benchmark.group = f"wordpiece-drop-in-{file}-{state}-{mode}"
    benchmark.extra_info.update(kind="encode", encoding="all-MiniLM-L6-v2", file=file,
                                mode=f"{state}-{mode}", impl=impl + ("" if exact else "*"),
                                bytes=len(_halves(file)[1].encode("utf-8")))
    if state == "cold":
        benchmark.pedantic(lambda encode: _drop_in_run(encode, arg, mode),
                           setup=lambda: ((_drop_in_load(impl),), {}), rounds=3, iterations=1)
        return
    encode = _drop_in_loaded(impl)
    _drop_in_run(encode, _drop_in_input(file, mode, 0), mode)
    benchmark.pedantic(_drop_in_run, args=(encode, arg, mode), rounds=ROUNDS, iterations=1)


def drop_in_table(rounds: int = ROUNDS) -> list:
    """fasttok's time and nanotoken's over it (above 1: fasttok is faster),
    for every file, mode and state, the two libraries taking turns round by
    round, the best of ``rounds`` each (CPU time: nanotoken's ``encode`` runs
    on the calling thread). Cold rounds load both afresh (not timed). The
    ``array`` columns: fasttok's ``encode_to_array`` (an ``array('I')``, as
    nanotoken's uint32 array is, no int object a token) beside its ``encode``
    (a list, the headline)."""
    import time

    out = [f"{'file':<6}{'state':<7}{'mode':<7}{'fasttok ms':>11}{'nanotoken ms':>13}{'ratio':>7}"
           f"{'array ms':>10}{'ratio':>7}"]
    for file in FILES:
        for mode in DROP_IN_MODES:
            exact = {impl: _drop_in_exact(impl, file, mode) for impl in DROP_IN_IMPLS}
            arg = _drop_in_input(file, mode)
            for state in ("steady", "cold"):
                best = dict.fromkeys(DROP_IN_IMPLS, float("inf"))
                if state == "steady":
                    for impl in DROP_IN_IMPLS:
                        _drop_in_run(_drop_in_loaded(impl), _drop_in_input(file, mode, 0), mode)
                for _ in range(rounds):
                    for impl in DROP_IN_IMPLS:
                        encode = _drop_in_loaded(impl) if state == "steady" else _drop_in_load(impl)
                        gc.collect()
                        start = time.process_time()
                        _drop_in_run(encode, arg, mode)
                        best[impl] = min(best[impl], time.process_time() - start)
                mark = "" if exact["nanotoken"] else "*"
                out.append(f"{file:<6}{state:<7}{mode:<7}{best['fasttok'] * 1e3:11.2f}"
                           f"{best['nanotoken'] * 1e3:13.2f}"
                           f"{best['nanotoken'] / best['fasttok']:6.2f}{mark:<1}"
                           f"{best['fasttok-array'] * 1e3:10.2f}"
                           f"{best['nanotoken'] / best['fasttok-array']:6.2f}{mark}")
    return out


if __name__ == "__main__":
    print("\n".join(drop_in_table()))
    print("\n".join(dict.fromkeys(NOTES)))
