"""Shared fixtures for the differential tests: fasttok against the real tiktoken.

Where the data comes from
    ``FASTTOK_DATA`` (default ``<repo root>/../shared/data``) holds the vocabulary
    files, corpora, test strings and goldens; see its ``PROVENANCE.md``. The real
    tiktoken is built offline from the same ``.tiktoken`` files and
    ``vocab/tiktoken/encodings.json`` by :func:`build_reference_encoding` here,
    so both libraries see identical ranks.
    ``FASTTOK_VOCAB_DIR`` is pointed at ``<data>/vocab/tiktoken`` here, before any
    test imports fasttok.

What is shared
    * ``ALL_ENCODINGS`` and the session fixture ``enc_pair`` (parametrized over all
      of them) giving an :class:`EncodingPair` ``(fasttok_encoding,
      tiktoken_encoding)``; ``encoding_pair`` is the same cache as a function
      ``name -> EncodingPair`` for tests that choose their own encodings.
    * :func:`assert_same_ids`, which on a mismatch reports the first differing
      token, where it sits in the input (byte, line, character), the text around
      it and the pieces both libraries produced there.
    * :func:`outcome` / :func:`outcome_mismatch` / :func:`assert_same_outcome` for
      calls that may raise (``encode`` with disallowed special tokens): equal ids,
      or both raise ``ValueError``; :func:`offsets_mismatch` for
      ``decode_with_offsets``.
    * :class:`Mismatches`, which checks many inputs and then fails once with the
      number that differed and the full report of the first.
    * :func:`load_ranks`, :func:`build_reference_encoding` (the reference
      tiktoken from ``encodings.json`` + ``.tiktoken`` files, any data folder) and
      :func:`golden_file`.

If the data directory is missing entirely every test that needs it is skipped
with a pointer to ``tools/fetch_test_data.py``. A missing golden file skips the
tests that read it (:func:`golden_file`, naming the fetch step that makes it);
any other missing file fails.
"""

from __future__ import annotations

import atexit
import base64
import functools
import importlib.util
import json
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("FASTTOK_DATA") or (REPO_ROOT.parent / "shared" / "data")).resolve()
DATA_MISSING = not DATA.is_dir()
FETCH_COMMAND = f"python tools/fetch_test_data.py {DATA}"


def missing_data_reason(path: Path) -> str:
    """Why a test that reads ``path`` is skipped, and the command that makes it."""
    return (f"{path} not found: make the test data with `{FETCH_COMMAND}` "
            f"(or set FASTTOK_DATA to a folder that holds it)")


def data_file(path: Path) -> Path:
    """``path``, or the calling test skipped with :func:`missing_data_reason`
    when there is no such file."""
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return path


def without_truncation_or_padding(tokenizer):
    """``tokenizer`` (a ``tokenizers.Tokenizer``) with the truncation and
    padding its file sets turned off: the reference for the ids of whole
    texts."""
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


MISSING_DATA_REASON = missing_data_reason(DATA)
VOCAB_DIR = DATA / "vocab" / "tiktoken"

# fasttok reads these when it first loads an encoding; they must be set before that.
os.environ["FASTTOK_VOCAB_DIR"] = str(VOCAB_DIR)
# The table cache of this run goes to a folder of its own, never the user's.
os.environ["FASTTOK_CACHE_DIR"] = tempfile.mkdtemp(prefix="fasttok-test-cache-")
atexit.register(shutil.rmtree, os.environ["FASTTOK_CACHE_DIR"], True)

# Let an in-place build (`python setup.py build_ext --inplace`) be imported when
# fasttok is not installed; an installed fasttok is left alone.
if importlib.util.find_spec("fasttok") is None:
    sys.path.insert(0, str(REPO_ROOT))

ALL_ENCODINGS = (
    "gpt2",
    "r50k_base",
    "p50k_base",
    "p50k_edit",
    "cl100k_base",
    "o200k_base",
    "o200k_harmony",
)

