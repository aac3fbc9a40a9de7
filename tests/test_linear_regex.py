"""The linear-time regex engine that runs the patterns vocabulary files bring.

What is specified here:
* every real pattern (tiktoken's, the Split and Replace patterns of the
  tokenizer.json files in the test data, Mistral's tekken.json files,
  llama.cpp's pre-tokenizer lists, the pre-tokenizers' own) matches exactly
  where its ``re`` translation matches, on corpus text and hypothesis text,
  and where the ``regex`` module matches on corpus text;
* the semantics, one behaviour a row: dialect anchors, case folding, lazy,
  possessive and atomic repeats, one-character lookarounds, ``re``'s rule
  for empty matches;
* the cost: VM steps grow linearly with the text on patterns that are
  exponential for a backtracking engine (counted, never timed);
* what cannot run in linear time is refused with an error naming the pattern.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings, strategies as st

from conftest import DATA, read_text
from fasttok.errors import FasttokError, VocabularyFileError
from fasttok.pre_tokenizers import gguf, tiktoken_patterns
from fasttok.pre_tokenizers.byte_level import GPT2_REGEX
from fasttok.pre_tokenizers.split import Split
from fasttok.shared import _linear_regex
from fasttok.shared.regex_translate import (MAX_PROGRAM, compile_generic, compile_onig,
                                            translate_for_re)


def _file_patterns() -> dict:
    """(pattern, Oniguruma?) -> where, for every Split/Replace regex of the test
    data's tokenizer.json files and of mistral_common's tekken.json files."""
    found = {}

    def walk(node, where):
        if isinstance(node, dict):
            spec = node.get("pattern")
            if node.get("type") in ("Split", "Replace") and isinstance(spec, dict) \
                    and "Regex" in spec:
                # fasttok runs the Replace decoder's regex through compile_generic
                found.setdefault((spec["Regex"], "decoder" not in where), where)
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    for path in sorted((DATA / "vocab" / "hf").rglob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")), path.parent.name + "/" + path.name)
    mistral_common = pytest.importorskip("mistral_common")
    for path in sorted(Path(mistral_common.__file__).parent.rglob("tekken*.json")):
        found.setdefault((json.loads(path.read_text(encoding="utf-8"))["config"]["pattern"],
                          False), path.name)
    return found


# The regexes of the vocabulary files, listed so that the default run need not
# parse 60 MB of JSON; test_the_list_holds_every_pattern_of_the_files checks it.
FILE_PATTERNS = {
    "unigram/*.json Replace ' {2,}'": (" {2,}", True),
    "unigram/*.json Replace strip": (r"\A +| +\z", True),
    "unigram/*.json Replace \\A▁": ("\\A▁", True),
    "llama3/tokenizer.json Split": (tiktoken_patterns.LLAMA3, True),
    "qwen3/tokenizer.json Split": (tiktoken_patterns.QWEN2, True),
    "gpt4o/tokenizer.json Split": (tiktoken_patterns.O200K, True),
    "tekken_*.json": (tiktoken_patterns.TEKKEN, False),
}
BUILT_IN = {"ByteLevel": (GPT2_REGEX, True), "Whitespace": (r"\w+|[^\w\s]+", True)}
TIKTOKEN = {f"tiktoken {name}": (getattr(tiktoken_patterns, name), False)
            for name in tiktoken_patterns.__all__}
LLAMA_CPP = {f"llama.cpp {pre} [{i}]": (pattern, False)
             for pre, splitter in sorted(gguf.PRE_TOKENIZERS.items())
             for i, pattern in enumerate(splitter.regexes)}
REAL = {**FILE_PATTERNS, **BUILT_IN, **TIKTOKEN}
CORPUS_CHUNK = 8_000


@functools.cache
def _corpus(chunk) -> str:
    folder = DATA / "corpus"
    return "".join(read_text(folder / name)[:chunk] for name in ("en.txt", "code.txt", "multi.txt", "zh.txt", "adversarial.txt"))


def _compiled(pattern: str, onig: bool):
    return compile_onig(pattern) if onig else compile_generic(pattern)


def _re_spans(pattern: str, onig: bool, text: str) -> list:
    return [m.span() for m in translate_for_re(pattern, onig).finditer(text)]


def _first_difference(got: list, want: list) -> str:
    i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return f"match {i}: engine {got[i:i + 2]}, reference {want[i:i + 2]}"


@pytest.mark.slow
def test_the_list_holds_every_pattern_of_the_files():
    assert set(_file_patterns()) == set(FILE_PATTERNS.values())


@pytest.mark.parametrize("where", sorted(REAL))
def test_real_pattern_matches_re_on_the_corpus(where):
    pattern, onig = REAL[where]
    text = _corpus(CORPUS_CHUNK)
    got, want = _compiled(pattern, onig).spans(text), _re_spans(pattern, onig, text)
    assert got == want, _first_difference(got, want)


@pytest.mark.slow
@pytest.mark.parametrize("where", sorted({**REAL, **LLAMA_CPP}))
def test_real_pattern_matches_re_on_the_whole_corpus(where):
    pattern, onig = {**REAL, **LLAMA_CPP}[where]
    text = _corpus(None)
    got, want = _compiled(pattern, onig).spans(text), _re_spans(pattern, onig, text)
    assert got == want, _first_difference(got, want)


TRICKY = st.sampled_from(list("aAsSkK'’ \t\n\r\x0b\x0c\u00a0\u3000\u2028\u0085"
                              "019٣²ſ\u212aéÉ\u0301ß.,!?/-_$()[]{}中文ア한😀\U0001d400"))
TEXTS = st.text(st.one_of(TRICKY, st.characters()), max_size=40)


@pytest.mark.parametrize("where", sorted(REAL))
@settings(max_examples=30, deadline=None)
@given(text=TEXTS)
def test_real_pattern_matches_re_on_generated_text(where, text):
    pattern, onig = REAL[where]
    assert _compiled(pattern, onig).spans(text) == _re_spans(pattern, onig, text)


def _for_regex_module(pattern: str, onig: bool):
    # The regex module speaks \p{..} and possessive repeats itself; only the
    # ends differ: Rust's $ and Oniguruma's \z are its \Z, Oniguruma's ^ and
    # $ are its multi-line ones.
    if onig:
        return regex.compile(pattern.replace(r"\z", r"\Z"), regex.M)
    return regex.compile(pattern.replace("$", r"\Z"))


# the regex module's \w is not Unicode's word class
@pytest.mark.parametrize("where", sorted(w for w in REAL if w != "Whitespace"))
def test_real_pattern_matches_the_regex_module_on_the_corpus(where):
    pattern, onig = REAL[where]
    text = _corpus(CORPUS_CHUNK)
    got = _compiled(pattern, onig).spans(text)
    want = [m.span() for m in _for_regex_module(pattern, onig).finditer(text)]
    assert got == want, _first_difference(got, want)


# (pattern, Oniguruma?, text, the spans of the matches)
SEMANTICS = {
    "alternation is leftmost-first, not longest": ("a|ab", False, "ab", [(0, 1)]),
    "a lazy repeat takes as little as it can": ("a+?", False, "aaa", [(0, 1), (1, 2), (2, 3)]),
    "a possessive repeat gives nothing back": ("a++a", False, "aaa", []),
    "an atomic group of a repeat is possessive": ("(?>a+)a", True, "aaa", []),
    "a bounded repeat": ("a{2,3}", False, "aaaaaaa", [(0, 3), (3, 6)]),
    "a possessive bounded repeat": (r"\d{1,3}+", False, "12345", [(0, 3), (3, 5)]),
    "Oniguruma's {n,m}+ repeats {n,m}": ("a{1,2}+", True, "aaaaa", [(0, 5)]),
    "empty matches as re.finditer": ("a*", False, "baa", [(0, 0), (1, 3), (3, 3)]),
    "(?i) folds s with long s": ("(?i:'s)", False, "'S 'ſ 's", [(0, 2), (3, 5), (6, 8)]),
    "(?i) folds k with the Kelvin sign": ("(?i)k+", False, "kK\u212a", [(0, 3)]),
    "(?i) on a negated class": ("(?i)[^a]", False, "aAb", [(2, 3)]),
    "Rust's $ is only the end": (r"b$", False, "b\nb", [(2, 3)]),
    "Rust's ^ is only the start": (r"^a", False, "a\na", [(0, 1)]),
    "Rust's (?m) makes them line anchors": (r"(?m)^a$", False, "a\na", [(0, 1), (2, 3)]),
    "Oniguruma's ^ and $ are line anchors": (r"^a$", True, "a\na", [(0, 1), (2, 3)]),
    "Oniguruma's \\Z allows a final newline": (r"a\Z", True, "a\n", [(0, 1)]),
    "Oniguruma's \\z does not": (r"a\z", True, "a\n", []),
    "Oniguruma's (?m) lets . take a newline": ("(?m:.)", True, "\n", [(0, 1)]),
    ". takes no newline by default": (".", True, "\n", []),
    "a one-character negative lookahead": (r"\s+(?!\S)", False, "a   b", [(1, 3)]),
    "a one-character lookbehind": (r"(?<=a)b|(?<!a)c", False, "abcac", [(1, 2), (2, 3)]),
    "word boundaries": (r"\bab\b", False, "ab abc ab", [(0, 2), (7, 9)]),
    "escapes in and out of classes": (r"[\x41-\x{43}\u0064]\t", True, "B\td\t", [(0, 2), (2, 4)]),
    "\\p{..} inside a negated class": (r"[^\s\p{L}]+", False, "ab 12!c", [(3, 6)]),
    "\\h is a hex digit in Oniguruma": (r"\h+", True, "xbeefy", [(1, 5)]),
    "a named group is a group": (r"(?<w>a)+", True, "aab", [(0, 2)]),
    "an iteration that takes nothing ends the loop": ("(?:|a)+", False, "aa",
                                                       [(0, 0), (0, 1), (1, 1), (1, 2), (2, 2)]),
}


@pytest.mark.parametrize("name", sorted(SEMANTICS))
def test_semantics(name):
    pattern, onig, text, spans = SEMANTICS[name]
    assert _compiled(pattern, onig).spans(text) == spans


# patterns a backtracking engine takes exponential (or quadratic) time on
HOSTILE = {
    "(a|aa)+$": lambda n: "a" * n + "b",
    "(a*)*b": lambda n: "a" * n,
    "(x+x+)+y": lambda n: "x" * n,
    r"\s+(?!\S)": lambda n: " " * n + "a",
}


@pytest.mark.parametrize("pattern", sorted(HOSTILE))
def test_steps_grow_linearly_with_the_text(pattern):
    compiled = compile_generic(pattern)
    steps = [compiled.count_steps(HOSTILE[pattern](n)) for n in (100, 200, 400, 800)]
    # linear: each doubling about doubles the steps (quadratic would quadruple them)
    assert all(later < 2.2 * earlier for earlier, later in zip(steps, steps[1:])), steps


def test_rescanning_a_short_text_is_allowed_as_in_re():
    text = "a" * 1000
    assert compile_generic("a+b|a").spans(text) == _re_spans("a+b|a", False, text)


def test_rescanning_a_long_text_quadratically_is_refused():
    with pytest.raises(FasttokError, match=r"'a\+b\|a' makes the regex engine go over this text"):
        compile_generic("a+b|a").spans("a" * 100_000)


def test_a_hostile_split_pattern_runs_on_a_long_text():
    pieces = Split(r"(a|aa)+$", "Isolated", regex=True).split_str("a" * 20_000 + "\nb")
    assert pieces == ["a" * 20_000, "\nb"]


def test_the_callers_get_the_linear_engine():
    assert isinstance(compile_generic(r"\p{L}+"), _linear_regex.Regex)
    assert isinstance(compile_onig(r"\p{L}+"), _linear_regex.Regex)


# (pattern, what the error says)
REFUSED = {
    r"(a)\1": "backreference",
    r"(?=ab)": "lookaround of more than one character class",
    r"(?:ab)++": "possessive repeat of more than one character class",
    r"(?>ab|a)": "atomic group",
    "(?:a{150}){150}": f"{MAX_PROGRAM:,} instructions",
    "(?i)é": "case-insensitive",
    r"(?i)\p{L}": "case-insensitive",
    "(?x)a": "unsupported flag",
    "[[:alpha:]]": "POSIX",
    r"\p{Foo}": "unknown Unicode property",
    "(a": "unterminated group",
    "a**": "multiple repeat",
    r"\q": "unknown escape",
}


@pytest.mark.parametrize("pattern", sorted(REFUSED))
def test_what_cannot_run_linearly_is_refused_naming_the_pattern(pattern):
    with pytest.raises(FasttokError) as caught:
        compile_onig(pattern)
    assert repr(pattern) in str(caught.value) and REFUSED[pattern] in str(caught.value)


def test_a_refused_tokenizer_json_pattern_names_the_file_field():
    import fasttok.hf
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
           "normalizer": None, "post_processor": None, "decoder": None,
           "pre_tokenizer": {"type": "Split", "pattern": {"Regex": r"(a)\1"},
                             "behavior": "Isolated", "invert": False},
           "model": {"type": "WordLevel", "vocab": {"a": 0, "[UNK]": 1}, "unk_token": "[UNK]"}}
    with pytest.raises(VocabularyFileError, match=r"pre_tokenizer\.pattern\.Regex.*backreference"):
        fasttok.hf.Tokenizer.from_str(json.dumps(doc))


# a repeat's bounds as both dialects' parsers here read them: {n}, {n,},
# {,m}, {n,m} with digits as re's \d reads them; any other brace is itself
BOUNDS = re.compile(r"\{(\d+)?(?:,(\d+)?)?\}")


@settings(max_examples=300, deadline=None)
@given(inside=st.text(",01٣}a", max_size=5))
def test_a_brace_is_a_bounded_repeat_where_the_bounds_grammar_reads_one(inside):
    brace = "{" + inside
    m = BOUNDS.match(brace)
    if m is None or m.group(1) is None and m.group(2) is None:
        engine = compile_onig(f"^x{brace}$")
        assert engine.search("x" + brace) is not None and engine.search("xx" + brace) is None
        return
    lo = int(m.group(1) or 0)
    hi = int(m.group(2)) if m.group(2) else None if "," in m.group(0) else lo
    if hi is not None and hi < lo:
        with pytest.raises(FasttokError, match="maximum below its minimum"):
            compile_onig(f"^x{brace}$")
        return
    engine, rest = compile_onig(f"^x{brace}$"), brace[m.end():]
    for k in range(8):
        matched = engine.search("x" * k + rest) is not None
        assert matched == (lo <= k and (hi is None or k <= hi)), (brace, k)


def test_search_sees_the_text_before_its_start():
    assert compile_onig("^a").search("aba", 1) is None
    assert compile_generic("(?<=b)a").search("aba", 1).span() == (2, 3)
