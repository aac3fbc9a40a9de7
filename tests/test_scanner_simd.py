"""The scanners' 16-byte reads (ft_scan.h) give the pieces of their byte-at-a-time path.

Every scanner splits each text twice, once as handed out by default (SSE2 or
NEON where the build has them) and once after ``use_simd(False)``; the
pieces must be the same. The texts put the 16-byte windows' edges
everywhere: ASCII words of 1-40 letters after 0-40 bytes of lead-in (so a
run starts and ends at every offset of a window), a non-ASCII letter, mark,
space or punctuation at every offset, runs of ASCII punctuation, digits and
whitespace followed by every kind of character or the end, texts of 15-17
bytes around the 16-byte minimum, hypothesis text that is mostly ASCII, and words and hypothesis text of
two- and three-byte letters of each case, marks and non-letters (mixed
scripts, accents, case changes, a letter at the end of a text or of 16
bytes), and o200k's pieces led by a non-ASCII character that is no letter
(quotes, CJK punctuation, spaces, symbols) or by ASCII, whatever follows
(letters of each case, punctuation, four-byte characters). That the byte
path splits as the regexes do is test_pretokenizer_scanners.py's job.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasttok.pre_tokenizers._pretokenize import SCANNERS, split, use_simd

# non-ASCII characters that may continue, end or lead a run of letters
NON_ASCII = ["é", "\u0301", "日", "\u00a0", "\u3000", "’", "ſ", "\u212a", "١", "😀"]
ASCII = string.ascii_letters + string.digits + string.punctuation + " \t\n\r"


def both_ways(name: str, text: str) -> tuple:
    """``text``'s pieces from the default scanner and from the byte-at-a-time one."""
    previous = use_simd(False)
    try:
        portable = split(name, text)
    finally:
        use_simd(previous)
    return split(name, text), portable


def assert_same_pieces(text: str) -> None:
    for name in SCANNERS:
        fast, portable = both_ways(name, text)
        assert fast == portable, f"{name} on {text!r}"


@pytest.mark.parametrize("lead_in", range(0, 41))
def test_ascii_words_end_alike_at_every_window_offset(lead_in):
    words = " ".join("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"[:k] for k in range(1, 41))
    for lead in ("x" * lead_in + " ", "1" * lead_in + " ", " " * lead_in, "." * lead_in):
        assert_same_pieces(lead + words)
        assert_same_pieces(lead + words.swapcase())  # o200k: [A-Z]*[a-z]* pieces
        assert_same_pieces(lead + words.replace(" ", "'"))
        assert_same_pieces(lead + words.replace(" ", "'s "))  # contractions after a run


@pytest.mark.parametrize("char", NON_ASCII)
def test_a_non_ascii_character_at_every_offset_is_read_alike(char):
    for offset in range(0, 40):
        word = "Hello" * 8
        assert_same_pieces(word[:offset] + char + word[offset:] + " and more words here")
        assert_same_pieces(" " + word[:offset] + char + " x " * 8)
        assert_same_pieces("!" * offset + char + "abc" * 10)


# pieces of ASCII punctuation, digits and whitespace (ft_ascii_other)
RUNS = [",", "!!", ".)", " (", " '", "'", "/", ".../", "1", "12", "123", "1234", " ", "  ", "   ",
        "\t", " \t ", "\n", "\n\n", " \n", "  \n  ", "\r\n", ".\n", ",/\n", ", ", " 1", "  1"]
AFTER = NON_ASCII + ["a", "A", "1", " ", "\n", "'", "/", ".", ""]


@pytest.mark.parametrize("run", RUNS)
def test_ascii_punctuation_digit_and_space_runs_end_alike_whatever_follows(run):
    for after in AFTER:
        for lead_in in ("", "word", "x" * 20 + " "):
            text = lead_in + run + after
            assert_same_pieces(text + " tail of sixteen bytes")
            assert_same_pieces(("y" * 16 + " " + text)[-max(16, len(text)):])
            assert_same_pieces("z" * 16 + text)  # the run at the text's end
            assert_same_pieces(text)  # under 16 bytes: no window


@pytest.mark.parametrize("word", ["a", "ab", "Ab", "AB", "aB", "ABc", "abC", "It's", "DON'T", "x1"])
def test_words_in_texts_under_sixteen_bytes_end_alike(word):
    for lead in ("", " ", ".", "'", "\n", "1", "é"):
        for after in AFTER:
            assert_same_pieces(lead + word + after)
            assert_same_pieces(lead + word + after + " " + word)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(text=st.text(alphabet=st.sampled_from(list(" \t\n\r.,;:!?()'/-_1234567890") + ["a", "Z"]
                                             + NON_ASCII), max_size=80))
