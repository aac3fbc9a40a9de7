"""The compiled pre-tokenizer scanners against the ``regex`` module running their patterns.

Every scanner (:data:`fasttok.pre_tokenizers._pretokenize.SCANNERS`) is fuzzed with generated
text biased to where hand-written scanners go wrong: contractions in any case
(with ``'ſ`` and ``'K``, which Unicode case folding matches and llama.cpp does
not), digit runs of many scripts and lengths, whitespace runs before a
non-space and at the end, ``\\r\\n`` mixes, NBSP, U+2028, U+0085, letters,
marks and numbers of many scripts, case changes inside words, and random code
points from every plane (no surrogates). A failure names the first piece that
differs, with the pieces before it and the text around it.

* tiktoken's patterns (:data:`fasttok.pre_tokenizers.patterns._SCANNERS`, both spellings of
  each): the pattern verbatim in ``regex``. ``regex`` may know a newer Unicode
  than the scanners' 16.0 (tiktoken's); characters whose classes differ
  between the two are dropped from the generated text.
* llama.cpp's regex lists (:data:`fasttok.pre_tokenizers.gguf.SCANNERS`): each
  pattern of the list as llama.cpp runs it -- on the text with every non-ASCII
  code point collapsed to its class in llama.cpp's Unicode 15.1 tables, with
  ``\\p{..}`` collapsed alike (:func:`~fasttok.pre_tokenizers.gguf.translate_pattern`)
  -- in ``regex``, each pattern splitting the pieces of the one before.

``FASTTOK_FUZZ_EXAMPLES`` raises the example count for a longer hunt.
"""

from __future__ import annotations

import os
import string
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import DATA, read_jsonl
from fasttok.shared import _unicode
from fasttok.shared import llama_unicode as lu
from fasttok.pre_tokenizers import gguf as gguf_pretokenizers
from fasttok.pre_tokenizers import patterns
from fasttok.pre_tokenizers._pretokenize import SCANNERS, split
from fasttok.pre_tokenizers.gguf import SCANNERS as GGUF_SCANNERS
from fasttok.pre_tokenizers.gguf import pre_tokenizer, translate_pattern

regex = pytest.importorskip("regex")

EXAMPLES = int(os.environ.get("FASTTOK_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                print_blob=False, suppress_health_check=[HealthCheck.too_slow,
                                                         HealthCheck.data_too_large])

# ---------------------------------------------------------------- generated text

WHITESPACE = [" ", "  ", "\t", "\n", "\r", "\r\n", "\n\r", "\x0b", "\x0c", "\u00a0", "\u2028",
              "\u2029", "\u0085", "\u3000", "\u1680", "\u2009", "\u202f", "\x1c", "\x1f", "\u200b"]
DIGITS = ("0123456789" "٠١٢٣٤٥٦٧٨٩" "۴۵" "०१२" "০১" "๑๒" "０１２" "¹²³½" "ⅠⅡⅫ" "①⑳" "〇"
          "\U0001D7CE\U0001D7CF" "\U00010D40\U00010D41")  # last: Garay digits (new in 16.0)
TAILS = ["s", "S", "t", "T", "re", "rE", "Re", "RE", "ve", "VE", "vE", "m", "M", "ll", "LL", "lL",
         "d", "D", "\u017f", "\u017ft", "\u017f\u017f", "\u212a", "k", "x", "", "st", "llo",
         "\u0130"]
WORDS = ["Hello", "HELLO", "hello", "HTMLParser", "iPhone", "McDonald", "ǅemal", "ΣΊΣΥΦΟΣ",
         "Straße", "naïve", "e\u0301", "ﬁ", "ǈ", "Ⅻ", "über", "x", "I", "日本語", "한국어",
         "\u0915\u094d\u0937", "ม\u0e35", "\U00010d4a\U00010d50"]
PUNCT = ["!", "!!", "...", "/", "//", " /", "?!\n", "!\n/", ".\r\n//", "?\n\n/", "--", "'", "’",
         "$", "~", "@", "\\", "😀", "👍🏽", "™", "©", "\u200d", "\ufe0f", "。", "，"]
SCRIPT_CLASSES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No")


def _runs(alphabet, max_size: int):
    return st.text(alphabet=alphabet, min_size=1, max_size=max_size)


