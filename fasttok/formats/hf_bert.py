"""BERT's string path of ``tokenizer.json`` in one compiled pass.

A file whose normalizer is ``BertNormalizer``, whose pre-tokenizer is
``BertPreTokenizer`` and whose model is ``WordPiece`` (all-MiniLM-L6-v2 and
most BERT models) gives the ids of a stretch of text through
:meth:`fasttok.models.hf_wordpiece.WordPiece.text_ids`: one loop over the
``str`` that normalizes, splits into words and matches each word, with no
Python object per word. What the loop does with each code point is asked of
the stages themselves (:func:`bert_rule`), for each block of 256 code points
the first time a text holds one, so there is one implementation of each rule.

That per-code-point view is exact because each step of the two stages acts
on one character alone (``tokenizers`` lowercases character by character),
except canonical reordering inside NFD, which moves combining marks that
``strip_accents`` does not drop; a code point whose normal form has such a
mark, or more than one character, is left to the stages, and so is the
whole stretch holding it (Hangul syllables, for instance, decompose into
three jamo).

Speed (all-MiniLM-L6-v2, the first 20,000 lines of en / code / zh.txt, CPU
time on a busy 2-core machine): 25.7 / 30.6 / 53.8 MB/s whole, 26 / 30 / 77
times ``tokenizers``; one call a line 9.5 / 7.0 / 16.7 MB/s, 9.0 / 6.7 / 18
times, where the Python layers above the compiled call (the Encoding, the
added-token check) are about a third of the time. Before, a Python call a
word and the normalizer's regex passes gave 0.7-1.4 times ``tokenizers``.

>>> from fasttok.normalizers.bert import BertNormalizer
>>> from fasttok.pre_tokenizers.split import BertPreTokenizer
>>> rule = bert_rule(BertNormalizer(), BertPreTokenizer())
>>> [rule(ord(c)) == want for c, want in [("A", (APPEND, 97)), ("\\t", (SPACE, 9)),
...                                       ("!", (ALONE, 33)), ("\\x00", (SKIP, 0))]]
[True, True, True, True]
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable
from typing import Any, Optional

from fasttok.models._wordpiece import ALONE, APPEND, OTHER, SKIP, SPACE, CodePointRules
from fasttok.models.hf_wordpiece import WordPiece
from fasttok.normalizers.bert import BertNormalizer
from fasttok.pre_tokenizers.split import BertPreTokenizer

__all__ = ["bert_rule", "bert_string_path"]


def bert_rule(normalizer: Optional[BertNormalizer],
              pre_tokenizer: BertPreTokenizer) -> Callable[[int], tuple]:
    """``rule(cp) -> (action, code point)`` for
    :class:`~fasttok.models._wordpiece.CodePointRules`: what ``normalizer``
    then ``pre_tokenizer`` make of the code point ``cp`` alone.

    >>> bert_rule(None, BertPreTokenizer())(ord("\\u4e16"))[0] == APPEND
    True
    """
    normalize = normalizer.normalize_str if normalizer is not None else str
    split = pre_tokenizer.split_str
    # NFD reorders the marks it keeps; strip_accents off means no NFD at all
    reorders = normalizer is not None and (
        normalizer.lowercase if normalizer.strip_accents is None else normalizer.strip_accents)

    def rule(cp: int) -> tuple:
        if 0xD800 <= cp <= 0xDFFF:
            return OTHER, cp  # a lone surrogate has no UTF-8: the stages say what it does
        text = normalize(chr(cp))
        if not text:
            return SKIP, cp
        if reorders and any(unicodedata.combining(c) for c in text):
            return OTHER, cp
        pieces = split(text)
        if not pieces:
            return SPACE, cp
        if len(pieces) != 1 or len(pieces[0]) != 1:
            return OTHER, cp
        c = pieces[0]
        if text == c:
            # a punctuation character is a word of its own between letters
            around = len(split(f"a{c}a"))
            return (ALONE if around == 3 else APPEND if around == 1 else OTHER), ord(c)
        if len(text) >= 3 and text.index(c) > 0 and text.index(c) < len(text) - 1:
            return ALONE, ord(c)  # spaced out on both sides, as CJK ideographs are
        return OTHER, cp

    return rule


def bert_string_path(normalizer: Any, pre_tokenizer: Any, model: Any,
                     has_normalized_added: bool) -> Optional[Callable[[str], Optional[list]]]:
    """``ids(stretch) -> ids or None`` for a stretch of raw text between
    added tokens, when the stages are BERT's (else ``None``);
    ``has_normalized_added``: whether some added token is matched in the
    normalized text (such a file keeps the stages' own path).

    >>> from fasttok.models.hf_wordpiece import WordPiece
    >>> ids = bert_string_path(BertNormalizer(), BertPreTokenizer(),
    ...                        WordPiece({"[UNK]": 0, "hi": 1, "!": 2}), False)
    >>> ids("Hi! yo")
    [1, 2, 0]
    """
    if (has_normalized_added or type(pre_tokenizer) is not BertPreTokenizer
            or type(model) is not WordPiece
            or (normalizer is not None and type(normalizer) is not BertNormalizer)):
        return None
    return functools.partial(model.text_ids, rules=CodePointRules(bert_rule(normalizer,
                                                                           pre_tokenizer)))
