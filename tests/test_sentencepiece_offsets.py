"""Where each id starts in SentencePiece decoding (``decode_with_offsets`` of the model).

The rule (``fasttok.models.interface.Model.decode_with_offsets``):
``starts[i]`` is the byte index in ``decode_bytes(ids)`` where the text id
``i`` leaves begins; an id that leaves nothing gets the index of the next
byte that survives. The compiled core finds the starts in the pass that
decodes. Hand cases state the rule for sentencepiece's decode (``.model``
files) and llama.cpp's (GGUF ``llama`` / ``t5``); a differential check holds
it against the decode of every prefix on every such file in the shared data.
"""

from __future__ import annotations

import json

import pytest

from conftest import DATA, missing_data_reason, read_jsonl
from fasttok.formats._sentencepiece import SentencePieceCore
from fasttok.formats.sentencepiece import build_sentencepiece, load_sentencepiece_file
from fasttok.loaders.gguf import load_gguf
from fasttok.vocab import Vocabulary

SPM_DIR = DATA / "vocab" / "sentencepiece"
GGUF_DIR = DATA / "vocab" / "gguf"
LINES = DATA / "testcases" / "lines.jsonl"

# piece types (sentencepiece_model.proto)
UNKNOWN, CONTROL, BYTE = 2, 3, 6
UNK, BOS, A, B, SPACE = 0, 1, 2, 3, 4  # ids of the hand vocabulary
FFFD = "\ufffd".encode()


def byte(b: int) -> int:
    """The id of byte piece <0xXX> in the hand vocabulary."""
    return 5 + b


def hand_vocab(**options) -> Vocabulary:
    return Vocabulary(
        name="hand", model="unigram", byte_level=False, unk_id=UNK, add_dummy_prefix=True,
        escape_whitespaces=True, byte_fallback=True,
        tokens=(b"<unk>", b"<s>", "\u2581a".encode(), b"b", "\u2581".encode())
        + tuple(b"<0x%02X>" % b for b in range(256)),
        scores=(0.0,) * 261, token_types=(UNKNOWN, CONTROL, 1, 1, 1) + (BYTE,) * 256,
        **options)


def spm_offsets(ids, **options) -> tuple:
    return build_sentencepiece(hand_vocab(**options)).decode_with_offsets(ids)


def llama_offsets(ids, **options) -> tuple:
    return SentencePieceCore(hand_vocab(), flavour="llama.cpp", **options).decode_with_offsets(ids)


# ---------------------------------------------------------------- sentencepiece's decode

@pytest.mark.parametrize("ids, expected", [
    # the byte pieces of one character: each at its own byte of it
    ([A, byte(0xE2), byte(0x82), byte(0xAC), B], (b"a\xe2\x82\xacb", [0, 1, 2, 3, 4])),
    ([byte(0xC3), byte(0xA9)], (b"\xc3\xa9", [0, 1])),
    # a control piece leaves nothing: it starts where the next text does
    ([A, BOS, B], (b"ab", [0, 1, 1])),
    ([BOS, A, BOS], (b"a", [0, 0, 1])),
    # a control piece ends a byte run, which then forms no character
    ([byte(0xC3), BOS, byte(0xA9)], (FFFD + FFFD, [0, 3, 3])),
    # the dummy-prefix space goes; the piece starts where its text does
    ([A, A], (b"a a", [0, 1])),
    ([SPACE, A], (b" a", [0, 0])),
    # unk starts at its surface
    ([UNK, A], (" \u2047  a".encode(), [0, 5])),
    # invalid UTF-8: each invalid byte piece starts at its U+FFFD
    ([byte(0xC3), A], (FFFD + b" a", [0, 3])),
    ([byte(0xFF), byte(0xC3), byte(0xA9)], (FFFD + b"\xc3\xa9", [0, 3, 4])),
    ([byte(0xE2), byte(0x41)], (FFFD + b"A", [0, 3])),
    ([A, byte(0xE2), byte(0x82)], (b"a" + FFFD + FFFD, [0, 1, 4])),
    ([], (b"", [])),
])
def test_sentencepiece_starts(ids, expected):
    assert spm_offsets(ids) == expected


def test_every_leading_space_piece_goes_with_remove_extra_whitespaces():
    assert spm_offsets([SPACE, A, B], remove_extra_whitespaces=True) == (b"ab", [0, 0, 1])


# ---------------------------------------------------------------- llama.cpp's detokenize

