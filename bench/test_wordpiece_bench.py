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

The pathological pair is fasttok's alone: 1 MB of ``a`` against the first MB of
``corpus/en.txt``, with the vocabulary as it is and with one token replaced by
``'a' * 100_000`` (where a longest match bounded by the longest token goes
quadratic); the closing table gives each time over the English one.

    python -m pytest bench/test_wordpiece_bench.py --benchmark-enable -q
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import unicodedata

import pytest

from conftest import DATA, NOTES, read_text, split_lines

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
    return fasttok.Encoding.from_vocabulary(dataclasses.replace(v, tokens=tuple(tokens)))


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
