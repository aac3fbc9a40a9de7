"""Arguments of the wrong type are refused, the right ones in any spelling
are taken, on every kind of vocabulary.

* Text or bytes of a token: an int is a ``TypeError`` (``bytes(5)`` would
  be five zero bytes, a huge int gigabytes of them), as tiktoken raises.
* Ids: any integer is an id, ``numpy.int64``, ``numpy.uint32`` and a 0-d
  array included, as tiktoken and tokenizers take them, in every method
  that takes ids; anything else is a ``TypeError``.
* Every encoding pickles and comes back encoding as before.
"""

from __future__ import annotations

import glob
import pickle

import pytest

import fasttok
from fasttok.pre_tokenizers.tiktoken_patterns import CL100K
from conftest import (DATA, DATA_MISSING, MISSING_DATA_REASON, ONE_FILE_PER_KIND,
                      build_reference_encoding)

np = pytest.importorskip("numpy")
pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

TEXT = "Hello wörld 12 你好 <|endoftext|>"
# Seconds to load: behind -m slow; their models are those of the kinds
# before them (Unigram Viterbi, the byte-level pipeline of a written file).
SLOW_KINDS = ("gguf_t5", "hf_byte_bpe")
EXTRA = {"hf_unigram": "hf/unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json"}
KINDS = ([k for k in sorted(ONE_FILE_PER_KIND) if k not in SLOW_KINDS]
         + ["cl100k_base", "hf_byte_bpe_small", *EXTRA]
         + [pytest.param(k, marks=pytest.mark.slow) for k in SLOW_KINDS])
_LOADED: dict = {}


def _small_byte_level_json(tmp_path_factory) -> str:
    # a byte-level BPE tokenizer.json of a few merges: the pipeline of
    # hf_byte_bpe without its seconds of loading
    from fasttok.loaders.hf_tokenizer_json_writer import write_tokenizer_json

    ranks = {bytes([b]): b for b in range(256)} | {b"he": 256, b"ll": 257, b"hell": 258}
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    write_tokenizer_json(path, ranks, [(b"h", b"e"), (b"l", b"l"), (b"he", b"ll")], CL100K,
                         {"<|endoftext|>": 259})
    return str(path)


def _load(kind: str, tmp_path_factory=None):
    if kind not in _LOADED:
        if kind == "cl100k_base":
            _LOADED[kind] = fasttok.get_encoding(kind)
        elif kind in EXTRA:
            _LOADED[kind] = fasttok.load(str(DATA / "vocab" / EXTRA[kind]))
        elif kind == "hf_byte_bpe_small":
            _LOADED[kind] = fasttok.load(_small_byte_level_json(tmp_path_factory))
        else:
            _LOADED[kind] = fasttok.load(str(ONE_FILE_PER_KIND[kind]))
    return _LOADED[kind]


@pytest.fixture(scope="module", params=KINDS)
def enc(request, tmp_path_factory):
    return _load(request.param, tmp_path_factory)


# ---------------------------------------------------------------- text or bytes of a token

TOKEN_TEXT_METHODS = ("encode_single_token", "encode_single_piece", "_encode_bytes")


NOT_TOKEN_TEXT = {"5": 5, "0": 0, "huge": 10**15, "True": True, "None": None, "float": 1.5,
                  "list": [104]}


def _accepted(call, values: dict) -> list:
    # the names of the values call takes without a TypeError
    taken = []
    for name, value in values.items():
        try:
            call(value)
        except TypeError:
            continue
        except (KeyError, ValueError):
            pass
        taken.append(name)
    return taken


@pytest.mark.parametrize("method", TOKEN_TEXT_METHODS)
def test_token_text_that_is_no_str_or_bytes_is_a_type_error(enc, method):
    assert _accepted(getattr(enc, method), NOT_TOKEN_TEXT) == []


def test_type_error_for_token_text_names_what_it_takes():
    with pytest.raises(TypeError, match="encode_single_token takes a str or bytes, not int"):
        _load("cl100k_base").encode_single_token(5)


