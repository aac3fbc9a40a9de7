"""Pre-tokenizer patterns: tiktoken's known ``pat_str`` strings and the generic path.

A pattern fasttok knows (the current and the older spelling of each of
tiktoken's; Llama 3's, which is cl100k's older spelling; Qwen 2's; Mistral's Tekken) runs
through a hand-written compiled scanner (:mod:`fasttok.pre_tokenizers._pretokenize`). Any
other pattern is compiled by :func:`fasttok.shared.regex_translate.compile_generic` for
the linear-time engine (:mod:`fasttok.shared._linear_regex`), so custom encodings
work, and a hostile pattern cannot take exponential time.

>>> scanner_for(CL100K)
'cl100k'
>>> [m.group() for m in compile_generic(r"\\p{N}+|\\s+").finditer("12 ٣٤")]
['12', ' ', '٣٤']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from fasttok.shared.regex_translate import compile_generic
from fasttok.pre_tokenizers.tiktoken_patterns import (CL100K, CL100K_LEGACY, GPT2, GPT2_LEGACY,
                                                      LLAMA3, O200K, QWEN2, TEKKEN)

__all__ = ["GPT2", "GPT2_LEGACY", "CL100K", "CL100K_LEGACY", "LLAMA3", "QWEN2", "O200K",
           "TEKKEN", "GPT2_DIGITS", "DEEPSEEK3", "DEEPSEEK3_SPLITS", "JOINED_SPLITS",
           "scanner_for", "pattern_splitter"]

#: ``tokenizers``' ``Digits(individual_digits=True)`` then ``ByteLevel``'s
#: gpt2 regex (Cohere's Command-R and Aya) as one regex: every ``\p{N}`` a
#: piece alone, the gpt2 alternatives between them (a space is never a
#: digit's prefix; a run of spaces before a digit is whole, as at the end of
#: the text the regex sees)
GPT2_DIGITS = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+"
               r"|\s+(?![^\s\p{N}])|\s+")

# DeepSeek-V3's pre-tokenizer: tokenizers' Split(Isolated) of three regexes in
# a row, each on the pieces of the one before (DEEPSEEK3_SPLITS), as one
# regex that splits alike (every character is matched). The third regex sees
# a run of kanji/kana or a run of neither as its whole text, so each of its
# alternatives comes twice, once inside kanji/kana (_KL, _KP) and once outside
# (_OL, _OP), and the text it leaves unmatched (_KO, _OO runs) is a piece.
DEEPSEEK3_SPLITS = (
    r"\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?"
    "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
)
_K = r"\u4e00-\u9fa5\u3040-\u30ff"
_KL = rf"(?:(?=[{_K}])[\p{{L}}\p{{M}}])"
_OL = rf"(?:(?![{_K}])[\p{{L}}\p{{M}}])"
_KP = rf"(?:(?=[{_K}])[\p{{P}}\p{{S}}])"
_OP = rf"(?:(?![{_K}])[\p{{P}}\p{{S}}])"
_KO = rf"(?:(?=[{_K}])[^\p{{L}}\p{{M}}\p{{P}}\p{{S}}])"
_OO = rf"[^\p{{L}}\p{{M}}\p{{P}}\p{{S}}\s\p{{N}}{_K}]"
DEEPSEEK3 = (rf"\p{{N}}{{1,3}}|(?=[{_K}])[^\p{{L}}\p{{P}}\p{{S}}]?{_KL}+|{_KP}+|(?:{_KO}(?!{_KL}))+"
             rf"|[!-/:-@\[-`{{-~][A-Za-z]+|[^\r\n\p{{L}}\p{{P}}\p{{S}}\p{{N}}{_K}]?{_OL}+"
             rf"| ?{_OP}+[\r\n]*|\s*[\r\n]+|\s+(?![^\s\p{{N}}{_K}])|\s+|(?:{_OO}(?!{_OL}))+")

#: regexes that tokenizers' Split(Isolated)s in a row split with -> the one
#: regex that splits alike
JOINED_SPLITS = {DEEPSEEK3_SPLITS: DEEPSEEK3}

# The two gpt2 spellings split every text identically (\s++$ only ever
# matches where \s+(?!\S) takes the whole trailing run anyway); the two
# cl100k spellings do not ("\n " at the end splits differently), so each has
# its own scanner.
_SCANNERS = {
    GPT2: "gpt2",
    GPT2_LEGACY: "gpt2",
    CL100K: "cl100k",
    CL100K_LEGACY: "cl100k_legacy",
    QWEN2: "qwen2",
    O200K: "o200k",
    TEKKEN: "tekken",
    GPT2_DIGITS: "gpt2_digits",
    DEEPSEEK3: "deepseek3",
}


def scanner_for(pat_str: str) -> Optional[str]:
    """The compiled scanner that reproduces ``pat_str`` exactly, or ``None``.

    >>> scanner_for(O200K), scanner_for("[a-z]+")
    ('o200k', None)
    """
    return _SCANNERS.get(pat_str)


def pattern_splitter(pat_str: str) -> Callable[[str], list]:
    """A function splitting text into the pieces ``pat_str`` matches, leftmost first.

    >>> pattern_splitter(r"\\d+|\\s+")("12 34")
    ['12', ' ', '34']
    """
    return compile_generic(pat_str).findall
