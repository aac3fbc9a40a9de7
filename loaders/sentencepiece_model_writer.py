"""Write a SentencePiece ``.model`` file: a :class:`ModelProto` as protobuf bytes.

The inverse of :func:`~fasttok.loaders.sentencepiece_model.read_model_proto`
for the fields that module keeps, in the order sentencepiece's trainer writes
them (pieces, then ``trainer_spec``, then ``normalizer_spec``). Each field is
written whether or not it holds its proto default: the reader and
sentencepiece then never depend on which defaults the two agree on, and a
file cut after the pieces is still caught by the reader. Standard library
only, like every reader.

>>> from fasttok.loaders.sentencepiece_model import ModelProto, SentencePiece, read_model_proto
>>> proto = ModelProto(pieces=(SentencePiece("<unk>", 0.0, 2), SentencePiece("▁a", -1.5)))
>>> read_model_proto(write_model_proto(proto)) == proto
True
"""

from __future__ import annotations

import dataclasses
import os
import struct
from typing import Union

from fasttok.errors import VocabularyError
from fasttok.loaders.sentencepiece_model import ModelProto, NormalizerSpec, SentencePiece, TrainerSpec
from fasttok.shared.atomic_write import write_atomically

__all__ = ["write_model_proto", "dump_model_proto"]

_VARINT, _LEN, _FIXED32 = 0, 2, 5

# TrainerSpec field -> number, in field-number order (sentencepiece_model.proto)
_TRAINER_NUMBERS = {
    "model_type": 3, "vocab_size": 4, "max_sentencepiece_length": 20,
    "split_by_unicode_script": 21, "split_by_whitespace": 22, "split_by_number": 23,
    "treat_whitespace_as_suffix": 24, "split_digits": 25, "allow_whitespace_only_pieces": 26,
    "control_symbols": 30, "user_defined_symbols": 31, "byte_fallback": 35,
    "unk_id": 40, "bos_id": 41, "eos_id": 42, "pad_id": 43, "unk_surface": 44,
    "unk_piece": 45, "bos_piece": 46, "eos_piece": 47, "pad_piece": 48,
}

_NORMALIZER_NUMBERS = {
    "name": 1, "precompiled_charsmap": 2, "add_dummy_prefix": 3,
    "remove_extra_whitespaces": 4, "escape_whitespaces": 5, "normalization_rule_tsv": 6,
}


def _varint(value: int) -> bytes:
    # int32 fields are sign-extended to 64 bits, as protobuf writes -1
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _length_delimited(number: int, payload: bytes) -> bytes:
    return _key(number, _LEN) + _varint(len(payload)) + payload


def _field(number: int, value: object) -> bytes:
    if isinstance(value, bool) or isinstance(value, int):
        return _key(number, _VARINT) + _varint(int(value))
    if isinstance(value, str):
        return _length_delimited(number, value.encode("utf-8"))
    if isinstance(value, (bytes, bytearray)):
        return _length_delimited(number, bytes(value))
    if isinstance(value, tuple):
        return b"".join(_field(number, item) for item in value)
    raise TypeError(f"no protobuf encoding for {type(value).__name__}")


def _message(spec: object, numbers: dict) -> bytes:
    return b"".join(_field(numbers[name], getattr(spec, name)) for name in numbers)


def _piece(piece: SentencePiece) -> bytes:
    if not isinstance(piece.piece, str) or not piece.piece:
        raise VocabularyError(f"piece {piece.piece!r} must be a non-empty str")
    return (_field(1, piece.piece) + _key(2, _FIXED32) + struct.pack("<f", piece.score)
            + _field(3, int(piece.type)))


def write_model_proto(proto: ModelProto) -> bytes:
    """The ``.model`` bytes of ``proto`` (``denormalizer_spec`` too when set).

    >>> write_model_proto(ModelProto(pieces=(SentencePiece("<unk>", 0.0, 2),)))[:11]
    b'\\n\\x0e\\n\\x05<unk>\\x15\\x00'
    """
    for name, value in (("trainer_spec", proto.trainer_spec),
                        ("normalizer_spec", proto.normalizer_spec)):
        expected = TrainerSpec if name == "trainer_spec" else NormalizerSpec
        if not isinstance(value, expected):
            raise TypeError(f"ModelProto.{name} must be a {expected.__name__}")
    parts = [_length_delimited(1, _piece(p)) for p in proto.pieces]
    parts.append(_length_delimited(2, _message(proto.trainer_spec, _TRAINER_NUMBERS)))
    parts.append(_length_delimited(3, _message(proto.normalizer_spec, _NORMALIZER_NUMBERS)))
    if proto.denormalizer_spec is not None:
        parts.append(_length_delimited(5, _message(proto.denormalizer_spec, _NORMALIZER_NUMBERS)))
    return b"".join(parts)


def dump_model_proto(proto: ModelProto, path: Union[str, "os.PathLike[str]"]) -> None:
    """Write ``proto`` to ``path`` as a ``.model`` file (see
    :func:`write_model_proto`), replacing any old file all at once
    (:mod:`fasttok.shared.atomic_write`).

    >>> import tempfile; p = os.path.join(tempfile.mkdtemp(), "m.model")
    >>> dump_model_proto(ModelProto(), p); open(p, "rb").read() == write_model_proto(ModelProto())
    True
    """
    write_atomically(path, write_model_proto(proto))


assert set(_TRAINER_NUMBERS) == {f.name for f in dataclasses.fields(TrainerSpec)}
assert set(_NORMALIZER_NUMBERS) == {f.name for f in dataclasses.fields(NormalizerSpec)}
