"""The ``tokenizer.json`` decoders (``fasttok.decoders.hf_*``) against ``tokenizers`` itself.

Every decoder and option is compared with the live ``tokenizers.decoders``
one on hypothesis token lists drawn from the alphabets decoders meet:
byte-level characters, ``<0xXX>`` tokens (valid and broken UTF-8 runs, and
spellings that are no byte token), ``▁`` and ``##`` pieces, pad and
delimiter tokens, and any text. Both ``decode`` and ``decode_chain`` are
compared; tokenizers' Python face has no ``decode_chain``, so its chain is
read off ``Sequence([decoder, Replace(" ", SPACE), WordPiece(NO_PREFIX)])``,
which puts a space between the tokens of the chain and nowhere else.

Then the decoder of every shared ``tokenizer.json`` (``vocab/hf``), read by
:func:`decoder_from_json`, decodes the tokens of every line of
``testcases/lines.jsonl`` and random ids of the vocabulary as the file's
``tokenizer.decoder`` does; and :class:`HFDecodeStream` steps through the
same ids as ``tokenizers.decoders.DecodeStream`` (chunks, ``None``\\s and
errors alike), with and without ``skip_special_tokens``.
"""

from __future__ import annotations

import functools
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, Mismatches, read_jsonl
from fasttok.decoders.hf_bpe import BPEDecoder
from fasttok.decoders.hf_byte_fallback import ByteFallback
from fasttok.decoders.hf_byte_level import ByteLevel
from fasttok.decoders.hf_metaspace import Metaspace
from fasttok.decoders.hf_replace import Replace
from fasttok.decoders.hf_simple import Fuse, Sequence, Strip
from fasttok.decoders.hf_stream import HFDecodeStream
from fasttok.decoders.hf_wordpiece import CTC, WordPiece
from fasttok.errors import FasttokError
from fasttok.loaders.hf_stage_json import decoder_from_json
from fasttok.shared._bytemap import bytes_to_unicode

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import decoders as hf  # noqa: E402