# One file of each kind of vocabulary fasttok reads, for the behaviours every
# kind must share.
ONE_FILE_PER_KIND = {
    "tiktoken": VOCAB_DIR / "r50k_base.tiktoken",
    "gguf_gpt2": DATA / "vocab" / "gguf" / "ggml-vocab-deepseek-coder.gguf",
    "gguf_llama": DATA / "vocab" / "gguf" / "ggml-vocab-llama-spm.gguf",
    "gguf_bert": DATA / "vocab" / "gguf" / "ggml-vocab-bert-bge.gguf",
    "gguf_t5": DATA / "vocab" / "gguf" / "ggml-vocab-nomic-bert-moe.gguf",
    "spm_unigram": DATA / "vocab" / "sentencepiece" / "botchan_en_unigram_1000.model",
    "spm_bpe": DATA / "vocab" / "sentencepiece" / "botchan_en_bpe_1000.model",
    "hf_byte_bpe": DATA / "vocab" / "hf" / "qwen3" / "tokenizer.json",
}

# The Hugging Face tokenizer.json files by folder under vocab/hf: the
# byte-level BPE ones (fasttok's fused byte-level path) and the others.
HF_BYTE_LEVEL = ("llama3", "qwen3", "gpt4o")
HF_OTHER = ("llama2", "gemma3", "all-MiniLM-L6-v2")

# Encodings that reuse another one's ranks and pattern and only add special tokens.
DERIVED_FROM = {"gpt2": "r50k_base", "p50k_edit": "p50k_base", "o200k_harmony": "o200k_base"}


def read_jsonl(path: Path) -> list[dict]:
    """Read a JSONL file the way PROVENANCE.md says to: split on "\\n" only
    (the strings may hold U+2028, CR, VT, FF, which ``splitlines`` would split on)."""
    with open(path, encoding="utf-8", newline="") as f:
        return [json.loads(line) for line in f.read().split("\n") if line]


def read_text(path: Path) -> str:
    """Read a corpus file byte-exactly (keeps CR, VT, FF, U+2028...)."""
    return path.read_bytes().decode("utf-8")


# --------------------------------------------------------------------------
# Encoding pairs
# --------------------------------------------------------------------------


class EncodingPair(tuple):
    """``(fasttok_encoding, tiktoken_encoding)`` plus the encoding's ``name``."""

    def __new__(cls, name: str, ours, theirs, theirs_is_stand_in: bool = False):
        self = tuple.__new__(cls, (ours, theirs))
        self.name = name
        self.theirs_is_stand_in = theirs_is_stand_in
        return self

    @property
    def ours(self):
        return self[0]

    @property
    def theirs(self):
        return self[1]

    def __repr__(self) -> str:
        return f"EncodingPair({self.name!r})"


_PAIRS: dict[str, EncodingPair] = {}
_SPECS: dict | None = None
_RANKS: dict[str, dict[bytes, int]] = {}


def load_ranks(filename: str, vocab_dir: Path | None = None) -> dict[bytes, int]:
    """``{token_bytes: rank}`` of a ``.tiktoken`` file read the way tiktoken's
    ``load_tiktoken_bpe`` reads it: one ``base64 rank`` pair per non-empty line.
    ``filename`` is relative to ``vocab_dir`` (default ``<data>/vocab/tiktoken``)."""
    path = Path(vocab_dir or VOCAB_DIR) / filename
    ranks = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def encoding_specs(vocab_dir: Path | None = None) -> dict:
    """The entries of ``<data>/vocab/tiktoken/encodings.json`` (keys starting with
    ``_`` are comments and left out)."""
    global _SPECS
    if vocab_dir is not None:
        specs = json.loads((Path(vocab_dir) / "encodings.json").read_text(encoding="utf-8"))
        return {k: v for k, v in specs.items() if not k.startswith("_")}
    if _SPECS is None:
        _SPECS = encoding_specs(VOCAB_DIR)
    return _SPECS


def build_reference_encoding(name: str, vocab_dir: Path | None = None):
    """The real ``tiktoken.Encoding`` for ``name``, built offline from
    ``encodings.json`` (pat_str, special_tokens, explicit_n_vocab) and the
    ``.tiktoken`` rank file it names, so tiktoken and fasttok read identical ranks.
    Needs the PyPI package tiktoken (``pip install -e .[test]``)."""
    import tiktoken

    spec = encoding_specs(vocab_dir)[name]
    if vocab_dir is None:
        ranks = _RANKS.get(spec["file"])
        if ranks is None:
            ranks = _RANKS[spec["file"]] = load_ranks(spec["file"])
    else:
        ranks = load_ranks(spec["file"], vocab_dir)
    kwargs = {}
    if spec.get("explicit_n_vocab") is not None:
        kwargs["explicit_n_vocab"] = spec["explicit_n_vocab"]
    return tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=dict(ranks),
                             special_tokens=dict(spec["special_tokens"]), **kwargs)