@pytest.mark.parametrize("method", ["encode_single_token", "_encode_bytes"])
def test_int_as_token_text_is_a_type_error_as_in_tiktoken(method):
    with pytest.raises(TypeError):
        getattr(build_reference_encoding("cl100k_base"), method)(5)
    with pytest.raises(TypeError):
        getattr(_load("cl100k_base"), method)(5)


def test_text_with_a_lone_surrogate_is_no_token(enc):
    # a KeyError, as for any text that is no token: repairing it to U+FFFD
    # as encode does would name the id of another token
    with pytest.raises(KeyError):
        enc.encode_single_token("\ud800")


def test_single_piece_with_a_lone_surrogate_is_refused(enc):
    # taken as given, like a token: repaired, it would be another piece
    with pytest.raises(fasttok.FasttokError, match="encode_single_piece: the text has a lone "
                                                   "surrogate at 1"):
        enc.encode_single_piece("a\ud800b")


def test_pieces_of_text_with_a_lone_surrogate_are_those_of_the_repaired_text(enc):
    # (a kind that gives no pieces says so for either text)
    try:
        expected = enc.encode_as_pieces("a\ufffdb")
    except fasttok.FasttokError as refusal:
        expected = str(refusal)
    try:
        got = enc.encode_as_pieces("a\ud800b")
    except fasttok.FasttokError as refusal:
        got = str(refusal)
    assert got == expected


@pytest.mark.parametrize("alpha", [float("nan"), float("inf"), -float("inf"), 10**400])
def test_sampling_alpha_that_is_not_finite_is_refused(alpha):
    with pytest.raises(fasttok.FasttokError, match="alpha must be a finite number"):
        _load("cl100k_base").encode("hello world", sample=True, alpha=alpha)


@pytest.mark.parametrize("alpha", ["0.1", None, True])
def test_sampling_alpha_that_is_no_number_is_a_type_error(alpha):
    with pytest.raises(TypeError, match="alpha must be a real number"):
        _load("cl100k_base").encode("hello world", sample=True, alpha=alpha)


@pytest.mark.parametrize("nbest_size", [2**31, -2**31 - 1, 10**30])
def test_sampling_nbest_size_past_32_bits_is_refused(nbest_size):
    with pytest.raises(fasttok.FasttokError, match="nbest_size must fit in 32 bits"):
        _load("cl100k_base").encode("hello world", sample=True, nbest_size=nbest_size)


@pytest.mark.parametrize("nbest_size", [1.5, "3", True])
def test_sampling_nbest_size_that_is_no_int_is_a_type_error(nbest_size):
    with pytest.raises(TypeError):
        _load("cl100k_base").encode("hello world", sample=True, nbest_size=nbest_size)


def test_sampling_options_as_numpy_scalars_are_taken():
    enc = _load("cl100k_base")
    assert (enc.encode("hello world", sample=True, alpha=np.float32(0.0), nbest_size=np.int64(-1))
            == enc.encode("hello world"))


@pytest.mark.parametrize("spelling", [bytes, bytearray, memoryview])
def test_token_bytes_in_any_buffer_find_the_token(spelling):
    enc = _load("cl100k_base")
    token = spelling(b"hello")
    assert (enc.encode_single_token(token), enc.encode_single_piece(token),
            enc._encode_bytes(token)) == (15339, [15339], [15339])


@pytest.mark.parametrize("buffer", [5, 10**15, "{}", bytearray(b"{}")],
                         ids=["int", "huge int", "str", "bytearray"])
def test_tokenizer_from_buffer_takes_bytes_only_as_tokenizers(buffer):
    import tokenizers

    from fasttok.hf import Tokenizer

    with pytest.raises(TypeError) as theirs:
        tokenizers.Tokenizer.from_buffer(buffer)
    with pytest.raises(TypeError) as ours:
        Tokenizer.from_buffer(buffer)
    assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------- ids

ID_SPELLINGS = {
    "numpy.int64": np.int64,
    "numpy.uint32": np.uint32,
    "numpy.int32": np.int32,
    "0-d array": np.array,
    "int subclass": type("MyInt", (int,), {}),
}


