"""Unigram training against sentencepiece's own trainer, and the written ``.model`` in both libraries.

* quality, not identity: on the same corpus, vocabulary size and settings
  (``normalization_rule_name="identity"``), the trained model encodes the
  corpus in no more than 1% more tokens than sentencepiece's, and its
  log-likelihood (the sum of the Viterbi pieces' scores) is no more than 1%
  lower; a corpus slice by default, whole files with ``-m slow``;
* the written ``.model`` loads in ``sentencepiece`` and in fasttok, and the
  two give the same ids on corpus lines and hypothesis text (with
  user-defined symbols and byte fallback too);
* one run == another, 1 thread == 2 threads, byte for byte;
* edge cases: no text, a vocabulary smaller than the required characters,
  meta pieces, CJK text;
* the writer: every field read back as written.
"""

from __future__ import annotations

import functools
import io
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON
from fasttok.errors import FasttokError
from fasttok.loaders.sentencepiece_model import (ModelProto, NormalizerSpec, SentencePiece,
                                                 TrainerSpec, read_model_proto)
from fasttok.loaders.sentencepiece_model_writer import write_model_proto
from fasttok.models._unigram import UnigramModel
from fasttok.trainers._unigram_trainer import prune
from fasttok.trainers.unigram import train_unigram
from fasttok.vocab import TokenType

spm = pytest.importorskip("sentencepiece")

SLICE = 6000  # corpus lines in the default run
QUALITY_MARGIN = 0.01


def corpus_lines(name: str, limit: int | None = SLICE) -> list:
    if DATA_MISSING:
        pytest.skip(MISSING_DATA_REASON)
    lines = (DATA / "corpus" / f"{name}.txt").read_text(encoding="utf-8").split("\n")
    return lines[:limit] if limit else lines


def reference_model(lines: list, vocab_size: int, **options) -> bytes:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out,
                                   vocab_size=vocab_size, model_type="unigram",
                                   normalization_rule_name="identity", num_threads=1,
                                   minloglevel=2, **options)
    return out.getvalue()


@functools.lru_cache(maxsize=8)
def processor(model: bytes):
    return spm.SentencePieceProcessor(model_proto=model)


@functools.lru_cache(maxsize=8)
def fasttok_encoding(model: bytes):
    return fasttok.load(write_to_tmp(model))


def tokens_and_likelihood(model: bytes, lines: list) -> tuple:
    sp = processor(model)
    scores = [sp.get_score(i) for i in range(sp.get_piece_size())]
    rows = sp.encode(lines)
    return sum(map(len, rows)), sum(scores[i] for row in rows for i in row)


def assert_quality(lines: list, vocab_size: int) -> None:
    ours = train_unigram(lines, vocab_size=vocab_size, num_threads=2).model_bytes()
    theirs = reference_model(lines, vocab_size)
    our_tokens, our_ll = tokens_and_likelihood(ours, lines)
    their_tokens, their_ll = tokens_and_likelihood(theirs, lines)
    assert our_tokens <= their_tokens * (1 + QUALITY_MARGIN), (our_tokens, their_tokens)
    assert our_ll >= their_ll * (1 + QUALITY_MARGIN), (our_ll, their_ll)


def assert_same_ids(model: bytes, lines: list) -> None:
    sp = processor(model)
    enc = fasttok_encoding(model)
    for line in lines:
        assert enc.encode(line) == sp.encode(line), line


_TMP: dict = {}


def write_to_tmp(model: bytes) -> str:
    import hashlib
    import tempfile

    key = hashlib.sha256(model).hexdigest()
    if key not in _TMP:
        f = tempfile.NamedTemporaryFile(suffix=".model", delete=False)
        f.write(model)
        f.close()
        _TMP[key] = f.name
    return _TMP[key]


@pytest.fixture(scope="module")
def en_slice():
    return corpus_lines("en")


@pytest.fixture(scope="module")
def mixed_lines():
    return corpus_lines("en", 1500) + corpus_lines("zh", 1500) + corpus_lines("multi", 1500)


@pytest.fixture(scope="module")
def mixed_model(mixed_lines):
    return train_unigram(mixed_lines, vocab_size=3000, user_defined_symbols=["<sep>", "[X]"],
                         num_threads=2).model_bytes()


# --- quality against sentencepiece's trainer ---------------------------------

