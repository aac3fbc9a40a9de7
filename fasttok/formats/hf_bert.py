"""BERT's configuration of ``tokenizer.json`` as one compiled walk.

A file whose normalizer is ``BertNormalizer`` (or none), whose
pre-tokenizer is ``BertPreTokenizer`` and whose model is ``WordPiece``
(all-MiniLM-L6-v2 and most BERT models) is walked by
:meth:`fasttok.models.hf_wordpiece.WordPiece.text_ids`: one loop over the
``str`` that normalizes, splits into words and matches each word, with no
Python object per word; the added tokens cut the raw text first
(:class:`BertWalk`, what :func:`bert_walk` builds for
:mod:`fasttok.formats.hf_walks`). The same loop gives each token's character
offsets and word index when asked: every normalized character is of one
character of the text, so a token spans the characters its bytes are of.
What the loop does with each code point is asked of the stages themselves
(:func:`fasttok.models.hf_bert_rule.bert_rule`, where the notes on why that
is exact are); a text holding a code point the rule leaves to the stages
(a mark NFD keeps and may reorder, a lone surrogate) is declined, and so
is a text where an added token matched in the normalized text occurs.

Speed (all-MiniLM-L6-v2, one call a line of the first 5,000 lines of
en / code / zh / multi.txt, CPU time, best of 5, the libraries taking turns,
on a 2-core machine at load ~5): ``walk.encode`` 2.8 / 1.3 / 1.2 / 1.9 us a
line, 9.8 / 13 / 15 / 12 times ``tokenizers``' ``encode`` (28 / 17 / 18 / 22
us); ``walk.ids`` 1.4 / 0.9 / 0.8 / 1.3 us, where ``fasttok.load``'s
``encode`` (the same walk under its Encoding's layers) takes 1.7 / 1.3 / 1.1
/ 1.9; with ``walk.ids`` compiled (:class:`~fasttok.models._wordpiece.TextEntry`),
``fasttok.load``'s ``encode`` takes 0.90 / 0.54 / 0.84 / 1.35 us (load ~4.5,
2026-12-04). The offsets cost the arrays' making (three, a text index a
normalized byte). Before the walk, the stages gave offsets at 3-4 times ``tokenizers``'
time, and a Python call a word gave ids at 0.7-1.4 times.

>>> _is_bert(BertNormalizer(), BertPreTokenizer(), WordPiece({"[UNK]": 0, "a": 1}))
True
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any, Optional

from fasttok.formats.walk import MIN_THREADED_TEXTS, Walk
from fasttok.models._wordpiece import CodePointRules, TextEntry
from fasttok.models.hf_bert_rule import bert_rule
from fasttok.models.interface import run_batch
from fasttok.models.hf_wordpiece import WordPiece
from fasttok.normalizers.bert import BertNormalizer
from fasttok.pre_tokenizers.split import BertPreTokenizer

__all__ = ["BertWalk", "bert_walk"]


def _is_bert(normalizer: Any, pre_tokenizer: Any, model: Any) -> bool:
    # the stages CodePointRules can run: bert_rule's two, and WordPiece
    return (type(pre_tokenizer) is BertPreTokenizer and type(model) is WordPiece
            and (normalizer is None or type(normalizer) is BertNormalizer))


#: the most token texts of the normalized pass looked for one by one in a walk's words
_MAX_CORES = 32

#: BertNormalizer's settings (None: no normalizer) -> the CodePointRules of
#: them and BertPreTokenizer (which has none): every BERT file of a process
#: with the same settings shares one table, each code point's rule asked of
#: the stages once (a file just loaded walked zh.txt's half in 55 ms, its
#: rules being filled, against 11 ms once they were)
_RULES: dict = {}


def _shared_rules(normalizer: Any, pre_tokenizer: Any) -> CodePointRules:
    key = None if normalizer is None else (normalizer.clean_text, normalizer.handle_chinese_chars,
                                           normalizer.strip_accents, normalizer.lowercase)
    found = _RULES.get(key)
    if found is None:
        found = _RULES.setdefault(key, CodePointRules(bert_rule(normalizer, pre_tokenizer)))
    return found


class _Spelling(dict):
    # code point -> what normalize makes of it alone, for str.translate,
    # each computed on first use
    def __init__(self, normalize: Callable[[str], str]) -> None:
        super().__init__()
        self._normalize = normalize

    def __missing__(self, cp: int) -> str:
        out = self[cp] = self._normalize(chr(cp))
        return out


class BertWalk(Walk):
    """The walk of a BERT file (see :func:`bert_walk`): the raw text cut at
    the added tokens ``added`` matches there, then ``model``'s
    :meth:`~fasttok.models.hf_wordpiece.WordPiece.text_ids` over the whole
    text, through ``rules`` (kept as :attr:`rules`), with offsets or without
    (``model`` has its unknown token: :meth:`~WordPiece.text_walk`).

    ``normalize`` and ``split`` (the normalizer's and the pre-tokenizer's
    ``str`` functions), given when some added token is matched in the
    normalized text: a text in whose normalization one occurs is declined.
    The rules walk only texts whose normalization is that of each character
    alone, so the test is the translation of the text character by
    character, where each stretch's normalization is a part of it. It runs
    only when the walk's words, the normalization without its whitespace,
    hold such a token without its whitespace (en.txt, three added tokens
    of that pass: the test on every line cost ~3 us a line more than the
    walk alone, ~1.5 us asked of the words first; CPU time on a busy machine).

    >>> from fasttok.added_tokens.hf_added import AddedToken, AddedTokens
    >>> walk = BertWalk(WordPiece({"[UNK]": 0, "hi": 1, "##s": 2}),
    ...                 CodePointRules(bert_rule(BertNormalizer(), BertPreTokenizer())),
    ...                 AddedTokens([AddedToken("[X]", 9, special=True)]))
    >>> walk.ids("His[X] yo", None), walk.ids("His[X]", frozenset())
    ([1, 2, 9, 0], [1, 2, 0, 0, 0])
    >>> walk.ids_array("His yo", None)
    array('I', [1, 2, 0])
    >>> walk.encode("His[X] yo", None)
    (array('I', [1, 2, 9, 0]), array('i', [0, 2, 2, 3, 3, 6, 7, 9]), array('i', [0, 0, 1, 2]))
    """

    __slots__ = ("_walk", "_walk_many", "rules", "_added", "_occurs", "_spelling", "_split",
                 "_cores_of", "_may_start", "_entry", "ids", "ids_array")

    def __init__(self, model: WordPiece, rules: CodePointRules, added: Any,
                 normalize: Optional[Callable[[str], str]] = None,
                 split: Optional[Callable[[str], list]] = None) -> None:
        # the compiled text_ids (a model without an unknown token has no walk)
        self._walk = model.text_walk()
        self._walk_many = model.texts_walk()
        self.rules = rules
        self._added = added
        self._spelling = None if normalize is None else _Spelling(normalize)
        self._split = split
        self._cores_of: dict = {}
        # each allowed set's test of whether an added token occurs: a call
        # walks most texts, which hold none, and asking the added tokens for
        # the test each time was a tenth of a line's time
        self._occurs: dict = {}
        # whether some added token of the raw pass, whatever is allowed, may
        # start in a text: most texts hold none of their first characters
        # ('[' of BERT's) and are walked whole without asking the allowed
        # set's test (a fifth of a short line's time, with the calls it made)
        self._may_start = added.matcher(False).may_occur
        # ids: with no added token of the normalized pass, a compiled entry
        # that walks a text holding none of the raw pass's texts at once
        self._entry = (None if normalize is not None else
                       TextEntry(model.walk_model(), rules, added.matcher(False).literal,
                                 self._cut_ids))
        #: ``ids(text, allowed)``: the ids of ``text``, or ``None`` (see
        #: :class:`~fasttok.formats.hf_walks.Walk`); compiled (a
        #: :class:`~fasttok.models._wordpiece.TextEntry`'s) where no added
        #: token is matched in the normalized text, so that one bound call of
        #: it runs no Python code for a text no added token occurs in (an
        #: attribute: a property's getter ran at each read)
        self.ids = self._checked_ids if self._entry is None else self._entry.ids
        #: ``ids_array(text, allowed)``: :attr:`ids` as an ``array('I')``,
        #: with no list between where :attr:`ids` is compiled
        self.ids_array = self._checked_array if self._entry is None else self._entry.ids_array

    def _cuts(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        # the added tokens' matches in the raw text, or None for none (most texts)
        occurs = self._occurs.get(allowed)
        if occurs is None:
            occurs = self._occurs[allowed] = self._added.matcher(False, allowed).occurs
        if not occurs(text):
            return None
        return self._added.find_matches(text, normalized=False, allowed=allowed)

    def _normalized_added(self, text: str, allowed: Optional[frozenset]) -> bool:
        # whether an added token of the normalized pass may match in text
        return self._added.matcher(True, allowed).occurs(text.translate(self._spelling))

    def _cores(self, allowed: Optional[frozenset]) -> Optional[tuple]:
        # the normalized pass's token texts without their whitespace, as
        # UTF-8: one occurs in a normalization only if its core is in the
        # walk's words; None when too many to look for one by one, or one
        # is whitespace only
        cores = self._cores_of.get(allowed, False)
        if cores is False:
            texts = {"".join(self._split(t)) for t in self._added.matcher(True, allowed).by_text}
            cores = self._cores_of[allowed] = (
                None if "" in texts or len(texts) > _MAX_CORES else
                tuple(t.encode("utf-8") for t in texts))
        return cores

    def _checked(self, text: str, allowed: Optional[frozenset], offsets: bool) -> Any:
        # the walk of a file with a normalized pass: declined where it may match
        cores = self._cores(allowed)
        found = self._walk(text, self.rules, self._cuts(text, allowed), offsets,
                           cores is not None)
        if found is None:
            return None
        if cores is not None:
            found, words = found
            for core in cores:
                if core in words:
                    break
            else:
                return found
        return None if self._normalized_added(text, allowed) else found

    def ids_many(self, texts: list, allowed: Optional[frozenset]) -> list:
        """:meth:`ids` of each text (see :meth:`Walk.ids_many`): those no
        added token occurs in walked together with the GIL released once."""
        if self._entry is None:
            return Walk.ids_many(self, texts, allowed)
        return self._entry.ids_many(texts, allowed)

    def ids_many_flat(self, texts: list, allowed: Optional[frozenset],
                      fill: Callable[[Any], list]) -> Optional[tuple]:
        """:meth:`ids_many` as ``(ids, offsets)``, one ``array('I')`` and one
        ``array('Q')`` (see :meth:`TextEntry.ids_many_flat`; a text it gives
        ``None`` for has ``fill(text)``'s ids), or ``None`` with no compiled
        entry (a normalized pass of added tokens: text by text)."""
        if self._entry is None:
            return None
        return self._entry.ids_many_flat(texts, allowed, fill)

    def _cut_ids(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        # the ids of a text an added token may start in, cut at the matches
        return self._walk(text, self.rules, self._cuts(text, allowed), False)

    def _checked_ids(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        return self._checked(text, allowed, False)

    def _checked_array(self, text: str, allowed: Optional[frozenset]) -> Optional[array]:
        found = self._checked(text, allowed, False)
        return None if found is None else array("I", found)

    def encode(self, text: str, allowed: Optional[frozenset]) -> Optional[tuple]:
        """``(ids, offsets, words)`` of ``text``, or ``None`` (see
        :class:`~fasttok.formats.hf_walks.Walk`)."""
        if self._spelling is not None:
            return self._checked(text, allowed, True)
        if not self._may_start(text):
            return self._walk(text, self.rules, None, True)
        return self._walk(text, self.rules, self._cuts(text, allowed), True)

    def encode_many(self, texts: list, allowed: Optional[frozenset],
                    num_threads: Optional[int] = None) -> list:
        """:meth:`encode` of each text (see :meth:`Walk.encode_many`): chunks
        on threads, each one :meth:`encode_offsets_many`; with a normalized
        pass of added tokens, text by text."""
        if self._spelling is not None:
            return Walk.encode_many(self, texts, allowed, num_threads)
        return run_batch(self, texts if type(texts) is list else list(texts), allowed,
                         "encode_offsets_many", num_threads, MIN_THREADED_TEXTS)

    def encode_offsets_many(self, texts: list, allowed: Optional[frozenset]) -> list:
        """:meth:`encode` of each text: those no added token cuts walked
        together with the GIL released once, the others one by one."""
        may_start = self._may_start
        cuts = [self._cuts(text, allowed) if may_start(text) else None for text in texts]
        walked = iter(self._walk_many([t for t, c in zip(texts, cuts) if c is None], self.rules))
        return [next(walked) if c is None else self._walk(t, self.rules, c, True)
                for t, c in zip(texts, cuts)]


def bert_walk(record: Any, pipeline: Any) -> Optional[BertWalk]:
    """The walk of ``pipeline`` when its stages are BERT's (BertNormalizer or
    none, BertPreTokenizer, WordPiece with an unknown token); else ``None``.

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
    if not _is_bert(normalizer, pre_tokenizer, model) or model.text_walk() is None:
        return None
    normalize = split = None
    if pipeline.added.any_normalized:
        normalize = str if normalizer is None else normalizer.normalize_str
        split = pre_tokenizer.split_str
    return BertWalk(model, _shared_rules(normalizer, pre_tokenizer), pipeline.added,
                    normalize, split)
