"""ByteLevel: GPT-2's pre-tokenizer (optional leading space, the GPT-2 regex,
then every byte as its printable character).

``trim_offsets`` is kept for the post-processor and decoder, which use it;
it changes nothing here.

>>> ByteLevel().pre_tokenize_str("Hi  you")
[('ĠHi', (0, 2)), ('Ġ', (2, 3)), ('Ġyou', (3, 7))]
>>> ByteLevel(add_prefix_space=False, use_regex=False).split_str("é b")
['Ã©Ġb']
"""

from __future__ import annotations

import functools

from fasttok.pre_tokenizers.base import PreTokenizer
from fasttok.shared._bytemap import encode_byte_level
from fasttok.shared.byte_level_options import ByteLevelOptions
from fasttok.shared.normalized import NormalizedString, PreTokenizedString, find_matches
from fasttok.shared.regex_translate import compile_onig

__all__ = ["ByteLevel", "GPT2_REGEX"]

GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


@functools.cache
def _gpt2() -> "re.Pattern[str]":
    # compiled on first use: importing the stage should not cost its Unicode classes
    return compile_onig(GPT2_REGEX)


class ByteLevel(PreTokenizer, ByteLevelOptions):
    """``tokenizers.pre_tokenizers.ByteLevel``.

    >>> ByteLevel(use_regex=False).split_str("a b")
    ['ĠaĠb']
    """

    def _split(self, i: int, ns: NormalizedString) -> list:
        if self.add_prefix_space and not ns.normalized.startswith(" "):
            ns.prepend(" ")
        if self.use_regex:
            return ns.split(_gpt2(), "Isolated")
        return [ns]

    def pre_tokenize(self, pts: PreTokenizedString) -> None:
        pts.split(self._split)
        pts.normalize(NormalizedString.byte_level)

    def split_str(self, text: str) -> list:
        if self.add_prefix_space and text and not text.startswith(" "):
            text = " " + text
        if not text:
            return []
        pieces = ([text[s:e] for (s, e), _ in find_matches(_gpt2(), text) if s < e]
                  if self.use_regex else [text])
        return [encode_byte_level(p.encode("utf-8")) for p in pieces]