def test_token_count_and_likelihood_within_one_percent_of_sentencepiece(en_slice):
    assert_quality(en_slice, 2000)


def test_small_vocabulary_within_one_percent_of_sentencepiece(en_slice):
    assert_quality(en_slice[:3000], 1000)


@pytest.mark.slow
@pytest.mark.parametrize("name", [
    "en", "code", "zh", "adversarial", "multi"])
def test_whole_corpus_file_within_one_percent_of_sentencepiece(name):
    assert_quality(corpus_lines(name, None), 8000)


@pytest.mark.slow
def test_all_corpus_files_together_within_one_percent_of_sentencepiece():
    lines = [line for name in ("en", "code", "zh", "multi", "adversarial")
             for line in corpus_lines(name, None)]
    assert_quality(lines, 16000)


# --- the written .model in sentencepiece and fasttok -------------------------

def test_written_model_loads_in_sentencepiece(mixed_model):
    sp = processor(mixed_model)
    assert sp.get_piece_size() == 3000
    assert [sp.id_to_piece(i) for i in range(5)] == ["<unk>", "<s>", "</s>", "<sep>", "[X]"]
    assert (sp.unk_id(), sp.bos_id(), sp.eos_id()) == (0, 1, 2)


def test_fasttok_and_sentencepiece_give_the_same_ids_on_corpus_lines(mixed_model, mixed_lines):
    assert_same_ids(mixed_model, mixed_lines + corpus_lines("code", 500)
                    + corpus_lines("adversarial", 500))


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40) | st.lists(st.sampled_from(["<sep>", "[X]", " ", "the", "的", "é", "\t"]),
                                         max_size=12).map("".join))
def test_fasttok_and_sentencepiece_give_the_same_ids_on_any_text(mixed_model, text):
    assert_same_ids(mixed_model, [text])


def test_user_defined_symbols_are_one_piece_in_text(mixed_model):
    enc = fasttok.load(write_to_tmp(mixed_model))
    assert 3 in enc.encode("a<sep>b") and 4 in enc.encode("[X] x")


def test_byte_fallback_model_encodes_the_same_in_both(en_slice):
    model = train_unigram(en_slice[:2000], vocab_size=1200, byte_fallback=True,
                          character_coverage=0.99).model_bytes()
    sp = processor(model)
    assert sp.id_to_piece(3) == "<0x00>" and sp.id_to_piece(258) == "<0xFF>"
    assert_same_ids(model, en_slice[:300] + ["日本語 ☃ ∑ x", "\u2047"])


def test_the_proto_is_the_file_fasttok_loads(en_slice):
    trained = train_unigram(en_slice[:1000], vocab_size=600)
    loaded = fasttok.load(write_to_tmp(trained.model_bytes()))
    enc = fasttok.Encoding.from_vocabulary(trained.vocabulary)
    for line in en_slice[:200]:
        assert enc.encode(line) == loaded.encode(line)


def test_train_with_model_unigram_returns_an_encoding(en_slice):
    enc = fasttok.train(en_slice[:1000], vocab_size=500, model="unigram", special_tokens=["<sep>"])
    assert enc.n_vocab == 500
    assert enc.decode(enc.encode("the <sep> end")) == "the <sep> end"


def test_train_refuses_bpe_options_for_unigram():
    with pytest.raises(FasttokError, match="model='bpe'"):
        fasttok.train(["ab"], vocab_size=10, model="unigram", min_frequency=2)


def test_cli_writes_a_model_sentencepiece_loads(tmp_path, en_slice):
    from fasttok.cli import main

    src = tmp_path / "corpus.txt"
    src.write_text("\n".join(en_slice[:800]), encoding="utf-8")
    out = tmp_path / "x.model"
    assert main(["train", "--model", "unigram", "--vocab-size", "400", "--out", str(out),
                 "--quiet", str(src)]) == 0
    assert processor(out.read_bytes()).get_piece_size() == 400


# --- determinism ---------------------------------------------------------------

def test_two_runs_write_the_same_bytes(en_slice):
    a = train_unigram(en_slice[:2000], vocab_size=800, num_threads=1).model_bytes()
    b = train_unigram(en_slice[:2000], vocab_size=800, num_threads=1).model_bytes()
    assert a == b