def _ids(enc) -> list:
    return enc.encode(TEXT, allowed_special="all", disallowed_special=())[:8]


def _id_calls(enc) -> dict:
    return {
        "decode": enc.decode,
        "decode_bytes": enc.decode_bytes,
        "decode_tokens_bytes": enc.decode_tokens_bytes,
        "decode_with_offsets": lambda ids: enc.decode_with_offsets(ids) if enc.decode(ids).encode(
            "utf-8") == enc.decode_bytes(ids) else None,
        "decode_single_token_bytes": lambda ids: [enc.decode_single_token_bytes(i) for i in ids],
        "is_special_token": lambda ids: [enc.is_special_token(i) for i in ids],
        "decode_batch": lambda ids: enc.decode_batch([ids, ids[:1]]),
        "decode_bytes_batch": lambda ids: enc.decode_bytes_batch([ids]),
    }


CALLS = ("decode", "decode_bytes", "decode_tokens_bytes", "decode_with_offsets",
         "decode_single_token_bytes", "is_special_token", "decode_batch", "decode_bytes_batch")


@pytest.mark.parametrize("call", CALLS)
def test_numpy_integer_ids_are_ids(enc, call):
    ids = _ids(enc)
    run = _id_calls(enc)[call]
    expected = run(ids)
    assert {name: run([spell(i) for i in ids]) for name, spell in ID_SPELLINGS.items()} == {
        name: expected for name in ID_SPELLINGS}


@pytest.mark.parametrize("call", ["decode", "decode_bytes", "decode_tokens_bytes",
                                  "decode_with_offsets"])
def test_numpy_array_of_ids_is_a_list_of_ids(enc, call):
    ids = _ids(enc)
    run = _id_calls(enc)[call]
    assert [run(np.array(ids, dtype=dtype)) for dtype in ("int64", "uint32")] == [run(ids)] * 2


def test_numpy_ids_match_tiktoken():
    ours, theirs = _load("cl100k_base"), build_reference_encoding("cl100k_base")
    ids = np.array(theirs.encode("hello world"), dtype=np.int64)
    assert (ours.decode(ids), ours.decode_single_token_bytes(ids[0]),
            ours.decode_tokens_bytes(ids)) == (theirs.decode(ids),
                                                 theirs.decode_single_token_bytes(ids[0]),
                                                 theirs.decode_tokens_bytes(ids))


NOT_IDS = {"numpy float": np.float64(1.0), "1-d array": np.array([1, 2]), "str": "1",
           "None": None, "float": 1.0}


@pytest.mark.parametrize("call", ["decode_single_token_bytes", "is_special_token"])
def test_single_id_that_is_no_integer_is_a_type_error(enc, call):
    assert _accepted(getattr(enc, call), NOT_IDS) == []


@pytest.mark.parametrize("call", ["decode", "decode_bytes", "decode_tokens_bytes",
                                  "decode_with_offsets"])
def test_id_in_a_list_that_is_no_integer_is_a_type_error(enc, call):
    assert _accepted(lambda token: getattr(enc, call)([1, token]), NOT_IDS) == []


BYTES = {bytes([b]): b for b in range(256)}


@pytest.mark.parametrize("spelling", ["numpy.int64", "numpy.uint32", "0-d array"])
def test_numpy_integer_special_token_id_is_an_id(spelling):
    enc = fasttok.Encoding("t", pat_str=".", mergeable_ranks=BYTES,
                           special_tokens={"<e>": ID_SPELLINGS[spelling](256)})
    stored = enc.vocabulary.special_tokens["<e>"]
    assert (enc.encode("<e>", allowed_special="all"), type(stored)) == ([256], int)


@pytest.mark.parametrize("special_tokens", [{"<e>": 256.0}, {"<e>": "256"}, {5: 256}],
                         ids=["float id", "str id", "int token"])
def test_special_token_of_the_wrong_type_is_a_type_error_as_in_tiktoken(special_tokens):
    with pytest.raises(TypeError):
        tiktoken_encoding = pytest.importorskip("tiktoken").Encoding
        tiktoken_encoding("t", pat_str=".", mergeable_ranks=BYTES, special_tokens=special_tokens)
    with pytest.raises(TypeError, match="special token"):
        fasttok.Encoding("t", pat_str=".", mergeable_ranks=BYTES, special_tokens=special_tokens)