EXAMPLES = int(os.environ.get("FASTTOK_HYPOTHESIS_EXAMPLES", "100"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    print_blob=False, suppress_health_check=[HealthCheck.too_slow,
                                                             HealthCheck.data_too_large])

HF_DIR = DATA / "vocab" / "hf"
HF_FILES = sorted(p.relative_to(HF_DIR).as_posix() for p in HF_DIR.rglob("*.json")
                  if json.loads(p.read_text(encoding="utf-8")).get("model")) \
    if HF_DIR.is_dir() else []
needs_data = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

# two private-use characters no drawn token holds: the chain read-off's marks
SPACE, NO_PREFIX = "\ue001", "\ue000"

# ---------------------------------------------------------------- token alphabets
BYTE_LEVEL = "".join(bytes_to_unicode().values())
TEXT = st.text(st.characters(exclude_categories=("Cs", "Co")), max_size=8)
BYTE_LEVEL_TOKEN = st.text(st.sampled_from(BYTE_LEVEL), min_size=1, max_size=6)
HEX = "0123456789abcdefABCDEF"
BYTE_TOKEN = st.one_of(
    st.integers(0, 255).map(lambda b: f"<0x{b:02X}>"),
    st.integers(0, 255).map(lambda b: f"<0x{b:02x}>"),
    st.sampled_from([f"<0x{a}{b}>" for a in "CDEF" for b in "0123456789ABCDEF"]),  # lead bytes
    st.sampled_from([f"<0x{a}{b}>" for a in "89AB" for b in "0123456789ABCDEF"]),  # continuations
    st.sampled_from(["<0x+F>", "<0x+a>", "<0x-1>", "<0x 1>", "<0x1 >", "<0x1_>", "<0xZZ>",
                     "<0x0>", "<0x000>", "<0xé>", "<0X41>", "<0x41", "0x41>", "<0x++>"]),
)
META = st.builds(lambda a, b: "▁" * a + b, st.integers(0, 3), TEXT)
WORDPIECE = st.one_of(st.builds(lambda t: "##" + t, TEXT),
                      st.sampled_from([".", ",", "?", "!", "'", "s", "n't", "do", "not", "m",
                                       "ve", "re", " ", "##", "#"]))
CTC_TOKEN = st.sampled_from(["<pad>", "|", "a", "b", "'", "s", ".", " ", "<pad>a", "|b|", ""])
BPE_TOKEN = st.one_of(TEXT, st.builds(lambda t: t + "</w>", TEXT), st.just("</w>"))
ANY_TOKEN = st.one_of(TEXT, BYTE_LEVEL_TOKEN, BYTE_TOKEN, META, WORDPIECE, CTC_TOKEN, BPE_TOKEN)


def tokens_of(*alphabets):
    return st.lists(st.one_of(*alphabets, TEXT), max_size=12)


# ---------------------------------------------------------------- pairs under test
# (name, fasttok decoder, tokenizers decoder, token strategy)
PAIRS = [
    ("ByteLevel", ByteLevel(), hf.ByteLevel(), tokens_of(BYTE_LEVEL_TOKEN, BYTE_LEVEL_TOKEN)),
    ("ByteFallback", ByteFallback(), hf.ByteFallback(), tokens_of(BYTE_TOKEN, BYTE_TOKEN)),
    ("Metaspace", Metaspace(), hf.Metaspace(), tokens_of(META)),
    ("Metaspace-first", Metaspace(prepend_scheme="first"), hf.Metaspace(prepend_scheme="first"),
     tokens_of(META)),
    ("Metaspace-never", Metaspace(prepend_scheme="never"), hf.Metaspace(prepend_scheme="never"),
     tokens_of(META)),
    ("Metaspace-_-nosplit", Metaspace("_", "always", False),
     hf.Metaspace("_", prepend_scheme="always", split=False),
     tokens_of(META, st.builds(lambda t: "_" + t, TEXT))),
    ("WordPiece", WordPiece(), hf.WordPiece(), tokens_of(WORDPIECE)),
    ("WordPiece-nocleanup", WordPiece(cleanup=False), hf.WordPiece(cleanup=False),
     tokens_of(WORDPIECE)),
    ("WordPiece-@@", WordPiece("@@"), hf.WordPiece("@@"),
     tokens_of(WORDPIECE, st.builds(lambda t: "@@" + t, TEXT))),
    ("WordPiece-empty-prefix", WordPiece(""), hf.WordPiece(""), tokens_of(WORDPIECE)),
    ("BPEDecoder", BPEDecoder(), hf.BPEDecoder(), tokens_of(BPE_TOKEN)),
    ("BPEDecoder-empty", BPEDecoder(""), hf.BPEDecoder(""), tokens_of(BPE_TOKEN)),
    ("CTC", CTC(), hf.CTC(), tokens_of(CTC_TOKEN, CTC_TOKEN)),
    ("CTC-nocleanup", CTC(cleanup=False), hf.CTC(cleanup=False), tokens_of(CTC_TOKEN)),
    ("CTC-empty", CTC("", "", True), hf.CTC("", "", True), tokens_of(CTC_TOKEN)),
    ("Fuse", Fuse(), hf.Fuse(), tokens_of(ANY_TOKEN)),
    ("Strip-left", Strip(" ", 1, 0), hf.Strip(" ", 1, 0),
     tokens_of(st.builds(lambda t: " " + t, TEXT))),
    ("Strip-both", Strip("a", 2, 3), hf.Strip("a", 2, 3), tokens_of(st.from_regex(r"a{0,3}[bc ]?a{0,4}", fullmatch=True))),
    ("Strip-right", Strip("▁", 0, 1), hf.Strip("▁", 0, 1), tokens_of(META, st.builds(lambda t: t + "▁", TEXT))),
    ("Replace-string", Replace("▁", " "), hf.Replace("▁", " "), tokens_of(META)),
    ("Replace-empty", Replace("", "-"), hf.Replace("", "-"), tokens_of(META)),
    ("Replace-long", Replace("aa", "b"), hf.Replace("aa", "b"), tokens_of(st.from_regex("[ab]{0,6}", fullmatch=True))),
    ("Replace-regex", Replace(regex=r"\s+", content="_"), hf.Replace(tokenizers.Regex(r"\s+"), "_"),
     tokens_of(ANY_TOKEN)),
    ("Replace-regex-empty", Replace(regex=r"a*", content="-"),
     hf.Replace(tokenizers.Regex(r"a*"), "-"), tokens_of(st.from_regex("[ab]{0,6}", fullmatch=True))),
    ("Replace-regex-class", Replace(regex=r"\p{L}+", content="L"),
     hf.Replace(tokenizers.Regex(r"\p{L}+"), "L"), tokens_of(ANY_TOKEN)),
    ("Sequence-llama2", Sequence([Replace("▁", " "), ByteFallback(), Fuse(), Strip(" ", 1, 0)]),
     hf.Sequence([hf.Replace("▁", " "), hf.ByteFallback(), hf.Fuse(), hf.Strip(" ", 1, 0)]),
     tokens_of(META, BYTE_TOKEN)),
    ("Sequence-nested", Sequence([Sequence([ByteFallback(), Metaspace()]), CTC()]),
     hf.Sequence([hf.Sequence([hf.ByteFallback(), hf.Metaspace()]), hf.CTC()]),
     tokens_of(META, BYTE_TOKEN, CTC_TOKEN)),
    ("Sequence-empty", Sequence([]), hf.Sequence([]), tokens_of(ANY_TOKEN)),
]


def reference_chain(decoder, tokens: list) -> list:
    """tokenizers' ``decode_chain`` of ``decoder``, read off through the space marks."""
    marked = hf.Sequence([decoder, hf.Replace(" ", SPACE), hf.WordPiece(NO_PREFIX, cleanup=False)])
    text = marked.decode(tokens)
    return [t.replace(SPACE, " ") for t in text.split(" ")]


def outcome(fn, *args):
    """The result, or the fact that it raised (tokenizers panics where fasttok raises)."""
    try:
        return fn(*args)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # pyo3's PanicException is a BaseException
        return "<raised>"


def chain_agrees(ours: list, theirs: list) -> bool:
    # the read-off cannot tell [] from [""]
    return ours == theirs or (ours in ([], [""]) and theirs in ([], [""]))


@pytest.mark.parametrize("name,ours,theirs,tokens", PAIRS, ids=[p[0] for p in PAIRS])
def test_decoder_decodes_as_tokenizers_on_hypothesis_tokens(name, ours, theirs, tokens):
    @SETTINGS
    @given(tokens)
    def check(tokens):
        assert outcome(ours.decode, tokens) == outcome(theirs.decode, tokens), tokens
        mine, ref = outcome(ours.decode_chain, tokens), outcome(reference_chain, theirs, tokens)
        assert mine == ref or chain_agrees(mine, ref), tokens

    check()


def test_strip_raises_where_tokenizers_panics():
    for tokens in (["aa"], [""], ["a"]):
        assert outcome(Strip("a", 3, 3).decode, tokens) == outcome(hf.Strip("a", 3, 3).decode, tokens) \
            == "<raised>"
    assert outcome(hf.Strip("a", 2, 1).decode, ["aa"]) == "<raised>"
    with pytest.raises(FasttokError):
        Strip("a", 2, 1).decode(["aa"])


# ---------------------------------------------------------------- decoder_from_json
def _reference_decoder(spec):
    document = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                "normalizer": None, "pre_tokenizer": None, "post_processor": None,
                "decoder": spec, "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}
    try:
        return tokenizers.Tokenizer.from_str(json.dumps(document)).decoder
    except Exception:
        return None


def _ours(spec):
    def fail(where, problem):
        return FasttokError(f"{where}: {problem}")
    try:
        return decoder_from_json(spec, "$.decoder", fail)
    except FasttokError:
        return None


SPECS = [
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": False},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": None},
    {"type": "ByteLevel"},
    {"type": "ByteLevel", "trim_offsets": True, "use_regex": True},
    {"type": "Metaspace", "replacement": "▁"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True, "prepend_scheme": "never"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "never"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "first"},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": None, "split": None},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "Always"},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": None},
    {"type": "Metaspace", "replacement": "▁", "str_rep": "▁"},
    {"type": "Metaspace", "replacement": "▁", "str_rep": 5},
    {"type": "Metaspace", "replacement": "▁", "add_prefix_space": 1},
    {"type": "Metaspace", "replacement": "ab"},
    {"type": "Metaspace", "replacement": ""},
    {"type": "Metaspace"},
    {"type": "WordPiece", "prefix": "##", "cleanup": True},
    {"type": "WordPiece", "prefix": "##", "cleanup": 0},
    {"type": "WordPiece", "cleanup": True},
    {"type": "WordPiece"},
    {"type": "BPEDecoder", "suffix": "</w>"},
    {"type": "BPEDecoder", "suffix": ""},
    {"type": "BPEDecoder"},
    {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    {"type": "Strip", "content": " ", "start": 1},
    {"type": "Strip", "content": " ", "start": -1, "stop": 0},
    {"type": "Strip", "content": " ", "start": 1.0, "stop": 0},
    {"type": "Strip", "content": " ", "start": True, "stop": 0},
    {"type": "Strip", "content": "ab", "start": 1, "stop": 0},
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "Replace", "pattern": {"Regex": "a+"}, "content": "b"},
    {"type": "Replace", "pattern": {"Regex": "(a"}, "content": "b"},
    {"type": "Replace", "pattern": {"String": "a", "Regex": "b"}, "content": "b"},
    {"type": "Replace", "pattern": {}, "content": "b"},
    {"type": "Replace", "pattern": "a", "content": "b"},
    {"type": "Replace", "pattern": {"String": "a"}},
    {"type": "Fuse"},
    {"type": "Fuse", "unknown": 1},
    {"type": "ByteFallback"},
    {"type": "Sequence", "decoders": []},
    {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Sequence", "decoders": []}]},
    {"type": "Sequence", "decoders": [{"type": "Nope"}]},
    {"type": "Sequence", "decoders": [None]},
    {"type": "Sequence", "decoders": None},
    {"type": "Sequence"},
    {"type": "Nope"},
    {"type": 5},
    {"replacement": "▁", "prepend_scheme": "always", "split": True},
    [],
    "Fuse",
]