def _llama_table_divergences() -> list:
    # Code points llama.cpp's 15.1 tables and the 16.0 tables put in different
    # classes (letter or number; the whitespace sets agree): where the GGUF
    # scanners must not read the 16.0 tables.
    out = []
    for spec, flag in (("L", lu.LETTER), ("N", lu.NUMBER)):
        ours = {cp for lo, hi in _unicode.code_point_ranges(spec) for cp in range(lo, hi + 1)}
        theirs = {cp for lo, hi in lu.class_ranges(flag) for cp in range(lo, hi + 1)}
        out += sorted(ours ^ theirs)
    return [chr(cp) for cp in out if not 0xD800 <= cp <= 0xDFFF]


whitespace_runs = st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=8).map("".join)
fragments = st.one_of(
    whitespace_runs,
    st.tuples(whitespace_runs,
              st.sampled_from(["", "x", "1", "!", "é", "\u0301", "\n", " x"])).map("".join),
    _runs("0123456789", 8),
    _runs(DIGITS, 6),
    st.tuples(st.sampled_from(["", "it", "IT", "we", " ", "1", "é", "O", "x'"]),
              st.sampled_from(["'", "'", "’"]),  # mostly the ASCII apostrophe
              st.sampled_from(TAILS),
              st.sampled_from(["", "x", "T", "t", "é", " ", "s", "\n", "'", "1"])).map("".join),
    st.sampled_from(WORDS),
    st.sampled_from(PUNCT),
    _runs(st.characters(categories=SCRIPT_CLASSES), 6),
    _runs(st.characters(exclude_categories=("Cs",)), 6),
    _runs(st.sampled_from(_llama_table_divergences()), 3),
    st.text(alphabet=string.ascii_letters + string.digits + string.punctuation + " \n", max_size=12),
)
texts = st.lists(fragments, min_size=1, max_size=12).map("".join)

# ---------------------------------------------------------------- the references

# regex's spelling of the class bits the scanners read (FT_L ... FT_LM_LO in unicode_tables.h)
_PROPERTY_BITS = [(r"\p{L}", 0x001), (r"\p{N}", 0x002), (r"\s", 0x004), (r"\p{M}", 0x008),
                  (r"[\p{Lu}\p{Lt}]", 0x010), (r"\p{Ll}", 0x020), (r"[\p{Lm}\p{Lo}]", 0x040)]
_SCANNER_BITS = 0x07F
_PROPERTIES = [(regex.compile(p), bit) for p, bit in _PROPERTY_BITS]


@lru_cache(maxsize=None)
def _same_classes(c: str) -> bool:
    """Whether ``regex`` and the scanners' Unicode 16.0 tables classify ``c`` alike."""
    bits = sum(bit for p, bit in _PROPERTIES if p.match(c))
    return bits == _unicode.class_bits(ord(c)) & _SCANNER_BITS


def _without_version_skew(text: str) -> str:
    return "".join(c for c in text if _same_classes(c))


def regex_split(pattern: str, text: str) -> list:
    """The pieces tiktoken's pattern matches, leftmost first, in ``regex``."""
    return [m.group() for m in regex.compile(pattern).finditer(text)]


def llama_cpp_split(patterns_: tuple, text: str) -> list:
    """llama.cpp's ``unicode_regex_split`` in ``regex``: each pattern splits
    every piece of the last on its own, and unmatched text stays a piece."""
    pieces = [(0, len(text))] if text else []
    for pattern in patterns_:
        compiled, space = translate_pattern(pattern)
        source = text.translate(lu.COLLAPSE if space == "collapsed" else lu.WIDE)
        engine = regex.compile(compiled.pattern, regex.ASCII)
        out = []
        for a, b in pieces:
            last = 0
            for m in engine.finditer(source[a:b]):
                if m.start() > last:
                    out.append((a + last, a + m.start()))
                if m.end() > m.start():
                    out.append((a + m.start(), a + m.end()))
                last = m.end()
            if last < b - a:
                out.append((a + last, b))
        pieces = out
    return [text[a:b] for a, b in pieces]


def first_divergence(got: list, want: list, text: str) -> "str | None":
    """Where the scanner's pieces first differ from the reference's, or ``None``.

    >>> print(first_divergence(["a", "b"], ["ab"], "ab"))  # doctest: +NORMALIZE_WHITESPACE
    piece 0 at character 0: scanner 'a', reference 'ab'
      pieces before: [] text around: '' | 'ab' text: 'ab'
    """
    if got == want:
        return None
    k = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    at = sum(map(len, want[:k]))
    mine = repr(got[k]) if k < len(got) else "<end>"
    theirs = repr(want[k]) if k < len(want) else "<end>"
    return (f"piece {k} at character {at}: scanner {mine}, reference {theirs}\n"
            f"  pieces before: {want[max(0, k - 3):k]!r}\n"
            f"  text around: {text[max(0, at - 20):at]!r} | {text[at:at + 20]!r}\n"
            f"  text: {text!r}")


