"""Tests for ``fasttok.loaders.sentencepiece_model`` (SentencePiece ``.model`` reader).

Real files come from ``$FASTTOK_DATA/vocab/sentencepiece`` (default: the
``shared/data`` directory next to the repository), described in
``PROVENANCE.md`` section 3. Small models are built here with a minimal
protobuf encoder, so every malformed case is spelled out byte by byte.
"""

from __future__ import annotations

import doctest
import math
import os
import random
import struct
from pathlib import Path

import pytest

from conftest import missing_data_reason
from fuzzing import varint
from fasttok.errors import VocabularyFileError
from fasttok.loaders import sentencepiece_model
from fasttok.loaders.sentencepiece_model import load_sentencepiece, read_model_proto
from fasttok.vocab import TokenType

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("FASTTOK_DATA") or REPO_ROOT.parent / "shared" / "data")
SPM_DIR = DATA / "vocab" / "sentencepiece"

# PROVENANCE.md section 3, one row per file:
# model, pieces, normalizer, add_dummy_prefix, remove_extra_whitespaces,
# byte_fallback, split_digits, user-defined pieces, control pieces,
# (unk, bos, eos, pad) with -1 as None, file size in bytes.
PROVENANCE = {
    "botchan_en_bpe_1000.model": (
        "sentencepiece_bpe", 1000, "nmt_nfkc", True, True, False, False,
        (), ("<s>", "</s>"), (0, 1, 2, None), 251564),
    "botchan_en_unigram_1000.model": (
        "unigram", 1000, "nfkc", True, True, False, False,
        (), ("<s>", "</s>"), (0, 1, 2, None), 253152),
    "kyoto_ja_unigram_8000.model": (
        "unigram", 8000, "nfkc", True, True, False, False,
        (), ("<s>", "</s>"), (0, 1, 2, None), 352301),
    "botchan_unigram_5000.model": (
        "unigram", 5000, "nmt_nfkc", True, True, False, False,
        (), ("<s>", "</s>"), (0, 1, 2, None), 319933),
    "botchan_bpe_8000_bytefallback.model": (
        "sentencepiece_bpe", 8000, "identity", True, False, True, True,
        (), ("<s>", "</s>"), (0, 1, 2, None), 125195),
    "botchan_unigram_4000_bytefallback.model": (
        "unigram", 4000, "nmt_nfkc", True, True, True, False,
        (), ("<s>", "</s>"), (0, 1, 2, None), 305826),
    "botchan_unigram_2000_userdef_cf.model": (
        "unigram", 2000, "nmt_nfkc_cf", True, True, False, False,
        ("<sep>", "<cls>", "[MASK]", "▁▁"), ("<s>", "</s>", "<pad>", "<ctrl>"), (0, 1, 2, 3),
        280558),
}
MODEL_FILES = sorted(PROVENANCE)

requires_data = pytest.mark.skipif(not SPM_DIR.is_dir(), reason=missing_data_reason(SPM_DIR))


# --------------------------------------------------------------------------
# A minimal protobuf encoder, to build small models byte by byte.
# --------------------------------------------------------------------------

def tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def int_field(number: int, value: int) -> bytes:
    return tag(number, 0) + varint(value)


def len_field(number: int, payload) -> bytes:
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    return tag(number, 2) + varint(len(payload)) + payload


def float_field(number: int, value: float) -> bytes:
    return tag(number, 5) + struct.pack("<f", value)


def piece(text, score: float | None = None, kind: int | None = None) -> bytes:
    body = len_field(1, text)
    if score is not None:
        body += float_field(2, score)
    if kind is not None:
        body += int_field(3, kind)
    return len_field(1, body)


def trainer(*fields: bytes) -> bytes:
    return len_field(2, b"".join(fields))


def normalizer(*fields: bytes, number: int = 3) -> bytes:
    return len_field(number, b"".join(fields))


# Piece lists for the small models: (text, score, type)
BASIC_PIECES = [
    ("<unk>", 0.0, TokenType.UNKNOWN),
    ("<s>", 0.0, TokenType.CONTROL),
    ("</s>", 0.0, TokenType.CONTROL),
    ("▁a", -1.5, None),
    ("a", -2.0, None),
    ("b", -3.25, TokenType.NORMAL),
]