@pytest.mark.parametrize("spec", SPECS, ids=[json.dumps(s, ensure_ascii=False) for s in SPECS])
def test_decoder_from_json_accepts_what_tokenizers_accepts(spec):
    reference, ours = _reference_decoder(spec), _ours(spec)
    assert (ours is None) == (reference is None), (ours, reference)
    if ours is not None:
        tokens = ["▁a</w>", "##b", "<0x41>", "Ġc", "<pad>", "|", " d", "e▁"]
        assert ours.decode(tokens) == reference.decode(tokens)


def test_decoder_from_json_names_the_json_path_and_the_known_types():
    def fail(where, problem):
        return FasttokError(f"{where}: {problem}")
    with pytest.raises(FasttokError, match=r"\$\.decoder\.decoders\[1\]\.stop: missing"):
        decoder_from_json({"type": "Sequence", "decoders": [
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1}]}, "$.decoder", fail)
    with pytest.raises(FasttokError, match=r"\$\.decoder\.type: unknown decoder type 'X'; known: "
                                           r"BPEDecoder, ByteFallback, ByteLevel, CTC"):
        decoder_from_json({"type": "X"}, "$.decoder", fail)
    assert decoder_from_json(None, "$.decoder", fail) is None


# ---------------------------------------------------------------- the shared files
@functools.lru_cache(maxsize=None)
def shared_file(name: str):
    """(tokenizers.Tokenizer, fasttok decoder) of one shared ``tokenizer.json``."""
    path = HF_DIR / name
    spec = json.loads(path.read_text(encoding="utf-8"))["decoder"]
    return tokenizers.Tokenizer.from_file(str(path)), _ours(spec)


