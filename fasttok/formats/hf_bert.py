"""BERT's string path of ``tokenizer.json`` in one compiled pass.

A file whose normalizer is ``BertNormalizer``, whose pre-tokenizer is
``BertPreTokenizer`` and whose model is ``WordPiece`` (all-MiniLM-L6-v2 and
most BERT models) gives the ids of a stretch of text through
:meth:`fasttok.models.hf_wordpiece.WordPiece.text_ids`: one loop over the
``str`` that normalizes, splits into words and matches each word, with no
Python object per word. What the loop does with each code point is asked of
the stages themselves (:func:`fasttok.models.hf_bert_rule.bert_rule`, where
the notes on why that is exact are); a stretch holding a code point the
rule leaves to the stages takes them.

Speed (all-MiniLM-L6-v2, the first 20,000 lines of en / code / zh.txt, CPU
time on a busy 2-core machine): 25.7 / 30.6 / 53.8 MB/s whole, 26 / 30 / 77
times ``tokenizers``; one call a line 9.5 / 7.0 / 16.7 MB/s, 9.0 / 6.7 / 18
times, where the Python layers above the compiled call (the Encoding, the
added-token check) are about a third of the time. Before, a Python call a
word and the normalizer's regex passes gave 0.7-1.4 times ``tokenizers``.

>>> ids = bert_string_path(BertNormalizer(), BertPreTokenizer(), WordPiece({"[UNK]": 0, "a": 1}),
...                        False)
>>> ids("A a! b")
[1, 1, 0, 0]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Optional

from fasttok.models._wordpiece import CodePointRules
from fasttok.models.hf_bert_rule import bert_rule
from fasttok.models.hf_wordpiece import WordPiece
from fasttok.normalizers.bert import BertNormalizer
from fasttok.pre_tokenizers.split import BertPreTokenizer

__all__ = ["bert_string_path"]


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