def basic_model(*extra: bytes, pieces=BASIC_PIECES) -> bytes:
    """Pieces, then empty trainer and normalizer specs (all defaults), then ``extra``."""
    return b"".join(piece(*p) for p in pieces) + trainer() + normalizer() + b"".join(extra)


def trainer_order_model() -> bytes:
    """A small BPE model in the trainer's order: pieces, trainer_spec, normalizer_spec."""
    pieces = [("<unk>", 0.0, TokenType.UNKNOWN), ("<s>", 0.0, TokenType.CONTROL),
              ("▁a", -1.0, None), ("b", -2.5, None)]
    return (b"".join(piece(*p) for p in pieces)
            + trainer(int_field(3, 2), int_field(4, 4), int_field(40, 0), int_field(41, 1),
                      int_field(42, -1), int_field(43, -1), len_field(44, " ⁇ "))
            + normalizer(len_field(1, "identity"), int_field(3, 1), int_field(4, 0)))


def top_level_fields(data: bytes):
    """``(field number, start, end)`` of each top-level field (length-delimited only)."""
    pos, out = 0, []
    while pos < len(data):
        start = pos
        key, pos = read_varint(data, pos)
        assert key & 7 == 2
        size, pos = read_varint(data, pos)
        pos += size
        out.append((key >> 3, start, pos))
    return out


def read_varint(data: bytes, pos: int):
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def rejects(data: bytes, *fragments: str) -> VocabularyFileError:
    """Assert ``load_sentencepiece(data)`` raises VocabularyFileError mentioning every fragment."""
    with pytest.raises(VocabularyFileError) as info:
        load_sentencepiece(data)
    message = str(info.value)
    assert message.startswith("<bytes>: ")
    for fragment in fragments:
        assert fragment in message, message
    return info.value


# --------------------------------------------------------------------------
# Real files
# --------------------------------------------------------------------------

@requires_data
def test_every_model_file_is_in_the_provenance_table():
    assert sorted(p.name for p in SPM_DIR.glob("*.model")) == MODEL_FILES


@requires_data
@pytest.mark.parametrize("filename", MODEL_FILES)
def test_real_model_matches_provenance_table(filename):
    (model, n, norm, dummy, extra_ws, byte_fallback, split_digits,
     user_defined, control, ids, size) = PROVENANCE[filename]
    path = SPM_DIR / filename
    assert path.stat().st_size == size
    vocab = load_sentencepiece(path)
    assert vocab.model == model
    assert vocab.metadata["model_type"] == {"unigram": "UNIGRAM", "sentencepiece_bpe": "BPE"}[model]
    assert len(vocab.tokens) == len(vocab.scores) == len(vocab.token_types) == n
    assert vocab.metadata["vocab_size"] == n
    assert vocab.normalizer == norm
    assert vocab.add_dummy_prefix is dummy
    assert vocab.remove_extra_whitespaces is extra_ws
    assert vocab.escape_whitespaces is True
    assert vocab.byte_fallback is byte_fallback
    assert vocab.metadata["split_digits"] is split_digits
    assert (vocab.unk_id, vocab.bos_id, vocab.eos_id, vocab.pad_id) == ids
    assert vocab.byte_level is False and dict(vocab.special_tokens) == {}
    by_type = {kind: tuple(t.decode() for t, k in zip(vocab.tokens, vocab.token_types) if k == kind)
               for kind in (TokenType.USER_DEFINED, TokenType.CONTROL, TokenType.BYTE)}
    assert by_type[TokenType.USER_DEFINED] == user_defined
    assert by_type[TokenType.CONTROL] == control
    byte_pieces = tuple(f"<0x{b:02X}>" for b in range(256))
    assert by_type[TokenType.BYTE] == (byte_pieces if byte_fallback else ())
    # identity has an empty charsmap; every other normalizer embeds one (~240 KB)
    assert (vocab.precompiled_charsmap is None) == (norm == "identity")
    assert vocab.name == filename[:-len(".model")] and vocab.source == str(path)