def reference_encoding(name: str):
    """The real tiktoken.Encoding for ``name``, built offline. Returns
    ``(encoding, is_stand_in)``: if tiktoken cannot build gpt2 from these files,
    r50k_base stands in (same ranks, same pattern, same special token)."""
    try:
        return build_reference_encoding(name), False
    except Exception:
        if name != "gpt2":
            raise
        return build_reference_encoding("r50k_base"), True


def golden_file(data_dir: Path, kind: str, name: str) -> Path:
    """``<data>/goldens/<kind>/<name>.jsonl``; skips the test when it is absent
    (a data folder made by ``tools/fetch_test_data.py`` without the goldens step)."""
    path = data_dir / "goldens" / kind / f"{name}.jsonl"
    if not path.is_file():
        pytest.skip(missing_golden_reason(path, kind))
    return path


def missing_golden_reason(path: Path, kind: str) -> str:
    how = {
        "tiktoken": "needs the PyPI package tiktoken",
        "sentencepiece": "needs the PyPI package sentencepiece and the trained models",
        "gguf": "needs llama_cpp (PyPI llama-cpp-python)",
    }.get(kind, "")
    return (f"golden file {path} not found; make it with `python tools/fetch_test_data.py "
            f"{path.parents[2]} --only goldens` (the goldens step; {how})")


def encoding_pair(name: str) -> EncodingPair:
    """Cached ``EncodingPair`` for one encoding name."""
    pair = _PAIRS.get(name)
    if pair is None:
        if DATA_MISSING:
            pytest.skip(MISSING_DATA_REASON)
        import fasttok

        theirs, stand_in = reference_encoding(name)
        ours = fasttok.get_encoding(name)
        pair = _PAIRS[name] = EncodingPair(name, ours, theirs, stand_in)
    return pair


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A table cache folder of the test's own (not yet made), with the cache on."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("FASTTOK_CACHE_DIR", str(folder))
    monkeypatch.delenv("FASTTOK_CACHE", raising=False)
    return folder


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if DATA_MISSING:
        pytest.skip(MISSING_DATA_REASON)
    return DATA


@pytest.fixture(scope="session", name="encoding_pair")
def encoding_pair_fixture(data_dir):
    """``name -> EncodingPair`` (cached for the session)."""
    return encoding_pair


@pytest.fixture(scope="session", params=ALL_ENCODINGS)
def enc_pair(request, data_dir) -> EncodingPair:
    """One ``EncodingPair`` per encoding in ``ALL_ENCODINGS``."""
    return encoding_pair(request.param)


@pytest.fixture(scope="session")
def test_strings(data_dir) -> list[dict]:
    """The objects of ``testcases/lines.jsonl`` ({id, category, text}); 355 in the
    shared data, another number in a folder made by ``tools/fetch_test_data.py``."""
    return read_jsonl(data_dir / "testcases" / "lines.jsonl")


def pytest_collection_modifyitems(config, items):
    if not DATA_MISSING:
        return
    skip = pytest.mark.skip(reason=MISSING_DATA_REASON)
    for item in items:
        if "data_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


# --------------------------------------------------------------------------
# Comparing results
# --------------------------------------------------------------------------


def _utf8(text: str) -> bytes:
    # The same repair tiktoken applies to lone surrogates before encoding.
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def _token_bytes(enc, token) -> bytes | None:
    try:
        return enc.decode_single_token_bytes(token)
    except Exception:
        return None


def _render_pieces(ids, start: int, stop: int, enc, mark: int) -> str:
    parts = []
    for k in range(max(0, start), min(len(ids), stop)):
        tok = ids[k]
        if enc is None:
            shown = str(tok)
        else:
            b = _token_bytes(enc, tok)
            shown = f"{tok}:{b!r}" if b is not None else f"{tok}:<no such token>"
        parts.append(f">>{shown}<<" if k == mark else shown)
    if stop < len(ids):
        parts.append("...")
    return ("... " if start > 0 else "") + " ".join(parts)


