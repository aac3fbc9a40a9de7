"""Decoding SentencePiece ``.model`` files (``decode``, ``decode_stream``) against sentencepiece 0.2.3.

The reference is the ``sentencepiece`` package's ``decode``: control pieces
invisible, ``unk`` as `` ⁇ ``, byte-piece runs assembled (invalid bytes as
U+FFFD), the dummy-prefix space stripped at the start of the text, and the
model's ``denormalizer_spec`` run over the result. The denormalizer comes
from models trained here with the real trainer and a ``denormalization_rule_tsv``
whose rules share prefixes (``..`` and ``...``), span pieces (``i am``),
start with a space, delete a character, and turn characters that arrive as
byte pieces into others; copies of one model with the denormalizer's
whitespace options switched on cover the rest of sentencepiece's
``Normalize``.

``decode_stream`` must add up to ``decode`` after every id, for every
sequence: hypothesis mixes encoded text with control, unknown, space and
byte pieces.
"""

from __future__ import annotations

import itertools
import random
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, Mismatches, proto_fields, read_jsonl, read_text, write_varint, missing_data_reason
from conftest import spm_model_path as model_path, spm_pair as pair
from fasttok.formats.sentencepiece import build_sentencepiece, load_sentencepiece_file

spm = pytest.importorskip("sentencepiece")

SPM_DIR = DATA / "vocab" / "sentencepiece"
CORPUS = DATA / "corpus"
MODELS = ("botchan_bpe_8000_bytefallback", "botchan_en_bpe_1000", "botchan_en_unigram_1000",
          "botchan_unigram_2000_userdef_cf", "botchan_unigram_4000_bytefallback",
          "botchan_unigram_5000", "kyoto_ja_unigram_8000")

# source code points -> target code points (hex, as sentencepiece's rule TSV)
DENORMALIZATION_RULES = "\n".join([
    "27\t2019",                      # ' -> ’
    "2E 2E 2E\t2026",                # ... -> …
    "2E 2E\t2025",                   # .. -> ‥
    "20 2C\t2C",                     # " ," -> ","
    "69 20 61 6D\t49 27 6D",         # i am -> I'm
    "71\t",                          # q -> (nothing)
    "9F8D 306E\t30C9 30E9 30B4 30F3",  # 龍の -> ドラゴン
    "E9\t65 301",                    # é -> e + combining acute
]) + "\n"

_TRAIN_CONFIGS = {
    "bpe_bytes_symbols": dict(model_type="bpe", byte_fallback=True,
                              user_defined_symbols=["<sep>"], control_symbols=["<ctrl>"]),
    "unigram_keep_spaces": dict(model_type="unigram", remove_extra_whitespaces=False),
    "bpe_no_dummy_prefix": dict(model_type="bpe", add_dummy_prefix=False,
                                remove_extra_whitespaces=False),
}

pytestmark = pytest.mark.skipif(not SPM_DIR.is_dir(), reason=missing_data_reason(SPM_DIR))


@lru_cache(maxsize=None)
def corpus_lines(name: str, count: int) -> list:
    return read_text(CORPUS / f"{name}.txt").split("\n")[:count]


def with_denormalizer_options(data: bytes, **options: bool) -> bytes:
    """A ``.model`` whose ``denormalizer_spec`` (ModelProto field 5) has the
    given NormalizerSpec booleans: ``add_dummy_prefix`` (3),
    ``remove_extra_whitespaces`` (4), ``escape_whitespaces`` (5)."""
    numbers = {"add_dummy_prefix": 3, "remove_extra_whitespaces": 4, "escape_whitespaces": 5}

    out = bytearray()
    for tag, raw, body in proto_fields(data):
        if tag == 0x2A:
            spec = b"".join(r for t, r, _ in proto_fields(body) if t >> 3 not in numbers.values())
            spec += b"".join(write_varint(numbers[k] << 3) + write_varint(int(v))
                             for k, v in options.items())
            out += write_varint(0x2A) + write_varint(len(spec)) + spec
        else:
            out += raw
    return bytes(out)


@pytest.fixture(scope="module")
def denormalizing_models(tmp_path_factory):
    """Models trained with DENORMALIZATION_RULES, plus copies of the first
    with every combination of the denormalizer's whitespace options."""
    folder = tmp_path_factory.mktemp("spm_decode")
    rules = folder / "denormalize.tsv"
    rules.write_text(DENORMALIZATION_RULES, encoding="utf-8")
    text = (SPM_DIR / "botchan.txt").read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
    lines = [t for t in text.split("\n") if t.strip()][:3000]
    paths = {}
    for name, spec in _TRAIN_CONFIGS.items():
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines),
                                       model_prefix=str(folder / name), vocab_size=600,
                                       minloglevel=2, num_threads=1,
                                       denormalization_rule_tsv=str(rules), **spec)
        paths[name] = str(folder / f"{name}.model")
    base = (folder / "bpe_bytes_symbols.model").read_bytes()
    for flags in itertools.product((False, True), repeat=3):
        name = "options_" + "".join("01"[f] for f in flags)
        path = folder / f"{name}.model"
        path.write_bytes(with_denormalizer_options(
            base, add_dummy_prefix=flags[0], remove_extra_whitespaces=flags[1],
            escape_whitespaces=flags[2]))
        paths[name] = str(path)
    return paths


