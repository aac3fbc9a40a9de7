"""Read a SentencePiece ``.model`` file into a :class:`~fasttok.vocab.Vocabulary`.

A ``.model`` file is one serialized protobuf ``ModelProto`` (proto2, see
``docs/FORMATS.md``). fasttok has no runtime dependencies, so this module reads
the protobuf wire format itself; only five things are needed: varints,
length-delimited fields, fixed32 floats, and skipping fixed64 and unknown
fields.

Design notes (why it is written this way):

- **Hostile input is the normal case for a file reader.** Every length is
  checked against the bytes left in the *enclosing message* before anything is
  sliced, so a length of 2**63 costs one comparison, not a ``MemoryError``.
  Unknown fields are skipped by wire type without looking inside them, so the
  nesting depth is fixed by the schema (ModelProto -> SentencePiece /
  TrainerSpec / NormalizerSpec) and no input can make the reader recurse.
  Every problem becomes a :class:`~fasttok.errors.VocabularyFileError` naming
  the file, the byte offset and the field path, e.g.
  ``ModelProto.pieces[17].score``.
- **Stricter than protobuf where leniency would change tokenization.** The
  protobuf runtime files a known field that arrives with the wrong wire type,
  or an enum value it does not know, under "unknown fields" and keeps the
  default. Here both are errors: a real file never contains them, and quietly
  using a default (``byte_fallback=false``, piece type NORMAL) would produce a
  tokenizer that disagrees with ``sentencepiece`` without saying so. Varints
  longer than 10 bytes or wider than 64 bits are rejected for the same reason.
  Strings must be valid UTF-8: protobuf-lite does not check, but no
  normalized text can ever match such a piece, and the ``sentencepiece``
  Python API itself raises ``UnicodeDecodeError`` on ``id_to_piece`` for one.
  (Fuzzing showed these are the only files ``sentencepiece`` loads and this
  reader refuses.)
- **A cut between two fields is still caught.** The trainer writes pieces
  first, then ``trainer_spec`` and ``normalizer_spec``, and the wire format
  cannot tell a file cut after some piece from a whole one. Requiring both
  specs (every trainer writes them) turns that into an error instead of a
  silently smaller Unigram model with default normalization.
- **Repeated singular fields merge**, as protobuf defines it: the last scalar
  wins and a sub-message seen twice is merged field by field.
- **Ids follow the runtime, not the trainer's record.** ``SentencePieceProcessor``
  finds bos/eos/pad by looking up ``bos_piece`` etc. and keeps the id only if
  that piece is CONTROL; unk is the one UNKNOWN piece. ``trainer_spec.*_id`` is
  what the trainer *asked for*; it is kept in ``metadata`` and must at least be
  in range.
- **WORD and CHAR models are rejected** with a clear error: fasttok has one
  Unigram (Viterbi) and one score-driven BPE implementation, and emulating the
  other two through them would not be exact for every input.

Rejected alternative: decoding with the generated ``sentencepiece_model_pb2``
would need the ``protobuf`` package at run time and still would not give byte
offsets in error messages.

>>> m = read_model_proto(b"\\n\\t\\n\\x05<unk>\\x18\\x02")
>>> m.pieces
(SentencePiece(piece='<unk>', score=0.0, type=2),)
>>> load_sentencepiece(b"\\n\\t\\n\\x05<unk>\\x18\\x02"  # one piece: <unk>
...                    b"\\x12\\x00\\x1a\\x00").model     # empty trainer and normalizer specs
'unigram'
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import struct
from types import MappingProxyType
from typing import Optional, Union

from fasttok.errors import VocabularyError, VocabularyFileError
from fasttok.loaders.sniff import looks_like_model_proto
from fasttok.vocab import TokenType, Vocabulary

__all__ = [
    "ModelProto",
    "NormalizerSpec",
    "SentencePiece",
    "TrainerSpec",
    "load_sentencepiece",
    "looks_like_model_proto",
    "read_model_proto",
]

PathOrBytes = Union[str, "os.PathLike[str]", "os.PathLike[bytes]", bytes, bytearray, memoryview]


# --------------------------------------------------------------------------
# The parsed messages. Defaults are the proto2 defaults of
# sentencepiece_model.proto, so an absent field reads as the runtime sees it.
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class SentencePiece:
    """One ``ModelProto.SentencePiece``; its id is its index in ``pieces``.

    ``type`` uses the :class:`~fasttok.vocab.TokenType` numbering.

    >>> SentencePiece("▁the", -3.5).type == TokenType.NORMAL
    True
    """

    piece: str
    score: float = 0.0
    type: int = TokenType.NORMAL


@dataclasses.dataclass(frozen=True, slots=True)
class TrainerSpec:
    """The ``TrainerSpec`` fields that matter after training.

    Training-only fields (input files, thread counts, ...) are skipped.
    ``model_type`` is the proto enum: 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR.

    >>> TrainerSpec().pad_id, TrainerSpec().unk_surface
    (-1, ' ⁇ ')
    """

    model_type: int = 1
    vocab_size: int = 8000
    byte_fallback: bool = False
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False
    split_digits: bool = False
    split_by_number: bool = True
    split_by_unicode_script: bool = True
    split_by_whitespace: bool = True
    max_sentencepiece_length: int = 16
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    unk_surface: str = " \u2047 "
    control_symbols: tuple = ()
    user_defined_symbols: tuple = ()


@dataclasses.dataclass(frozen=True, slots=True)
class NormalizerSpec:
    """A ``NormalizerSpec`` (used for both the normalizer and the denormalizer).

    The runtime normalizes with ``precompiled_charsmap`` alone; ``name`` only
    records which rule set it was compiled from.

    >>> NormalizerSpec().add_dummy_prefix
    True
    """

    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    normalization_rule_tsv: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class ModelProto:
    """A parsed ``.model`` file. ``self_test_data`` is not kept.

    ``denormalizer_spec`` is ``None`` when the file has none, because the
    runtime only builds a denormalizer when the field is present.

    >>> ModelProto().trainer_spec.model_type
    1
    """

    pieces: tuple = ()
    trainer_spec: TrainerSpec = TrainerSpec()
    normalizer_spec: NormalizerSpec = NormalizerSpec()
    denormalizer_spec: Optional[NormalizerSpec] = None


# --------------------------------------------------------------------------
# Schema: field number -> (name, kind). The kind fixes the wire type, so a
# known field arriving with another wire type is an error (see module notes).
# --------------------------------------------------------------------------

_VARINT, _FIXED64, _LEN, _GROUP_START, _GROUP_END, _FIXED32 = 0, 1, 2, 3, 4, 5

_WIRE_NAMES = {0: "varint", 1: "fixed64", 2: "length-delimited", 3: "start-group",
               4: "end-group", 5: "fixed32", 6: "invalid (6)", 7: "invalid (7)"}

# kind -> wire type it must arrive with
_STRING, _BYTES, _BOOL, _INT32, _FLOAT, _STRINGS, _MESSAGE, _MESSAGES, _IGNORED = range(9)
_KIND_WIRE = {_STRING: _LEN, _BYTES: _LEN, _BOOL: _VARINT, _INT32: _VARINT,
              _FLOAT: _FIXED32, _STRINGS: _LEN, _MESSAGE: _LEN, _MESSAGES: _LEN,
              _IGNORED: _LEN}

_PIECE_FIELDS = {
    1: ("piece", _STRING),
    2: ("score", _FLOAT),
    3: ("type", _INT32),
}

_TRAINER_FIELDS = {
    3: ("model_type", _INT32),
    4: ("vocab_size", _INT32),
    20: ("max_sentencepiece_length", _INT32),
    21: ("split_by_unicode_script", _BOOL),
    22: ("split_by_whitespace", _BOOL),
    23: ("split_by_number", _BOOL),
    24: ("treat_whitespace_as_suffix", _BOOL),
    25: ("split_digits", _BOOL),
    26: ("allow_whitespace_only_pieces", _BOOL),
    30: ("control_symbols", _STRINGS),
    31: ("user_defined_symbols", _STRINGS),
    35: ("byte_fallback", _BOOL),
    40: ("unk_id", _INT32),
    41: ("bos_id", _INT32),
    42: ("eos_id", _INT32),
    43: ("pad_id", _INT32),
    44: ("unk_surface", _STRING),
    45: ("unk_piece", _STRING),
    46: ("bos_piece", _STRING),
    47: ("eos_piece", _STRING),
    48: ("pad_piece", _STRING),
}

_NORMALIZER_FIELDS = {
    1: ("name", _STRING),
    2: ("precompiled_charsmap", _BYTES),
    3: ("add_dummy_prefix", _BOOL),
    4: ("remove_extra_whitespaces", _BOOL),
    5: ("escape_whitespaces", _BOOL),
    6: ("normalization_rule_tsv", _STRING),
}

_MODEL_FIELDS = {
    1: ("pieces", _MESSAGES),
    2: ("trainer_spec", _MESSAGE),
    3: ("normalizer_spec", _MESSAGE),
    4: ("self_test_data", _IGNORED),
    5: ("denormalizer_spec", _MESSAGE),
}

# sub-message schemas of ModelProto
_SUBSCHEMA = {"pieces": _PIECE_FIELDS, "trainer_spec": _TRAINER_FIELDS,
              "normalizer_spec": _NORMALIZER_FIELDS, "denormalizer_spec": _NORMALIZER_FIELDS}

# enum fields and the values the proto defines for them
_ENUMS = {
    "type": {1: "NORMAL", 2: "UNKNOWN", 3: "CONTROL", 4: "USER_DEFINED", 5: "UNUSED", 6: "BYTE"},
    "model_type": {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"},
}

_PIECE_TYPES = frozenset(_ENUMS["type"])
_MAX_FIELD_NUMBER = (1 << 29) - 1
_FLOAT32 = struct.Struct("<f")

# What the first bytes look like when someone passes the wrong file; used only
# to make the error message say what to do instead.
_OTHER_FORMATS = (
    (b"GGUF", "a GGUF file; load it with the GGUF loader"),
    (b"{", "JSON (a tokenizer.json?); load it with the tokenizer.json loader"),
    (b"<unk>\t", "the text .vocab listing the trainer writes next to the .model; "
                 "pass the .model"),
)


# --------------------------------------------------------------------------
# Wire-format reader
# --------------------------------------------------------------------------

class _Reader:
    """Decodes one buffer; remembers where each field was for later errors."""

    def __init__(self, data: bytes, source: str) -> None:
        self.buf = data
        self.source = source
        # "ModelProto.trainer_spec.unk_id" -> offset of its (last) value, and
        # the start of each piece message, so that checks made after parsing
        # can still point at bytes.
        self.where: dict = {}
        self.piece_offsets: list = []
        # ModelProto.pieces as three columns; the loader needs nothing more,
        # and one object per piece would double the time for large models.
        self.texts: list = []
        self.scores: list = []
        self.types: list = []

    def fail(self, problem: str, offset: int, field: str) -> VocabularyFileError:
        return VocabularyFileError(self.source, problem, offset=offset, field=field)

    def varint(self, pos: int, end: int, field: str) -> tuple:
        """Return ``(value, next_pos)`` for the varint at ``pos``; at most 10 bytes."""
        buf = self.buf
        result = 0
        shift = 0
        start = pos
        while True:
            if pos >= end:
                raise self.fail(f"truncated varint: the data ends after {pos - start} byte(s) "
                                "with the continuation bit still set" if pos > start else
                                "truncated: a varint was expected but no bytes are left",
                                start, field)
            byte = buf[pos]
            pos += 1
            if shift == 63:
                # The 10th byte may only carry bit 63; anything else is not a
                # 64-bit value (protobuf writes at most 10 bytes).
                if byte & 0x80:
                    raise self.fail("varint is longer than 10 bytes", start, field)
                if byte > 1:
                    raise self.fail("varint does not fit in 64 bits", start, field)
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result, pos
            shift += 7

    def length(self, pos: int, end: int, field: str) -> tuple:
        """Read a length prefix and check it against what is left before ``end``."""
        n, body = self.varint(pos, end, field)
        if n > end - body:
            raise self.fail(f"length {n} runs past the end of the enclosing data "
                            f"({end - body} byte(s) left)", pos, field)
        return n, body

    def skip(self, pos: int, end: int, wire: int, field: str, tag_at: int) -> int:
        """Skip the value of an unknown field, by its wire type."""
        if wire == _VARINT:
            return self.varint(pos, end, field)[1]
        if wire == _LEN:
            n, body = self.length(pos, end, field)
            return body + n
        if wire == _FIXED64 or wire == _FIXED32:
            size = 8 if wire == _FIXED64 else 4
            if end - pos < size:
                raise self.fail(f"truncated: {_WIRE_NAMES[wire]} value needs {size} bytes, "
                                f"{end - pos} left", pos, field)
            return pos + size
        if wire in (_GROUP_START, _GROUP_END):
            raise self.fail(f"wire type {wire} ({_WIRE_NAMES[wire]}) is a protobuf group, "
                            "which SentencePiece files never contain", tag_at, field)
        raise self.fail(f"invalid wire type {wire}", tag_at, field)

    def message(self, start: int, end: int, schema: dict, path: str, values: dict,
                record: bool = True) -> dict:
        """Decode fields in ``[start, end)`` into ``values`` (merging, as protobuf does).

        Pieces are not put in ``values`` but appended to the columns
        :attr:`texts`, :attr:`scores` and :attr:`types`. ``record`` keeps each
        field's offset in :attr:`where` (pieces skip it: tens of thousands of
        entries nobody looks up).
        """
        buf = self.buf
        top = schema is _MODEL_FIELDS
        pos = start
        while pos < end:
            tag_at = pos
            tag = buf[pos]
            if tag == 0x0A and top and pos + 1 < end and buf[pos + 1] < 0x80 \
                    and buf[pos + 1] <= end - pos - 2:
                # ModelProto.pieces with a one-byte length: all but the longest
                # pieces, and thousands of them, so skip the generic dispatch.
                body = pos + 2
                pos = body + buf[pos + 1]
                self.piece_offsets.append(tag_at)
                if not self.plain_piece(body, pos):
                    self.odd_piece(body, pos)
                continue
            if tag < 0x80:
                pos += 1
            else:
                tag, pos = self.varint(pos, end, f"{path} (field tag)")
            number = tag >> 3
            wire = tag & 7
            if number == 0 or number > _MAX_FIELD_NUMBER:
                raise self.fail(f"invalid field number {number} in tag {tag:#x}",
                                tag_at, f"{path} (field tag)")
            spec = schema.get(number)
            if spec is None:
                pos = self.skip(pos, end, wire, f"{path}.<field {number}>", tag_at)
                continue
            name, kind = spec
            field = path + "." + name
            if wire != _KIND_WIRE[kind]:
                raise self.fail(f"wire type {wire} ({_WIRE_NAMES[wire]}) for a field that must be "
                                f"{_WIRE_NAMES[_KIND_WIRE[kind]]}", tag_at, field)
            value_at = pos
            if kind == _INT32 or kind == _BOOL:
                if pos < end and buf[pos] < 0x80:
                    value = buf[pos]
                    pos += 1
                else:
                    value, pos = self.varint(pos, end, field)
                if kind == _BOOL:
                    value = value != 0
                else:
                    # int32 and enums: protobuf keeps the low 32 bits, so -1
                    # written as a 10-byte varint (or as 5 bytes) reads as -1.
                    value &= 0xFFFFFFFF
                    if value >= 0x80000000:
                        value -= 0x100000000
                    allowed = _ENUMS.get(name)
                    if allowed is not None and value not in allowed:
                        raise self.fail(f"{value} is not a valid {name}; expected one of "
                                        + ", ".join(f"{k} ({v})" for k, v in allowed.items()),
                                        value_at, field)
                values[name] = value
            elif kind == _FLOAT:
                if end - pos < 4:
                    raise self.fail(f"truncated: a float needs 4 bytes, {end - pos} left",
                                    pos, field)
                values[name] = _FLOAT32.unpack_from(buf, pos)[0]
                pos += 4
            else:
                n, body = self.length(pos, end, field)
                pos = body + n
                if kind == _STRING or kind == _STRINGS:
                    try:
                        text = buf[body:pos].decode("utf-8")
                    except UnicodeDecodeError as exc:
                        raise self.fail(f"string is not valid UTF-8 ({exc.reason})",
                                        body + exc.start, field) from None
                    if kind == _STRING:
                        values[name] = text
                    else:
                        values.setdefault(name, []).append(text)
                elif kind == _BYTES:
                    values[name] = buf[body:pos]
                elif kind == _MESSAGES:  # pieces with a longer length prefix
                    self.piece_offsets.append(tag_at)
                    if not self.plain_piece(body, pos):
                        self.odd_piece(body, pos)
                elif kind == _MESSAGE:
                    # A second occurrence merges into the first.
                    self.message(body, pos, _SUBSCHEMA[name], field, values.setdefault(name, {}))
                # _IGNORED: self_test_data, already skipped by its length
            if record:
                self.where[field] = value_at
        return values

    def plain_piece(self, start: int, end: int) -> bool:
        """Decode a piece laid out as every trainer writes it; ``False`` if it is not.

        The layout: piece (1-byte length), optional score, optional 1-byte
        type, in that order and nothing else. Anything unusual, including every
        error, goes through :meth:`odd_piece`, which reports it properly.
        """
        buf = self.buf
        if end - start < 2 or buf[start] != 0x0A:
            return False
        n = buf[start + 1]
        pos = start + 2 + n
        if n >= 0x80 or pos > end:
            return False
        try:
            text = buf[start + 2:pos].decode("utf-8")
        except UnicodeDecodeError:
            return False
        score = 0.0
        if end - pos >= 5 and buf[pos] == 0x15:
            score = _FLOAT32.unpack_from(buf, pos + 1)[0]
            pos += 5
        kind = TokenType.NORMAL
        if end - pos >= 2 and buf[pos] == 0x18 and buf[pos + 1] in _PIECE_TYPES:
            kind = buf[pos + 1]
            pos += 2
        if pos != end:
            return False
        self.texts.append(text)
        self.scores.append(score)
        self.types.append(kind)
        return True

    def odd_piece(self, start: int, end: int) -> None:
        """Decode a piece through the generic reader (any field order, errors)."""
        fields = self.message(start, end, _PIECE_FIELDS,
                              f"ModelProto.pieces[{len(self.texts)}]", {}, record=False)
        self.texts.append(fields.get("piece", ""))
        self.scores.append(fields.get("score", 0.0))
        self.types.append(fields.get("type", TokenType.NORMAL))


def _read_input(path_or_bytes: PathOrBytes) -> tuple:
    """Return ``(data, source label, default vocabulary name)``."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes), "<bytes>", "sentencepiece"
    try:
        path = os.fspath(path_or_bytes)
    except TypeError:
        raise TypeError("expected a path or the bytes of a .model file, got "
                        f"{type(path_or_bytes).__name__}") from None
    label = os.fsdecode(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise VocabularyFileError(label, f"cannot read the file: {exc.strerror or exc}; "
                                  "check the path") from exc
    stem = os.path.basename(label)
    if stem.endswith(".model"):
        stem = stem[:-len(".model")]
    return data, label, stem or "sentencepiece"


def _parse(data: bytes, source: str) -> tuple:
    """Return ``(ModelProto without its pieces, reader holding the piece columns)``."""
    reader = _Reader(data, source)
    try:
        fields = reader.message(0, len(data), _MODEL_FIELDS, "ModelProto", {})
    except VocabularyFileError as exc:
        for magic, what in _OTHER_FORMATS:
            if data.startswith(magic):
                raise VocabularyFileError(
                    source, f"{exc.problem}; this looks like {what}",
                    offset=exc.offset, field=exc.field) from None
        raise
    trainer = fields.get("trainer_spec", {})
    for name in ("control_symbols", "user_defined_symbols"):
        if name in trainer:
            trainer[name] = tuple(trainer[name])
    denormalizer = fields.get("denormalizer_spec")
    proto = ModelProto(
        trainer_spec=TrainerSpec(**trainer),
        normalizer_spec=NormalizerSpec(**fields.get("normalizer_spec", {})),
        denormalizer_spec=None if denormalizer is None else NormalizerSpec(**denormalizer),
    )
    return proto, reader


def read_model_proto(path_or_bytes: PathOrBytes) -> ModelProto:
    """Parse a SentencePiece ``.model`` file (path or bytes) into a :class:`ModelProto`.

    Only the wire format and the field types are checked here (lengths, UTF-8,
    enum values); :func:`load_sentencepiece` also checks that the pieces make a
    usable vocabulary. An empty input is a valid, empty ``ModelProto``.

    >>> read_model_proto(b"\\x12\\x02\\x18\\x02").trainer_spec.model_type  # BPE
    2
    >>> read_model_proto(b"\\x12\\x01\\x18")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: <bytes>: byte 3, field 'ModelProto.trainer_spec.model_type': truncated: a varint was expected but no bytes are left
    """
    data, source, _ = _read_input(path_or_bytes)
    proto, reader = _parse(data, source)
    pieces = tuple(map(SentencePiece, reader.texts, reader.scores, reader.types))
    return dataclasses.replace(proto, pieces=pieces)


# --------------------------------------------------------------------------
# ModelProto -> Vocabulary
# --------------------------------------------------------------------------

# TrainerSpec.ModelType -> fasttok model name (the registry maps these to the
# compiled model classes).
_MODELS = {1: "unigram", 2: "sentencepiece_bpe"}

# Vocabulary id field -> (TrainerSpec piece field, runtime default text).
# SentencePieceProcessor::bos_id() etc. look the piece up by text and keep the
# id only when that piece is CONTROL.
_CONTROL_IDS = (
    ("bos_id", "bos_piece", "<s>"),
    ("eos_id", "eos_piece", "</s>"),
    ("pad_id", "pad_piece", "<pad>"),
)

_BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")

# sentencepiece refuses pieces this long (model_interface.cc, kMaxPieceSize)
_MAX_PIECE_BYTES = 8000

# TrainerSpec fields copied into Vocabulary.metadata unchanged
_TRAINER_METADATA = (
    "vocab_size", "treat_whitespace_as_suffix", "allow_whitespace_only_pieces",
    "split_digits", "split_by_number", "split_by_unicode_script", "split_by_whitespace",
    "max_sentencepiece_length", "unk_surface", "unk_piece", "bos_piece", "eos_piece",
    "pad_piece", "control_symbols", "user_defined_symbols",
)


def _spec_mapping(spec: NormalizerSpec) -> MappingProxyType:
    return MappingProxyType(dataclasses.asdict(spec))


def load_sentencepiece(path_or_bytes: PathOrBytes, *, name: Optional[str] = None) -> Vocabulary:
    """Load a SentencePiece ``.model`` file (path or bytes) as a :class:`Vocabulary`.

    ``tokens`` are the UTF-8 bytes of every piece (``▁`` kept, control pieces
    included, id = position); ``token_types`` say which are CONTROL, BYTE, etc.
    ``special_tokens`` is empty: SentencePiece matches no control piece in
    input text, and user-defined symbols are handled through their type.
    ``name`` defaults to the file name without ``.model``.

    Raises :class:`~fasttok.errors.VocabularyFileError` (a ``ValueError``) for
    a truncated or malformed file (including one without ``trainer_spec`` or
    ``normalizer_spec``), a WORD or CHAR model, duplicate or empty
    pieces, a missing or repeated unk piece, an incomplete set of ``<0xXX>``
    byte pieces, or trainer ids out of range.

    >>> v = load_sentencepiece(b"\\n\\t\\n\\x05<unk>\\x18\\x02"
    ...                        b"\\n\\x0b\\n\\x04\\xe2\\x96\\x81a\\x15\\x00\\x00\\x80\\xbf"
    ...                        b"\\x12\\x00\\x1a\\x00")
    >>> v.tokens, v.scores, v.unk_id, v.bos_id
    ((b'<unk>', b'\\xe2\\x96\\x81a'), (0.0, -1.0), 0, None)
    """
    data, source, default_name = _read_input(path_or_bytes)
    proto, reader = _parse(data, source)
    return _to_vocabulary(proto, reader, name or default_name)


def _to_vocabulary(proto: ModelProto, reader: _Reader, name: str) -> Vocabulary:
    source = reader.source
    trainer = proto.trainer_spec
    normalizer = proto.normalizer_spec

    def trainer_error(problem: str, field: str) -> VocabularyFileError:
        path = f"ModelProto.trainer_spec.{field}"
        return VocabularyFileError(source, problem, offset=reader.where.get(path), field=path)

    def piece_error(i: int, problem: str, field: str = "piece") -> VocabularyFileError:
        return VocabularyFileError(source, problem, offset=reader.piece_offsets[i],
                                   field=f"ModelProto.pieces[{i}].{field}")

    model = _MODELS.get(trainer.model_type)
    if model is None:
        kind = _ENUMS["model_type"][trainer.model_type]
        raise trainer_error(f"model_type {kind} is not supported; fasttok reads UNIGRAM and BPE "
                            "SentencePiece models only", "model_type")

    texts, scores, types = reader.texts, reader.scores, reader.types
    n = len(texts)
    if not n:
        raise VocabularyFileError(source, "the model has no pieces; is this a SentencePiece .model "
                                  "file?", offset=0, field="ModelProto.pieces")
    # The wire format cannot tell a file cut between two fields from a whole
    # one. The trainer writes pieces first, then trainer_spec, then
    # normalizer_spec; without this check a BPE file cut after any piece would
    # load as a Unigram model with default normalization.
    for spec in ("trainer_spec", "normalizer_spec"):
        if f"ModelProto.{spec}" not in reader.where:
            raise VocabularyFileError(
                source, f"the file has no {spec}; every SentencePiece trainer writes one after "
                "the pieces, so the file is probably truncated", offset=len(reader.buf),
                field=f"ModelProto.{spec}")

    # Whole-column checks first (cheap); the loop below only runs to find
    # which piece is at fault.
    tokens = [text.encode("utf-8") for text in texts]
    ids = dict(zip(texts, range(n)))
    if (len(ids) != n or "" in ids or any("\0" in text for text in texts)
            or max(map(len, tokens)) >= _MAX_PIECE_BYTES or any(x != x for x in scores)):
        seen: dict = {}
        for i, text in enumerate(texts):
            if not text:
                raise piece_error(i, "piece is empty")
            if "\0" in text:
                raise piece_error(i, f"piece {text!r} contains a NUL character")
            if len(tokens[i]) >= _MAX_PIECE_BYTES:
                raise piece_error(i, f"piece is {len(tokens[i])} bytes long; sentencepiece "
                                     f"refuses pieces of {_MAX_PIECE_BYTES} bytes or more")
            if math.isnan(scores[i]):
                raise piece_error(i, "score is NaN", "score")
            first = seen.setdefault(text, i)
            if first != i:
                raise piece_error(i, f"piece {text!r} is already defined as id {first}")

    unknown = [i for i, kind in enumerate(types) if kind == TokenType.UNKNOWN]
    if not unknown:
        raise VocabularyFileError(source, "no piece has type UNKNOWN; sentencepiece needs "
                                  "exactly one unk piece", field="ModelProto.pieces")
    if len(unknown) > 1:
        raise piece_error(unknown[1], f"a second UNKNOWN piece ({texts[unknown[1]]!r}); id "
                                      f"{unknown[0]} is already the unk piece", "type")
    unk_id = unknown[0]
    byte_ids = [i for i, kind in enumerate(types) if kind == TokenType.BYTE]
    for i in byte_ids:
        if not trainer.byte_fallback:
            raise piece_error(i, f"BYTE piece {texts[i]!r} in a model without byte_fallback",
                              "type")
        if _BYTE_PIECE.fullmatch(texts[i]) is None:
            raise piece_error(i, f"BYTE piece {texts[i]!r} is not of the form <0xXX> "
                                 "(two upper-case hex digits)")
    # byte pieces are distinct because all texts are
    if trainer.byte_fallback and len(byte_ids) != 256:
        raise trainer_error(f"byte_fallback is set but the model has {len(byte_ids)} of the 256 "
                            "<0xXX> byte pieces", "byte_fallback")

    # Only ids the file states are checked: a file without them gets the
    # proto defaults 0/1/2/-1, which need not fit a small model, and the
    # runtime never reads them anyway.
    for field, lowest in (("unk_id", 0), ("bos_id", -1), ("eos_id", -1), ("pad_id", -1)):
        value = getattr(trainer, field)
        if f"ModelProto.trainer_spec.{field}" in reader.where and not lowest <= value < n:
            unused = "" if lowest == 0 else "neither -1 (unused) nor "
            raise trainer_error(f"{field} {value} is {unused}an id of this model "
                                f"(0..{n - 1})", field)

    control_ids = {}
    for field, piece_field, default in _CONTROL_IDS:
        found = ids.get(getattr(trainer, piece_field) or default)
        control_ids[field] = (found if found is not None
                              and types[found] == TokenType.CONTROL else None)

    metadata = {field: getattr(trainer, field) for field in _TRAINER_METADATA}
    metadata.update(
        model_type=_ENUMS["model_type"][trainer.model_type],
        trainer_unk_id=trainer.unk_id,
        trainer_bos_id=trainer.bos_id,
        trainer_eos_id=trainer.eos_id,
        trainer_pad_id=trainer.pad_id,
        normalization_rule_tsv=normalizer.normalization_rule_tsv,
        denormalizer_spec=(None if proto.denormalizer_spec is None
                           else _spec_mapping(proto.denormalizer_spec)),
    )

    for spec_name, spec in (("normalizer_spec", normalizer),
                            ("denormalizer_spec", proto.denormalizer_spec)):
        if spec is not None and spec.precompiled_charsmap:
            _check_charsmap(spec.precompiled_charsmap, reader,
                            f"ModelProto.{spec_name}.precompiled_charsmap")
    charsmap = normalizer.precompiled_charsmap

    try:
        return Vocabulary(
            name=name,
            model=model,
            tokens=tokens,
            scores=tuple(scores),
            token_types=tuple(types),
            special_tokens={},
            normalizer=normalizer.name or None,
            precompiled_charsmap=charsmap or None,
            add_dummy_prefix=normalizer.add_dummy_prefix,
            remove_extra_whitespaces=normalizer.remove_extra_whitespaces,
            escape_whitespaces=normalizer.escape_whitespaces,
            byte_fallback=trainer.byte_fallback,
            unk_id=unk_id,
            byte_level=False,
            source=source,
            metadata=metadata,
            **control_ids,
        ).validate()
    except VocabularyError as exc:  # the checks above should make this unreachable
        raise VocabularyFileError(source, str(exc)) from exc


def _check_charsmap(blob: bytes, reader: _Reader, field: str) -> None:
    """Refuse a charsmap the normalizer would refuse, naming the byte at fault.

    The checks (framing, every trie unit pointing inside the trie) are the
    compiled normalizer's own, so the loader and the model cannot disagree.
    """
    from fasttok.shared._charsmap import CharsmapError, check_charsmap

    try:
        check_charsmap(blob)
    except CharsmapError as exc:
        # where[] holds the offset of the field's length prefix; the blob follows it
        _, body = reader.varint(reader.where[field], len(reader.buf), field)
        raise VocabularyFileError(reader.source, exc.problem, offset=body + exc.offset,
                                  field=field) from None