@requires_data
@pytest.mark.parametrize("filename", MODEL_FILES)
def test_real_model_pieces_equal_sentencepiece_runtime(filename):
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor(model_file=str(SPM_DIR / filename))
    vocab = load_sentencepiece(SPM_DIR / filename)
    assert sp.get_piece_size() == len(vocab.tokens)
    for i, (token, score, kind) in enumerate(zip(vocab.tokens, vocab.scores, vocab.token_types)):
        assert (token.decode("utf-8"), score) == (sp.id_to_piece(i), sp.get_score(i)), i
        assert (kind == TokenType.CONTROL, kind == TokenType.UNKNOWN,
                kind == TokenType.UNUSED, kind == TokenType.BYTE) == (
            sp.is_control(i), sp.is_unknown(i), sp.is_unused(i), sp.is_byte(i)), i
    runtime_ids = tuple(None if x < 0 else x
                        for x in (sp.unk_id(), sp.bos_id(), sp.eos_id(), sp.pad_id()))
    assert (vocab.unk_id, vocab.bos_id, vocab.eos_id, vocab.pad_id) == runtime_ids


@requires_data
def test_real_model_pad_id_minus_one_is_a_ten_byte_varint():
    data = (SPM_DIR / "botchan_en_bpe_1000.model").read_bytes()
    # field 43 (pad_id), wire type 0, then -1 as ten bytes
    assert tag(43, 0) + bytes.fromhex("ffffffffffffffffff01") in data
    vocab = load_sentencepiece(data)
    assert vocab.metadata["trainer_pad_id"] == -1 and vocab.pad_id is None
    assert read_model_proto(data).trainer_spec.pad_id == -1


@requires_data
def test_real_model_user_defined_and_control_symbols_go_to_metadata():
    vocab = load_sentencepiece(SPM_DIR / "botchan_unigram_2000_userdef_cf.model")
    assert vocab.metadata["user_defined_symbols"] == ("<sep>", "<cls>", "[MASK]", "▁▁")
    assert vocab.metadata["control_symbols"] == ("<ctrl>",)
    assert vocab.metadata["trainer_pad_id"] == 3 and vocab.metadata["denormalizer_spec"] is None


@requires_data
def test_path_and_bytes_give_the_same_vocabulary():
    path = SPM_DIR / "botchan_unigram_4000_bytefallback.model"
    from_path = load_sentencepiece(path)
    from_bytes = load_sentencepiece(bytearray(path.read_bytes()), name=from_path.name)
    assert from_bytes.source == "<bytes>"
    assert from_bytes == load_sentencepiece(memoryview(path.read_bytes()), name=from_path.name)
    assert from_bytes.tokens == from_path.tokens and from_bytes.scores == from_path.scores
    assert from_bytes.precompiled_charsmap == from_path.precompiled_charsmap


@requires_data
def test_truncated_real_file_error_names_path_offset_and_field(tmp_path):
    data = (SPM_DIR / "botchan_en_bpe_1000.model").read_bytes()
    cut = tmp_path / "cut.model"
    cut.write_bytes(data[:5000])
    with pytest.raises(VocabularyFileError) as info:
        load_sentencepiece(cut)
    err = info.value
    assert str(err).startswith(f"{cut}: byte {err.offset}, field 'ModelProto.pieces")
    assert err.path == str(cut) and 0 <= err.offset < 5000


@requires_data
def test_random_byte_flips_of_real_model_raise_only_vocabulary_file_error():
    data = (SPM_DIR / "botchan_en_bpe_1000.model").read_bytes()
    # Most of this file is the 237 KB charsmap blob, where a flip only changes
    # bytes; aim most flips at the protobuf structure around it.
    charsmap = read_model_proto(data).normalizer_spec.precompiled_charsmap
    blob_at = data.index(charsmap)
    structure = [*range(0, blob_at + 4), *range(blob_at + len(charsmap), len(data))]
    rng = random.Random(20240531)
    outcomes = {"loaded": 0, "rejected": 0}
    cases = 2000
    for _ in range(cases):
        mutated = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 3))):
            pos = rng.choice(structure) if rng.random() < 0.85 else rng.randrange(len(data))
            mutated[pos] ^= rng.randrange(1, 256)
        try:
            vocab = load_sentencepiece(bytes(mutated))
        except VocabularyFileError as exc:
            assert exc.path == "<bytes>" and exc.problem
            outcomes["rejected"] += 1
        else:
            assert len(vocab.tokens) == len(vocab.scores) and vocab.unk_id is not None
            outcomes["loaded"] += 1
    assert sum(outcomes.values()) == cases
    assert outcomes["rejected"] > cases // 4  # the flips do reach the structure
    print(f"byte-flip fuzz: {cases} cases, {outcomes}")


