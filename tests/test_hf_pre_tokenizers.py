"""fasttok's tokenizer.json pre-tokenizers against the live ``tokenizers`` 0.23.3.

For each pre-tokenizer (and each of its options) built from one JSON spec by
both libraries: the pieces and their offsets (``pre_tokenize_str``) and the
pieces of the string path (``split_str``), on hypothesis text and on every
line of ``testcases/lines.jsonl``; then the pre-tokenizers of every shared
``tokenizer.json``; then the factory's errors.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from conftest import DATA, Mismatches
from hf_components import code_point_blocks, fail, texts, tokenizer_json

from fasttok.loaders.hf_stage_json import pre_tokenizer_from_json

tokenizers = pytest.importorskip("tokenizers")

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def _split(pattern, behavior, invert=False):
    return {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}


SPECS = {
    "ByteLevel": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True},
    "ByteLevel_no_prefix": {"type": "ByteLevel", "add_prefix_space": False,
                            "trim_offsets": False, "use_regex": True},
    "ByteLevel_no_regex": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                           "use_regex": False},
    "Metaspace": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                  "split": True},
    "Metaspace_first": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
                        "split": True},
    "Metaspace_never_unsplit": {"type": "Metaspace", "replacement": "▁",
                                "prepend_scheme": "never", "split": False},
    "Metaspace_legacy": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True,
                         "str_rep": "▁"},
    "Metaspace_underscore": {"type": "Metaspace", "replacement": "_", "prepend_scheme": "always",
                             "split": True},
    "Whitespace": {"type": "Whitespace"},
    "WhitespaceSplit": {"type": "WhitespaceSplit"},
    "BertPreTokenizer": {"type": "BertPreTokenizer"},
    "Punctuation": {"type": "Punctuation"},
    "Punctuation_contiguous": {"type": "Punctuation", "behavior": "Contiguous"},
    "Digits": {"type": "Digits", "individual_digits": False},
    "Digits_individual": {"type": "Digits", "individual_digits": True},
    "CharDelimiterSplit": {"type": "CharDelimiterSplit", "delimiter": " "},
    "UnicodeScripts": {"type": "UnicodeScripts"},
    "Sequence_first_after_split": {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"},
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}]},
    "Split_llama3_isolated": _split({"Regex": LLAMA3_REGEX}, "Isolated"),
    "Split_llama3_removed_inverted": _split({"Regex": LLAMA3_REGEX}, "Removed", True),
    "Split_regex_empty_matches": _split({"Regex": r"\d*"}, "Isolated"),
    "Split_regex_line_anchors": _split({"Regex": r"^\s+|\s+$"}, "Isolated"),
}
for _behavior in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
    SPECS[f"Split_string_{_behavior}"] = _split({"String": " "}, _behavior)
    SPECS[f"Split_string_{_behavior}_inverted"] = _split({"String": " "}, _behavior, True)
    SPECS[f"Split_regex_{_behavior}"] = _split({"Regex": r"\s+|\p{P}"}, _behavior)

_PAIRS: dict = {}


def _pair(name: str, spec: dict | None = None) -> tuple:
    if name not in _PAIRS:
        spec = spec or SPECS[name]
        theirs = tokenizers.Tokenizer.from_str(tokenizer_json(None, spec)).pre_tokenizer
        _PAIRS[name] = (pre_tokenizer_from_json(spec, "$.pre_tokenizer", fail), theirs)
    return _PAIRS[name]


def _problem(ours, theirs, text: str) -> str | None:
    expected = [(piece, tuple(span)) for piece, span in theirs.pre_tokenize_str(text)]
    got = ours.pre_tokenize_str(text)
    if got != expected:
        return f"pre_tokenize_str({text!r}) = {got}, tokenizers {expected}"
    pieces = ours.split_str(text)
    if pieces != [piece for piece, _ in expected]:
        return f"split_str({text!r}) = {pieces}, tokenizers {[p for p, _ in expected]}"
    return None


@pytest.mark.parametrize("name", sorted(SPECS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_pre_tokenizer_matches_tokenizers_on_generated_text(name, text):
    ours, theirs = _pair(name)
    problem = _problem(ours, theirs, text)
    assert problem is None, problem


@pytest.mark.parametrize("name", sorted(SPECS))
def test_pre_tokenizer_matches_tokenizers_on_test_lines(name, test_strings):
    ours, theirs = _pair(name)
    found = Mismatches(f"pre-tokenizer {name} on lines.jsonl")
    for case in test_strings:
        found.check(_problem(ours, theirs, case["text"]), str(case["id"]))
    found.assert_none()


UNICODE_DEPENDENT = ["ByteLevel", "Whitespace", "WhitespaceSplit", "BertPreTokenizer",
                     "Punctuation", "Digits", "UnicodeScripts", "Split_llama3_isolated"]


@pytest.mark.slow
@pytest.mark.parametrize("name", UNICODE_DEPENDENT)
def test_pre_tokenizer_matches_tokenizers_on_every_code_point(name):
    ours, theirs = _pair(name)
    found = Mismatches(f"pre-tokenizer {name} on every code point")
    for block in code_point_blocks(512):
        text = "".join(f"x{chr(cp)}1 {chr(cp)}a" for cp in block)
        found.check(_problem(ours, theirs, text), f"U+{block[0]:04X}..U+{block[-1]:04X}")
    found.assert_none()


def _shared_files() -> list:
    base = DATA / "vocab" / "hf"
    return sorted(str(p.relative_to(base)) for p in base.glob("**/*.json")
                  if p.name == "tokenizer.json" or p.parent.name == "unigram")


@pytest.mark.parametrize("relpath", _shared_files())
def test_pre_tokenizer_of_each_shared_file_matches_tokenizers(relpath, test_strings):
    spec = json.loads((DATA / "vocab" / "hf" / relpath).read_text(encoding="utf-8"))["pre_tokenizer"]
    if spec is None:
        assert pre_tokenizer_from_json(None, "$.pre_tokenizer", fail) is None
        return
    ours, theirs = _pair(relpath, spec)
    found = Mismatches(f"pre-tokenizer of {relpath} on lines.jsonl")
    for case in test_strings:
        found.check(_problem(ours, theirs, case["text"]), str(case["id"]))
    found.assert_none()


@pytest.mark.parametrize("relpath", _shared_files())
def test_pipeline_of_each_shared_file_keeps_tokenizers_offsets(relpath, test_strings):
    # normalizer then pre-tokenizer, and every character of every piece as
    # one token: its offsets are where the alignments of both stages lead
    from fasttok.loaders.hf_stage_json import normalizer_from_json
    from fasttok.shared.normalized import NormalizedString, PreTokenizedString

    spec = json.loads((DATA / "vocab" / "hf" / relpath).read_text(encoding="utf-8"))
    chars = {"type": "Split", "pattern": {"Regex": "(?m:.)"}, "behavior": "Isolated",
             "invert": False}
    steps = [spec["pre_tokenizer"], chars] if spec["pre_tokenizer"] else [chars]
    theirs = tokenizers.Tokenizer.from_str(tokenizer_json(
        spec["normalizer"], {"type": "Sequence", "pretokenizers": steps}))
    normalizer = normalizer_from_json(spec["normalizer"], "$.normalizer", fail)
    pre_tokenizer = pre_tokenizer_from_json(spec["pre_tokenizer"], "$.pre_tokenizer", fail)
    found = Mismatches(f"normalizer + pre-tokenizer of {relpath} on lines.jsonl")
    for case in test_strings:
        text = case["text"]
        ns = NormalizedString(text)
        if normalizer is not None:
            normalizer.normalize(ns)
        pts = PreTokenizedString(ns)
        if pre_tokenizer is not None:
            pre_tokenizer.pre_tokenize(pts)
        ours = [(piece.normalized[i], piece.offsets_of(i, i + 1))
                for piece in pts.splits for i in range(len(piece.normalized))]
        encoding = theirs.encode(text)
        expected = list(zip("".join(p.normalized for p in pts.splits), map(tuple, encoding.offsets)))
        found.check(None if ours == expected and len(encoding.offsets) == len(ours) else
                    f"{text!r}: {ours[:40]} vs tokenizers {expected[:40]} "
                    f"({len(ours)} vs {len(encoding.offsets)} characters)", str(case["id"]))
    found.assert_none()


def test_unknown_pre_tokenizer_type_names_the_known_ones():
    with pytest.raises(ValueError, match=r"\$\.pre_tokenizer\.type: unknown type 'Foo'; known: "
                                         r".*Metaspace"):
        pre_tokenizer_from_json({"type": "Foo"}, "$.pre_tokenizer", fail)


def test_bad_field_names_its_json_path():
    with pytest.raises(ValueError, match=r"\$\.pre_tokenizer\.pretokenizers\[0\]\.behavior: "
                                         r"unknown behavior 'isolated'"):
        pre_tokenizer_from_json({"type": "Sequence", "pretokenizers": [
            _split({"String": " "}, "isolated")]}, "$.pre_tokenizer", fail)


def test_byte_level_needs_trim_offsets():
    with pytest.raises(ValueError, match=r"\$\.p\.trim_offsets: missing field"):
        pre_tokenizer_from_json({"type": "ByteLevel", "add_prefix_space": True}, "$.p", fail)


def test_metaspace_replacement_is_one_character():
    with pytest.raises(ValueError, match=r"\$\.p\.replacement: expected one character"):
        pre_tokenizer_from_json({"type": "Metaspace", "replacement": "ab"}, "$.p", fail)


def test_metaspace_add_prefix_space_false_needs_never():
    with pytest.raises(ValueError, match=r"\$\.p\.add_prefix_space"):
        pre_tokenizer_from_json({"type": "Metaspace", "replacement": "▁",
                                 "add_prefix_space": False}, "$.p", fail)
    spec = {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False,
            "prepend_scheme": "never"}
    assert pre_tokenizer_from_json(spec, "$.p", fail).prepend_scheme == "never"


def test_bad_regex_names_its_json_path():
    with pytest.raises(ValueError, match=r"\$\.p\.pattern\.Regex"):
        pre_tokenizer_from_json(_split({"Regex": "("}, "Isolated"), "$.p", fail)


@pytest.mark.parametrize("behavior", ["Removed", "Isolated", "MergedWithPrevious",
                                      "MergedWithNext", "Contiguous"])
@pytest.mark.parametrize("text", ["", "abc", "a b", " ", "  x  "])
def test_literal_split_that_finds_nothing_or_something_matches_tokenizers(behavior, text):
    from tokenizers.pre_tokenizers import Split as TheirSplit

    from fasttok.pre_tokenizers.split import Split

    for invert in (False, True):
        ours = Split(" ", behavior, invert=invert).split_str(text)
        python_name = "".join("_" + c.lower() if c.isupper() else c for c in behavior)[1:]
        theirs = [p for p, _ in TheirSplit(" ", python_name, invert=invert).pre_tokenize_str(text)]
        assert ours == theirs, (behavior, invert, text)


def test_whitespace_split_cut_chars_are_the_characters_tokenizers_drops():
    from tokenizers.pre_tokenizers import WhitespaceSplit as TheirWhitespaceSplit

    from fasttok.pre_tokenizers.split import WhitespaceSplit

    every = "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))
    kept = TheirWhitespaceSplit().pre_tokenize_str(every)
    dropped, at = [], 0
    for _, (start, end) in kept:
        dropped.append(every[at:start])
        at = end
    dropped.append(every[at:])
    assert WhitespaceSplit.cut_chars() == "".join(dropped)