# ---------------------------------------------------------------- the fuzzers

TIKTOKEN_CASES = sorted((name, pattern) for pattern, name in patterns._SCANNERS.items())
GGUF_CASES = sorted((name, regexes) for regexes, name in GGUF_SCANNERS.items())


def _constant_names(module) -> dict:
    # a pattern (or a list, or its one pattern) -> the first constant of the
    # module holding it, for readable test ids
    names: dict = {}
    for key, value in vars(module).items():
        if key.isupper() and isinstance(value, (str, tuple)):
            names.setdefault(value, key)
    return names


_TIKTOKEN_NAMES = _constant_names(patterns)
_GGUF_NAMES = _constant_names(gguf_pretokenizers)


def _tiktoken_id(case) -> str:
    return f"{case[0]}-{_TIKTOKEN_NAMES[case[1]]}"


def _gguf_id(case) -> str:
    name, regexes = case
    return f"{name}-{_GGUF_NAMES.get(regexes) or _GGUF_NAMES[regexes[0]]}"


@pytest.mark.parametrize("case", TIKTOKEN_CASES, ids=_tiktoken_id)
@FUZZ
@given(text=texts)
@example(text="it'ſ a 'K \u212a'S don'T x'ſt")
@example(text="x  \n  y \r\n\r\n z  \nw")
@example(text="1234567 ٣٤٥٦ 12")
@example(text="HTMLParser McDonald's iPhone é\u0301 a/b\n/ !\n/x")
@example(text="\u4e8c\u5000\u9fff\u4dff \u5000x.\u9fa5\u3042 \u4e00\ua000a\u5000")  # lead bytes E4-EA
def test_tiktoken_scanner_matches_regex(case, text):
    name, pattern = case
    text = _without_version_skew(text)
    problem = first_divergence(split(name, text), regex_split(pattern, text), text)
    assert problem is None, f"{name} scanner vs {pattern!r}: {problem}"


@pytest.mark.parametrize("case", GGUF_CASES, ids=_gguf_id)
@FUZZ
@given(text=texts)
@example(text="it'ſ a 'K \u212a'S don'T x'ſt")
@example(text="x  \n  y \r\n\r\n z  a  1\nw")
@example(text="1234567 ٣٤٥٦ 12 \u1c89 \U00010d40")
@example(text="HTMLParser McDonald's iPhone é\u0301 a/b\n/ !\n/x")
@example(text="\u4e8c\u5000\u9fff\u4dff \u5000x.\u9fa5\u3042 \u4e00\ua000a\u5000")  # lead bytes E4-EA
def test_gguf_scanner_matches_llama_cpp_pattern_list(case, text):
    name, regexes = case
    problem = first_divergence(split(name, text), llama_cpp_split(regexes, text), text)
    assert problem is None, f"{name} scanner vs llama.cpp list {regexes!r}: {problem}"


def test_every_scanner_is_fuzzed():
    assert {n for n, _ in TIKTOKEN_CASES} | {n for n, _ in GGUF_CASES} == set(SCANNERS)


# Letter runs of 1 to 17 ASCII letters (the scanners read them 8 bytes at a
# time) ended by every ASCII character, a non-ASCII letter, a mark, or the end.
_RUN = "HeLLoWorLdaBcXyZqm"
LETTER_RUN_TEXTS = [" ".join(_RUN[:k] + end for k in range(1, 18))
                    for end in [chr(c) for c in range(128)] + ["\u00e9", "\u0301", "\u65e5"]]
LETTER_RUN_TEXTS += [_RUN[:k] for k in range(1, 18)] + ["'" + _RUN[:k] for k in range(1, 18)]


@pytest.mark.parametrize("case", TIKTOKEN_CASES + GGUF_CASES,
                         ids=[_tiktoken_id(c) for c in TIKTOKEN_CASES] + [_gguf_id(c) for c in GGUF_CASES])
def test_scanner_ends_ascii_letter_runs_where_the_pattern_does(case):
    name, pattern = case
    reference = llama_cpp_split if isinstance(pattern, tuple) else regex_split
    for text in LETTER_RUN_TEXTS:
        problem = first_divergence(split(name, text), reference(pattern, text), text)
        assert problem is None, f"{name}: {problem}"


# ---------------------------------------------------------------- single behaviours


def test_qwen2_scanner_takes_one_digit_at_a_time():
    assert split("qwen2", "x 2024") == ["x", " ", "2", "0", "2", "4"]


