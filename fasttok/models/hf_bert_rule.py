"""What BERT's normalizer and pre-tokenizer make of each code point alone: the rule of the compiled string path.

:class:`~fasttok.models._wordpiece.CodePointRules` reads a text once,
normalizing it and cutting it into words with one table entry a code point;
:func:`bert_rule` fills the entries by asking ``tokenizers``' stages
themselves (fasttok's ``BertNormalizer`` or none, then ``BertPreTokenizer``,
passed in by the caller) what they make of the code point, so there is one
implementation of each rule. Encoding (:mod:`fasttok.formats.hf_bert`) and
training (:mod:`fasttok.trainers.hf_words`) both run on it.

That per-code-point view is exact because each step of the two stages acts
on one character alone (``tokenizers`` lowercases character by character),
except canonical reordering inside NFD, which moves combining marks that
``strip_accents`` does not drop; a code point whose normal form has such a
mark is left to the stages, and so is the whole stretch holding it. A
normal form of several characters is an :data:`APPEND` of them all when
they stay inside a word (a Hangul syllable's two or three jamo, ``İ``
lowercased without stripping), each a character of the word as the
stages count them; any other is left to the stages too.

The table is filled for the code points the texts hold, all those new to a
call at once, and the stages run on a thousand of them a call (a character
that normalizes on its own normalizes alike between ``|``; ``|`` is a word
of its own for ``BertPreTokenizer`` wherever it stands). The shared corpus
holds 58k distinct code points: 0.46 s for all of them, where one call of
each stage a code point took 1.0 s, and the table of every code point 12 s.

>>> from fasttok.normalizers.bert import BertNormalizer
>>> from fasttok.pre_tokenizers.split import BertPreTokenizer
>>> rule = bert_rule(BertNormalizer(), BertPreTokenizer())
>>> rule([ord(c) for c in "A\\t!\\x00"]) == [(APPEND, 97), (SPACE, 9), (ALONE, 33), (SKIP, 0)]
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Optional

from fasttok.models._wordpiece import ALONE, APPEND, EXPAND_MAX, OTHER, SKIP, SPACE
from fasttok.shared.hf_unicode import combining

__all__ = ["bert_rule", "each_normalized"]


def each_normalized(chars: list, normalize: Callable[[str], str]) -> Iterable[tuple]:
    """``(character, its normalization)`` for each of ``chars`` under a
    normalizer that maps characters one by one, a thousand to a call: ``|``
    (which such a normalizer keeps) between them parts the outputs, unless an
    output holds one (then one by one).

    >>> list(each_normalized(["A", "|", "b"], str.lower))
    [('A', 'a'), ('b', 'b'), ('|', '|')]
    """
    for k in range(0, len(chars), 1000):
        batch = [c for c in chars[k:k + 1000] if c != "|"]
        outs = normalize("|".join(batch)).split("|")
        if len(outs) != len(batch):
            outs = [normalize(c) for c in batch]
        yield from zip(batch, outs)
    if "|" in chars:
        yield "|", normalize("|")


def _each_split(texts: list, split: Callable[[str], list]) -> list:
    # BertPreTokenizer's pieces of each text, a thousand to a call: "|" is a
    # piece of its own wherever it stands (each punctuation character is), so
    # between the texts it parts their pieces; a text holding one goes alone
    out = [None] * len(texts)
    plain = [i for i, t in enumerate(texts) if "|" not in t]
    for k in range(0, len(plain), 1000):
        batch = plain[k:k + 1000]
        groups: list = [[]]
        add = groups[0].append
        for piece in split("|".join([texts[i] for i in batch])):
            if piece == "|":
                groups.append([])
                add = groups[-1].append
            else:
                add(piece)
        if len(groups) != len(batch):
            groups = [split(texts[i]) for i in batch]
        for i, pieces in zip(batch, groups):
            out[i] = pieces
    return [split(t) if pieces is None else pieces for t, pieces in zip(texts, out)]


def bert_rule(normalizer: Optional[Any], pre_tokenizer: Any) -> Callable[[list], list]:
    """``rule(cps) -> [(action, code point), ...]`` for
    :class:`~fasttok.models._wordpiece.CodePointRules`: what ``normalizer``
    then ``pre_tokenizer`` make of each code point of ``cps`` alone (the
    stages run on a thousand of them at a time).

    >>> from fasttok.pre_tokenizers.split import BertPreTokenizer
    >>> bert_rule(None, BertPreTokenizer())([ord("\\u4e16"), ord("!")]) == [(APPEND, 0x4e16),
    ...                                                                    (ALONE, 33)]
    True
    """
    normalize = normalizer.normalize_str if normalizer is not None else str
    split = pre_tokenizer.split_str
    # NFD reorders the marks it keeps; strip_accents off means no NFD at all
    reorders = normalizer is not None and (
        normalizer.lowercase if normalizer.strip_accents is None else normalizer.strip_accents)

    def rule(cps: list) -> list:
        # a lone surrogate has no UTF-8: the stages say what it does
        chars = [chr(cp) for cp in cps if not 0xD800 <= cp <= 0xDFFF]
        text = dict(each_normalized(chars, normalize))
        made, ones, longer = {}, [], []
        for c in chars:
            out = text[c]
            if reorders and any(map(combining, out)):
                made[c] = OTHER, ord(c)
            elif len(out) == 1:
                ones.append(c)
            elif out:
                longer.append(c)
            else:
                made[c] = SKIP, ord(c)
        # one character: a word, a part of one (between letters), a space, or
        # else; a punctuation character is a word of its own between letters
        for c, pieces in zip(ones, _each_split([f"a{text[c]}a" for c in ones], split)):
            out = text[c]
            n = len(pieces)
            made[c] = ((APPEND, ord(out)) if n == 1 and pieces[0] == f"a{out}a" else
                       (ALONE, ord(out)) if n == 3 and pieces[1] == out and pieces[0] == "a"
                       and pieces[2] == "a" else
                       (SPACE, ord(c)) if n == 2 and pieces[0] == "a" and pieces[1] == "a" else
                       (OTHER, ord(c)))
        # more: spaced out on both sides to one character, as CJK ideographs
        # are, or a few characters of a word, as a Hangul syllable's jamo are
        for c, pieces, inside in zip(longer, _each_split([text[c] for c in longer], split),
                                     _each_split([f"a{text[c]}a" for c in longer], split)):
            out = text[c]
            made[c] = ((SPACE, ord(c)) if not pieces else
                       (ALONE, ord(pieces[0])) if len(pieces) == 1 and len(pieces[0]) == 1
                       and 0 < out.index(pieces[0]) < len(out) - 1 else
                       (APPEND, tuple(map(ord, out))) if inside == [f"a{out}a"]
                       and len(out) <= EXPAND_MAX else (OTHER, ord(c)))
        return [made.get(chr(cp), (OTHER, cp)) for cp in cps]

    return rule