@pytest.mark.parametrize("ids, expected", [
    ([A, BOS, B], (b"ab", [0, 1, 1])),
    # only the first id loses its leading space, even when it leaves nothing
    ([BOS, A], (b" a", [0, 0])),
    # byte tokens are their bytes, valid UTF-8 or not
    ([byte(0xC3), byte(0xA9), byte(0xFF)], (b"\xc3\xa9\xff", [0, 1, 2])),
    ([UNK, A, A], (b" a a", [0, 0, 2])),
])
def test_llama_cpp_starts(ids, expected):
    assert llama_offsets(ids) == expected


def test_llama_cpp_leaves_out_the_ids_it_is_given_as_hidden():
    assert llama_offsets([A, B, A], hidden=[B]) == (b"a a", [0, 1, 1])


def test_hidden_is_refused_for_sentencepiece_files():
    with pytest.raises(ValueError, match="llama.cpp"):
        SentencePieceCore(hand_vocab(), hidden=[B])


def test_starts_and_decode_refuse_an_id_outside_the_vocabulary():
    model = build_sentencepiece(hand_vocab())
    for call in (model.decode_bytes, model.decode_with_offsets):
        with pytest.raises(KeyError):
            call([A, 261])


# ---------------------------------------------------------------- every file in the shared data

def _models() -> list:
    paths = sorted(SPM_DIR.glob("*.model")) if SPM_DIR.is_dir() else []
    if (GGUF_DIR / "index.json").is_file():
        index = json.loads((GGUF_DIR / "index.json").read_text(encoding="utf-8"))
        paths += sorted(GGUF_DIR / name for name, facts in index.items()
                        if facts.get("tokenizer.ggml.model") in ("llama", "t5"))
    return paths


@pytest.fixture(scope="module")
def lines() -> list:
    if not LINES.is_file():
        pytest.skip(missing_data_reason(LINES))
    return [case["text"] for case in read_jsonl(LINES)]


def prefix_problem(model, ids: list, types) -> str | None:
    """How ``decode_with_offsets(ids)`` breaks the property, or None.

    The property: the bytes are ``decode_bytes(ids)``, the starts ascend
    within them, and at every cut ``k`` the decoder has nothing held back
    at (every cut for llama.cpp; for sentencepiece every cut but one
    between two byte pieces, whose run may still form a character),
    ``data[:starts[k]] == decode_bytes(ids[:k])``. At a cut between two
    byte pieces, id ``k - 1`` left exactly its own byte or one U+FFFD:
    ``data[starts[k-1]:starts[k]]``.
    """
    data, starts = model.decode_with_offsets(ids)
    if data != model.decode_bytes(ids):
        return f"bytes {data[:60]!r} are not decode_bytes {model.decode_bytes(ids)[:60]!r}"
    if len(starts) != len(ids) or starts != sorted(starts) or (starts and starts[-1] > len(data)):
        return f"starts {starts[:40]} do not ascend within the {len(data)} bytes"
    llama_cpp = model.vocabulary.metadata.get("tokenizer.ggml.model") in ("llama", "t5")
    for k in range(len(ids)):
        if not llama_cpp and k and types[ids[k - 1]] == BYTE and types[ids[k]] == BYTE:
            left = data[starts[k - 1]:starts[k]]
            if left not in (model.token_bytes(ids[k - 1]), FFFD):
                return f"byte piece {k - 1} (id {ids[k - 1]}) left {left!r}"
        elif data[:starts[k]] != model.decode_bytes(ids[:k]):
            return (f"cut {k} (id {ids[k]}): the bytes before start {starts[k]} end "
                    f"{data[:starts[k]][-30:]!r}, the ids before it decode to "
                    f"...{model.decode_bytes(ids[:k])[-30:]!r}")
    return None


@pytest.mark.parametrize("path", _models(), ids=lambda p: p.name)
def test_starts_agree_with_the_decode_of_each_prefix(path, lines):
    vocab = load_gguf(str(path)) if path.suffix == ".gguf" else load_sentencepiece_file(str(path))
    model = build_sentencepiece(vocab)
    types = vocab.token_types or (1,) * len(vocab.tokens)
    control = next((i for i, t in enumerate(types) if t == CONTROL), None)
    problems = []
    for text in lines:
        ids = model.encode_ordinary(text)
        # the ids, framed by a control id, and reversed (byte pieces out of
        # order make invalid UTF-8; a leading space lands elsewhere)
        for variant in (ids, [control, *ids, control] if control is not None else ids, ids[::-1]):
            problem = prefix_problem(model, variant, types)
            if problem:
                problems.append(f"{text[:40]!r}: {problem}")
    assert not problems, f"{len(problems)} sequences, the first: {problems[0]}"