# --------------------------------------------------------------------------
# Wire format, on small built models
# --------------------------------------------------------------------------

def test_small_model_maps_pieces_scores_and_types():
    vocab = load_sentencepiece(basic_model())
    assert vocab.tokens == (b"<unk>", b"<s>", b"</s>", "▁a".encode(), b"a", b"b")
    assert vocab.scores == (0.0, 0.0, 0.0, -1.5, -2.0, -3.25)
    assert vocab.token_types == (2, 3, 3, 1, 1, 1)
    assert (vocab.unk_id, vocab.bos_id, vocab.eos_id, vocab.pad_id) == (0, 1, 2, None)
    assert vocab.name == "sentencepiece" and vocab.source == "<bytes>"


def test_absent_fields_take_proto2_defaults():
    proto = read_model_proto(basic_model())
    spec = proto.trainer_spec
    assert (spec.model_type, spec.vocab_size, spec.max_sentencepiece_length) == (1, 8000, 16)
    assert (spec.unk_id, spec.bos_id, spec.eos_id, spec.pad_id) == (0, 1, 2, -1)
    assert spec.split_by_number and spec.split_by_unicode_script and spec.split_by_whitespace
    assert (spec.byte_fallback, spec.split_digits, spec.treat_whitespace_as_suffix,
            spec.allow_whitespace_only_pieces) == (False,) * 4
    assert spec.unk_surface == " \u2047 " and spec.pad_piece == "<pad>"
    norm = proto.normalizer_spec
    assert norm.add_dummy_prefix and norm.remove_extra_whitespaces and norm.escape_whitespaces
    assert proto.denormalizer_spec is None
    assert proto.pieces[4] == sentencepiece_model.SentencePiece("a", -2.0, TokenType.NORMAL)
    assert read_model_proto(piece("x")).pieces[0].score == 0.0


def test_empty_input_is_an_empty_model_proto_but_not_a_vocabulary():
    assert read_model_proto(b"") == sentencepiece_model.ModelProto()
    rejects(b"", "no pieces")


def test_negative_int32_reads_sign_correct_from_ten_and_five_byte_varints():
    ten = trainer(int_field(43, -1), int_field(42, -1))
    assert len(int_field(43, -1)) == 12
    five = trainer(tag(43, 0) + bytes.fromhex("ffffffff0f"))
    for spec in (ten, five):
        proto = read_model_proto(basic_model(spec))
        assert proto.trainer_spec.pad_id == -1
    vocab = load_sentencepiece(basic_model(ten))
    assert vocab.metadata["trainer_eos_id"] == -1 and vocab.pad_id is None


def test_negative_trainer_unk_id_is_reported_with_its_sign():
    err = rejects(basic_model(trainer(int_field(40, -5))), "unk_id -5")
    assert err.field == "ModelProto.trainer_spec.unk_id"


def test_unknown_fields_of_every_wire_type_are_skipped():
    unknown = (int_field(99, 12345) + tag(98, 1) + b"\x01" * 8 + len_field(97, b"\xff\x00junk")
               + tag(96, 5) + b"\x02" * 4 + int_field(200, 7) + len_field((1 << 29) - 1, b"x"))
    noisy_piece = len_field(1, len_field(1, "c") + unknown + float_field(2, -4.0) + int_field(3, 1))
    noisy = (unknown + trainer(unknown, int_field(4, 7)) + normalizer(unknown, len_field(1, "nfkc"))
             + basic_model() + noisy_piece + len_field(4, unknown))  # field 4: self_test_data
    vocab = load_sentencepiece(noisy)
    assert vocab.tokens[-1] == b"c" and vocab.scores[-1] == -4.0
    assert vocab.normalizer == "nfkc" and vocab.metadata["vocab_size"] == 7


