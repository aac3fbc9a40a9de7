"""fasttok's tokenizer.json normalizers against the live ``tokenizers`` 0.23.3.

For each normalizer (and each of its options) built from one JSON spec by
both libraries: the normalized text (``normalize_str``, and the text of the
alignment path) and the original span of every normalized character (read
from ``tokenizers`` through a ``Tokenizer``, see ``hf_components``), on
hypothesis text and on every line of ``testcases/lines.jsonl``; then the
normalizers of every shared ``tokenizer.json``; then the factory's errors.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from conftest import DATA, Mismatches, read_jsonl
from hf_components import (char_tokenizer, code_point_blocks, fail, ours_alignments,
                           reference_alignments, texts)

from fasttok.loaders.hf_stage_json import normalizer_from_json

tokenizers = pytest.importorskip("tokenizers")

SPECS = {
    "NFC": {"type": "NFC"},
    "NFD": {"type": "NFD"},
    "NFKC": {"type": "NFKC"},
    "NFKD": {"type": "NFKD"},
    "Lowercase": {"type": "Lowercase"},
    "Strip": {"type": "Strip", "strip_left": True, "strip_right": True},
    "Strip_left": {"type": "Strip", "strip_left": True, "strip_right": False},
    "Strip_right": {"type": "Strip", "strip_left": False, "strip_right": True},
    "StripAccents": {"type": "StripAccents"},
    "NFD_StripAccents": {"type": "Sequence", "normalizers": [{"type": "NFD"},
                                                            {"type": "StripAccents"}]},
    "Replace_string": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
    "Replace_longer": {"type": "Replace", "pattern": {"String": "a"}, "content": "xyz"},
    "Replace_removing": {"type": "Replace", "pattern": {"String": "``"}, "content": "\""},
    "Replace_regex": {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
    "Replace_regex_empty_matches": {"type": "Replace", "pattern": {"Regex": "a*"}, "content": "_"},
    "Replace_regex_classes": {"type": "Replace", "pattern": {"Regex": r"[\p{P}\p{S}]"},
                              "content": ""},
    "Prepend": {"type": "Prepend", "prepend": "▁"},
    "Prepend_long": {"type": "Prepend", "prepend": "<s>"},
    "Bert": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
             "strip_accents": None, "lowercase": True},
    "Bert_cased": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                   "strip_accents": None, "lowercase": False},
    "Bert_strip_cased": {"type": "BertNormalizer", "clean_text": False,
                         "handle_chinese_chars": False, "strip_accents": True,
                         "lowercase": False},
    "Bert_keep_accents": {"type": "BertNormalizer", "clean_text": True,
                          "handle_chinese_chars": False, "strip_accents": False,
                          "lowercase": True},
    "ByteLevel": {"type": "ByteLevel"},
    "Nmt": {"type": "Nmt"},
    "Sequence": {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "},
                                              "content": "▁"}]},
}


def _precompiled_spec() -> dict:
    path = DATA / "vocab" / "hf" / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return json.loads(path.read_text(encoding="utf-8"))["normalizer"]


_PAIRS: dict = {}


def _pair(name: str) -> tuple:
    if name not in _PAIRS:
        spec = _precompiled_spec() if name == "Precompiled" else SPECS[name]
        theirs = char_tokenizer(spec)
        _PAIRS[name] = (normalizer_from_json(spec, "$.normalizer", fail), theirs)
    return _PAIRS[name]


def _problem(ours, theirs, text: str) -> str | None:
    expected = theirs.normalizer.normalize_str(text) if theirs.normalizer else text
    fast = ours.normalize_str(text)
    normalized, alignments = ours_alignments(ours, text)
    if fast != expected:
        return f"normalize_str({text!r}) = {fast!r}, tokenizers {expected!r}"
    if normalized != expected:
        return f"normalize({text!r}) gives {normalized!r}, tokenizers {expected!r}"
    reference = reference_alignments(theirs, text)
    if alignments != reference:
        return f"alignments of {text!r} -> {normalized!r}: {alignments}, tokenizers {reference}"
    return None


NAMES = sorted(SPECS) + ["Precompiled"]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_normalizer_matches_tokenizers_on_generated_text(name, text):
    ours, theirs = _pair(name)
    problem = _problem(ours, theirs, text)
    assert problem is None, problem


@pytest.mark.parametrize("name", NAMES)
def test_normalizer_matches_tokenizers_on_test_lines(name, test_strings):
    ours, theirs = _pair(name)
    found = Mismatches(f"normalizer {name} on lines.jsonl")
    for case in test_strings:
        found.check(_problem(ours, theirs, case["text"]), str(case["id"]))
    found.assert_none()


# tokenizers' Unicode tables differ from the interpreter's and from fasttok's
# 16.0 ones in version; these walk every code point (each one after a base
# letter, so marks and compositions have something to act on).
UNICODE_DEPENDENT = ["NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Bert",
                     "Bert_strip_cased", "Strip", "Nmt"]


@pytest.mark.slow
@pytest.mark.parametrize("name", UNICODE_DEPENDENT)
def test_normalizer_matches_tokenizers_on_every_code_point(name):
    ours, theirs = _pair(name)
    found = Mismatches(f"normalizer {name} on every code point")
    for block in code_point_blocks():
        text = "".join(f"a{chr(cp)}" for cp in block)
        found.check(_problem(ours, theirs, text), f"U+{block[0]:04X}..U+{block[-1]:04X}")
    found.assert_none()


def _shared_files() -> list:
    base = DATA / "vocab" / "hf"
    return sorted(str(p.relative_to(base)) for p in base.glob("**/*.json")
                  if p.name == "tokenizer.json" or p.parent.name == "unigram")


@pytest.mark.parametrize("relpath", _shared_files())
def test_normalizer_of_each_shared_file_matches_tokenizers(relpath, test_strings):
    spec = json.loads((DATA / "vocab" / "hf" / relpath).read_text(encoding="utf-8"))["normalizer"]
    if spec is None:
        assert normalizer_from_json(None, "$.normalizer", fail) is None
        return
    ours = normalizer_from_json(spec, "$.normalizer", fail)
    theirs = char_tokenizer(spec)
    found = Mismatches(f"normalizer of {relpath} on lines.jsonl")
    for case in test_strings:
        found.check(_problem(ours, theirs, case["text"]), str(case["id"]))
    found.assert_none()


def test_hf_unicode_data_matches_its_generator():
    import shutil
    import subprocess
    import sys

    from conftest import REPO_ROOT

    tools = REPO_ROOT / "tools"
    sys.path.insert(0, str(tools))
    try:
        from gen_hf_unicode import RUST_STD_PIN, TARBALL
        from ucd_package import cache_dir
    finally:
        sys.path.remove(str(tools))
    for tarball in (TARBALL, RUST_STD_PIN.tarball):
        if not (cache_dir() / tarball).is_file():
            pytest.skip(f"{tarball} is not in {cache_dir()} "
                        "(python tools/gen_hf_unicode.py fetches it)")
    if shutil.which("node") is None:
        pytest.skip("the generator needs node to read the case mappings of Unicode 17.0")
    proc = subprocess.run([sys.executable, str(tools / "gen_hf_unicode.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_unknown_normalizer_type_names_the_known_ones():
    with pytest.raises(ValueError, match=r"\$\.normalizer\.type: unknown type 'NFX'; known: .*NFKC"):
        normalizer_from_json({"type": "NFX"}, "$.normalizer", fail)


def test_bad_field_names_its_json_path():
    with pytest.raises(ValueError, match=r"\$\.normalizer\.normalizers\[1\]\.strip_left: expected a boolean"):
        normalizer_from_json({"type": "Sequence", "normalizers": [
            {"type": "NFC"}, {"type": "Strip", "strip_left": 1, "strip_right": True}]},
            "$.normalizer", fail)


def test_missing_field_names_its_json_path():
    with pytest.raises(ValueError, match=r"\$\.normalizer\.content: missing field"):
        normalizer_from_json({"type": "Replace", "pattern": {"String": "a"}}, "$.normalizer", fail)


def test_pattern_must_be_string_or_regex():
    with pytest.raises(ValueError, match=r"\$\.normalizer\.pattern: expected"):
        normalizer_from_json({"type": "Replace", "pattern": {"Glob": "a"}, "content": ""},
                             "$.normalizer", fail)


def test_bad_charsmap_names_its_json_path():
    with pytest.raises(ValueError, match=r"\$\.normalizer\.precompiled_charsmap: not base64"):
        normalizer_from_json({"type": "Precompiled", "precompiled_charsmap": "!!"}, "$.normalizer",
                             fail)


def test_bert_strip_accents_may_be_left_out():
    spec = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
            "lowercase": False}
    assert normalizer_from_json(spec, "$.n", fail).normalize_str("É") == "É"


def test_marks_newer_than_the_normalization_tables_are_not_reordered():
    # U+07FD (Unicode 11.0) has combining class 220, but tokenizers' tables
    # are 9.0: to them it is a starter, and nothing moves around it
    ours, theirs = _pair("NFD")
    assert ours.normalize_str("\u0300\u07fd") == theirs.normalizer.normalize_str("\u0300\u07fd") \
        == "\u0300\u07fd"


@pytest.mark.parametrize("name", ["NFD", "NFKD"])
def test_text_between_characters_newer_than_the_tables_decomposes_as_tokenizers_does(name):
    # such characters part the text, which decomposes piece by piece
    ours, theirs = _pair(name)
    for text in ["é\u0323\u0301\u07fdﬁ\u0345ǅ", "\u07fd\u0300\u0323e\u0301\u1abf한\u0560",
                 "\U0001e000\U0001e000a\u0301\U00016ea0\u1e9b\u0323", "x\u0560"]:
        assert ours.normalize_str(text) == theirs.normalizer.normalize_str(text), ascii(text)


@pytest.mark.parametrize("name", ["NFD", "NFC"])
def test_every_combining_mark_is_ordered_and_composed_as_tokenizers_does(name):
    import unicodedata

    ours, theirs = _pair(name)
    found = Mismatches(f"{name} around every mark with a combining class")
    for cp in range(0x110000):
        c = chr(cp)
        if 0xD800 <= cp < 0xE000 or not unicodedata.combining(c):
            continue
        for text in (f"a\u0300{c}\u0323", f"e{c}\u0301\u0316", f"\u0300{c}", f"{c}\u0300"):
            found.check(_problem(ours, theirs, text), f"U+{cp:04X}")
    found.assert_none()