def known_tokens(tok, ids) -> list:
    """The tokens of ``ids`` as ``Tokenizer.decode`` gathers them: ids without one left out."""
    return [t for t in map(tok.id_to_token, ids) if t is not None]


@functools.lru_cache(maxsize=None)
def line_ids(tok) -> list:
    """(label, ids of ``Tokenizer.encode``) for every line of ``lines.jsonl``."""
    lines = read_jsonl(DATA / "testcases" / "lines.jsonl")
    return [(f"line {c['id']}", tok.encode(c["text"]).ids) for c in lines]


@needs_data
@pytest.mark.parametrize("name", HF_FILES)
def test_shared_file_decoder_decodes_lines_as_tokenizers(name):
    tok, ours = shared_file(name)
    assert ours is not None
    mismatches = Mismatches(f"{name} decoder")
    for label, ids in line_ids(tok):
        tokens = known_tokens(tok, ids)
        expected = tok.decoder.decode(tokens)
        got = ours.decode(tokens)
        mismatches.check(None if got == expected else f"{got!r} != {expected!r}", label)
        chain = ours.decode_chain(tokens)
        ref = reference_chain(tok.decoder, tokens)
        mismatches.check(None if chain_agrees(chain, ref) else f"chain {chain!r} != {ref!r}",
                         label + " chain")
    mismatches.assert_none()


