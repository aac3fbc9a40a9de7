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

from fasttok.formats.hf_walks import Walk
from fasttok.models._wordpiece import CodePointRules
from fasttok.models.hf_bert_rule import bert_rule
from fasttok.models.hf_wordpiece import WordPiece
from fasttok.normalizers.bert import BertNormalizer
from fasttok.pre_tokenizers.split import BertPreTokenizer

__all__ = ["BertWalk", "bert_string_path", "bert_walk"]


def _is_bert(normalizer: Any, pre_tokenizer: Any, model: Any) -> bool:
    # the stages CodePointRules can run: bert_rule's two, and WordPiece
    return (type(pre_tokenizer) is BertPreTokenizer and type(model) is WordPiece
            and (normalizer is None or type(normalizer) is BertNormalizer))


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
    if has_normalized_added or not _is_bert(normalizer, pre_tokenizer, model):
        return None
    return functools.partial(model.text_ids, rules=CodePointRules(bert_rule(normalizer,
                                                                           pre_tokenizer)))


class BertWalk(Walk):
    """The walk of a BERT file (see :func:`bert_walk`): the raw text cut at
    the added tokens ``added`` matches there, then ``model``'s
    :meth:`~fasttok.models.hf_wordpiece.WordPiece.text_ids` over the whole
    text, through ``rules`` (kept as :attr:`rules`), with offsets or without.

    >>> from fasttok.added_tokens.hf_added import AddedToken, AddedTokens
    >>> walk = BertWalk(WordPiece({"[UNK]": 0, "hi": 1, "##s": 2}),
    ...                 CodePointRules(bert_rule(BertNormalizer(), BertPreTokenizer())),
    ...                 AddedTokens([AddedToken("[X]", 9, special=True)]))
    >>> walk.ids("His[X] yo", None), walk.ids("His[X]", frozenset())
    ([1, 2, 9, 0], [1, 2, 0, 0, 0])
    >>> walk.encode("His[X] yo", None)
    (array('I', [1, 2, 9, 0]), array('i', [0, 2, 2, 3, 3, 6, 7, 9]), array('i', [0, 0, 1, 2]))
    """

    __slots__ = ("_walk", "rules", "_added", "_occurs")

    def __init__(self, model: WordPiece, rules: CodePointRules, added: Any) -> None:
        self._walk = model.text_ids
        self.rules = rules
        self._added = added
        # each allowed set's test of whether an added token occurs: a call
        # walks most texts, which hold none, and asking the added tokens for
        # the test each time was a tenth of a line's time
        self._occurs: dict = {}

    def _cuts(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        # the added tokens' matches in the raw text, or None for none (most texts)
        occurs = self._occurs.get(allowed)
        if occurs is None:
            occurs = self._occurs[allowed] = self._added.matcher(False, allowed).occurs
        if not occurs(text):
            return None
        return self._added.find_matches(text, normalized=False, allowed=allowed)

    def ids(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        """The ids of ``text``, or ``None`` (see :class:`~fasttok.formats.hf_walks.Walk`)."""
        return self._walk(text, self.rules, self._cuts(text, allowed), False)

    def encode(self, text: str, allowed: Optional[frozenset]) -> Optional[tuple]:
        """``(ids, offsets, words)`` of ``text``, or ``None`` (see
        :class:`~fasttok.formats.hf_walks.Walk`)."""
        return self._walk(text, self.rules, self._cuts(text, allowed), True)


def bert_walk(record: Any, pipeline: Any) -> Optional[BertWalk]:
    """The walk of ``pipeline`` when its stages are BERT's (BertNormalizer or
    none, BertPreTokenizer, WordPiece with an unknown token) and no added
    token is matched in the normalized text; else ``None``.

    >>> import json
    >>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
    >>> from fasttok.formats.hf_pipeline import pipeline_from_document
    >>> doc = {"normalizer": {"type": "BertNormalizer", "clean_text": True,
    ...                       "handle_chinese_chars": True, "strip_accents": None,
    ...                       "lowercase": True},
    ...        "pre_tokenizer": {"type": "BertPreTokenizer"},
    ...        "model": {"type": "WordPiece", "unk_token": "[UNK]",
    ...                  "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
    ...                  "vocab": {"[UNK]": 0, "hi": 1, "!": 2}}}
    >>> record = tokenizer_json_record(json.dumps(doc), "t.json")
    >>> bert_walk(record, pipeline_from_document(record)).encode("Hi\u4e16!", None)
    (array('I', [1, 0, 2]), array('i', [0, 2, 2, 3, 3, 4]), array('i', [0, 1, 2]))
    """
    normalizer, pre_tokenizer, model = pipeline.normalizer, pipeline.pre_tokenizer, pipeline.model
    if (pipeline._normalized_pass or not _is_bert(normalizer, pre_tokenizer, model)
            or model.token_to_id(model.unk_token) is None):
        return None
    return BertWalk(model, CodePointRules(bert_rule(normalizer, pre_tokenizer)), pipeline.added)