def test_mergeable_rank_token_that_is_no_bytes_is_a_type_error_as_in_tiktoken():
    ranks = {**BYTES, 5: 256}
    with pytest.raises(TypeError):
        pytest.importorskip("tiktoken").Encoding("t", pat_str=".", mergeable_ranks=ranks,
                                                 special_tokens={})
    with pytest.raises(TypeError, match="not bytes"):
        fasttok.Encoding("t", pat_str=".", mergeable_ranks=ranks, special_tokens={})


# ---------------------------------------------------------------- pickling

def test_encoding_pickles_and_encodes_as_before(enc):
    back = pickle.loads(pickle.dumps(enc))
    assert back.encode(TEXT, disallowed_special=()) == enc.encode(TEXT, disallowed_special=())


def test_record_with_read_only_mappings_in_its_metadata_pickles():
    # as a GGUF record's decode_only_tokens (command-r's): pickle refuses a mappingproxy
    from types import MappingProxyType

    from fasttok.vocab import Vocabulary

    record = Vocabulary(name="t", model="byte_bpe", tokens=(b"a",),
                        metadata={"decode_only_tokens": MappingProxyType({7: b"x"}),
                                  "nested": [{"deep": MappingProxyType({})}]})
    back = pickle.loads(pickle.dumps(record))
    assert (back == record, type(back.metadata["decode_only_tokens"]),
            type(back.metadata["nested"][0]["deep"])) == (True, MappingProxyType, MappingProxyType)


def _every_shared_vocabulary() -> list:
    if DATA_MISSING:
        return []
    vocab = DATA / "vocab"
    found = (glob.glob(f"{vocab}/gguf/*.gguf") + glob.glob(f"{vocab}/sentencepiece/*.model")
             + glob.glob(f"{vocab}/hf/*/tokenizer.json") + glob.glob(f"{vocab}/hf/unigram/*.json")
             + glob.glob(f"{vocab}/tiktoken/*.tiktoken"))
    return sorted(str(DATA.joinpath(p).relative_to(vocab)) for p in found)


@pytest.mark.slow
@pytest.mark.parametrize("name", fasttok.list_encoding_names() + _every_shared_vocabulary())
def test_every_shared_vocabulary_pickles_and_encodes_as_before(name):
    enc = (fasttok.get_encoding(name) if name in fasttok.list_encoding_names()
           else fasttok.load(str(DATA / "vocab" / name)))
    back = pickle.loads(pickle.dumps(enc))
    assert back.encode(TEXT, disallowed_special=()) == enc.encode(TEXT, disallowed_special=())


def test_encode_with_unstable_of_no_str_is_a_type_error():
    with pytest.raises(TypeError, match="encode_with_unstable takes a str, not int"):
        _load("cl100k_base").encode_with_unstable(5)


@pytest.mark.parametrize("name", [5, None, b"gpt-4"])
def test_model_name_that_is_no_str_is_a_type_error(name):
    with pytest.raises(TypeError, match="a model name is a str"):
        fasttok.encoding_for_model(name)


@pytest.mark.parametrize("text", [5, None, [104]], ids=["int", "None", "list"])
def test_pieces_of_no_str_are_a_type_error(enc, text):
    # (a kind that gives no pieces may say so first)
    with pytest.raises((TypeError, fasttok.FasttokError)) as raised:
        enc.encode_as_pieces(text)
    if isinstance(raised.value, fasttok.FasttokError):
        assert "pieces are given for SentencePiece models only" in str(raised.value)


def test_nbest_sampling_with_a_huge_alpha_draws_without_overflow():
    # (exp(alpha * score) overflowed a float: OverflowError, attack case 4543)
    spm = fasttok.load(str(DATA / "vocab" / "sentencepiece" / "botchan_unigram_5000.model"))
    best = spm.encode("hello there")
    assert spm.encode("hello there", sample=True, nbest_size=4, alpha=1e300, seed=1) == best