def describe_mismatch(ours, theirs, text: str, *, enc=None, what: str = "", note: str = "") -> str:
    """A human-readable account of where ``ours`` first departs from ``theirs``."""
    ours, theirs = list(ours), list(theirs)
    n = min(len(ours), len(theirs))
    i = next((k for k in range(n) if ours[k] != theirs[k]), n)
    head = f"{what + ': ' if what else ''}token ids differ at index {i} " \
           f"(fasttok gave {len(ours)} tokens, tiktoken {len(theirs)})"
    lines = [head]
    if note:
        lines.append(f"  {note}")
    data = _utf8(text)
    offset = None
    if enc is not None:
        try:
            offset = len(enc.decode_bytes(theirs[:i]))
        except Exception:
            offset = None
    if offset is not None:
        prefix = data[:offset]
        line_no = prefix.count(b"\n") + 1
        char_no = len(prefix.decode("utf-8", "replace"))
        lines.append(
            f"  input: {len(text)} chars / {len(data)} bytes; first difference at byte {offset} "
            f"(line {line_no}, char {char_no})"
        )
        lo, hi = max(0, offset - 40), offset + 40
        before = data[lo:offset].decode("utf-8", "replace")
        after = data[offset:hi].decode("utf-8", "replace")
        lines.append(f"  text around it: {before!r} >>HERE>> {after!r}")
    if len(text) <= 300:
        lines.append(f"  whole input: {text!r}")
    lines.append(f"  tiktoken pieces: {_render_pieces(theirs, i - 3, i + 6, enc, i)}")
    lines.append(f"  fasttok  pieces: {_render_pieces(ours, i - 3, i + 6, enc, i)}")
    return "\n".join(lines)


def assert_same_ids(ours, theirs, text: str, *, enc=None, what: str = "", note: str = "") -> None:
    """Assert fasttok's ids equal tiktoken's; on mismatch report the first differing
    position, the surrounding text and the pieces (rendered with ``enc``, the
    reference tiktoken encoding, when given)."""
    if list(ours) == list(theirs):
        return
    pytest.fail(describe_mismatch(ours, theirs, text, enc=enc, what=what, note=note), pytrace=False)


class Raised:
    """What ``outcome`` returns when the call raised."""

    def __init__(self, exc: BaseException):
        self.exc = exc

    def __repr__(self) -> str:
        return f"raised {type(self.exc).__name__}: {str(self.exc)[:200]!r}"


