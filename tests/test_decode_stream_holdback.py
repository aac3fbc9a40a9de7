"""How much text ``Encoding.decode_stream()`` holds back, rule by rule.

A push gives every character no later id can change, and nothing else:

* after each push of a corpus file's ids (every vocabulary kind), the text
  given is the common prefix of ``decode`` of the ids so far followed by
  each continuation tried (none, the real rest, punctuation, quotes,
  contractions, spaces, a word's continuation, characters split into byte
  tokens): the stream neither lags nor runs ahead of them;
* stopped after any prefix, the pushes and ``flush`` add up to ``decode``
  of that prefix;
* the bound of each decoder rule: byte-level vocabularies and ``.model``
  files without byte pieces hold only an incomplete UTF-8 character (none of
  the text of ``.model`` pieces); llama.cpp's clean-up of spaces holds at
  most the last four bytes it was given (``"  ' "``, whose three spaces a
  following ``s`` deletes), at most three bytes of the clean-up of the
  bytes so far; a WordPiece
  decode gives the joining space with the word after it and holds nothing;
  a ``tokenizer.json`` with a ByteFallback stage holds the trailing run of
  byte tokens, which a later byte token could turn into U+FFFDs (and no
  more).
"""

from __future__ import annotations

import codecs
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON
from fasttok.decoders.cleanup import SpaceCleaner, clean_up_spaces
from fasttok.decoders.hf_byte_fallback import ByteFallback
from test_stream_decoding import FILES, POOL_TEXT

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

HF_DIR = DATA / "vocab" / "hf"
KINDS = {**FILES,
         "spm_byte_fallback": str(DATA / "vocab" / "sentencepiece" / "botchan_unigram_4000_bytefallback.model"),
         "hf_unigram_byte_fallback": str(HF_DIR / "unigram" /
                                         "botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto.json")}
BYTE_LEVEL = ("tiktoken", "gguf_gpt2", "hf_byte_bpe", "tekken")
HF_BYTE_FALLBACK = ("hf_metaspace_byte_fallback", "hf_unigram_byte_fallback")
CORPUS_CHARS = 160
CORPUS_IDS = 64
PROBE_TEXTS = (",", ".", "?", "!", "'s", "'m", "'re", "'ve", "'", " '", "' s", " ' s", "s", " ",
               "\n", "a", " a", "xs", "é", "你", "🎉", "曖", "%")
_LOADED: dict = {}


def _load(kind: str) -> fasttok.Encoding:
    if kind not in _LOADED:
        _LOADED[kind] = fasttok.load(KINDS[kind])
    return _LOADED[kind]


def _corpus_ids(enc: fasttok.Encoding) -> list:
    # each corpus file's first ids (a byte-fallback vocabulary spells zh.txt
    # in three ids a character: the bound keeps every kind's test short)
    texts = [(DATA / "corpus" / f"{name}.txt").read_text(encoding="utf-8")[:CORPUS_CHARS]
             for name in ("en", "code", "multi", "zh")]
    return [enc.encode_ordinary(text)[:CORPUS_IDS] for text in texts]


def _given_after_each_push(enc: fasttok.Encoding, ids: list) -> list:
    stream, given, out = enc.decode_stream(), "", []
    for token in ids:
        given += stream.push(token)
        out.append(given)
    return out


def _continuations(enc: fasttok.Encoding) -> list:
    found = set()
    for text in PROBE_TEXTS:
        ids = tuple(enc.encode_ordinary(text))
        found.add(ids)
        found.update((i,) for i in ids)
    return sorted(found)


def _common_prefix(texts: list) -> str:
    first = texts[0]
    n = min(len(t) for t in texts)
    for i in range(n):
        if any(t[i] != first[i] for t in texts):
            return first[:i]
    return first[:n]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_push_gives_exactly_the_text_no_continuation_changes(kind):
    enc = _load(kind)
    tried = _continuations(enc)
    for ids in _corpus_ids(enc):
        whole = enc.decode(ids)
        for k, given_text in enumerate(_given_after_each_push(enc, ids), 1):
            endings = [enc.decode(ids[:k]), whole] + [enc.decode(ids[:k] + list(c)) for c in tried]
            assert given_text == _common_prefix(endings), (kind, k, ids[:k])


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_stream_stopped_after_any_prefix_gives_its_decode(kind, data):
    enc = _load(kind)
    pool = sorted({i for c in _continuations(enc) for i in c} | set(enc.encode_ordinary(POOL_TEXT)))
    ids = data.draw(st.lists(st.sampled_from(pool), max_size=16))
    for k in range(len(ids) + 1):
        stream = enc.decode_stream()
        pushed = "".join(stream.push(t) for t in ids[:k])
        assert pushed + stream.flush() == enc.decode(ids[:k])