def test_thread_count_does_not_change_the_model(mixed_lines):
    one = train_unigram(mixed_lines, vocab_size=2000, num_threads=1).model_bytes()
    three = train_unigram(mixed_lines, vocab_size=2000, num_threads=3).model_bytes()
    assert one == three


# --- edge cases ------------------------------------------------------------------

def test_no_text_is_a_clear_error():
    with pytest.raises(FasttokError, match="no text"):
        train_unigram([], vocab_size=100)
    with pytest.raises(FasttokError, match="no text"):
        train_unigram(["", "   "], vocab_size=100)


def test_vocabulary_smaller_than_the_required_characters_is_a_clear_error():
    with pytest.raises(FasttokError, match="vocab_size 10 is too small.*character_coverage"):
        train_unigram(["abcdefghijklmnop"], vocab_size=10)


def test_a_single_str_is_refused():
    with pytest.raises(TypeError, match="wrap a single text"):
        train_unigram("some text", vocab_size=50)


def test_symbols_given_twice_are_refused():
    with pytest.raises(FasttokError, match="given twice"):
        train_unigram(["ab"], vocab_size=50, user_defined_symbols=["<s>"])


def test_meta_piece_strings_are_not_learned_as_text():
    trained = train_unigram(["<sep>x<sep>y " * 50], vocab_size=20, user_defined_symbols=["<sep>"])
    pieces = [p.piece for p in trained.proto.pieces]
    assert pieces.count("<sep>") == 1 and "<" not in pieces[4:]


def test_cjk_text_trains_and_round_trips():
    lines = ["日本語のテキストです。", "中文文本和日本語", "한국어 텍스트 입니다"] * 30
    trained = train_unigram(lines, vocab_size=60)
    enc = fasttok.Encoding.from_vocabulary(trained.vocabulary)
    assert [enc.decode(enc.encode(line)) for line in lines[:3]] == lines[:3]
    assert_same_ids(trained.model_bytes(), lines[:3])


def test_pieces_do_not_mix_scripts_or_hold_inner_spaces():
    trained = train_unigram(["abc漢字 abc漢字 x1 x1 ab cd"] * 40, vocab_size=40)
    for p in trained.proto.pieces[3:]:
        assert "\u2581" not in p.piece[1:]
        assert not ({"a", "b", "c"} & set(p.piece) and {"漢", "字"} & set(p.piece))


def test_a_piece_whose_other_segmentation_needs_the_unknown_piece_can_be_pruned():
    # "b" was dropped by an M-step: "ab" splits only as "a" + unknown, and
    # sentencepiece weighs that like any alternative (kept whatever the
    # count, such pieces once stopped the pruning short of the vocabulary)
    model = UnigramModel([b"a", b"ab", None], array("d", [-1.0, -1.5, 0.0]),
                         [TokenType.NORMAL, TokenType.NORMAL, TokenType.UNKNOWN], 2)
    assert prune(model, [b"a", b"ab"], array("q", [5, 9, 1]), 1) == [0]


def test_training_reaches_the_vocabulary_when_dropped_characters_hold_many_pieces():
    # multi.txt at 4000: thousands of pieces hold a character the EM dropped
    rounds = []
    encoding = fasttok.train(corpus_lines("multi", None), vocab_size=4000, model="unigram",
                             progress=lambda size, desired: rounds.append(size))
    assert encoding.n_vocab == 4000
    assert len(rounds) < 12 and rounds[-1] == 4400


# --- the writer -----------------------------------------------------------------

def test_writer_round_trips_every_field():
    proto = ModelProto(
        pieces=(SentencePiece("<unk>", 0.0, 2), SentencePiece("<s>", 0.0, 3),
                SentencePiece("▁é", -2.5), SentencePiece("<u>", 0.0, 4)),
        trainer_spec=TrainerSpec(model_type=2, vocab_size=4, byte_fallback=False,
                                 split_digits=True, split_by_number=False, pad_id=-1, bos_id=1,
                                 eos_id=-1, unk_surface="?", user_defined_symbols=("<u>",),
                                 control_symbols=("<c>",), max_sentencepiece_length=8),
        normalizer_spec=NormalizerSpec(name="identity", add_dummy_prefix=False,
                                       remove_extra_whitespaces=False),
        denormalizer_spec=NormalizerSpec(name="x", escape_whitespaces=False))
    assert read_model_proto(write_model_proto(proto)) == proto