def test_fixed32_score_decodes_as_float32():
    vocab = load_sentencepiece(basic_model(piece("z", 0.1)))
    assert vocab.scores[-1] == struct.unpack("<f", struct.pack("<f", 0.1))[0]


def test_repeated_sub_message_merges_field_by_field():
    data = basic_model(trainer(int_field(4, 10), int_field(25, 1)), normalizer(len_field(1, "a")),
                       trainer(int_field(4, 20)), normalizer(int_field(3, 0)))
    vocab = load_sentencepiece(data)
    assert vocab.metadata["vocab_size"] == 20 and vocab.metadata["split_digits"] is True
    assert vocab.normalizer == "a" and vocab.add_dummy_prefix is False


def test_repeated_string_fields_accumulate():
    data = basic_model(trainer(len_field(31, "<x>"), len_field(30, "<c>")),
                       trainer(len_field(31, "<y>")))
    assert read_model_proto(data).trainer_spec.user_defined_symbols == ("<x>", "<y>")


def test_denormalizer_spec_goes_to_metadata():
    blob = (4).to_bytes(4, "little") + b"\0\0\0\0" + b"x\0"
    denormalizer = normalizer(len_field(1, "denorm"), len_field(2, blob), number=5)
    vocab = load_sentencepiece(basic_model(denormalizer))
    spec = vocab.metadata["denormalizer_spec"]
    assert spec["name"] == "denorm" and spec["precompiled_charsmap"] == blob
    assert spec["add_dummy_prefix"] is True


def test_bpe_model_type_maps_to_sentencepiece_bpe():
    assert load_sentencepiece(basic_model(trainer(int_field(3, 2)))).model == "sentencepiece_bpe"


def test_control_ids_follow_the_runtime_piece_lookup():
    # The runtime finds bos by the text of bos_piece and keeps it only if CONTROL.
    data = basic_model(trainer(len_field(46, "</s>"), len_field(47, "a"), len_field(48, "<s>")))
    vocab = load_sentencepiece(data)
    assert (vocab.bos_id, vocab.eos_id, vocab.pad_id) == (2, None, 1)


# --------------------------------------------------------------------------
# Malformed input: always VocabularyFileError, with offset and field
# --------------------------------------------------------------------------

def test_truncation_at_every_offset_raises_vocabulary_file_error():
    data = trainer_order_model()
    assert load_sentencepiece(data).model == "sentencepiece_bpe"
    for cut in range(len(data)):
        with pytest.raises(VocabularyFileError) as info:
            load_sentencepiece(data[:cut])
        assert info.value.path == "<bytes>"
        assert info.value.offset is not None and info.value.offset <= cut, info.value
    print(f"truncation: {len(data)} cuts")


def test_truncated_piece_is_reported_at_its_length():
    data = basic_model(piece("z", -1.0))
    err = rejects(data[:-2], "runs past the end")  # the piece's length now overshoots
    assert err.field == "ModelProto.pieces" and err.offset == len(basic_model()) + 1


def test_short_score_names_the_piece_and_field():
    inner = len_field(1, len_field(1, "z") + tag(2, 5) + b"\x00\x00")
    err = rejects(basic_model(inner), "float needs 4 bytes")
    assert err.field == "ModelProto.pieces[6].score"
    assert err.offset == len(basic_model()) + 2 + 3 + 1  # after tag, length, "z" and score tag


@pytest.mark.parametrize("spec", ["trainer_spec", "normalizer_spec"])
def test_missing_spec_is_rejected_as_truncation(spec):
    data = b"".join(piece(*p) for p in BASIC_PIECES)
    data += normalizer() if spec == "trainer_spec" else trainer()
    err = rejects(data, f"no {spec}", "truncated")
    assert err.field == f"ModelProto.{spec}"


@requires_data
@pytest.mark.parametrize("filename", ["botchan_en_bpe_1000.model",
                                      "botchan_bpe_8000_bytefallback.model"])
