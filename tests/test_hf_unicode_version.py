"""fasttok follows the Unicode versions of the installed ``tokenizers`` 0.23.3, on every code point.

``tokenizers`` mixes Unicode versions: its normalization crate is 9.0,
``unicode_categories`` 8.0, Rust's ``regex`` 16.0 and Rust's standard library
(lowercase, ``is_numeric``) 17.0, while the interpreter's ``unicodedata`` is
14.0 (:mod:`fasttok.shared.hf_unicode`). Each test here sweeps every code point
(surrogates aside: a Rust string cannot hold them) through one stage of both
libraries at once, as one text with ``|`` between the characters (a
character alone normalizes alike between ``|``); then combining marks newer
than 9.0 go through whole ``tokenizer.json`` files, by ``fasttok.load`` (the
fused paths) and by ``fasttok.hf.Tokenizer`` (the pipeline).
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, Mismatches
from hf_components import char_tokenizer, fail

import fasttok
import fasttok.hf
from fasttok.loaders.hf_stage_json import normalizer_from_json, pre_tokenizer_from_json
from fasttok.shared import _unicode
from fasttok.shared.hf_unicode import normalization_newer

tokenizers = pytest.importorskip("tokenizers")

EVERY_CHAR = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and cp != 0x7C]


@functools.cache
def _every_char_text() -> str:
    return "|".join(EVERY_CHAR)


def _first_difference(ours: str, theirs: str) -> str:
    # the first character whose output differs, read between the "|"s
    for c, a, b in zip(EVERY_CHAR, ours.split("|"), theirs.split("|")):
        if a != b:
            return f"U+{ord(c):04X}: fasttok {a!r}, tokenizers {b!r}"
    return f"the outputs differ in length: {len(ours)} and {len(theirs)}"


BERT = {"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": False,
        "strip_accents": False, "lowercase": False}
NORMALIZERS = {
    "Lowercase": {"type": "Lowercase"},
    "Bert_clean_text": BERT | {"clean_text": True},
    "Bert_handle_chinese_chars": BERT | {"handle_chinese_chars": True},
    "Bert_strip_accents": BERT | {"strip_accents": True},
    "Bert_lowercase": BERT | {"lowercase": True},
}


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_normalizer_maps_every_code_point_as_tokenizers_does(name):
    spec = NORMALIZERS[name]
    text = _every_char_text()
    theirs = char_tokenizer(spec).normalizer.normalize_str(text)
    # (the alignment-keeping path takes half a minute here: the slow sweep of
    # test_hf_normalizers.py runs it)
    ours = normalizer_from_json(spec, "$.normalizer", fail).normalize_str(text)
    assert ours == theirs, _first_difference(ours, theirs)


def test_a_digit_new_in_unicode_17_is_numeric_to_digits():
    # U+11DE0..U+11DE9 (Tolong Siki digits) are Nd since Unicode 17.0, which
    # is Rust's char::is_numeric here and not fasttok's 16.0 tables
    spec = {"type": "Digits", "individual_digits": False}
    text = "a\U00011de0\U00011de1b"
    theirs = [p for p, _ in tokenizers.pre_tokenizers.Digits(individual_digits=False)
              .pre_tokenize_str(text)]
    assert pre_tokenizer_from_json(spec, "$.pre_tokenizer", fail).split_str(text) == theirs \
        == ["a", "\U00011de0\U00011de1", "b"]


@pytest.mark.slow
@pytest.mark.parametrize("individual", [False, True])
def test_digits_splits_every_code_point_as_tokenizers_does(individual):
    theirs = tokenizers.pre_tokenizers.Digits(individual_digits=individual)
    ours = pre_tokenizer_from_json({"type": "Digits", "individual_digits": individual},
                                   "$.pre_tokenizer", fail)
    found = Mismatches("Digits on every code point")
    for k in range(0, len(EVERY_CHAR), 4096):
        text = "".join(EVERY_CHAR[k:k + 4096])
        expected = [p for p, _ in theirs.pre_tokenize_str(text)]
        got = ours.split_str(text)
        found.check(None if got == expected else f"{got[:8]} != {expected[:8]}",
                    f"U+{ord(text[0]):04X}..")
    found.assert_none()


def _single_word_probe():
    # an added token that only counts when no word character touches it
    from tokenizers import AddedToken, Tokenizer, models

    theirs = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    theirs.add_tokens([AddedToken("zz", single_word=True)])
    return theirs


def _word_chars_disagreeing(chars: list) -> list:
    from fasttok.added_tokens.hf_added import is_word_char

    found = _single_word_probe().encode_batch([f"{c}zz" for c in chars],
                                              add_special_tokens=False)
    return [f"U+{ord(c):04X}" for c, e in zip(chars, found) if is_word_char(c) == (1 in e.ids)]


def test_added_tokens_see_the_word_characters_of_tokenizers_in_the_bmp():
    # Rust regex's \w of Unicode 16.0: Ⅻ (Nl, Alphabetic) is one, ᜕ (U+1715,
    # Mc since 14.0) and 𞓐 (16.0) too; str.isalpha says no to the first
    chars = [c for c in EVERY_CHAR if ord(c) < 0x10000] + ["\U0001e4d0", "\U00016ea0"]
    assert _word_chars_disagreeing(chars) == []


@pytest.mark.slow
def test_added_tokens_see_the_word_characters_of_tokenizers_everywhere():
    assert _word_chars_disagreeing(EVERY_CHAR) == []


# ---------------------------------------------------------------- combining marks


@functools.cache
def _newer_marks() -> list:
    # the marks (Mn, Mc, Me in fasttok's 16.0 tables) assigned after Unicode
    # 9.0: starters without composition to tokenizers' normalization crate,
    # marks with a combining class to the interpreter
    return [chr(cp) for lo, hi in _unicode.code_point_ranges("M") for cp in range(lo, hi + 1)
            if normalization_newer().match(chr(cp))]


def _mark_probes() -> list:
    marks = _newer_marks()
    probes = []
    for m, other in zip(marks, marks[1:] + marks[:1]):
        probes += [f"a{m}\u0301", f"a\u0301{m}", f"e\u0323{m}\u0301", f"{m}\u0301",
                   f"a{m}{other}", f"o{other}{m}\u0308"]
    return probes


def _shared_files() -> list:
    base = DATA / "vocab" / "hf"
    return sorted(str(p.relative_to(base)) for p in base.glob("**/*.json")
                  if p.name == "tokenizer.json" or p.parent.name == "unigram")


# Gemma 3's 33 MB file takes about 15 s to load three times, and its
# normalizer only replaces spaces: it goes with the slow run
BIG = {"gemma3/tokenizer.json"}


@functools.cache
def _three(relpath: str) -> tuple:
    path = str(DATA / "vocab" / "hf" / relpath)
    with open(path, encoding="utf-8") as f:
        if json.load(f).get("normalizer") is None:
            pytest.skip(f"{relpath} has no normalizer")
    theirs = tokenizers.Tokenizer.from_file(path)
    pipeline = fasttok.hf.Tokenizer.from_file(path)
    # the probes go as one long text: BERT's file pads and truncates to 128
    for t in (theirs, pipeline):
        t.no_padding()
        t.no_truncation()
    return fasttok.load(path), pipeline, theirs


def _disagreements(relpath: str, probes: list, glue: str = " ") -> list:
    # all probes as one text, then probe by probe where that one differs
    ours, pipeline, theirs = _three(relpath)

    def problem(text: str) -> str | None:
        expected = theirs.encode(text, add_special_tokens=False).ids
        fused = ours.encode(text, allowed_special="all")
        piped = pipeline.encode(text, add_special_tokens=False).ids
        if fused != expected or piped != expected:
            return f"{text!a}: fasttok.load {fused}, fasttok.hf {piped}, tokenizers {expected}"
        return None

    if problem(glue.join(probes)) is None:
        return []
    return [p for p in map(problem, probes) if p is not None]


@pytest.mark.parametrize("relpath", [
    pytest.param(f, marks=pytest.mark.slow) if f in BIG else f for f in _shared_files()])
def test_marks_newer_than_the_normalization_tables_encode_as_tokenizers_does(relpath):
    found = _disagreements(relpath, _mark_probes())
    assert not found, f"{len(found)} probes differ; first: {found[:3]}"


@pytest.mark.slow
@pytest.mark.parametrize("relpath", _shared_files())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(data=st.data())
def test_runs_of_marks_encode_as_tokenizers_does(relpath, data):
    marks = _newer_marks() + ["\u0301", "\u0323", "\u0308", "\u0345", "\u1dce", "\u302a"]
    bases = ["a", "e", "o", "Ω", "ᄀ", "가", "ก", " ", "\u0301", ""]
    runs = st.tuples(st.sampled_from(bases), st.lists(st.sampled_from(marks), max_size=6))
    probes = data.draw(st.lists(runs.map(lambda r: r[0] + "".join(r[1])), min_size=1,
                                max_size=8))
    found = _disagreements(relpath, ["".join(probes)])
    assert not found, found[0]