def outcome(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, or a :class:`Raised` holding the exception."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - compared by the caller
        return Raised(exc)


def _show(value) -> str:
    if isinstance(value, Raised):
        return repr(value)
    value = list(value)
    return f"{value[:20]}{'...' if len(value) > 20 else ''}"


def outcome_mismatch(ours, theirs, text: str, *, enc=None, what: str = "") -> str | None:
    """``None`` when both outcomes agree (same result, or both raised ValueError),
    else a description of the disagreement."""
    ours_raised, theirs_raised = isinstance(ours, Raised), isinstance(theirs, Raised)
    if ours_raised or theirs_raised:
        if (ours_raised and theirs_raised and isinstance(ours.exc, ValueError)
                and isinstance(theirs.exc, ValueError)):
            return None
        return (f"{what + ': ' if what else ''}fasttok {_show(ours)}, tiktoken {_show(theirs)}; "
                f"input {text[:300]!r}{'...' if len(text) > 300 else ''}")
    if list(ours) == list(theirs):
        return None
    return describe_mismatch(ours, theirs, text, enc=enc, what=what)


def assert_same_outcome(ours, theirs, text: str, *, enc=None, what: str = "") -> None:
    """Equal results, or both raised ``ValueError``; otherwise fail with the details."""
    problem = outcome_mismatch(ours, theirs, text, enc=enc, what=what)
    if problem is not None:
        pytest.fail(problem, pytrace=False)


def agree(ours, theirs) -> bool:
    """Same value, or both calls raised ``ValueError`` (UnicodeDecodeError included)."""
    if isinstance(ours, Raised) or isinstance(theirs, Raised):
        return (isinstance(ours, Raised) and isinstance(theirs, Raised)
                and isinstance(ours.exc, ValueError) and isinstance(theirs.exc, ValueError))
    return ours == theirs


def offsets_mismatch(ours, theirs, ids) -> str | None:
    """Compare two ``decode_with_offsets`` outcomes; describe the first difference."""
    if agree(ours, theirs):
        return None
    if isinstance(ours, Raised) or isinstance(theirs, Raised):
        return f"decode_with_offsets({list(ids)[:30]}...): fasttok {_show_any(ours)}, tiktoken {_show_any(theirs)}"
    (ours_text, ours_off), (theirs_text, theirs_off) = ours, theirs
    if ours_text != theirs_text:
        return f"decode_with_offsets text differs: fasttok {ours_text[:200]!r}, tiktoken {theirs_text[:200]!r}"
    ours_off, theirs_off = list(ours_off), list(theirs_off)
    n = min(len(ours_off), len(theirs_off))
    i = next((k for k in range(n) if ours_off[k] != theirs_off[k]), n)
    return (f"decode_with_offsets offsets differ at token {i} (id {ids[i] if i < len(ids) else None}): "
            f"fasttok {ours_off[max(0, i - 3):i + 5]}, tiktoken {theirs_off[max(0, i - 3):i + 5]} "
            f"(from token {max(0, i - 3)}; {len(ours_off)} vs {len(theirs_off)} offsets); "
            f"text {theirs_text[:200]!r}")


def _show_any(value) -> str:
    return repr(value) if isinstance(value, Raised) else f"{value!r:.200}"


class Mismatches:
    """Collects disagreements over many inputs and fails once, with a count and
    the full description of the first (later ones are only counted)."""

    def __init__(self, what: str):
        self.what = what
        self.total = 0
        self.count = 0
        self.first: str | None = None
        self.labels: list[str] = []

    def check(self, problem: str | None, label: str = "") -> None:
        """Record one input's comparison; ``problem`` is None when it agreed."""
        self.total += 1
        if problem is None:
            return
        self.count += 1
        if self.first is None:
            self.first = f"[{label}] {problem}" if label else problem
        if label and len(self.labels) < 20:
            self.labels.append(label)

    def assert_none(self) -> None:
        if self.count:
            others = f" (inputs: {', '.join(self.labels)}{', ...' if self.count > 20 else ''})" \
                if self.labels else ""
            pytest.fail(
                f"{self.what}: {self.count} of {self.total} inputs differ{others}; the first:\n"
                f"{self.first}",
                pytrace=False,
            )


@functools.lru_cache(maxsize=None)
def spm_pair(path: str) -> tuple:
    """(fasttok Encoding, sentencepiece processor) for one ``.model`` file."""
    import sentencepiece

    import fasttok

    return fasttok.load(path), sentencepiece.SentencePieceProcessor(model_file=str(path))


def spm_model_path(name: str) -> str:
    """The path of one of the shared SentencePiece models, by name."""
    return str(DATA / "vocab" / "sentencepiece" / f"{name}.model")


# ------------------------------------------------------------ .model editing
# Tests make variants of real SentencePiece models by rewriting their
# protobuf bytes (no protobuf package).

# protobuf varints: the fuzz module's, which every test that edits .model bytes shares
from fuzzing import read_varint, varint as write_varint  # noqa: E402


def proto_fields(buf: bytes):
    """Each top-level field of a protobuf message: (tag, the field's bytes,
    the body of a length-delimited field or None)."""
    pos = 0
    while pos < len(buf):
        tag, p = read_varint(buf, pos)
        wire = tag & 7
        body = None
        if wire == 0:
            end = read_varint(buf, p)[1]
        elif wire == 5:
            end = p + 4
        else:
            size, start = read_varint(buf, p)
            end, body = start + size, buf[start:start + size]
        yield tag, buf[pos:end], body
        pos = end


def rewrite_pieces(data: bytes, change) -> bytes:
    """A ``.model`` with each piece's score and type replaced by
    ``change(index, piece, score, type) -> (score, type)``; pieces are the
    ModelProto's field 1, written as piece (1), score (2), type (3)."""
    out, index = bytearray(), 0
    for tag, raw, body in proto_fields(data):
        if tag != 0x0A:
            out += raw
            continue
        piece, score, kind = b"", 0.0, 1
        for t, field, value in proto_fields(body):
            if t == 0x0A:
                piece = value
            elif t == 0x15:
                score = struct.unpack("<f", field[-4:])[0]
            elif t == 0x18:
                kind = read_varint(field, 1)[0]
        score, kind = change(index, piece.decode(), score, kind)
        msg = b"\x0a" + write_varint(len(piece)) + piece + b"\x15" + struct.pack("<f", score) \
            + (b"\x18" + write_varint(kind) if kind != 1 else b"")
        out += b"\x0a" + write_varint(len(msg)) + msg
        index += 1
    return bytes(out)