def test_real_model_cut_between_fields_is_rejected(filename):
    data = (SPM_DIR / filename).read_bytes()
    fields = top_level_fields(data)
    assert [number for number, _, _ in fields[-2:]] == [2, 3]  # trainer_spec, normalizer_spec
    cuts = [end for _, _, end in fields[300:-2:97]] + [fields[-2][2]]  # ... and after trainer_spec
    for cut in cuts:
        rejects(data[:cut], "truncated")


def test_absurd_length_varints_are_rejected_before_slicing():
    for length in (1 << 31, 1 << 62, (1 << 64) - 1):
        rejects(tag(1, 2) + varint(length) + b"\x0a\x01a", f"length {length} runs past the end")
        rejects(basic_model(len_field(1, tag(1, 2) + varint(length))), "ModelProto.pieces[6].piece")


def test_eleven_byte_varint_is_rejected():
    err = rejects(basic_model(trainer(tag(4, 0) + b"\xff" * 10 + b"\x01")), "longer than 10 bytes")
    assert err.field == "ModelProto.trainer_spec.vocab_size"
    rejects(b"\xff" * 10 + b"\x01", "longer than 10 bytes", "field tag")


def test_ten_byte_varint_wider_than_64_bits_is_rejected():
    rejects(basic_model(trainer(tag(4, 0) + b"\xff" * 9 + b"\x7f")), "does not fit in 64 bits")


@pytest.mark.parametrize("wire", [3, 4])
def test_group_wire_types_are_rejected(wire):
    rejects(tag(9, wire) + basic_model(), "group")
    err = rejects(basic_model(len_field(1, len_field(1, "q") + tag(9, wire))), "group")
    assert err.field == "ModelProto.pieces[6].<field 9>"


@pytest.mark.parametrize("wire", [6, 7])
def test_invalid_wire_types_are_rejected(wire):
    rejects(basic_model(trainer(tag(77, wire))), f"invalid wire type {wire}")


def test_field_number_zero_is_rejected():
    rejects(b"\x00" + basic_model(), "invalid field number 0")


def test_known_field_with_wrong_wire_type_is_rejected():
    err = rejects(basic_model(len_field(1, len_field(1, "q") + int_field(2, 3))), "wire type 0")
    assert err.field == "ModelProto.pieces[6].score"
    rejects(basic_model(trainer(len_field(35, b"\x01"))), "trainer_spec.byte_fallback")


def test_truncated_fixed_width_unknown_fields_are_rejected():
    rejects(basic_model(tag(99, 1) + b"\x00" * 7), "needs 8 bytes")
    rejects(basic_model(tag(99, 5) + b"\x00" * 3), "needs 4 bytes")


def test_invalid_utf8_piece_is_rejected_at_its_byte():
    data = basic_model(piece(b"ok\xc3("))
    err = rejects(data, "not valid UTF-8")
    assert err.offset == len(basic_model()) + 4 + 2


@pytest.mark.parametrize("kind", [0, 7, -1, 1 << 31])
def test_unknown_piece_type_is_rejected(kind):
    rejects(basic_model(piece("q", 0.0, kind)), "is not a valid type")


@pytest.mark.parametrize("kind, name", [(3, "WORD"), (4, "CHAR")])
def test_word_and_char_models_are_unsupported(kind, name):
    err = rejects(basic_model(trainer(int_field(3, kind))), f"model_type {name} is not supported")
    assert err.field == "ModelProto.trainer_spec.model_type"
    proto = read_model_proto(basic_model(trainer(int_field(3, kind))))
    assert proto.trainer_spec.model_type == kind  # the parser itself keeps it


def test_unknown_model_type_is_rejected():
    rejects(basic_model(trainer(int_field(3, 9))), "9 is not a valid model_type")


def test_duplicate_piece_is_rejected():
    err = rejects(basic_model(piece("a", -9.0)), "'a' is already defined as id 4")
    assert err.field == "ModelProto.pieces[6].piece"


@pytest.mark.parametrize("text, problem", [("", "piece is empty"), ("a\0b", "NUL"),
                                           ("x" * 8000, "8000 bytes")])
def test_unusable_piece_text_is_rejected(text, problem):
    rejects(basic_model(piece(text)), problem)


def test_missing_piece_text_is_rejected():
    rejects(basic_model(len_field(1, float_field(2, -1.0))), "piece is empty")