def test_llama3_pattern_runs_on_the_older_cl100k_scanner():
    assert patterns.scanner_for(patterns.LLAMA3) == "cl100k_legacy"


def test_llama_bpe_vocabularies_run_on_the_cl100k_shaped_scanner():
    assert pre_tokenizer("llama-bpe").scanner == "llama.cpp:llama3"
    assert split("llama.cpp:llama3", "Hello 12345") == split("cl100k_legacy", "Hello 12345")


def test_gguf_scanner_classifies_with_llama_cpp_tables():
    # U+1C89 is a letter in Unicode 16.0 and unassigned in llama.cpp's 15.1
    assert split("gpt2", "a\u1c89") == ["a\u1c89"]
    assert split("llama.cpp:gpt2", "a\u1c89") == ["a", "\u1c89"]


def test_both_tables_make_u5000_to_u9fff_letters():
    # the scanners class a character whose lead byte is E5-E9 from that byte
    # alone, as a letter in either reading
    assert {_unicode.general_category(cp) for cp in range(0x5000, 0xA000)} == {"Lo"}
    assert set(lu.COLLAPSE[0x5000:0xA000]) == {lu.STAND_INS["letter"]}


def test_unicode_16_makes_ub000_to_ucfff_letters():
    # ft_scan.h's Unicode 16 scanners class a character whose lead byte is
    # EB or EC (Hangul syllables) from that byte alone, as a letter
    assert {_unicode.general_category(cp) for cp in range(0xB000, 0xD000)} == {"Lo"}


def test_gguf_contractions_fold_ascii_letters_only():
    # the regex engine folds U+017F to "s"; llama.cpp lowercases, which leaves it
    assert split("cl100k_legacy", "x'ſt") == ["x", "'ſ", "t"]
    assert split("llama.cpp:llama3", "x'ſt") == ["x", "'ſt"]
    assert split("llama.cpp:llama3", "X'LL") == ["X", "'LL"]


def test_no_llama_cpp_lowercase_mapping_makes_a_contraction_letter():
    # why ASCII-only folding is llama.cpp's (?i:'s|...): nothing else lowers to s t m d r e v l
    assert not [cp for cp in range(0x80, 0x110000) if chr(lu.tolower(cp)) in "stmdrevl"]


def test_starcoder_scanner_ends_whitespace_at_a_digit():
    # the list splits off each \p{N} first, so the run before one is at its text's end
    assert split("llama.cpp:starcoder", "a  1 2") == ["a", "  ", "1", " ", "2"]


def test_gguf_lists_with_a_scanner_never_take_the_python_path():
    for pre in ("gpt-2", "llama-bpe", "qwen2", "starcoder", "command-r", "qwen35", "tekken"):
        assert pre_tokenizer(pre).scanner is not None, pre


# one GGUF vocabulary per scanner among llama.cpp's test vocabularies
GGUF_VOCABS = ("gpt-2", "llama-bpe", "qwen2", "qwen35", "starcoder")


@pytest.mark.skipif(not (DATA / "vocab" / "gguf").is_dir(), reason="no GGUF vocabularies")
@pytest.mark.parametrize("name", GGUF_VOCABS)
def test_gguf_scanner_and_python_path_give_the_same_ids_on_the_corpus(name):
    from test_gguf_models import encoding  # shares its cache of loaded vocabularies

    core = encoding(name)._core
    assert core._fast is not None
    texts = [(DATA / "corpus" / f).read_bytes().decode("utf-8")[:100_000]
             for f in ("en.txt", "code.txt", "multi.txt", "zh.txt", "adversarial.txt")]
    texts += [r["text"] for r in read_jsonl(DATA / "testcases" / "lines.jsonl")]
    for text in texts:
        fast, exact = core._fast.encode_ordinary(text), core._exact.encode_ordinary(text)
        if fast != exact:
            problem = first_divergence(core.pre.splitter(text), split(core.pre.scanner, text), text)
            pytest.fail(f"{name}: ids differ on {text[:40]!r}...; pieces: {problem}")


def test_unknown_scanner_names_the_known_ones():
    with pytest.raises(ValueError, match="llama.cpp:qwen2"):
        split("qwen3", "x")


# ---------------------------------------------------------------- DeepSeek-V3's three regexes