def streamed(enc, ids) -> str:
    stream = enc.decode_stream()
    return "".join(stream.push(t) for t in ids) + stream.flush()


def decode_problem(enc, sp, ids) -> str | None:
    """How ``decode`` or ``decode_stream`` of ``ids`` departs from sentencepiece, or None."""
    expected = sp.decode(ids)
    ours = enc.decode(ids)
    if ours != expected:
        return f"decode {ours[:80]!r} != {expected[:80]!r} for ids {ids[:30]}"
    stream = enc.decode_stream()
    emitted = ""
    for k, token in enumerate(ids):
        emitted += stream.push(token)
        if not expected.startswith(emitted):
            return f"after id {k} the stream gave {emitted[-40:]!r}, not a prefix of {expected!r}"
    emitted += stream.flush()
    return None if emitted == expected else f"stream {emitted[:80]!r} != {expected[:80]!r}"


# ---------------------------------------------------------------- the denormalizer


def test_trained_models_carry_a_denormalizer(denormalizing_models):
    enc, sp = pair(denormalizing_models["bpe_bytes_symbols"])
    spec = enc.vocabulary.metadata["denormalizer_spec"]
    assert spec["precompiled_charsmap"]
    ids = sp.encode("i am here... isn't it")
    assert enc.decode(ids) == sp.decode(ids) == "I'm here… isn’t it"


@pytest.mark.parametrize("name", list(_TRAIN_CONFIGS))
def test_decode_denormalizes_corpus_lines_as_sentencepiece(name, denormalizing_models):
    enc, sp = pair(denormalizing_models[name])
    bad = Mismatches(f"{name} decode")
    lines = corpus_lines("en", 3000) + corpus_lines("multi", 2000) \
        + corpus_lines("adversarial", 500)
    for k, (text, ids) in enumerate(zip(lines, sp.encode(lines))):
        bad.check(decode_problem(enc, sp, ids), f"line {k}")
    bad.assert_none()


@pytest.mark.parametrize("options", [f"{a}{b}{c}" for a in "01" for b in "01" for c in "01"])
def test_denormalizer_whitespace_options_decode_as_sentencepiece(options, denormalizing_models):
    # add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces of the
    # denormalizer_spec (the trainer writes all three off; a file may not)
    enc, sp = pair(denormalizing_models[f"options_{options}"])
    space, ctrl = sp.piece_to_id("▁"), sp.piece_to_id("<ctrl>")
    bad = Mismatches(f"denormalizer options {options}")
    texts = ["  i   am ...  ", " , , hello , ", "q", "q q", "'", "", "龍の 龍", "a  .  b"] \
        + corpus_lines("en", 300)
    for text in texts:
        ids = sp.encode(text)
        for variant in (ids, [space] + ids + [space, space], [ctrl, space] + ids + [ctrl]):
            bad.check(decode_problem(enc, sp, variant), repr(text))
    bad.assert_none()


# ---------------------------------------------------------------- hypothesis: any ids

_ALPHABET = st.sampled_from(
    list("abeimqHT .,'!?") + ["...", "..", " ,", "i am", "  ", "\t", "龍", "の", "龍の", "é",
                              "e\u0301", "😀", "<sep>", "<ctrl>", "\u2581", "ß", "ﬁ"])
_TEXT = st.lists(_ALPHABET, max_size=16).map("".join)


@pytest.mark.parametrize("name", ["bpe_bytes_symbols", "unigram_keep_spaces", "bpe_no_dummy_prefix",
                                  "options_111"])
def test_decode_and_stream_match_sentencepiece_on_any_ids(name, denormalizing_models):
    enc, sp = pair(denormalizing_models[name])
    pieces = ["<unk>", "<s>", "</s>", "<ctrl>", "▁", ".", "'", "q", "▁i", "am", "<sep>"]
    extra = [sp.piece_to_id(p) for p in pieces if sp.piece_to_id(p) != sp.unk_id() or p == "<unk>"]
    if sp.piece_to_id("<0x41>") != sp.unk_id():
        extra += [sp.piece_to_id(f"<0x{b:02X}>") for b in (0x2E, 0x41, 0x80, 0xA9, 0xC3, 0xE9, 0xED,
                                                           0xF0, 0x9F, 0x98, 0x80, 0xFF)]
    inserts = st.lists(st.tuples(st.integers(0, 40), st.sampled_from(extra)), max_size=8)

    @settings(max_examples=300, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_TEXT, inserts)
    def check(text, extra_ids):
        ids = sp.encode(text)
        for at, token in extra_ids:
            ids.insert(min(at, len(ids)), token)
        problem = decode_problem(enc, sp, ids)
        assert problem is None, f"{problem}; text {text!r}"

    check()


