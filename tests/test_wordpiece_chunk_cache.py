"""WordPiece with the model's chunk cache gives exactly what it gives without it.

A walk of :mod:`fasttok.models._wordpiece` giving ids only cuts the text at
its ASCII SPACE units into chunks and keeps the ids of each chunk of at most
31 ASCII units in the model's chunk cache,
keyed by the chunk's units as they are, before normalizing: a chunk's words
are made of its units alone. These tests hold the ids with the cache on
(``WordPieceModel.chunk_cache_entries``), off (0) and at one entry (every
chunk evicts the last) to ``tokenizers`` on all-MiniLM-L6-v2, over corpus
halves and texts built to end chunks at every place the cut treats apart
(a control character inside a chunk, 15, 16, 31 and 32 units, the text's
end inside a block of 16, non-ASCII units and non-ASCII spaces, a unit from
0x8000 on, which a signed narrowing would read as NUL, chunks across the
ends of the walk's blocks of 1,024 units and stretches longer than a
block, short texts and long ones), and GGUF ``bert``'s walk (llama.cpp's
rule) to itself with the cache off; check that
two rules on one model never share an answer; that the cache never
holds more chunks than its entries, and at its entries still gives the
ids of chunks met again; that a chunk is kept while its bytes and ids fit
a slot (a ChunkSlot: up to 14 ids of a model whose text indices fit 16
bits, 7 of any other; a WideSlot: 240 bytes of its units and ids); that
a chunk holding units past ASCII is kept up to 232 bytes of its
``str``'s units; and that a longer run of ASCII units is cut into chunks after the
last unit of its first 31 that is a word by itself (punctuation); and that a
cache whose first walk has 65,536 units or more has its tables advised to
come in 2 MiB pages (Linux), a shorter one not, and the first such walk
after shorter ones starts it afresh so, once, with the same ids.
"""

from __future__ import annotations

import functools
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, data_file, read_text, without_truncation_or_padding
from fasttok.models._wordpiece import ALONE, APPEND, SPACE, CodePointRules, WordPieceModel

tokenizers = pytest.importorskip("tokenizers")

MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"
BERT_GGUF = DATA / "vocab" / "gguf" / "ggml-vocab-bert-bge.gguf"
SIZES = (1 << 16, 0, 1)
WORD_START = "\u2581".encode()
#: the code units of a block of the chunk cache's walk (_wordpiece.CHUNK_BLOCK)
BLOCK = 1024


@functools.lru_cache(maxsize=None)
def _minilm():
    enc = fasttok.load(data_file(MINILM))
    return enc, enc._core.pipeline.walk._walk.__self__


@functools.lru_cache(maxsize=None)
def _reference():
    tok = without_truncation_or_padding(tokenizers.Tokenizer.from_file(str(data_file(MINILM))))
    return tok


def _expected(text: str) -> list:
    return _reference().encode(text, add_special_tokens=False).ids


def _ids_at_each_size(texts) -> dict:
    # each size walks the texts twice: the second pass meets the chunks the first one kept
    enc, model = _minilm()
    out = {}
    try:
        for size in SIZES:
            model.chunk_cache_entries = size
            out[size] = [[enc.encode(t, allowed_special="all") for t in texts] for _ in range(2)]
    finally:
        model.chunk_cache_entries = SIZES[0]
    return out


