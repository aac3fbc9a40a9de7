"""The pre-token cache (``fasttok.set_pretoken_cache``): each thread keeps the
ids of the byte-level BPE pieces it merged, keyed by the model and the
piece's bytes, in a table of a fixed number of 64-byte entries.

It must never change an id: every shared byte-level vocabulary gives the
same ids with the cache on, off, and thrashing (1 and 2 entries, where
every piece evicts another), on corpus text and on generated text whose
pieces repeat. Two models in one thread never read each other's entries,
threads never share a table, and a thread never holds more than its
entries, whatever it encodes.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, HF_BYTE_LEVEL, read_text
from fasttok.formats._byte_bpe import CoreBPE
from fasttok.shared import _piece_cache
from fasttok.shared._tables import TokenTables

TIKTOKEN = ("cl100k_base", "o200k_base")
VOCABS = TIKTOKEN + HF_BYTE_LEVEL
ON = 16384
SIZES = {"on": ON, "off": 0, "one entry": 1, "one set": 2}
CORPORA = ("en", "code", "zh", "multi")


@pytest.fixture(autouse=True)
def restore_the_setting():
    previous = fasttok.set_pretoken_cache(ON)
    yield
    fasttok.set_pretoken_cache(previous)


@functools.lru_cache(maxsize=None)
def _encoding(name: str):
    if name in TIKTOKEN:
        return fasttok.get_encoding(name)
    path = DATA / "vocab" / "hf" / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return fasttok.load(path)


@functools.lru_cache(maxsize=None)
def _corpus_texts() -> tuple:
    # the first 150 lines of each corpus file, one text a line, then the
    # next 30 kB of each whole: pieces repeat across calls and within one
    texts = []
    for name in CORPORA:
        path = DATA / "corpus" / f"{name}.txt"
        if not path.is_file():
            pytest.skip(f"{path} not found")
        text = read_text(path)
        lines = text.split("\n")[:150]
        texts += [line + "\n" for line in lines]
        start = sum(len(line) + 1 for line in lines)
        texts.append(text[start:start + 30_000])
    return tuple(texts)


def _first_difference(got: list, expected: list) -> str:
    i = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
    return f"text {i}: {got[i][:40]} != {expected[i][:40]}"


def _ids(enc, texts, entries: int) -> list:
    fasttok.set_pretoken_cache(entries)
    return [enc.encode(text, allowed_special="all") for text in texts]


@pytest.mark.parametrize("size", [s for s in SIZES if s != "off"])
@pytest.mark.parametrize("name", VOCABS)
def test_corpus_ids_are_the_same_with_the_cache_as_without(name, size):
    enc = _encoding(name)
    texts = _corpus_texts()
    expected = _ids(enc, texts, 0)
    got = _ids(enc, texts, SIZES[size])
    assert got == expected, _first_difference(got, expected)


# words that merge into several tokens, often repeated, next to text that does not repeat
WORDS = ["tokenization", " tokenization", " Unbelievably", " naïveté", " 東京都庁", " überraschend",
         "  ", "\n\n", " 1234567", " ееееее", " the", "🙂🙂", " abcdefghijklmnopqrstuvwxyz" * 2]
generated = st.lists(st.sampled_from(WORDS) | st.text(max_size=12), min_size=1,
                     max_size=40).map("".join)


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(generated, min_size=1, max_size=6))
def test_generated_ids_are_the_same_with_the_cache_as_without(texts):
    for name in VOCABS:
        enc = _encoding(name)
        expected = _ids(enc, texts, 0)
        for size in ("on", "one entry", "one set"):
            assert _ids(enc, texts, SIZES[size]) == expected, (name, size)


def test_offsets_are_the_same_with_the_cache_as_without():
    # the offsets walk reads the same ids: llama3 through fasttok.hf
    hf = pytest.importorskip("fasttok.hf")
    path = DATA / "vocab" / "hf" / "llama3" / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    tok = hf.Tokenizer.from_file(str(path))
    texts = [t for t in _corpus_texts() if len(t) < 2000][:400]

    def walk(entries):
        fasttok.set_pretoken_cache(entries)
        return [(e.ids, e.offsets) for e in (tok.encode(t) for t in texts)]

    expected = walk(0)
    assert walk(ON) == expected
    assert walk(1) == expected


def _two_models():
    # the same bytes, other ids: "aab" is [0, 2] in one and [1, 1, 0] in the other
    first = CoreBPE(TokenTables([b"a", b"b", b"ab", b" "]), {}, scanner="gpt2")
    second = CoreBPE(TokenTables([b"b", b"a", b"ba", b" "]), {}, scanner="gpt2")
    return first, second


@pytest.mark.parametrize("size", ["on", "one entry", "one set"])
def test_two_models_alternating_in_one_thread_each_get_their_own_ids(size):
    fasttok.set_pretoken_cache(SIZES[size])
    first, second = _two_models()
    for _ in range(3):
        assert first.encode_ordinary("aab aab") == [0, 2, 3, 0, 2]
        assert second.encode_ordinary("aab aab") == [1, 1, 0, 3, 1, 1, 0]


@pytest.mark.parametrize("size", ["on", "one entry"])
def test_two_models_alternating_on_a_long_piece_each_get_their_own_ids(size):
    # 60 bytes: the piece goes to a long entry, the same one for both
    fasttok.set_pretoken_cache(SIZES[size])
    first, second = _two_models()
    for _ in range(3):
        assert first.encode_ordinary("ab" * 30) == [2] * 30
        assert second.encode_ordinary("ab" * 30) == [1] + [2] * 29 + [0]


def test_two_vocabularies_alternating_line_by_line_each_give_their_own_ids():
    lines = [t for t in _corpus_texts() if len(t) < 2000][:300]
    cl100k, o200k = _encoding("cl100k_base"), _encoding("o200k_base")
    expected = (_ids(cl100k, lines, 0), _ids(o200k, lines, 0))
    fasttok.set_pretoken_cache(ON)
    got = ([], [])
    for line in lines:
        got[0].append(cl100k.encode_ordinary(line))
        got[1].append(o200k.encode_ordinary(line))
    assert got == expected


def test_a_model_built_again_from_the_same_tables_reads_no_entry_of_the_first():
    # owners are per model: two models of one vocabulary never share entries
    tables = TokenTables([b"a", b"b", b"ab", b" "])
    one = CoreBPE(tables, {}, scanner="gpt2")
    one.encode_ordinary("aab aab")
    assert _piece_cache.thread_info()["used"] == 2
    CoreBPE(tables, {}, scanner="gpt2").encode_ordinary("aab aab")
    assert _piece_cache.thread_info()["used"] == 4


def _distinct_words(count: int) -> str:
    # letter soup that no vocabulary has whole, each word a new entry
    consonants = "bcdfghjklmnpqrstvwxz"
    words = []
    for i in range(count):
        code = "".join(consonants[i // 20 ** k % 20] for k in range(4))
        words.append(f"zq{code}xv")
    return " ".join(words)


def test_a_thread_never_holds_more_than_its_entries():
    fasttok.set_pretoken_cache(64)
    enc = _encoding("cl100k_base")
    enc.encode_ordinary(_distinct_words(5000))
    for word in _distinct_words(50).split():
        enc.encode_ordinary(" " + word * 6)  # 49 bytes: a long entry each
    enc.encode_ordinary(read_text(DATA / "corpus" / "en.txt")[:20_000])  # tokens whole
    info = _piece_cache.thread_info()
    assert info["entries"] == 64 and info["long_entries"] == 1 and info["token_entries"] == 64
    assert info["used"] == 64 and info["long_used"] == 1 and info["token_used"] <= 64
    assert info["bytes"] == 64 * 64 + 1024 + 32 * 64


@pytest.mark.parametrize("entries, long_entries",
                         [(1, 1), (2, 1), (256, 1), (512, 2), (16384, 64), (1 << 20, 64)])
def test_the_long_entries_are_one_per_256_entries_from_1_to_64(entries, long_entries):
    fasttok.set_pretoken_cache(entries)
    enc = _encoding("cl100k_base")
    enc.encode_ordinary(" zqxvzqxv")
    assert _piece_cache.thread_info()["long_entries"] == 0  # until a long piece is kept
    enc.encode_ordinary(" " + "zqxv" * 12)
    assert _piece_cache.thread_info()["long_entries"] == long_entries


@pytest.mark.parametrize("entries, token_entries", [(1, 1), (64, 64), (8192, 8192), (16384, 8192)])
def test_the_token_entries_are_as_many_as_the_entries_up_to_8192(entries, token_entries):
    fasttok.set_pretoken_cache(entries)
    enc = _encoding("cl100k_base")
    enc.encode_ordinary(" zqxv")
    assert _piece_cache.thread_info()["token_entries"] == 0  # until a token is kept
    enc.encode_ordinary(" something")
    assert _piece_cache.thread_info()["token_entries"] == token_entries


def test_a_piece_that_is_one_token_is_kept_in_a_token_entry_and_read_back():
    # " something" is one cl100k_base token of 10 bytes, past the hot
    # table's 7: the index finds it once, the token entry after that
    enc = _encoding("cl100k_base")
    ids = enc.encode_ordinary(" something")
    assert len(ids) == 1
    info = _piece_cache.thread_info()
    assert (info["used"], info["token_used"]) == (0, 1)
    assert enc.encode_ordinary(" something something") == ids * 2
    assert _piece_cache.thread_info()["token_used"] == 1


@pytest.mark.parametrize("piece", ["abcdefgh", "abcdefghijklmno"])  # 8 and 15 bytes
@pytest.mark.parametrize("size", ["on", "one entry", "one set"])
def test_two_models_alternating_on_a_token_each_get_their_own_id(size, piece):
    # the same bytes are token 0 of one model and token 15 of the other
    fasttok.set_pretoken_cache(SIZES[size])
    letters = [bytes([c]) for c in range(ord("a"), ord("a") + 15)]
    first = CoreBPE(TokenTables([piece.encode()] + letters), {}, scanner="gpt2")
    second = CoreBPE(TokenTables(letters + [piece.encode()]), {}, scanner="gpt2")
    for _ in range(3):
        assert first.encode_ordinary(piece) == [0]
        assert second.encode_ordinary(piece) == [15]


def test_keys_that_differ_only_in_their_last_bytes_spread_over_the_sets():
    # 64 words of 8 bytes sharing their first 6 (WordPiece keys a word's
    # bytes): a set is taken from every byte of the key, so they land in
    # many of the 64 sets (about 57 entries kept), not in one (2 kept)
    fasttok.set_pretoken_cache(128)
    letters = "abcdefgh"
    _encoding("all-MiniLM-L6-v2").encode_ordinary(
        " ".join(f"zqvwkb{x}{y}" for x in letters for y in letters))
    assert _piece_cache.thread_info()["used"] > 40


def _bytes_only() -> CoreBPE:
    # every piece of two bytes or more merges (no token but the 256 bytes),
    # so every piece of a word asks the gate
    return CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")


def test_text_that_does_not_repeat_closes_the_gate_to_all_but_its_sample():
    # the first window (128 probes of the 1-in-8 sample, about 1,000
    # pieces) keeps every piece and hits none: the gate closes, and of the
    # other 3,000 words only the sample, about 370, is still kept
    _bytes_only().encode_ordinary(_distinct_words(4000))
    assert 1100 < _piece_cache.thread_info()["used"] < 1700


def test_text_that_starts_repeating_reopens_the_gate():
    # the same 4,000 words again: the sample, kept while the gate was
    # closed, hits, so a window later the gate opens and the words kept
    # neither time go in (a gate that reopened only after a fixed stretch
    # would have kept about 1,400)
    core = _bytes_only()
    words = _distinct_words(4000)
    core.encode_ordinary(words)
    core.encode_ordinary(words)
    assert _piece_cache.thread_info()["used"] > 3400


def test_the_entries_are_rounded_down_to_a_power_of_two():
    fasttok.set_pretoken_cache(100)
    assert _piece_cache.thread_info()["entries"] == 64
    fasttok.set_pretoken_cache(1)
    assert _piece_cache.thread_info()["entries"] == 1


def test_zero_entries_keep_nothing():
    fasttok.set_pretoken_cache(0)
    _encoding("cl100k_base").encode_ordinary(_distinct_words(100) + " " + "zqxv" * 12)
    assert _piece_cache.thread_info() == {"entries": 0, "used": 0, "long_entries": 0,
                                          "long_used": 0, "token_entries": 0, "token_used": 0,
                                          "bytes": 0, "payload": 48}


def test_a_new_setting_empties_the_table():
    enc = _encoding("cl100k_base")
    enc.encode_ordinary(_distinct_words(100))
    assert _piece_cache.thread_info()["used"] > 0
    fasttok.set_pretoken_cache(ON)
    assert _piece_cache.thread_info()["used"] == 0


def test_a_piece_too_long_for_an_entry_is_kept_in_a_long_entry():
    fasttok.set_pretoken_cache(ON)
    enc = _encoding("cl100k_base")
    ids = enc.encode_ordinary(" " + "zqxv" * 12)  # 49 bytes
    info = _piece_cache.thread_info()
    assert (info["used"], info["long_used"]) == (0, 1)
    assert enc.encode_ordinary(" " + "zqxv" * 12) == ids
    enc.encode_ordinary(" zqxvzqxv")
    assert _piece_cache.thread_info()["used"] == 1


def test_a_piece_too_long_for_a_long_entry_is_not_kept():
    # 1,009 bytes: its key alone fills the 1,008 bytes of a long entry's room
    fasttok.set_pretoken_cache(ON)
    _encoding("cl100k_base").encode_ordinary(" " + "zqxv" * 252)
    assert _piece_cache.thread_info()["long_used"] == 0


def test_a_piece_that_is_a_token_whole_is_not_kept():
    # it is looked up in the token index first, as a miss would look it up:
    # the entries are left to the pieces that merge
    enc = _encoding("cl100k_base")
    enc.encode_ordinary(" the the hello world")
    assert _piece_cache.thread_info()["used"] == 0
    enc.encode_ordinary(" zqxvzqxv")
    assert _piece_cache.thread_info()["used"] == 1


def test_without_the_whole_piece_lookup_a_token_merging_back_into_itself_is_not_kept():
    # (Qwen's merge lists): once BPE of the token's bytes is known to give
    # the token back, the piece is one index lookup
    core = CoreBPE(TokenTables([b"a", b"b", b"ab", b" "]), {}, scanner="gpt2",
                   whole_piece_lookup=False)
    assert core.encode_ordinary("ab") == [2]
    fasttok.set_pretoken_cache(ON)
    assert core.encode_ordinary("ab ab") == [2, 3, 2]
    assert _piece_cache.thread_info()["used"] == 1  # " ab" merges: kept


def test_without_the_whole_piece_lookup_a_token_learned_to_merge_back_goes_to_a_token_entry():
    # its first merge teaches the model that it merges back into itself, so
    # it is found whole from then on: an entry of the cache would be spent
    # on it for nothing (over HOT_MAX bytes: the hot table has not learned it)
    letters = [bytes([c]) for c in b"abcdefgh"]
    core = CoreBPE(TokenTables(letters + [b"ab", b"cd", b"ef", b"gh", b"abcd", b"efgh", b"abcdefgh",
                                          b" "]), {}, scanner="gpt2", whole_piece_lookup=False)
    fasttok.set_pretoken_cache(ON)
    assert core.encode_ordinary("abcdefgh") == [14]
    info = _piece_cache.thread_info()
    assert (info["used"], info["token_used"]) == (0, 1)
    assert core.encode_ordinary("abcdefgh abcdefgh") == [14, 15, 14]
    assert core.encode_ordinary("abcdefgh") == [14]


def test_without_the_whole_piece_lookup_a_token_not_merging_back_into_itself_is_merged():
    # "abcdefgh" is a token that no merge builds (no token holds two of its
    # letters): its BPE is its letters, when first learned, when kept, read
    # back, thrashed and with the cache off. (Over HOT_MAX bytes: the hot
    # table, built with the model, has not learned it.)
    core = CoreBPE(TokenTables([bytes([c]) for c in b"abcdefgh-"] + [b"abcdefgh"]), {},
                   scanner="gpt2", whole_piece_lookup=False)
    expected = list(range(9)) * 300
    for size in SIZES.values():
        fasttok.set_pretoken_cache(size)
        assert core.encode_ordinary("abcdefgh-" * 300) == expected, size
        assert core.encode_ordinary("abcdefgh") == expected[:8], size


def test_a_piece_of_one_byte_is_not_kept():
    # one read of the byte's token
    _encoding("cl100k_base").encode_ordinary("a\nb")
    assert _piece_cache.thread_info()["used"] == 0


def test_each_thread_has_a_table_of_its_own():
    _encoding("cl100k_base").encode_ordinary(_distinct_words(10))
    seen = []
    thread = threading.Thread(target=lambda: seen.append(_piece_cache.thread_info()["used"]))
    thread.start()
    thread.join()
    assert seen == [0]
    assert _piece_cache.thread_info()["used"] == 10


def test_batches_on_threads_give_the_ids_of_one_call_at_a_time():
    enc = _encoding("o200k_base")
    lines = [t for t in _corpus_texts() if len(t) < 2000]
    expected = _ids(enc, lines, 0)
    fasttok.set_pretoken_cache(ON)
    assert enc.encode_batch(lines, num_threads=3, allowed_special="all") == expected
    fasttok.set_pretoken_cache(1)
    assert enc.encode_batch(lines, num_threads=3, allowed_special="all") == expected


def test_a_size_below_zero_is_refused():
    with pytest.raises(fasttok.FasttokError, match="give 0 to turn it off"):
        fasttok.set_pretoken_cache(-1)


def _entries_in_a_new_process(value: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, FASTTOK_PRETOKEN_CACHE=value)
    return subprocess.run([sys.executable, "-c", "import fasttok.shared._piece_cache as p; "
                           "print(p.entries())"], env=env, capture_output=True, text=True)


def test_the_environment_sets_the_entries_at_import():
    assert _entries_in_a_new_process("1000").stdout.split() == ["512"]


def test_the_environment_refuses_what_is_not_a_number():
    found = _entries_in_a_new_process("many")
    assert found.returncode != 0
    assert "FASTTOK_PRETOKEN_CACHE='many'" in found.stderr
