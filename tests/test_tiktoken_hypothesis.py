"""Property tests: fasttok == tiktoken on generated text, for every encoding.

The text is built from fragments that hit the pre-tokenizer's corners: whitespace
and CR/LF runs (incl. VT, FF, NBSP, U+3000, U+2028, U+0085), digit runs of many
scripts, contractions in any case (incl. ``'ſ`` U+017F and ``'K`` U+212A, which
Unicode case folding may match), combining marks, CJK, emoji sequences, letters
added in Unicode 16.0 (Garay, Todhri, ...), special-token strings and arbitrary
code points from all planes. Lone surrogates get their own tests: tiktoken repairs
them (``utf-16 surrogatepass`` round trip, then ``replace``) and fasttok must too.

Runs are derandomized so CI is stable; ``FASTTOK_HYPOTHESIS_EXAMPLES`` raises the
example count for a longer local hunt. Hypothesis shrinks a failure to a minimal
input, and :func:`conftest.assert_same_ids` says where the ids first differ.
"""

from __future__ import annotations

import os
import string

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import Raised, assert_same_ids, offsets_mismatch, outcome, outcome_mismatch

EXAMPLES = int(os.environ.get("FASTTOK_HYPOTHESIS_EXAMPLES", "300"))

SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture],
)

WHITESPACE = [" ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\u00a0", "\u3000", "\u2028",
              "\u2029", "\u0085", "\u1680", "\u2000", "\u2009", "\u202f", "\u205f", "\u200b", "\ufeff"]
DIGITS = ("0123456789" "٠١٢٣٤٥٦٧٨٩" "०१२३४५६७८९" "０１２３" "¹²³½¼" "ⅠⅡⅫⅻ" "①②⑳" "〇"
          "\U0001D7CE\U0001D7CF" "\U00010D40\U00010D41\U00010D49")  # last: Garay digits (Unicode 16)
CONTRACTION_TAILS = ["s", "S", "\u017f", "t", "T", "re", "rE", "Re", "RE", "ve", "vE", "Ve", "VE",
                     "m", "M", "ll", "lL", "Ll", "LL", "d", "D", "K", "\u212a", "k", "st", "dve", ""]
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇯🇵", "🇺🇳🇪🇺", "1️⃣", "#️⃣", "❤️", "🧑🏿‍🚀", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "\u200d",
         "\ufe0f", "\U0001F3FB", "🫨", "🪿"]
WORDS = ["hello", "Hello", "HELLO", "world", "the", "The", " the", "don't", "I'm", "café", "naïve",
         "Straße", "İstanbul", "ǅemal", "ǈ", "ΣΊΣΥΦΟΣ", "ﬁ", "™", "㍉", "x", "A", "über", "Ⅻ"]
SPECIAL_TEXT = ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
                "<|endofprompt|>", "<|startoftext|>", "<|start|>", "<|end|>", "<|message|>",
                "<|channel|>", "<|return|>", "<|call|>", "<|constrain|>", "<|reserved_200013|>",
                "<|reserved_201087|>", "<|", "|>", "<|endoftext", "endoftext|>", "<|endoftext|",
                "<<|endoftext|>>", "<s>", "</s>"]
# Unicode 16.0 scripts: Garay, Todhri, Sunuwar, Gurung Khema, Kirat Rai, Ol Onal, Tulu-Tigalari
UNICODE_16_RANGES = [(0x10D40, 0x10D8F), (0x105C0, 0x105FF), (0x11BC0, 0x11BFF), (0x16100, 0x1613F),
                     (0x16D40, 0x16D7F), (0x1E5D0, 0x1E5FF), (0x11380, 0x113FF)]


def _chars(lo: int, hi: int):
    return st.characters(min_codepoint=lo, max_codepoint=hi)


def _runs(chars, max_size=12):
    return st.text(alphabet=chars, min_size=1, max_size=max_size)


whitespace_runs = st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=25).map("".join)
digit_runs = _runs("0123456789", 20) | _runs(DIGITS, 10)
contractions = st.tuples(
    st.sampled_from(["", "it", "IT", "we", "They", "x", " ", "O", "1", "é"]),
    st.sampled_from(["'", "'", "’"]),
    st.sampled_from(CONTRACTION_TAILS),
    st.sampled_from(["", " ", "x", "s", "\n", "'", "Y"]),
).map("".join)
combining = st.tuples(
    st.sampled_from(["a", "e", "Z", "ß", "ы", "ह", "ก", " ", "1", ""]),
    st.lists(st.characters(categories=("Mn", "Mc", "Me")), min_size=1, max_size=5).map("".join),
).map("".join)
cjk = _runs(st.one_of(_chars(0x4E00, 0x9FFF), _chars(0x3040, 0x30FF), _chars(0xAC00, 0xD7A3),
                      _chars(0x20000, 0x2A6DF), _chars(0x3000, 0x303F), _chars(0xFF00, 0xFFEF)))
emoji = st.lists(st.sampled_from(EMOJI) | _chars(0x1F300, 0x1FAFF), min_size=1, max_size=5).map("".join)
unicode16 = _runs(st.one_of(*(_chars(lo, hi) for lo, hi in UNICODE_16_RANGES)), 6)
ascii_text = st.text(alphabet=string.ascii_letters + string.digits + string.punctuation + " \n",
                     max_size=25)