@pytest.mark.parametrize("file", ["en", "code", "multi", "zh", "adversarial"])
def test_corpus_halves_are_tokenizers_with_the_chunk_cache_on_off_and_at_one_entry(file):
    text = read_text(data_file(DATA / "corpus" / f"{file}.txt"))
    cut = text.find("\n", len(text) // 2) + 1
    halves = [text[:cut], text[cut:]]
    expected = [_expected(t) for t in halves]
    for size, passes in _ids_at_each_size(halves).items():
        for k, ids in enumerate(passes):
            assert ids == expected, f"chunk cache of {size} entries, pass {k + 1}"


#: units that end chunks, or chunks' ASCII, apart: letters either case,
#: digits, punctuation, ASCII spaces, a control character BERT drops (no
#: SPACE: it joins its neighbours), NUL, Latin-1 and CJK letters, a
#: combining mark, non-ASCII spaces, a character past U+FFFF (a str of kind 4)
_UNITS = "aAbZz09.,#([ \t\n\r\x01\x00\u00e9\u00a0\u4e16\u3000\u0301\U0001f600"
_RUNS = st.tuples(st.sampled_from(["a", "B", "1", ".", "x\x01y", "\u00e9", "\u4e16", "\U0001f600"]),
                  st.sampled_from([1, 14, 15, 16, 17, 30, 31, 32, 33, 58, 59, 78, 79, 116, 117,
                                   232, 233])).map(lambda r: r[0] * r[1])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from(_UNITS), max_size=20) | _RUNS, min_size=1, max_size=40),
       st.sampled_from([" ", "\n", "\t", ""]), st.sampled_from([0, 40, BLOCK - 40, 2 * BLOCK + 80]))