def test_nan_score_is_rejected():
    rejects(basic_model(piece("q", math.nan)), "score is NaN")


def test_missing_unk_piece_is_rejected():
    rejects(basic_model(pieces=BASIC_PIECES[1:]), "no piece has type UNKNOWN")


def test_second_unk_piece_is_rejected():
    rejects(basic_model(piece("<unk2>", 0.0, TokenType.UNKNOWN)), "second UNKNOWN piece")


def byte_pieces(count: int, fmt: str = "<0x{:02X}>") -> bytes:
    return b"".join(piece(fmt.format(b), 0.0, TokenType.BYTE) for b in range(count))


def test_byte_fallback_model_with_all_256_byte_pieces_loads():
    vocab = load_sentencepiece(basic_model(trainer(int_field(35, 1)), byte_pieces(256)))
    assert vocab.byte_fallback and vocab.token_types.count(TokenType.BYTE) == 256


def test_byte_fallback_without_256_byte_pieces_is_rejected():
    rejects(basic_model(trainer(int_field(35, 1)), byte_pieces(255)), "255 of the 256")


def test_byte_piece_without_byte_fallback_is_rejected():
    rejects(basic_model(byte_pieces(1)), "without byte_fallback")


def test_malformed_byte_piece_is_rejected():
    rejects(basic_model(trainer(int_field(35, 1)), byte_pieces(256, "<0x{:02x}>")), "<0x0a>")


@pytest.mark.parametrize("field, number, value", [("unk_id", 40, 6), ("bos_id", 41, 99),
                                                   ("eos_id", 42, -2), ("pad_id", 43, 1 << 30)])
def test_trainer_ids_out_of_range_are_rejected(field, number, value):
    err = rejects(basic_model(trainer(int_field(number, value))), f"{field} {value} is")
    assert err.field == f"ModelProto.trainer_spec.{field}" and err.offset is not None


@pytest.mark.parametrize("blob, problem", [(b"\x04\x00", "2 byte(s)"),
                                           ((9).to_bytes(4, "little") + b"\0" * 12, "trie of 9"),
                                           ((64).to_bytes(4, "little") + b"\0" * 12, "trie of 64"),
                                           ((0).to_bytes(4, "little") + b"\0", "trie of 0")])
def test_broken_charsmap_header_is_rejected(blob, problem):
    err = rejects(basic_model(normalizer(len_field(2, blob))), problem)
    assert err.field == "ModelProto.normalizer_spec.precompiled_charsmap"


@pytest.mark.parametrize("head, hint", [(b"GGUF\x03\x00\x00\x00", "GGUF"),
                                        (b'{"model": {}}', "JSON"),
                                        (b"<unk>\t0\n<s>\t0\n", ".vocab")])
def test_other_file_formats_get_a_hint(head, hint):
    rejects(head, hint)


def test_missing_file_raises_vocabulary_file_error(tmp_path):
    with pytest.raises(VocabularyFileError, match="cannot read the file"):
        load_sentencepiece(tmp_path / "absent.model")


def test_random_garbage_is_refused_with_vocabulary_file_error():
    # under 48 random bytes are never a usable model: most are no protobuf,
    # and the rest lack the pieces a model needs
    rng = random.Random(7)
    for _ in range(1000):
        data = rng.randbytes(rng.randrange(0, 48))
        with pytest.raises(VocabularyFileError):
            load_sentencepiece(data)


def test_docstring_examples_run():
    result = doctest.testmod(sentencepiece_model)
    assert result.failed == 0 and result.attempted > 0


def test_charsmap_unit_pointing_outside_the_trie_is_rejected_at_its_byte():
    # one 256-unit block; unit 1 (bytes 8..11 of the blob) has offset 256,
    # so 1 ^ 256 lies past the trie
    blob = (8).to_bytes(4, "little") + (0).to_bytes(4, "little") + (256 << 10).to_bytes(4, "little")
    data = basic_model(normalizer(len_field(2, blob)))
    err = rejects(data, "trie unit 1 points outside the trie")
    assert err.field == "ModelProto.normalizer_spec.precompiled_charsmap"
    assert err.offset == data.index(blob) + 8