@needs_data
@pytest.mark.parametrize("name", HF_FILES)
def test_shared_file_decoder_decodes_random_ids_as_tokenizers(name):
    tok, ours = shared_file(name)
    size = tok.get_vocab_size()

    @SETTINGS
    @given(st.lists(st.integers(0, size - 1), max_size=16))
    def check(ids):
        tokens = known_tokens(tok, ids)
        assert ours.decode(tokens) == tok.decoder.decode(tokens), ids

    check()


# ---------------------------------------------------------------- streaming
@functools.lru_cache(maxsize=None)
def token_lookup(tok):
    """``token_of(id, skip_special_tokens)`` for :class:`HFDecodeStream`, from ``tok``."""
    special = {i for i, t in tok.get_added_tokens_decoder().items() if t.special}

    def token_of(i, skip_special_tokens):
        if skip_special_tokens and i in special:
            return None
        return tok.id_to_token(i)

    return token_of


def stream_outcomes(stream, step_with, ids) -> list:
    out = []
    for i in ids:
        try:
            out.append(step_with(stream, i))
        except Exception:
            out.append("<raised>")
            break
    return out


def compare_streams(tok, ours, ids, skip: bool, prefill=()) -> str | None:
    theirs = tokenizers.decoders.DecodeStream(list(prefill) or None, skip)
    mine = HFDecodeStream(ours, skip, list(prefill))
    token_of = token_lookup(tok)
    expected = stream_outcomes(theirs, lambda s, i: s.step(tok, i), ids)
    got = stream_outcomes(mine, lambda s, i: s.step(token_of, i), ids)
    return None if got == expected else f"ids {ids}: {got!r} != {expected!r}"


@needs_data
@pytest.mark.parametrize("skip", [False, True], ids=["keep-special", "skip-special"])
@pytest.mark.parametrize("name", HF_FILES)
def test_stream_steps_as_tokenizers_decode_stream_on_lines(name, skip):
    tok, ours = shared_file(name)
    mismatches = Mismatches(f"{name} DecodeStream")
    for label, ids in line_ids(tok):
        mismatches.check(compare_streams(tok, ours, ids, skip), label)
    mismatches.assert_none()


@needs_data
@pytest.mark.parametrize("name", HF_FILES)
def test_stream_steps_as_tokenizers_decode_stream_on_random_ids(name):
    tok, ours = shared_file(name)
    size = tok.get_vocab_size()

    @SETTINGS
    @given(st.lists(st.integers(0, size - 1), max_size=12), st.booleans(),
           st.lists(st.integers(0, size - 1), max_size=3))
    def check(ids, skip, prefill):
        problem = compare_streams(tok, ours, ids, skip, prefill)
        assert problem is None, problem

    check()


def test_stream_takes_lists_and_token_strings():
    stream = HFDecodeStream(ByteFallback())
    assert stream.step(None, ["<0xE5>", "<0x8F>"]) is None
    assert stream.step(None, "<0xAB>") == "叫"


@needs_data
def test_stream_without_decoder_joins_tokens_with_spaces_as_tokenizers():
    document = json.loads((HF_DIR / "all-MiniLM-L6-v2" / "tokenizer.json").read_text(encoding="utf-8"))
    document["decoder"] = None
    tok = tokenizers.Tokenizer.from_str(json.dumps(document))
    mismatches = Mismatches("no-decoder DecodeStream")
    for label, ids in line_ids(tok):
        mismatches.check(compare_streams(tok, None, ids, False), label)
    mismatches.assert_none()
