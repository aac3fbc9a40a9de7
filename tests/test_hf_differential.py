"""Both faces of a ``tokenizer.json`` against ``tokenizers`` 0.23.3, file by file: the
differential specification of the compiled engine (issue 24).

For every shared file (``vocab/hf/*/tokenizer.json`` and ``vocab/hf/unigram/*.json``),
``fasttok.hf.Tokenizer`` and ``tokenizers.Tokenizer`` load it with its truncation and
padding off, and every field of every encoding (:data:`hf_encodings.FIELDS`: ids,
type ids, tokens, offsets, word and sequence ids, both masks, ``n_sequences``, and
the overflowing pieces recursively) must be equal:

* ``encode_batch`` and ``encode_batch_fast`` of the shared test lines, alone and as
  pairs, with and without ``add_special_tokens``, and of a sample of the corpus lines
  (every line under ``-m slow``);
* ``encode`` under every truncation strategy, direction and stride, singles and pairs
  (where ``tokenizers`` refuses, fasttok must raise its ``ValueError``);
* batches padded to their longest, to a fixed length, to a multiple, left and right,
  with truncation too, through ``encode_batch``, ``encode_batch_fast`` and ``encode``;
* ``decode`` and ``decode_batch`` of random ids, added ones among them;
* combining marks assigned after Unicode 9.0 (the version of ``tokenizers``'
  normalization tables) next to each other and next to U+0301;
* hypothesis text made of whitespace runs, astral characters, those marks, words of
  several scripts and the file's added tokens, whole and cut.

``fasttok.load(path).encode(text, allowed_special="all")`` must give the ids of
``tokenizers``' ``encode(text, add_special_tokens=False)`` on the same marks and
hypothesis text, and on the corpus sample for the files that are not byte-level BPE
(``test_hf_tokenizer_json.py`` has those). A difference fails with the file, the input
and both answers. Specified elsewhere and not repeated: ``encode`` of each test line,
corpus line and random text (``test_hf_tokenizer.py``), the drop-in's other methods
(``test_hf_drop_in.py``), each stage on every code point (``test_hf_unicode_version.py``).
"""

from __future__ import annotations

import contextlib
import functools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, DATA_MISSING, HF_BYTE_LEVEL, MISSING_DATA_REASON, Mismatches, \
    missing_data_reason, read_jsonl, read_text
from hf_encodings import attempt, compare

tokenizers = pytest.importorskip("tokenizers")

import fasttok  # noqa: E402
import fasttok.hf  # noqa: E402
from fasttok.shared import _unicode  # noqa: E402
from fasttok.shared.hf_unicode import normalization_newer  # noqa: E402

HF = DATA / "vocab" / "hf"
# Gemma 3's and GPT-4o's files take seconds to load into both libraries: they
# run under -m slow (llama2 and llama3 have their configurations by default)
BIG = ("gemma3/tokenizer.json", "gpt4o/tokenizer.json")
FILES = [pytest.param(f, marks=pytest.mark.slow) if f in BIG else f
         for f in sorted(str(p.relative_to(HF)) for p in HF.glob("*/tokenizer.json"))
         + sorted(str(p.relative_to(HF)) for p in HF.glob("unigram/*.json"))]
NOT_BYTE_LEVEL = [f for f in FILES if getattr(f, "values", [f])[0].split("/")[0]
                  not in HF_BYTE_LEVEL]
CORPUS = sorted((DATA / "corpus").glob("*.txt")) if not DATA_MISSING else []
SAMPLE_EVERY = 2000  # corpus lines per file in the default run: one in this many
STRATEGIES = ("longest_first", "only_first", "only_second")
# (max_length, stride): cuts inside most test lines, with and without overlap;
# 7 after a pair's special tokens leaves some sides no more than the stride of
# 2, which tokenizers refuses (fasttok must raise there too)
CUTS = ((7, 0), (7, 2), (19, 5))
PADDINGS = ({}, {"direction": "left"}, {"length": 48}, {"length": 48, "direction": "left"},
            {"pad_to_multiple_of": 8}, {"pad_to_multiple_of": 8, "direction": "left",
                                        "pad_id": 3, "pad_type_id": 1, "pad_token": "<pad>"},
            {"length": 5})