def test_hypothesis_texts_give_tokenizers_ids_whatever_the_chunk_cache(parts, joiner, size):
    text = joiner.join(parts)
    # as it is or repeated past a block's end, ending anywhere in 64 units
    if size:
        text = (text * (size // max(len(text), 1) + 1))[:size + len(parts) % 65]
    expected = _expected(text)
    for size, passes in _ids_at_each_size([text]).items():
        assert passes == [[expected]] * 2, f"chunk cache of {size} entries"


def _rules(lowercase: bool) -> CodePointRules:
    return CodePointRules(lambda cps: [
        (SPACE, cp) if cp == 32 else
        (APPEND, cp + 32 if lowercase and 65 <= cp <= 90 else cp) for cp in cps])


@pytest.mark.parametrize("file", ["en", "code", "multi"])
def test_the_gguf_bert_walk_gives_the_same_ids_with_the_chunk_cache_on_off_and_at_one_entry(file):
    # llama.cpp's rule (no tokenizers reference: its normalizer differs):
    # the walk with no chunk cache is the reference
    enc = fasttok.load(data_file(BERT_GGUF))
    model = enc._core.core
    text = read_text(data_file(DATA / "corpus" / f"{file}.txt"))[:200_000]
    lines = text.splitlines()[:300]
    got = {}
    for size in (0, 1, 1 << 16):
        model.chunk_cache_entries = size
        got[size] = [[enc.encode_ordinary(text), enc.encode_ordinary_batch(lines)]
                     for _ in range(2)]
    assert got[1] == got[0] and got[1 << 16] == got[0]


def test_two_rules_on_one_model_never_share_an_answer():
    # "AB" is the token "ab" under rules that lowercase, [UNK] under rules that do not
    m = WordPieceModel([b"[UNK]", WORD_START + b"ab"], 0)
    text = "AB ab " * 50
    lower, keep = _rules(True), _rules(False)
    for _ in range(2):
        assert m.encode_with(text, lower) == [1, 1] * 50
        assert m.encode_with(text, keep) == [0, 1] * 50


@pytest.mark.parametrize("entries", [1, 7, 64])
def test_the_chunk_cache_never_holds_more_chunks_than_its_entries(entries):
    m = WordPieceModel([b"[UNK]", WORD_START + b"w"] + [str(d).encode() for d in range(10)], 0)
    m.chunk_cache_entries = entries
    words = " ".join(f"w{i}" for i in range(5000))
    assert m.encode_with(words, _rules(True)) == [x for i in range(5000)
                                                  for x in [1] + [2 + int(d) for d in str(i)]]
    assert 0 < m.chunk_cache_size <= entries


@pytest.mark.parametrize("entries", [1, 7, 64, 1 << 12])
def test_wide_slots_count_within_the_entries_and_give_the_ids_of_chunks_met_again(entries):
    # chunks of 41 units and ids, each kept in a WideSlot: 300 of them
    # and 50 met six times each, then short ones filling the rest
    m = WordPieceModel([b"[UNK]", WORD_START + b"w"] + [str(d).encode() for d in range(10)], 0)
    m.chunk_cache_entries = entries
    numbers = list(range(300)) + [i % 50 for i in range(300)]
    words = " ".join(f"w{i:040d}" for i in numbers) + " " + " ".join(f"w{i}" for i in range(500))
    expected = ([x for i in numbers for x in [1] + [2 + int(d) for d in f"{i:040d}"]]
                + [x for i in range(500) for x in [1] + [2 + int(d) for d in str(i)]])
    for _ in range(2):
        assert m.encode_with(words, _rules(True)) == expected
    assert 0 < m.chunk_cache_size <= entries


@pytest.mark.parametrize("entries", [1, 2, 3, 8, 64, 1 << 12])
def test_pairs_of_short_slots_give_the_ids_of_chunks_met_again_beside_single_ones(entries):
    # short chunks of 1 to 15 ids ('w' and up to 14 digits): up to 7 in a
    # short slot, 8 to 14 in a pair of them (one bucket), evicting and
    # evicted by each other in turn; 15 in a WideSlot
    m = WordPieceModel([b"[UNK]", WORD_START + b"w"] + [str(d).encode() for d in range(10)], 0)
    m.chunk_cache_entries = entries
    numbers = [(str(i * 7919) * 4)[:i % 15] for i in range(400)]
    words = " ".join(f"w{i}" for i in numbers)
    expected = [x for i in numbers for x in [1] + [2 + int(d) for d in i]]
    for _ in range(3):
        assert m.encode_with(words, _rules(True)) == expected
    assert 0 < m.chunk_cache_size <= entries


@pytest.mark.parametrize("entries", [1, 2, 8, 64])
def test_a_chunk_cache_at_its_entries_gives_the_ids_of_chunks_met_again(entries):
    # 97 chunks met 31 times each in turn: a small cache keeps some in
    # other slots of their window than their first, and evicts others
    m = WordPieceModel([b"[UNK]", WORD_START + b"w"] + [str(d).encode() for d in range(10)], 0)
    m.chunk_cache_entries = entries
    words = " ".join(f"w{i % 97}" for i in range(3000))
    expected = [x for i in range(3000) for x in [1] + [2 + int(d) for d in str(i % 97)]]
    for _ in range(2):
        assert m.encode_with(words, _rules(True)) == expected
    assert 0 < m.chunk_cache_size <= entries


def test_off_the_chunk_cache_holds_nothing():
    m = WordPieceModel([b"[UNK]", WORD_START + b"w"], 0)
    m.chunk_cache_entries = 0
    m.encode_with("w " * 300, _rules(True))
    assert m.chunk_cache_size == 0


@pytest.mark.parametrize("at", range(BLOCK - 40, BLOCK + 8))
def test_a_chunk_across_a_blocks_end_gives_tokenizers_ids(at):
    text = "x" * (at % 7) + " " + "unaffable walks " * (at // 16) + "héllo wörld " + "ab " * 200
    expected = _expected(text)
    for size, passes in _ids_at_each_size([text]).items():
        assert passes == [[expected]] * 2, f"chunk cache of {size} entries"


@pytest.mark.parametrize("stretch", ["a" * 1500, "\u00e9" * 1500, "\u4e16" * 1500,
                                     "ab\x01" * 500, "a" * (BLOCK + 63)])
def test_a_stretch_longer_than_a_block_gives_tokenizers_ids(stretch):
    text = "one two " + stretch + " three " + stretch + "\n" + "four " * 300
    expected = _expected(text)
    for size, passes in _ids_at_each_size([text]).items():
        assert passes == [[expected]] * 2, f"chunk cache of {size} entries"


def test_a_unit_from_0x8000_on_is_no_ascii_unit_of_a_chunk():
    # under rules where NUL ends a word, a unit read as a NUL would cut "a\u9869b"
    rules = CodePointRules(lambda cps: [(SPACE if cp in (0, 32) else APPEND, cp) for cp in cps])
    m = WordPieceModel([b"[UNK]", WORD_START + b"a", WORD_START + "a\u9869b".encode()], 0)
    for size in SIZES:
        m.chunk_cache_entries = size
        assert m.encode_with("a\u9869b " * 100, rules) == [2] * 100, f"{size} entries"


@pytest.mark.parametrize("texts", [3, 70_000])
def test_a_chunk_is_kept_while_its_units_and_ids_fit_a_wide_slot(texts):
    # "a" * k is k ids ("▁a", then the continuation "a", the last two texts):
    # a ChunkSlot keeps up to 14 as uint16 for a model of at most 0xFFFF
    # texts, else 7 as uint32; a chunk of more ids, or of more than 31
    # units, is kept in a WideSlot while its bytes (rounded up to 8) and
    # ids fit its 240 bytes: 'a' * 100 is 100 ids, 'a' * 48 the most of a
    # model of uint32 ids, 'a' * 80 the most of one of uint16 ids
    tokens = [b"[UNK]"] + [b"t%d" % i for i in range(texts - 3)] + [WORD_START + b"a", b"a"]
    first, rest = texts - 2, texts - 1
    widest = 80 if texts <= 0xFFFF else 48
    for k in [*range(1, 18), 30, 31, 32, 33, widest, widest + 1, 100]:
        m = WordPieceModel(tokens, 0)
        text = ("a" * k + " ") * 3
        for _ in range(2):
            assert m.encode_with(text, _rules(True)) == ([first] + [rest] * (k - 1)) * 3, k
        assert m.chunk_cache_size == (1 if k <= widest else 0), f"{k} units"


@pytest.mark.parametrize("unit, widest", [("\u00e9", 232), ("\u4e16", 116)])
def test_a_chunk_past_ascii_is_kept_up_to_232_bytes_of_its_str(unit, widest):
    # in a ChunkSlot up to 31 units of a str of kind 1 (its bytes), 15 of
    # one of kind 2 (its uint16s); longer in a WideSlot, keyed by its
    # units' bytes as the str holds them, up to 232 of them
    lengths = (1, 15, 16, 31, 32, widest, widest + 1)
    tokens = [b"[UNK]"] + [WORD_START + (unit * k).encode() for k in lengths]
    for i, k in enumerate(lengths):
        m = WordPieceModel(tokens, 0)
        text = (unit * k + " ") * 3
        for _ in range(2):
            assert m.encode_with(text, _rules(True)) == [1 + i] * 3, f"{k} units"
        assert m.chunk_cache_size == (1 if k <= widest else 0), f"{k} units"


def test_a_chunk_of_a_4_byte_str_is_kept_in_a_wide_slot_when_it_holds_a_character_past_u_ffff():
    m = WordPieceModel([b"[UNK]", WORD_START + "\u4e16".encode(), WORD_START + b"a"], 0)
    # (a chunk of other units of a str of kind 4 keyed as uint16s in a
    # ChunkSlot, one with a unit past U+FFFF by its uint32s in a WideSlot)
    for text, expected in [("\u4e16 a " * 3 + "\U0001f600", [1, 2] * 3 + [0]),
                           ("\U0001f600\u4e16 " * 3, [0] * 3)]:
        m.chunk_cache_entries = 0
        m.chunk_cache_entries = 1 << 10
        kept = len(set(text.split()))
        for _ in range(2):
            assert m.encode_with(text, _rules(True)) == expected, text
        assert m.chunk_cache_size == kept, text


@pytest.mark.parametrize("at", range(0, 45))
def test_a_run_of_ascii_units_past_31_gives_tokenizers_ids_wherever_its_punctuation_is(at):
    # the run is cut after its last punctuation among its first 31 units
    # (none, one or two of them there), and the rest read again from there
    for mark in ".(":
        run = "ab" * 25
        run = run[:at] + mark + run[at:] + ("," + run[:at % 13] if at % 3 else "")
        text = "x " + run + " " + (run + "\n") * 3 + run.upper()
        expected = _expected(text)
        for size, passes in _ids_at_each_size([text]).items():
            assert passes == [[expected]] * 2, f"{at}, {mark!r}, chunk cache of {size} entries"


def test_a_run_of_ascii_units_past_31_is_kept_as_chunks_cut_after_punctuation():
    # 'aaa.' * 9: 36 units, cut after the last '.' of the first 31 (28
    # units, 14 ids) and the rest (8 units): two chunks kept, where a run
    # of over 31 units was walked each time
    rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else ALONE if cp == 46 else APPEND, cp)
                                        for cp in cps])
    m = WordPieceModel([b"[UNK]", WORD_START + b"aaa", WORD_START + b"."], 0)
    text = ("aaa." * 9 + " ") * 3
    for _ in range(2):
        assert m.encode_with(text, rules) == [1, 2] * 27
    assert m.chunk_cache_size == 2