@pytest.mark.parametrize("kind", BYTE_LEVEL)
def test_a_byte_level_push_gives_all_but_an_incomplete_character_of_the_decode_so_far(kind):
    enc = _load(kind)
    for ids in _corpus_ids(enc):
        for k, given_text in enumerate(_given_after_each_push(enc, ids), 1):
            so_far = enc.decode_bytes(ids[:k])
            assert given_text == codecs.getincrementaldecoder("utf-8")("replace").decode(so_far)


@pytest.mark.parametrize("kind", ("spm_unigram", "spm_bpe"))
def test_a_model_file_without_byte_pieces_gives_each_piece_at_once(kind):
    enc = _load(kind)
    for ids in _corpus_ids(enc):
        for k, given_text in enumerate(_given_after_each_push(enc, ids), 1):
            assert given_text == enc.decode(ids[:k])


@pytest.mark.parametrize("kind", ("hf_wordpiece", "gguf_bert"))
def test_a_wordpiece_stream_gives_the_joining_space_with_the_next_word(kind):
    enc = _load(kind)
    ids = enc.encode_ordinary("unbelievably good tokenizers of words")
    stream = enc.decode_stream()
    pieces = [stream.push(t) for t in ids]
    assert pieces == [enc.decode(ids[:k + 1])[len(enc.decode(ids[:k])):] for k in range(len(ids))]
    assert any(p.startswith(" ") for p in pieces) and any(not p.startswith(" ") for p in pieces[1:])


@pytest.mark.parametrize("kind", HF_BYTE_FALLBACK)
def test_a_tokenizer_json_byte_fallback_stream_holds_only_the_open_run_of_byte_tokens(kind):
    enc = _load(kind)
    is_byte = [ByteFallback.byte_of(enc._core.pipeline.id_to_token(t)) is not None
               for t in range(enc.n_vocab)]
    for ids in _corpus_ids(enc):
        for k, given_text in enumerate(_given_after_each_push(enc, ids), 1):
            closed = k
            while closed and is_byte[ids[closed - 1]]:
                closed -= 1
            assert given_text == enc.decode(ids[:closed]), (kind, k)


@pytest.mark.parametrize("kind", HF_BYTE_FALLBACK)
def test_a_later_byte_token_that_breaks_a_run_turns_it_all_into_replacement_characters(kind):
    enc = _load(kind)
    run = [t for t in range(enc.n_vocab) if ByteFallback.byte_of(enc._core.pipeline.id_to_token(t))
           in (0xE6, 0x9B, 0x96)]
    by_byte = {ByteFallback.byte_of(enc._core.pipeline.id_to_token(t)): t for t in run}
    ids = [by_byte[0xE6], by_byte[0x9B], by_byte[0x96], by_byte[0xE6]]
    stream = enc.decode_stream()
    assert [stream.push(t) for t in ids] == ["", "", "", ""]
    assert stream.flush() == enc.decode(ids) == "\ufffd" * 4
    stream = enc.decode_stream()
    assert [stream.push(t) for t in ids[:3]] == ["", "", ""]
    assert stream.flush() == "曖"


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=12).map(lambda b: bytes(b" '.,smrevx"[c % 10] for c in b)))
def test_the_space_clean_up_gives_all_but_at_most_three_bytes_of_the_clean_up_so_far(data):
    cleaner, out = SpaceCleaner(), b""
    for i in range(len(data)):
        out += cleaner.feed(data[i:i + 1])
        assert clean_up_spaces(data[:i + 1]).startswith(out)
        assert len(clean_up_spaces(data[:i + 1])) - len(out) <= 3


def test_the_space_clean_up_holds_four_bytes_whose_spaces_s_would_delete():
    cleaner = SpaceCleaner()
    assert [cleaner.feed(bytes([b])) for b in b"x  ' "] == [b"x", b"", b"", b"", b""]
    assert cleaner.feed(b"s") + cleaner.feed(b"", final=True) == b"'s"
    assert clean_up_spaces(b"x  ' s") == b"x's"


def test_the_space_clean_up_lag_of_three_bytes_is_reached():
    worst = 0
    for data in itertools.product(b" 'srve,x", repeat=5):
        cleaner, out = SpaceCleaner(), b""
        for i, b in enumerate(data):
            out += cleaner.feed(bytes([b]))
            worst = max(worst, len(clean_up_spaces(bytes(data[:i + 1]))) - len(out))
    assert worst == 3