WHITESPACE = " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u200a\u200b\u2028\u2029\u202f\u3000\ufeff"
ASTRAL = ("\U0001f600", "\U0001f1ef\U0001f1f5", "\U0001f468\u200d\U0001f469\u200d\U0001f467",
          "\U0001f44d\U0001f3fd", "\U00020000", "\U0002a6d6", "\U0001d400", "\U00010000",
          "\U0001e030", "\U000e0001", "\U0010fffd", "\U00016ea0", "\U0001f999")
LETTERS = "aAzZ09'sSmtdl\u00e9\u00df\u0130\u0131\u00c5\u2160\u00bd\u0663" \
          "\u65e5\u672c\u8a9e\u4e2d\u6587\ud55c\uad6d\uc5b4\u0e44\u0e17\u0e22" \
          "\u0627\u0644\u0639\u0647\u0928\u094d\u0926\u0940.,!?-_()[]<>/\\@#$%^&*~`|{}\"=+:;"


def _path(name: str) -> str:
    path = HF / name
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return str(path)


@functools.lru_cache(maxsize=None)
def _pair(name: str) -> tuple:
    """``(fasttok.hf.Tokenizer, tokenizers.Tokenizer)`` for one file, truncation and
    padding off; a test that sets them puts them back (:func:`_configured`)."""
    path = _path(name)
    pair = fasttok.hf.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(path)
    for tok in pair:
        tok.no_truncation()
        tok.no_padding()
    return pair


@functools.lru_cache(maxsize=None)
def _encoding(name: str):
    """``fasttok.load``'s face of the file."""
    return fasttok.load(_path(name))


@contextlib.contextmanager
def _configured(name: str, truncation: dict | None = None, padding: dict | None = None):
    pair = _pair(name)
    try:
        for tok in pair:
            if truncation is not None:
                tok.enable_truncation(**truncation)
            if padding is not None:
                tok.enable_padding(**padding)
        yield pair
    finally:
        for tok in pair:
            tok.no_truncation()
            tok.no_padding()


@functools.lru_cache(maxsize=None)
def _lines() -> list:
    path = DATA / "testcases" / "lines.jsonl"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return [row["text"] for row in read_jsonl(path)]


def _corpus_lines(every: int, longest: int | None = None) -> list:
    # one line in ``every`` of each corpus file, cut to ``longest`` characters
    if not CORPUS:
        pytest.skip(MISSING_DATA_REASON)
    lines = []
    for path in CORPUS:
        lines += [line[:longest] for line in read_text(path).split("\n")[::every]]
    return lines