def _huge_advised_kb() -> int:
    # the size of this process's mappings advised to come in 2 MiB pages
    # (MADV_HUGEPAGE: VmFlags 'hg'), whether or not the kernel found them
    total = size = 0
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            if line.startswith("Size:"):
                size = int(line.split()[1])
            elif line.startswith("VmFlags:") and " hg" in line:
                total += size
    return total


@pytest.mark.skipif(not (os.path.exists("/proc/self/smaps")
                         and os.path.exists("/sys/kernel/mm/transparent_hugepage")),
                    reason="no transparent huge pages (Linux)")
@pytest.mark.parametrize("units, huge", [(70_000, True), (65_536, True), (65_534, False)])
def test_a_first_walk_of_64k_units_or_more_gets_the_tables_in_2_mib_pages(units, huge):
    # a default cache's two tables (8 and 4 MiB) are advised to come in
    # 2 MiB pages when its first walk has 65,536 units or more, and
    # unmapped with the model; the ids are the same either way
    m = WordPieceModel([b"[UNK]", WORD_START + b"w"] + [str(d).encode() for d in range(10)], 0)
    before = _huge_advised_kb()
    assert m.encode_with("w " * (units // 2), _rules(True)) == [1] * (units // 2)
    assert _huge_advised_kb() - before == (12 * 1024 if huge else 0)
    words = " ".join(f"w{i}" for i in range(5000))
    assert m.encode_with(words, _rules(True)) == [x for i in range(5000)
                                                  for x in [1] + [2 + int(d) for d in str(i)]]
    del m
    assert _huge_advised_kb() == before


@pytest.mark.skipif(not (os.path.exists("/proc/self/smaps")
                         and os.path.exists("/sys/kernel/mm/transparent_hugepage")),
                    reason="no transparent huge pages (Linux)")
def test_a_long_walk_after_short_ones_gets_the_tables_in_2_mib_pages_once():
    m = WordPieceModel([b"[UNK]", WORD_START + b"w"] + [str(d).encode() for d in range(10)], 0)
    before = _huge_advised_kb()
    words = " ".join(f"w{i}" for i in range(5000))
    expected = [x for i in range(5000) for x in [1] + [2 + int(d) for d in str(i)]]
    assert m.encode_with("w1 w2", _rules(True)) == [1, 3, 1, 4]
    assert _huge_advised_kb() == before and m.chunk_cache_size == 2
    for _ in range(2):
        assert m.encode_with(words + " " * 40_000, _rules(True)) == expected
        assert _huge_advised_kb() - before == 12 * 1024
    assert m.chunk_cache_size == 5000
