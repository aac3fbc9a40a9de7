"""``Encoding.decode_stream()``: ids pushed one at a time give ``decode`` of them.

* On every kind of vocabulary the pushes of any id sequence, then ``flush``,
  add up to ``decode`` of the sequence (a hypothesis property), and so do
  llama.cpp's ``.inp/.out`` golden ids fed one by one.
* A push returns its text as soon as no later id can change it: llama.cpp's
  clean-up of tokenization spaces holds back only what its rules could still
  delete (a trailing space, ``" '"``), never a run of words or full stops.
* Every push checks its id as ``decode`` does: an id no token has is a
  ``KeyError``, a non-integer a ``TypeError``; numpy integers are ids.
"""

from __future__ import annotations

import importlib.resources

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, ONE_FILE_PER_KIND
from fasttok.decoders.cleanup import SpaceCleaner, clean_up_spaces
from test_gguf_models import read_pairs

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

GGUF_DIR = DATA / "vocab" / "gguf"
HF_DIR = DATA / "vocab" / "hf"


def _tekken() -> str:
    return str(importlib.resources.files("mistral_common") / "data" / "tekken_240911.json")


# one file of each kind, plus a byte-level GGUF with llama.cpp's space
# clean-up and the tokenizer.json files decoded by the Python pipeline
FILES = {**{kind: str(path) for kind, path in ONE_FILE_PER_KIND.items()},
         "gguf_gpt2_clean_spaces": str(GGUF_DIR / "ggml-vocab-gpt-2.gguf"),
         "hf_metaspace_byte_fallback": str(HF_DIR / "llama2" / "tokenizer.json"),
         "hf_wordpiece": str(HF_DIR / "all-MiniLM-L6-v2" / "tokenizer.json"),
         "tekken": _tekken()}
_LOADED: dict = {}

# text whose ids exercise what streams hold back: the clean-up's spaces,
# quotes and punctuation, characters split across byte tokens
POOL_TEXT = ("Hello , world ! it 's ok , isn 't it ' cool ' ? Mr. J. Kennedy's  ... ' re ' ve"
             " é 你好 \n\t 🎉 ,,, ' s")


def _load(kind: str) -> fasttok.Encoding:
    if kind not in _LOADED:
        _LOADED[kind] = fasttok.load(FILES[kind])
    return _LOADED[kind]


def _streamed(enc: fasttok.Encoding, ids: list) -> list:
    stream = enc.decode_stream()
    return [stream.push(t) for t in ids] + [stream.flush()]


def _id_pool(enc: fasttok.Encoding) -> list:
    pool = set(enc.encode_ordinary(POOL_TEXT))
    for ch in set(POOL_TEXT.replace(" ", "")) | {" ", "'", " '"}:
        pool.update(enc.encode_ordinary(ch))
    return sorted(pool)


@pytest.mark.parametrize("kind", sorted(FILES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_pushes_and_flush_add_up_to_decode_on_every_vocabulary_kind(kind, data):
    enc = _load(kind)
    ids = data.draw(st.lists(st.sampled_from(_id_pool(enc)), max_size=24))
    assert "".join(_streamed(enc, ids)) == enc.decode(ids)


GOLDEN_QUICK = ("bert-bge", "gpt-2", "llama-spm", "deepseek-coder")
GOLDEN_ALL = tuple(sorted(p.name[len("ggml-vocab-"):-len(".gguf.inp")]
                          for p in GGUF_DIR.glob("ggml-vocab-*.gguf.inp")))


def _golden_stream_agrees(name: str) -> None:
    enc = fasttok.load(GGUF_DIR / f"ggml-vocab-{name}.gguf")
    for text, ids in read_pairs(name):
        assert "".join(_streamed(enc, ids)) == enc.decode(ids), (name, text)


@pytest.mark.parametrize("name", GOLDEN_QUICK)
def test_pushes_of_gguf_golden_ids_add_up_to_decode(name):
    _golden_stream_agrees(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", GOLDEN_ALL)
def test_pushes_of_every_gguf_golden_add_up_to_decode(name):
    _golden_stream_agrees(name)


def test_a_cleaned_gguf_stream_gives_each_word_as_it_comes():
    enc = _load("gguf_gpt2_clean_spaces")
    ids = enc.encode_ordinary("Mr. J. Kennedy")
    assert _streamed(enc, ids) == [enc.decode([t]) for t in ids] + [""]


def test_a_stream_of_full_stops_never_stalls():
    enc = _load("gguf_gpt2_clean_spaces")
    (stop,) = enc.encode_ordinary(".")
    stream = enc.decode_stream()
    assert [stream.push(stop) for _ in range(1000)] == ["."] * 1000


def test_a_cleaned_stream_holds_back_only_a_space_punctuation_could_delete():
    enc = _load("gguf_gpt2_clean_spaces")
    hi, space, comma = (enc.encode_ordinary(s)[0] for s in ("Hi", " ", ","))
    assert _streamed(enc, [hi, space, comma]) == ["Hi", "", ",", ""]
    assert _streamed(enc, [hi, space, hi]) == ["Hi", "", " Hi", ""]


def test_a_long_run_of_spaces_is_held_back_two_bytes_at_most():
    # the last two spaces of "x  " + "' s" are deleted ("x 's"): they wait;
    # each push scans what is held plus its own bytes, so the stream is linear
    enc = _load("gguf_gpt2_clean_spaces")
    (space,) = enc.encode_ordinary(" ")
    stream = enc.decode_stream()
    given = "".join(stream.push(space) for _ in range(10_000))
    assert given == " " * 9_998
    assert stream.flush() == "  "


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=16).map(lambda b: bytes(b" '.,?!smrevx"[c % 12] for c in b)),
       cuts=st.lists(st.integers(0, 16), max_size=6))
def test_space_cleaner_in_pieces_equals_clean_up_spaces_of_the_whole(data, cuts):
    cleaner, at, out = SpaceCleaner(), 0, b""
    for cut in sorted(cuts) + [len(data)]:
        out += cleaner.feed(data[at:max(at, cut)])
        at = max(at, cut)
    assert out + cleaner.feed(b"", final=True) == clean_up_spaces(data)


@pytest.mark.parametrize("kind", sorted(FILES))
@pytest.mark.parametrize("token", [-1, 10**9, 2**64])
def test_pushing_an_id_no_token_has_is_a_key_error(kind, token):
    with pytest.raises(KeyError):
        _load(kind).decode_stream().push(token)


@pytest.mark.parametrize("kind", sorted(FILES))
@pytest.mark.parametrize("token", ["5", 5.0, None])
def test_pushing_a_non_integer_is_a_type_error(kind, token):
    with pytest.raises(TypeError):
        _load(kind).decode_stream().push(token)


@pytest.mark.parametrize("kind", sorted(FILES))
def test_numpy_integers_are_ids_to_a_stream_and_to_decode(kind):
    enc = _load(kind)
    ids = enc.encode_ordinary("Hello world")
    as_numpy = list(numpy.array(ids, dtype=numpy.int64))
    assert "".join(_streamed(enc, as_numpy)) == enc.decode(as_numpy) == enc.decode(ids)
