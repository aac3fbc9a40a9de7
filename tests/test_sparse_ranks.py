"""Ranks and ids far apart: memory follows the number of tokens, not the
largest id, and the ids are tiktoken's.

Gaps in a rank file's ranks are legal (tiktoken accepts them), so a 2 KB file
may rank a token 2**31 - 1. Memory is measured as the peak RSS of a child
process (``ru_maxrss``) over what it had before the load, never by the clock.
The differential tests run tiktoken on the same spread-out ranks.
"""

from __future__ import annotations

import base64
import hashlib
import pickle
import subprocess
import sys

import pytest

import fasttok
from conftest import DATA_MISSING, MISSING_DATA_REASON, VOCAB_DIR, assert_same_ids, load_ranks, read_text
from fasttok import table_cache
from fasttok.errors import VocabularyError, VocabularyFileError
from fasttok.loaders.tiktoken_file import load_tiktoken
from fasttok.pre_tokenizers.patterns import CL100K
from fasttok.pre_tokenizers.patterns import CL100K, GPT2
from fasttok.registry import ENCODINGS, EncodingSpec
from fasttok.vocab import MAX_ID, Vocabulary

tiktoken = pytest.importorskip("tiktoken")
needs_data = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

CL100K_SPECIALS = dict(ENCODINGS["cl100k_base"].special_tokens)
MIB = 1 << 20


def _rank_file(ranks: dict) -> bytes:
    return b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items())


def _bytes_ranks(top: int) -> dict:
    # the 256 single bytes, the last of them ranked top
    ranks = {bytes([b]): b for b in range(255)}
    ranks[b"\xff"] = top
    return ranks


def _cl100k_with(moved: dict) -> dict:
    # cl100k_base's ranks, the tokens of the ranks in `moved` given new ranks
    ranks = load_ranks("cl100k_base.tiktoken")
    by_rank = {r: t for t, r in ranks.items()}
    for old, new in moved.items():
        ranks[by_rank[old]] = new
    return ranks