words = st.sampled_from(WORDS)
latin1 = st.text(alphabet=_chars(0, 0x2FF), max_size=8)
any_planes = st.text(max_size=10)  # every plane, no surrogates

fragments = st.one_of(whitespace_runs, digit_runs, contractions, combining, cjk, emoji, unicode16,
                      ascii_text, words, st.sampled_from(SPECIAL_TEXT), latin1, any_planes)
texts = st.lists(fragments, max_size=14).map("".join)

lone_surrogates = st.characters(categories=("Cs",))
texts_with_surrogates = st.lists(st.one_of(fragments, lone_surrogates,
                                           st.just("\ud83d\ude00"), st.just("\ud800")),
                                 min_size=1, max_size=10).map("".join)


@SETTINGS
@given(text=texts)
@example(text="hello world")
@example(text="it'ſ a 'K \u212a'S")
def test_encode_ordinary_matches_tiktoken(enc_pair, text):
    ours, theirs = enc_pair
    assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text, enc=theirs,
                    what=f"{enc_pair.name} encode_ordinary")


@SETTINGS
@given(text=texts)
@example(text="a<|endoftext|>b<|endoftext|")
def test_encode_allowed_special_all_matches_tiktoken(enc_pair, text):
    ours, theirs = enc_pair
    assert_same_ids(ours.encode(text, allowed_special="all"),
                    theirs.encode(text, allowed_special="all"), text, enc=theirs,
                    what=f'{enc_pair.name} encode(allowed_special="all")')


@SETTINGS
@given(data=st.data())
def test_decode_matches_tiktoken(enc_pair, data):
    """Arbitrary id sequences: split UTF-8 sequences, special ids, holes (both KeyError)."""
    ours, theirs = enc_pair
    ids = data.draw(st.lists(st.integers(0, theirs.n_vocab - 1) | st.integers(0, 300), max_size=12),
                    label="ids")
    got, want = outcome(ours.decode, ids), outcome(theirs.decode, ids)
    if isinstance(want, Raised):
        assert isinstance(got, Raised) and isinstance(got.exc, KeyError), \
            f"{enc_pair.name} decode({ids}): tiktoken {want!r}, fasttok {got!r}"
    else:
        assert got == want, f"{enc_pair.name} decode({ids}): fasttok {got!r}, tiktoken {want!r}"


@SETTINGS
@given(text=texts)
@example(text="héllo 的的 😀 👨‍👩‍👧")
def test_decode_with_offsets_matches_tiktoken(enc_pair, text):
    ours, theirs = enc_pair
    ids = theirs.encode(text, allowed_special="all")
    problem = offsets_mismatch(outcome(ours.decode_with_offsets, ids),
                               outcome(theirs.decode_with_offsets, ids), ids)
    assert problem is None, f"{enc_pair.name}: {problem}"


@SETTINGS
@given(text=texts_with_surrogates)
@example(text="\ud800")
@example(text="a\ud83d\ude00b")
@example(text="\udfff\ud800<|endoftext|>")
def test_encode_with_lone_surrogates_matches_tiktoken(enc_pair, text):
    ours, theirs = enc_pair
    problem = outcome_mismatch(outcome(ours.encode, text), outcome(theirs.encode, text), text,
                               enc=theirs, what=f"{enc_pair.name} encode() with surrogates")
    assert problem is None, problem


@SETTINGS
@given(text=texts_with_surrogates)
@example(text="\ud800")
@example(text="x\udc00y\ud83d\ude00")
def test_encode_ordinary_with_lone_surrogates_matches_tiktoken(enc_pair, text):
    ours, theirs = enc_pair
    problem = outcome_mismatch(outcome(ours.encode_ordinary, text), outcome(theirs.encode_ordinary, text),
                               text, enc=theirs, what=f"{enc_pair.name} encode_ordinary with surrogates")
    assert problem is None, problem


def test_lone_surrogate_becomes_replacement_character(enc_pair):
    ours, theirs = enc_pair
    assert ours.encode("\ud800") == theirs.encode("\ufffd")
    assert ours.encode_ordinary("a\ud83d\ude00b") == theirs.encode_ordinary("a😀b")


@pytest.mark.parametrize("text", ["", " ", "\n", "<|endoftext|>"], ids=repr)
def test_tiny_inputs_match_tiktoken(enc_pair, text):
    ours, theirs = enc_pair
    assert_same_ids(ours.encode(text, allowed_special="all"), theirs.encode(text, allowed_special="all"),
                    text, enc=theirs)


# One long regex piece (a run of letters, of spaces, of digits or of CJK)
# takes the long-piece merge (sorted runs in front of a heap) rather than the
# linear scan used below 128 bytes; mixing a few letters into the run makes
# priorities arrive out of order, which exercises the heap half too.
long_pieces = st.builds(
    lambda base, n, noise: "".join(noise.get(i, base) for i in range(n)),
    st.sampled_from(["a", "ab", "的", " ", "\n", "xyz", "ё"]),
    st.integers(min_value=129, max_value=2000),
    st.dictionaries(st.integers(min_value=0, max_value=1999),
                    st.sampled_from(list("abcdefghijklmnopqrstuvwxyz的一")), max_size=12),
)


@SETTINGS
@given(text=long_pieces)
@example(text="a" * 5000)
@example(text=" " * 3000 + "x")
def test_long_pieces_match_tiktoken(enc_pair, text):
    ours, theirs = enc_pair
    assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text)