def _spread(low: int, high: int, count: int) -> list:
    # ``count`` test lines of ``low`` to ``high`` characters, spread over the
    # file's categories
    found = [x for x in _lines() if low <= len(x) <= high]
    return found[::max(1, len(found) // count)][:count]


@functools.cache
def _newer_marks() -> tuple:
    # marks (Mn, Mc, Me) of fasttok's tables that tokenizers' normalization
    # crate (Unicode 9.0) does not know: Unicode 10.0 to 16.0
    newer = normalization_newer().match
    return tuple(chr(cp) for lo, hi in _unicode.code_point_ranges("M")
                 for cp in range(lo, hi + 1) if newer(chr(cp)))


def _shown(item) -> str:
    return f"{item!r:.160}"


def _check_batch(found: Mismatches, name: str, call: str, ours, theirs, items) -> None:
    """One batch's answers, encoding by encoding (or the two exceptions)."""
    if isinstance(ours, BaseException) or isinstance(theirs, BaseException):
        found.check(compare(ours, theirs, f"{name} {call} of {len(items)} inputs"), call)
        return
    if len(ours) != len(theirs):
        found.check(f"{name} {call}: {len(ours)} encodings, tokenizers {len(theirs)}", call)
        return
    for i, (item, a, b) in enumerate(zip(items, ours, theirs)):
        found.check(compare(a, b, f"{name} {call} input {i} {_shown(item)}"), f"{call} {i}")


def _batches_agree(found: Mismatches, name: str, items: list, **kwargs) -> None:
    ours, theirs = _pair(name)
    for method in ("encode_batch", "encode_batch_fast"):
        _check_batch(found, name, f"{method}({kwargs})", attempt(getattr(ours, method), items,
                                                                  **kwargs),
                     attempt(getattr(theirs, method), items, **kwargs), items)


@pytest.fixture(params=FILES)
def name(request):
    return request.param


# ---------------------------------------------------------------- fasttok.hf: batches

@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_batches_of_test_lines_and_pairs_give_every_field_of_tokenizers(name,
                                                                      add_special_tokens):
    lines = _lines()
    items = lines[::3] + list(zip(lines[1::6], lines[4::6]))
    found = Mismatches(f"{name}: batches of lines.jsonl")
    _batches_agree(found, name, items, add_special_tokens=add_special_tokens)
    found.assert_none()


def test_batches_of_corpus_lines_and_pairs_give_every_field_of_tokenizers(name):
    lines = _corpus_lines(SAMPLE_EVERY, longest=300)
    items = lines + list(zip(lines[::2], lines[1::2]))
    ours, theirs = _pair(name)
    found = Mismatches(f"{name}: one corpus line in {SAMPLE_EVERY}")
    _check_batch(found, name, "encode_batch", attempt(ours.encode_batch, items),
                 attempt(theirs.encode_batch, items), items)
    found.assert_none()


@pytest.mark.slow
def test_batches_of_every_corpus_line_give_every_field_of_tokenizers(name):
    lines = _corpus_lines(1)
    found = Mismatches(f"{name}: every corpus line")
    _batches_agree(found, name, lines, add_special_tokens=False)
    _batches_agree(found, name, list(zip(lines[::7], lines[3::7])))
    found.assert_none()


# ---------------------------------------------------------------- truncation and padding

def test_every_truncation_gives_every_field_of_tokenizers(name):
    # a pair of cut sequences overflows into every combination of their
    # pieces: one side of each pair is short
    singles, short = _spread(25, 90, 4), _spread(6, 24, 3)
    items = singles + list(zip(singles, short)) + [(short[0], singles[1]), (singles[2], "x")]
    found = Mismatches(f"{name}: truncation")
    for max_length, stride in CUTS:
        for strategy in STRATEGIES:
            for direction in ("right", "left"):
                config = {"max_length": max_length, "stride": stride, "strategy": strategy,
                          "direction": direction}
                with _configured(name, truncation=config) as (ours, theirs):
                    for add in (True, False):
                        for i, item in enumerate(items):
                            args = item if isinstance(item, tuple) else (item,)
                            what = f"{name} {config} add_special_tokens={add} {_shown(item)}"
                            found.check(compare(attempt(ours.encode, *args, add_special_tokens=add),
                                                attempt(theirs.encode, *args,
                                                        add_special_tokens=add), what),
                                        f"{max_length}/{stride}/{strategy}/{direction}/{i}")
    found.assert_none()


@pytest.mark.parametrize("padding", PADDINGS, ids=[str(p) for p in PADDINGS])
def test_every_padding_gives_every_field_of_tokenizers(name, padding):
    lines = _lines()[20::23]
    items = lines + list(zip(lines[::3], lines[1::3]))
    found = Mismatches(f"{name}: padding {padding}")
    with _configured(name, padding=padding) as (ours, theirs):
        _batches_agree(found, name, items)
        for item in items[:4] + items[-2:]:
            args = item if isinstance(item, tuple) else (item,)
            found.check(compare(attempt(ours.encode, *args), attempt(theirs.encode, *args),
                                f"{name} encode {_shown(item)}"), "encode")
    with _configured(name, truncation={"max_length": 11, "stride": 2}, padding=padding):
        _batches_agree(found, name, items)
    found.assert_none()


# ---------------------------------------------------------------- decode

@pytest.mark.parametrize("skip_special_tokens", [True, False])
def test_decode_of_random_ids_equals_tokenizers(name, skip_special_tokens):
    ours, theirs = _pair(name)
    rng = random.Random(24)
    added = sorted(theirs.get_added_tokens_decoder())
    pool = range(theirs.get_vocab_size(with_added_tokens=False))
    batch = [[rng.choice(added) if added and rng.random() < 0.2 else rng.choice(pool)
              for _ in range(rng.randint(0, 10))] for _ in range(300)]
    assert ours.decode_batch(batch, skip_special_tokens) == \
        theirs.decode_batch(batch, skip_special_tokens)
    for ids in batch[:40]:
        assert ours.decode(ids, skip_special_tokens) == \
            theirs.decode(ids, skip_special_tokens), (name, ids)


# ---------------------------------------------------------------- fasttok.load

def _ids_found(name: str, texts: list, what: str) -> Mismatches:
    encoding, (_, theirs) = _encoding(name), _pair(name)
    mine = [attempt(encoding.encode, t, allowed_special="all") for t in texts]
    refs = [e.ids for e in theirs.encode_batch_fast(texts, add_special_tokens=False)]
    found = Mismatches(f"{name}: fasttok.load on {what}")
    for i, (text, a, b) in enumerate(zip(texts, mine, refs)):
        found.check(None if a == b else
                    f"{name} text {_shown(text)}: fasttok.load {a!r:.300}, tokenizers {b!r:.300}",
                    str(i))
    return found


def test_fasttok_load_gives_tokenizers_ids_where_a_combining_mark_met_nfc():
    # fasttok.load's fused byte-level path once composed with the interpreter's
    # Unicode 14.0: U+07FD (Unicode 11.0) is a starter to tokenizers
    encoding = _encoding("qwen3/tokenizer.json")
    assert encoding.encode("a\u07fd\u0301", allowed_special="all") == [64, 155, 121, 53839]


@pytest.mark.parametrize("name", NOT_BYTE_LEVEL)
def test_fasttok_load_ids_equal_tokenizers_on_a_sample_of_every_corpus_file(name):
    _ids_found(name, _corpus_lines(SAMPLE_EVERY // 5, longest=1000),
               f"one corpus line in {SAMPLE_EVERY // 5}").assert_none()


@pytest.mark.slow
@pytest.mark.parametrize("name", NOT_BYTE_LEVEL)
def test_fasttok_load_ids_equal_tokenizers_on_every_corpus_line(name):
    _ids_found(name, _corpus_lines(1), "every corpus line").assert_none()


# ---------------------------------------------------------------- combining marks

def _mark_texts() -> dict:
    """Probes of each newer mark beside the next one and beside U+0301, and the
    marks all in one run (NFC reorders by combining class: a newer mark has
    none to tokenizers)."""
    marks = _newer_marks()
    probes = []
    for m, other in zip(marks, marks[1:] + marks[:1]):
        probes += [f"a{m}\u0301", f"a\u0301{m}", f"{m}{other}", f"e\u0323{m}\u0301{other}",
                   f"\u0301{m}", f"{other}{m}\u0308x"]
    return {"probes": probes, "one run": ["a" + "".join(marks)],
            "U+0301 between": ["o" + "\u0301".join(marks)]}


def _mark_problem(name: str, text: str) -> str | None:
    ours, theirs = _pair(name)
    expected = theirs.encode(text, add_special_tokens=False)
    problem = compare(attempt(ours.encode, text, add_special_tokens=False), expected,
                      f"{name} fasttok.hf {_shown(text)}")
    fused = attempt(_encoding(name).encode, text, allowed_special="all")
    if problem is None and fused != expected.ids:
        problem = (f"{name} {_shown(text)}: fasttok.load {fused!r:.300}, "
                   f"tokenizers {expected.ids!r:.300}")
    return problem


def test_combining_marks_newer_than_unicode_9_give_tokenizers_answers(name):
    found = Mismatches(f"{name}: marks newer than Unicode 9.0")
    for kind, texts in _mark_texts().items():
        # all probes as one text, then each probe alone where that one differs
        if _mark_problem(name, " ".join(texts)) is None:
            found.check(None)
            continue
        for text in texts:
            found.check(_mark_problem(name, text), kind)
    found.assert_none()


# ---------------------------------------------------------------- hypothesis text

def _texts(name: str):
    _, theirs = _pair(name)
    added = sorted(t.content for t in theirs.get_added_tokens_decoder().values())
    # a newer mark as often as an old one, after a letter they may compose with
    marks = st.sampled_from(_newer_marks()) | st.sampled_from(
        ["\u0301", "\u0323", "\u0308", "\u0338", "\u0345", "\u302a", "\u05b0", "\u0e39"])
    pieces = [st.text(st.sampled_from(LETTERS), min_size=1, max_size=8),
              st.text(st.sampled_from(WHITESPACE), min_size=1, max_size=6),
              st.tuples(st.sampled_from("aeoAOu=<>\u05d0\u0e01 "),
                        st.lists(marks, min_size=1, max_size=4)).map(
                  lambda run: run[0] + "".join(run[1])),
              st.sampled_from(ASTRAL),
              st.text(st.characters(codec="utf-8"), max_size=4)]
    if added:
        whole = st.sampled_from(added)
        pieces += [whole, whole.flatmap(lambda t: st.integers(0, len(t)).map(
            lambda k: t[:k] + " " + t[k:]))]
    return st.lists(st.one_of(pieces), max_size=10).map("".join)


def _random_text_problem(name: str, text: str, second: str, add: bool) -> str | None:
    ours, theirs = _pair(name)
    for args in ((text,), (text, second)):
        problem = compare(attempt(ours.encode, *args, add_special_tokens=add),
                          attempt(theirs.encode, *args, add_special_tokens=add),
                          f"{name} fasttok.hf encode{args!r:.300} add_special_tokens={add}")
        if problem:
            return problem
    expected = theirs.encode(text, add_special_tokens=False).ids
    fused = attempt(_encoding(name).encode, text, allowed_special="all")
    if fused != expected:
        return f"{name} {text!r}: fasttok.load {fused!r:.300}, tokenizers {expected!r:.300}"
    ids = theirs.encode(text, second).ids
    for skip in (True, False):
        if ours.decode(ids, skip) != theirs.decode(ids, skip):
            return (f"{name} decode({ids}, {skip}): fasttok.hf {ours.decode(ids, skip)!r}, "
                    f"tokenizers {theirs.decode(ids, skip)!r}")
    return None


def _check_random_text(name: str, examples: int, derandomize: bool) -> None:
    @settings(max_examples=examples, deadline=None, derandomize=derandomize,
              suppress_health_check=list(HealthCheck))
    @given(_texts(name), _texts(name), st.booleans())
    def check(text, second, add):
        problem = _random_text_problem(name, text, second, add)
        assert problem is None, problem

    check()


def test_random_text_gives_tokenizers_answers_through_both_faces(name):
    _check_random_text(name, 25, derandomize=True)


@pytest.mark.slow
def test_much_random_text_gives_tokenizers_answers_through_both_faces(name):
    _check_random_text(name, 1500, derandomize=False)