def _split_sequence(regexes: tuple):
    """tokenizers' ``Sequence`` of ``Split(Isolated)`` of ``regexes``: text -> pieces."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import pre_tokenizers as pt

    sequence = pt.Sequence([pt.Split(tokenizers.Regex(r), "isolated") for r in regexes])
    return lambda text: [text[a:b] for _, (a, b) in sequence.pre_tokenize_str(text)]


@FUZZ
@given(text=texts)
@example(text="12345 日本語です。ア・\n x~é \x00\x00a \u3040\u3040x  1\t日")
def test_deepseek3_scanner_splits_as_tokenizers_split_sequence(text):
    problem = first_divergence(split("deepseek3", text),
                               _split_sequence(patterns.DEEPSEEK3_SPLITS)(text), text)
    assert problem is None, problem


def _corpus_lines(per_file: "int | None") -> list:
    lines = []
    for path in sorted((DATA / "corpus").glob("*.txt")):
        lines += path.read_text(encoding="utf-8").splitlines(keepends=True)[:per_file]
    return lines + [r["text"] for r in read_jsonl(DATA / "testcases" / "lines.jsonl")]


@pytest.mark.parametrize("per_file", [500, pytest.param(None, marks=pytest.mark.slow)],
                         ids=["head", "whole"])
def test_deepseek3_scanners_split_the_corpus_as_their_references(per_file):
    tokenizers_split = _split_sequence(patterns.DEEPSEEK3_SPLITS)
    llama_cpp_list = pre_tokenizer("deepseek-v3").splitter
    for text in _corpus_lines(per_file):
        for got, want in ((split("deepseek3", text), tokenizers_split(text)),
                          (split("llama.cpp:deepseek-v3", text), llama_cpp_list(text))):
            problem = first_divergence(got, want, text)
            assert problem is None, problem


def test_deepseek3_tokenizer_json_splits_are_llama_cpp_list():
    # the same three patterns, the kanji/kana class spelled by code point in gguf.py
    ours, theirs = patterns.DEEPSEEK3_SPLITS, gguf_pretokenizers.DEEPSEEK3
    assert ours[::2] == theirs[::2]
    kana = [regex.compile(p) for p in (ours[1], theirs[1])]
    assert all(bool(kana[0].match(chr(cp))) == bool(kana[1].match(chr(cp)))
               for cp in range(0x3000, 0xA000))


def test_deepseek3_whitespace_before_a_digit_or_kana_is_whole():
    # the first two regexes cut the text there, so (?!\S) sees the end
    assert split("deepseek3", "a  1") == ["a", "  ", "1"]
    assert split("deepseek3", "a  日") == ["a", "  ", "日"]
    assert split("deepseek3", "a  b") == ["a", " ", " b"]


def test_deepseek3_digits_go_three_at_a_time():
    assert split("deepseek3", "12345") == ["123", "45"]


def test_deepseek3_kana_punctuation_keeps_newlines_out():
    # the kana stretch "ア・" is the third regex's whole text: [\r\n]* finds none
    assert split("deepseek3", "ア・\n") == ["ア", "・", "\n"]
    assert split("deepseek3", "!\n") == ["!\n"]


def test_deepseek3_unmatched_text_is_a_piece_up_to_a_letter_it_leads():
    assert split("deepseek3", "\x00\x00a") == ["\x00", "\x00a"]
    assert split("deepseek3", "\u3040\u3040x") == ["\u3040\u3040", "x"]


def test_llama_cpp_deepseek3_tilde_is_neither_punctuation_nor_symbol():
    # llama.cpp's ASCII \p{S} has no "~", so it may lead a word
    assert split("llama.cpp:deepseek-v3", "x~é") == ["x", "~é"]
    assert split("deepseek3", "x~é") == ["x", "~", "é"]


@pytest.mark.skipif(not (DATA / "vocab" / "gguf").is_dir(), reason="no GGUF vocabularies")
def test_deepseek_v3_scanner_and_python_path_give_the_same_ids_on_the_corpus():
    # no deepseek-v3 vocabulary among llama.cpp's test ones: deepseek-llm's
    # vocabulary (a DeepSeek byte-level BPE) split by deepseek-v3's list
    from fasttok.formats.gguf import GGUFByteBPE, load_gguf_vocabulary

    vocab = load_gguf_vocabulary(DATA / "vocab" / "gguf" / "ggml-vocab-deepseek-llm.gguf")
    model = GGUFByteBPE(vocab.replace(pre_tokenizer="deepseek-v3"))
    assert model.pre.scanner == "llama.cpp:deepseek-v3"
    for text in _corpus_lines(200):
        assert model._fast.encode_ordinary(text) == model._exact.encode_ordinary(text), text


def test_deepseek_v3_gguf_lists_take_the_compiled_scanner():
    for pre in ("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"):
        assert pre_tokenizer(pre).scanner == "llama.cpp:deepseek-v3", pre