def test_punctuation_digit_and_space_text_is_read_alike(text):
    assert_same_pieces("w" * 16 + text)
    assert_same_pieces(text + "w" * 16)
    assert_same_pieces(text[:15])


def test_texts_around_sixteen_bytes_are_read_alike():
    for length in (15, 16, 17, 31, 32, 33):
        for word in ("a" * length, " " + "b" * (length - 1), "x" * (length - 1) + "é",
                     "'" + "s" * (length - 1), "1" + "z" * (length - 1)):
            assert_same_pieces(word)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(text=st.text(alphabet=st.sampled_from(list(ASCII) + list(string.ascii_lowercase * 4)
                                             + NON_ASCII), max_size=120))
def test_mostly_ascii_text_is_read_alike(text):
    assert_same_pieces(text)


# two- and three-byte characters (ft_scan.h's ft_class_short): letters of
# each case (o200k's U and W), Lm and Lo (in both; U+5000-U+9FFF read from
# the lead byte, U+4E00 not), marks, letters folding to ASCII, and
# non-letters: spaces, punctuation, symbols, digits
TWO_BYTE_LETTERS = ["é", "É", "ß", "ǅ", "Ω", "ω", "Ж", "ж", "Ա", "ա", "א", "ب", "ʰ", "ſ",
                    "Ა", "ა", "ꭰ", "Ａ", "ａ", "क", "ก", "가", "あ", "ー", "一", "中", "\u9fff", "ꀀ"]
TWO_BYTE_OTHER = ["\u0301", "\u064e", "\u00a0", "«", "×", "¹", "\u0663", "\u093f", "\u094d",
                  "\u0e31", "\u2028", "\u3000", "Ⅰ", "①", "。", "，", "\u212a"]
WORDS = ["Привет", "мир", "ΑΘΗΝΑ", "Ἀθῆναι"[1:], "Straße", "ÉCOLE", "façade", "ǅemal", "ՀայերԷն",
         "مرحبا", "مَرْحَبًا", "שלום", "ʰello", "Stop", "ДОМdom", "domДОМ", "Café", "naïve", "ЖжЖж",
         "हिन्दी", "ภาษาไทย", "한국어", "ひらがなカタカナ", "中文字", "ᲐᲑა", "ＡＢａｂ"]


@pytest.mark.parametrize("word", WORDS)
def test_words_of_non_ascii_letters_end_alike_after_every_lead(word):
    for lead in ("", " ", ".", "'", "\n", "1", "é", "\u0301", "日", "\u00a0", "x"):
        for after in AFTER + TWO_BYTE_LETTERS + TWO_BYTE_OTHER:
            text = lead + word + after
            assert_same_pieces(text)  # under 16 bytes, or with no room after
            assert_same_pieces("w" * 16 + " " + text + " tail")
            assert_same_pieces(text + " " + word.swapcase() + after + " tail")


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(text=st.text(alphabet=st.sampled_from(TWO_BYTE_LETTERS * 3 + TWO_BYTE_OTHER + NON_ASCII
                                             + list(" .'\n1aZ")), max_size=60))
def test_text_of_two_and_three_byte_characters_is_read_alike(text):
    assert_same_pieces(text)
    assert_same_pieces(" " + text)
    assert_same_pieces(text + " " + "x" * 16)


def test_use_simd_returns_the_previous_setting():
    first = use_simd(False)
    assert use_simd(first) is False
    assert use_simd(first) == first



# pieces led by a character that is no letter, digit or mark (o200k's P,
# which ft_o200k_short takes when it is non-ASCII), and what may follow:
# letters of each case (U*W+ and U+W*), letters and symbols past U+FFFF,
# a run of punctuation and its trail of newlines and "/" (" ?[^\s\p{L}\p{N}]+"
# when the lead takes no letters), whitespace, digits and contractions
LEADS = ["“", "«", "。", "、", "「", "€", "\u200c", "\u00a0", "\u3000", "😀", "𠀀", "\u0301", "١",
         "'", " ", "(", "\t", " “", "“ ", "x", "日"]
FOLLOWERS = ["Hello", "привет", "Привет", "ΑΘΗΝΑ", "ΑΘΗΝΑς", "日本", "한국", "ひらがな", "𠀀𠀁",
             "😀😁", "%(", "”", "」", "\n", "/\n", "'s", "'가", "’", " x", "1", "١", "\u0301", ""]


@pytest.mark.parametrize("lead", LEADS)
def test_non_letter_leads_and_what_follows_them_are_read_alike(lead):
    for after in FOLLOWERS:
        for follow in ("", "”", ".\n", "'ll", "😀"):
            text = lead + after + follow
            assert_same_pieces(text)
            assert_same_pieces("w" * 16 + " " + text + " tail")
            assert_same_pieces(text + " " + "x" * 16)