def _lines(count: int) -> list:
    lines = []
    for name in ("en", "code", "zh", "multi"):
        lines += read_text(VOCAB_DIR.parent.parent / "corpus" / f"{name}.txt").splitlines(True)[:count // 4]
    return lines


_MEASURE = r"""
import resource, sys
import fasttok
from fasttok.loaders.tiktoken_file import load_tiktoken
from fasttok.pre_tokenizers.patterns import CL100K
path, specials = sys.argv[1], eval(sys.argv[2])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
enc = fasttok.Encoding.from_vocabulary(load_tiktoken(path, pat_str=CL100K,
                                                     special_tokens=specials))
enc.encode("hello world <|e|>", allowed_special="all")
enc.decode_bytes([enc.max_token_value])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def _peak_growth(tmp_path, data: bytes, specials: dict | None = None) -> int:
    # bytes the peak RSS of a fresh process grows by while it loads `data`
    # as a .tiktoken file, builds the encoding and encodes and decodes once
    path = tmp_path / "probe.tiktoken"
    path.write_bytes(data)
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(path), repr(specials or {})],
                          capture_output=True, text=True, check=True)
    return int(done.stdout) * 1024  # ru_maxrss is in KiB on Linux


def _bound(data: bytes) -> int:
    # the fuzz acceptance bound: 20x the file size plus a fixed allowance
    return 20 * len(data) + 24 * MIB


# ---------------------------------------------------------------- a tiny file, one huge rank

def test_tiny_file_with_rank_2_31_minus_1_loads_encodes_and_decodes():
    ranks = _bytes_ranks(3 * 10**8) | {b"ab": 2**31 - 1}
    enc = fasttok.Encoding.from_vocabulary(load_tiktoken(_rank_file(ranks), pat_str=GPT2))
    assert enc.n_vocab == 2**31 and len(enc.vocabulary.tokens) == 257
    assert enc.encode("abab a") == [2**31 - 1, 2**31 - 1, 32, 97]
    assert enc.decode_bytes([2**31 - 1, 3 * 10**8, 0]) == b"ab\xff\x00"


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux only")
@pytest.mark.parametrize("top", [10**7, 3 * 10**8, 2**31 - 1, MAX_ID])
def test_peak_memory_of_a_tiny_file_with_one_huge_rank_follows_the_file_size(tmp_path, top):
    data = _rank_file(_bytes_ranks(top))
    assert _peak_growth(tmp_path, data) < _bound(data)


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux only")
def test_peak_memory_of_a_special_id_of_2_31_follows_the_file_size(tmp_path):
    data = _rank_file(_bytes_ranks(255))
    assert _peak_growth(tmp_path, data, {"<|e|>": 2**31}) < _bound(data)


@needs_data
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux only")
def test_cl100k_with_one_rank_at_10_8_loads_with_the_memory_of_the_real_file(tmp_path):
    real = (VOCAB_DIR / "cl100k_base.tiktoken").read_bytes()
    moved = _rank_file(_cl100k_with({100255: 10**8}))
    normal = _peak_growth(tmp_path, real)
    assert _peak_growth(tmp_path, moved) < normal + 4 * MIB
    assert normal < _bound(real)


# ---------------------------------------------------------------- ids equal tiktoken's

@pytest.fixture(scope="module", params=["one rank at 10**8", "ranks times 7", "ranks at the top"])
def spread_pair(request):
    """(fasttok, tiktoken) encodings of cl100k_base with spread-out ranks."""
    if DATA_MISSING:
        pytest.skip(MISSING_DATA_REASON)
    if request.param == "one rank at 10**8":
        ranks = _cl100k_with({100255: 10**8})
    elif request.param == "ranks times 7":
        ranks = {t: 7 * r for t, r in load_ranks("cl100k_base.tiktoken").items()}
    else:
        ranks = _cl100k_with({100000: 10**8, 100100: 2**31 - 2, 100255: MAX_ID})
    top = max(ranks.values())
    specials = {text: top + 1 + i for i, text in enumerate(CL100K_SPECIALS)} if top < MAX_ID - 8 \
        else CL100K_SPECIALS
    kwargs = dict(pat_str=CL100K, mergeable_ranks=ranks, special_tokens=specials)
    return fasttok.Encoding("spread", **kwargs), tiktoken.Encoding("spread", **kwargs)


def test_spread_ranks_encode_corpus_lines_like_tiktoken(spread_pair):
    ours, theirs = spread_pair
    for line in _lines(400):
        assert_same_ids(ours.encode_ordinary(line), theirs.encode_ordinary(line), line, enc=theirs)


def test_spread_ranks_encode_specials_like_tiktoken(spread_pair):
    ours, theirs = spread_pair
    text = "x<|endoftext|> y<|fim_prefix|>z <|endofprompt|>"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")


def test_spread_ranks_batch_and_array_results_are_the_encode_ids(spread_pair):
    ours, theirs = spread_pair
    lines = _lines(200)
    expected = [theirs.encode_ordinary(line) for line in lines]
    assert ours.encode_ordinary_batch(lines, num_threads=2) == expected
    ids, offsets = ours.encode_ordinary_batch(lines, num_threads=1, flat=True)
    assert [list(ids[a:b]) for a, b in zip(offsets, offsets[1:])] == expected
    assert list(ours.encode_to_array(lines[0])) == expected[0]


def test_spread_ranks_decode_every_token_like_tiktoken(spread_pair):
    ours, theirs = spread_pair
    ranks = theirs._mergeable_ranks
    ids = sorted(ranks.values())[::97] + sorted(theirs._special_tokens.values())
    assert ours.decode_bytes(ids) == theirs.decode_bytes(ids)
    assert [ours.decode_single_token_bytes(t) for t in ids[:50]] == \
        [theirs.decode_single_token_bytes(t) for t in ids[:50]]


def test_spread_ranks_give_tiktokens_vocabulary_facts(spread_pair):
    ours, theirs = spread_pair
    assert (ours.n_vocab, ours.max_token_value) == (theirs.n_vocab, theirs.max_token_value)
    assert ours._mergeable_ranks == theirs._mergeable_ranks
    assert ours.token_byte_values() == sorted(theirs.token_byte_values())


def test_spread_ranks_encode_single_token_gives_the_far_id(spread_pair):
    ours, theirs = spread_pair
    far = max(theirs._mergeable_ranks.values())
    token = theirs.decode_single_token_bytes(far)
    assert ours.encode_single_token(token) == theirs.encode_single_token(token) == far


def test_spread_ranks_encoding_pickles_to_the_same_ids(spread_pair):
    ours, _ = spread_pair
    again = pickle.loads(pickle.dumps(ours))
    text = "pickled spread ranks <|endoftext|>"
    assert again.encode(text, allowed_special="all") == ours.encode(text, allowed_special="all")
    assert again.vocabulary == ours.vocabulary


# ---------------------------------------------------------------- holes and bounds

def test_hole_id_fails_to_decode_like_any_unknown_id():
    enc = fasttok.Encoding("far", pat_str=GPT2, mergeable_ranks=_bytes_ranks(10**8),
                           special_tokens={"<|e|>": 2**31})
    for hole in (255, 10**8 - 1, 10**8 + 1, 2**31 - 1, 2**31 + 1, MAX_ID + 1, 2**40, -1):
        with pytest.raises(KeyError):
            enc.decode_bytes([0, hole])
        with pytest.raises(KeyError):
            enc.decode_single_token_bytes(hole)
    assert enc.decode_bytes([10**8, 2**31]) == b"\xff<|e|>"


def test_special_id_of_2_31_beside_256_bytes_encodes_like_tiktoken():
    kwargs = dict(pat_str=GPT2, mergeable_ranks=_bytes_ranks(255), special_tokens={"<|e|>": 2**31})
    ours, theirs = fasttok.Encoding("s", **kwargs), tiktoken.Encoding("s", **kwargs)
    text = "a<|e|>b"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.n_vocab == theirs.n_vocab == 2**31 + 1


@pytest.mark.parametrize("rank", [MAX_ID + 1, 2**32, 10**30])
def test_rank_beyond_32_bits_is_a_vocabulary_file_error_naming_file_and_line(tmp_path, rank):
    path = tmp_path / "over.tiktoken"
    path.write_bytes(_rank_file(_bytes_ranks(255)) + base64.b64encode(b"ab") + b" %d\n" % rank)
    with pytest.raises(VocabularyFileError, match=r"over\.tiktoken: line 257: rank \d+"
                       r"(\.\.\. \(\d+ digits\))? does not fit in 32 bits"):
        load_tiktoken(path, pat_str=GPT2)


def test_5000_digit_rank_is_a_vocabulary_file_error_naming_file_and_line(tmp_path):
    path = tmp_path / "long.tiktoken"
    path.write_bytes(base64.b64encode(b"a") + b" 0\n" + base64.b64encode(b"b") + b" " + b"9" * 5000)
    with pytest.raises(VocabularyFileError,
                       match=r"long\.tiktoken: line 2: rank 9{12}\.\.\. \(5000 digits\) does not fit"):
        load_tiktoken(path, pat_str=GPT2)


def test_rank_of_5000_digits_that_are_mostly_leading_zeros_is_its_value():
    data = base64.b64encode(b"a") + b" 0\n" + base64.b64encode(b"b") + b" " + b"0" * 5000 + b"7\n"
    assert fasttok.loaders.tiktoken_file.load_tiktoken_ranks(data) == {b"a": 0, b"b": 7}


def test_constructor_rank_beyond_32_bits_is_a_vocabulary_error():
    with pytest.raises(VocabularyError, match="rank 4294967295 is outside"):
        fasttok.Encoding("x", pat_str=GPT2, mergeable_ranks=_bytes_ranks(MAX_ID + 1),
                         special_tokens={})


def test_vocabulary_ids_must_ascend():
    vocab = Vocabulary(name="v", model="byte_bpe", byte_level=False, tokens=(b"a", b"b"), ids=(9, 9))
    with pytest.raises(VocabularyError, match="id 9 of token 1 is not above the id before it"):
        vocab.validate()


def test_vocabulary_of_dense_ranks_keeps_tokens_by_id():
    ranks = _bytes_ranks(255) | {b"ab": 300}
    vocab = load_tiktoken(_rank_file(ranks), pat_str=GPT2)
    assert vocab.ids is None and vocab.tokens[300] == b"ab" and vocab.tokens[299] is None


# ---------------------------------------------------------------- the table cache

def test_table_cache_round_trip_keeps_spread_ranks(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTTOK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FASTTOK_VOCAB_DIR", str(tmp_path))
    monkeypatch.delenv("FASTTOK_CACHE", raising=False)
    data = _rank_file(_bytes_ranks(10**8) | {b"ab": 2**31 - 1, b" ab": 5 * 10**8})
    (tmp_path / "far.tiktoken").write_bytes(data)
    spec = EncodingSpec("far.tiktoken", hashlib.sha256(data).hexdigest(), GPT2, {"<|e|>": 2**31})
    built = table_cache.load_named_encoding("far", spec)
    assert (tmp_path / "cache" / "far.tables").exists()
    cached = table_cache.load_named_encoding("far", spec)
    assert "vocabulary" not in cached.__dict__  # read back from the cache, not parsed again
    text = "ab ab\xff<|e|>"
    assert cached.encode(text, allowed_special="all") == built.encode(text, allowed_special="all") \
        == [2**31 - 1, 5 * 10**8, 195, 191, 2**31]
    assert cached.n_vocab == built.n_vocab == 2**31 + 1
    assert cached.vocabulary == built.vocabulary
    assert cached.decode_bytes([5 * 10**8, 2**31]) == b" ab<|e|>"