@pytest.mark.parametrize("name", ["bpe_bytes_symbols", "unigram_keep_spaces", "options_111"])
def test_offsets_with_a_denormalizer_are_where_the_stream_has_got(name, denormalizing_models):
    # A denormalizer rewrites text across pieces, so no piece has a surface
    # of its own: each id starts where the bytes the stream emitted before
    # it end (SentencePieceCore.decode_with_offsets).
    model = build_sentencepiece(load_sentencepiece_file(denormalizing_models[name]))
    rnd = random.Random(5)
    extra = [model.find_token(p.encode()) for p in ("<s>", "<ctrl>", "▁", ".", "'", "<0xC3>", "<0xA9>")]
    extra = [t for t in extra if t >= 0]
    bad = Mismatches(f"{name} decode_with_offsets")
    for k, line in enumerate(corpus_lines("en", 300)):
        ids = model.encode_ordinary(line)
        for _ in range(rnd.randint(0, 4)):
            ids.insert(rnd.randint(0, len(ids)), rnd.choice(extra))
        data, starts = model.decode_with_offsets(ids)
        stream, emitted = model.stream_decoder(), 0
        streamed_starts = []
        for t in ids:
            streamed_starts.append(emitted)
            emitted += len(stream.push(t))
        if data != model.decode_bytes(ids) or starts != streamed_starts:
            bad.check(f"ids {ids[:20]}: {data[:40]!r} {starts[:20]} != {streamed_starts[:20]}",
                      f"line {k}")
    bad.assert_none()


# ---------------------------------------------------------------- shared models


@pytest.mark.parametrize("name", MODELS)
def test_decode_stream_adds_up_to_decode_on_every_test_string(name):
    enc, sp = pair(model_path(name))
    bad = Mismatches(f"{name} decode_stream")
    for rec in read_jsonl(DATA / "testcases" / "lines.jsonl"):
        bad.check(decode_problem(enc, sp, sp.encode(rec["text"])), str(rec["id"]))
    bad.assert_none()


def test_byte_pieces_of_any_bytes_decode_as_sentencepiece():
    # Runs of <0xXX> pieces: valid characters kept, each invalid byte U+FFFD,
    # a character split over ids held back until its last byte.
    enc, sp = pair(model_path("botchan_bpe_8000_bytefallback"))
    byte_id = [sp.piece_to_id(f"<0x{b:02X}>") for b in range(256)]
    word = sp.piece_to_id("▁the")
    rnd = random.Random(11)
    pool = list(range(256)) + list("é😀龍".encode()) * 8
    bad = Mismatches("byte pieces")
    for k in range(3000):
        ids = [byte_id[rnd.choice(pool)] for _ in range(rnd.randint(1, 12))]
        if rnd.random() < 0.3:
            ids.insert(rnd.randint(0, len(ids)), word)
        bad.check(decode_problem(enc, sp, ids), f"case {k}")
    bad.assert_none()


# ---------------------------------------------------------------- the stream, literally


def test_stream_holds_back_a_character_split_over_byte_pieces():
    enc, sp = pair(model_path("botchan_bpe_8000_bytefallback"))
    stream = enc.decode_stream()
    pushed = [stream.push(sp.piece_to_id(f"<0x{b:02X}>")) for b in "龍".encode()]
    assert pushed == ["", "", "龍"]
    assert stream.push(sp.piece_to_id("<0xE9>")) == ""
    assert stream.flush() == "\ufffd"


def test_stream_holds_back_text_a_longer_denormalizer_rule_could_match(denormalizing_models):
    # ".." and "..." are both rules: a "." waits for what follows
    enc, sp = pair(denormalizing_models["bpe_bytes_symbols"])
    dot, word = sp.piece_to_id("."), sp.piece_to_id("▁the")
    stream = enc.decode_stream()
    assert [stream.push(t) for t in (word, dot, dot, dot, dot)] == ["the", "", "", "…", ""]
    assert stream.push(word) == ". the"
    assert stream.flush() == ""


def test_stream_hides_control_pieces_and_strips_only_the_leading_dummy_space():
    enc, sp = pair(model_path("botchan_en_unigram_1000"))
    ids = [sp.bos_id()] + sp.encode("Hello world") + [sp.eos_id()]
    stream = enc.decode_stream()
    assert [stream.push(t) for t in ids] == ["", "He", "ll", "o", " world", ""]
    assert stream.flush() == ""


def test_stream_starts_a_new_text_after_flush():
    enc, sp = pair(model_path("botchan_en_unigram_1000"))
    stream = enc.decode_stream()
    ids = sp.encode("Hello world")
    first = "".join(stream.push(t) for t in ids) + stream.flush()
    second = "".join(stream.push(t) for t in ids) + stream.flush()
    assert first == second == "Hello world"


def test_stream_refuses_an_id_outside_the_vocabulary():
    enc, sp = pair(model_path("botchan_en_unigram_1000"))
    with pytest.raises(KeyError):
        enc.decode_stream().push(sp.get_piece_size())
