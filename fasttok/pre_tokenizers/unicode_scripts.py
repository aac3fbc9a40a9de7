"""UnicodeScripts: a piece ends where the script of the characters changes.

As ``tokenizers`` reckons it: Hiragana, Katakana and U+30FC count as Han; a
space, and a character its Unicode 9.0 table does not know (unassigned then,
private use), belongs to any script (it neither starts nor ends a run);
everything else has its Script property value (Common and Inherited
included).

>>> UnicodeScripts().pre_tokenize_str("abc 漢字カナ Привет.x")
[('abc ', (0, 4)), ('漢字カナ ', (4, 9)), ('Привет', (9, 15)), ('.', (15, 16)), ('x', (16, 17))]
"""

from __future__ import annotations

from fasttok.pre_tokenizers.base import PreTokenizer
from fasttok.shared.hf_unicode import script_of
from fasttok.shared.normalized import NormalizedString

__all__ = ["UnicodeScripts"]

_AS_HAN = {"Hiragana", "Katakana"}


def _script(c: str) -> str | None:
    if c == " ":
        return None
    if c == "\u30fc":
        return "Han"
    script = script_of(c)
    if script == "Unknown":
        return None
    return "Han" if script in _AS_HAN else script


def _cuts(text: str) -> list:
    cuts = []
    last = "start"
    for i, c in enumerate(text):
        script = _script(c)
        if script is not None and last is not None and last != script:
            cuts.append(i)
        if script is not None:
            last = script
    cuts.append(len(text))
    return cuts


class UnicodeScripts(PreTokenizer):
    """``tokenizers.pre_tokenizers.UnicodeScripts``.

    >>> UnicodeScripts().split_str("ab12")
    ['ab', '12']
    """

    def __repr__(self) -> str:
        return "UnicodeScripts()"

    def _split(self, i: int, ns: NormalizedString) -> list:
        cuts = _cuts(ns.normalized)
        return [ns.slice(a, b) for a, b in zip(cuts, cuts[1:])]

    def split_str(self, text: str) -> list:
        cuts = _cuts(text)
        return [text[a:b] for a, b in zip(cuts, cuts[1:]) if a < b]
