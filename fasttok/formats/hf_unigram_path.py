"""The compiled walk of Unigram ``tokenizer.json`` files (T5, mT5, ALBERT, XLNet, XLM-R, and
what ``transformers`` converts from a SentencePiece model).

:func:`unigram_walk` recognises the configurations whose stages it can run
as one compiled pass (:class:`~fasttok.models._unigram.UnigramWalk`) and
asks each stage for what the walk is built from:

* **Normalizer**: a ``Sequence`` (or one stage) of ``Replace`` stages
  around at most one ``Precompiled`` charsmap (its rules,
  :attr:`~fasttok.normalizers.precompiled.Precompiled.rules`, and the
  classes its clusters are cut by,
  :func:`~fasttok.normalizers.precompiled.cluster_classes`). A ``Replace``
  of a literal string, or of one of the patterns of :data:`REPLACE_SHAPES`
  (a run squeezed, the runs at the ends trimmed, the start doubled).
* **Pre-tokenizer**: ``Metaspace`` (any prepend scheme, split or not),
  ``WhitespaceSplit`` (its characters asked of it), or the two in sequence.
* **Model**: the pipeline's ``Unigram`` itself (its compiled core, with the
  ``never`` ids it was built with), with an unknown id.
* **Added tokens**: the raw-text pass (``normalized=false`` tokens, the
  special ones of these files); a file with ``normalized=true`` added
  tokens gets no walk.

A normalizer whose first stages are others (ALBERT's ``NFKD``,
``StripAccents`` and ``Lowercase``; ``NFKC``, ``Strip``, ``Nmt``) has
those stages run first, as themselves (:class:`UnigramLeadWalk`), and the
compiled walk after them. Anything else (other pre-tokenizers, no
``unk_id``) gets no walk: the pipeline's stages run it.

>>> import json
>>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
>>> from fasttok.formats.hf_pipeline import pipeline_from_document
>>> doc = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["▁a", -1.0]]},
...        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁",
...                          "prepend_scheme": "always", "split": True}}
>>> record = tokenizer_json_record(json.dumps(doc), "t.json")
>>> walk = unigram_walk(record, pipeline_from_document(record))
>>> walk.ids("a a", None)
[1, 1]
>>> [list(a) for a in walk.encode("a a", None)]
[[1, 1], [0, 1, 1, 3], [0, 1]]
"""

from __future__ import annotations

from typing import Any, Optional

from array import array

from fasttok.formats.walk import MIN_THREADED_TEXTS, Walk
from fasttok.models._unigram import UnigramWalk
from fasttok.models.hf_unigram import Unigram
from fasttok.models.interface import run_batch
from fasttok.normalizers.one_for_one import char_by_char, one_for_one
from fasttok.normalizers.precompiled import Precompiled, cluster_classes
from fasttok.normalizers.replace import Replace
from fasttok.normalizers.sequence import Sequence as NormalizerSequence
from fasttok.pre_tokenizers.metaspace import Metaspace
from fasttok.pre_tokenizers.sequence import Sequence as PreTokenizerSequence
from fasttok.pre_tokenizers.split import WhitespaceSplit

__all__ = ["UnigramPathWalk", "UnigramLeadWalk", "unigram_walk", "REPLACE_SHAPES"]

#: The regex ``Replace`` stages the walk runs, by their pattern and content
#: spelled with the character ``c`` they act on (``c`` a character that is
#: no regex syntax): ``(pattern, content) -> (op, new string)``, the ops of
#: :class:`~fasttok.models._unigram.UnigramWalk` (transformers writes these
#: three, and the literal ``" "`` -> ``"▁"``, for a SentencePiece model's
#: whitespace rules).
REPLACE_SHAPES = {
    ("{c}{{2,}}", "{c}"): ("squeeze", "{c}"),
    ("\\A{c}+|{c}+\\z", ""): ("trim", ""),
    ("\\A{c}", "{c}{c}"): ("lead", "{c}{c}"),
}

_REGEX_SYNTAX = frozenset(".^$*+?{}[]\\|()#")


def _stages(normalizer: Any) -> list:
    # a normalizer as the list of its stages, Sequences flattened
    if normalizer is None:
        return []
    if isinstance(normalizer, NormalizerSequence):
        return [s for n in normalizer.normalizers for s in _stages(n)]
    return [normalizer]


def _replace_op(stage: Any) -> Optional[tuple]:
    # the walk's op for a Replace stage, or None
    if not isinstance(stage, Replace):
        return None
    if not stage.regex:
        return ("literal", stage.pattern, stage.content) if stage.pattern else None
    for c in set(stage.pattern) - _REGEX_SYNTAX:
        if not c.isprintable():
            continue
        for (pattern, content), (op, new) in REPLACE_SHAPES.items():
            if stage.pattern == pattern.format(c=c) and stage.content == content.format(c=c):
                return op, c, new.format(c=c)
    return None


def _normalizer_plan(stages: list) -> Optional[tuple]:
    # (ops before the charsmap, charsmap, ops after it) of the normalizer's
    # stages, or None
    at = [i for i, stage in enumerate(stages) if isinstance(stage, Precompiled)]
    if len(at) > 1:
        return None
    cut = at[0] if at else len(stages)
    early = [_replace_op(stage) for stage in stages[:cut]]
    ops = [_replace_op(stage) for stage in stages[cut + 1:]]
    if None in early or None in ops:
        return None
    charsmap = None
    if at:
        charsmap = (stages[cut].rules, cluster_classes())
    return early, charsmap, ops


def _pre_tokenizer_plan(pre_tokenizer: Any) -> Optional[tuple]:
    # (whitespace or None, metaspace settings or None), or None
    if pre_tokenizer is None:
        parts = []
    elif isinstance(pre_tokenizer, PreTokenizerSequence):
        parts = list(pre_tokenizer.pretokenizers)
    else:
        parts = [pre_tokenizer]
    whitespace = None
    if parts and type(parts[0]) is WhitespaceSplit:
        whitespace = parts[0].cut_chars()
        parts = parts[1:]
    if not parts:
        return whitespace, None
    if len(parts) == 1 and type(parts[0]) is Metaspace:
        m = parts[0]
        return whitespace, (m.replacement, m.prepend_scheme, m.split)
    return None


class UnigramPathWalk(Walk):
    """The walk of one Unigram configuration (see the module docstring);
    a text holding a lone surrogate is declined (``None``). ``encode`` adds
    the fourth item of :meth:`Walk.encode` when some tokens are unknown runs
    (tokenizers' token string for one is the run's normalized text, not its
    id's piece). ``ids``, ``encode`` and ``encode_scored`` are the compiled
    walk's own (a Python call less a text). A batch goes in chunks to
    threads, each chunk one call of the compiled walk's
    ``encode_offsets_many``.

    >>> from fasttok.models._unigram import TokenizersUnigram
    >>> model = TokenizersUnigram(["<unk>", "a"], [0.0, -1.0], 0, False)
    >>> UnigramPathWalk(UnigramWalk(model, [], None, [], None, None, 2)).ids("ab", None)
    [1, 0]
    """

    def __init__(self, core: UnigramWalk) -> None:
        self.ids = core.ids
        self.encode = core.encode
        self.encode_scored = core.encode_scored
        # the batch call each chunk of Walk.batch_job's job makes
        self.encode_offsets_many = core.encode_offsets_many

    def encode_many(self, texts: list, allowed: Optional[frozenset],
                    num_threads: Optional[int] = None) -> list:
        """:meth:`encode` of each text (see :meth:`Walk.encode_many`)."""
        return run_batch(self, texts if type(texts) is list else list(texts), allowed,
                         "encode_offsets_many", num_threads, MIN_THREADED_TEXTS)


class UnigramLeadWalk(Walk):
    """The walk of a Unigram configuration whose normalizer starts with
    stages the compiled walk does not run (``lead``, their Sequence: ALBERT's
    ``NFKD``, ``StripAccents`` and ``Lowercase``, a ``Strip``, an ``Nmt``):
    ``lead`` normalizes the text, ``core`` (a
    :class:`~fasttok.models._unigram.UnigramWalk` of the stages after it)
    walks the result, and each token's offsets go back through ``lead``'s
    alignment. Where ``lead`` writes each character as one character, alone
    as in the text (``Lowercase`` of most text), the offsets are the core's
    own; where it writes each as it writes it alone, some as several or
    none, each token spans the characters it came from; elsewhere the
    alignment is the stages' (a ``NormalizedString``).

    The added tokens (``added``) cut the raw text before ``lead`` runs:
    a text holding one is walked stretch by stretch between them, each
    stretch as a text of its own (``first``: the pre-tokenizer is a
    Metaspace that prepends only at the text's start, so a text with a
    stretch after a token is declined). A text holding a lone surrogate is
    declined.

    >>> from fasttok.models._unigram import TokenizersUnigram
    >>> from fasttok.added_tokens.hf_added import AddedToken, AddedTokens
    >>> from fasttok.normalizers.simple import Lowercase
    >>> model = TokenizersUnigram(["<unk>", "a", "b"], [0.0, -1.0, -1.0], 0, False)
    >>> walk = UnigramLeadWalk(UnigramWalk(model, [], None, [], None, None, 4),
    ...                        NormalizerSequence([Lowercase()]),
    ...                        AddedTokens([AddedToken("[M]", 3, special=True)]))
    >>> walk.ids("AB", None), [list(a) for a in walk.encode("AB", None)]
    ([1, 2], [[1, 2], [0, 1, 1, 2], [0, 0]])
    >>> [list(a) for a in walk.encode("A[M]B", None)]
    [[1, 3, 2], [0, 1, 1, 4, 4, 5], [0, 1, 2]]
    """

    def __init__(self, core: UnigramWalk, lead: Any, added: Any, first: bool = False) -> None:
        self._core = core
        self._lead = lead
        self._respell = one_for_one(lead.normalize_str)
        self._written = char_by_char(lead.normalize_str)
        self._added = added
        self._first = first
        self._none = frozenset()

    def _led(self, text: str) -> tuple:
        # (lead's text, its alignments or None where each character stays
        # one character in place)
        out = self._respell(text)
        if out is not None:
            return out, None
        written = self._written(text)
        if written is not None:
            out, sources = written
            return out, [(k, k + 1) for k in sources]
        from fasttok.shared.normalized import NormalizedString

        piece = NormalizedString(text)
        self._lead.normalize(piece)
        return piece.normalized, piece.alignments

    def _cut(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        # the added tokens' matches in text, or None where none occurs
        if type(text) is not str:
            raise TypeError(f"text must be str, not {type(text).__name__}")
        if not self._added.matcher(False, allowed).occurs(text):
            return None
        return self._added.find_matches(text, normalized=False, allowed=allowed)

    def ids(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        """The ids of ``text``, or ``None`` (see :class:`Walk`)."""
        if self._cut(text, allowed) is None:
            return self._core.ids(self._led(text)[0], self._none)
        found = self.encode(text, allowed)
        return None if found is None else found[0].tolist()

    def encode(self, text: str, allowed: Optional[frozenset]) -> Optional[tuple]:
        """``(ids, offsets, words)`` of ``text`` (and the unknown runs' strings),
        or ``None`` (see :class:`Walk`)."""
        matches = self._cut(text, allowed)
        if matches is None:
            return self._stretch(text)
        ids, offsets, words, strings = array("I"), array("i"), array("i"), {}
        word = 0
        for token_id, start, end in matches:
            if token_id is not None:
                ids.append(token_id)
                offsets.extend((start, end))
                words.append(word)
                word += 1
                continue
            if start == end:
                continue
            if self._first and start:
                return None
            found = self._stretch(text[start:end])
            if found is None:
                return None
            if len(found) > 3:
                strings.update({len(ids) + k: run for k, run in found[3].items()})
            ids.extend(found[0])
            offsets.extend(at + start for at in found[1])
            words.extend(w + word for w in found[2])
            if found[2]:
                word += found[2][-1] + 1
        return (ids, offsets, words, strings) if strings else (ids, offsets, words)

    def _stretch(self, text: str) -> Optional[tuple]:
        # the walk of text with no added token in it
        out, aligns = self._led(text)
        found = self._core.encode(out, self._none)
        if found is None or aligns is None:
            return found
        spans = found[1]
        offsets = array("i", spans)
        for k in range(0, len(spans), 2):
            offsets[k] = aligns[spans[k]][0]
            offsets[k + 1] = aligns[spans[k + 1] - 1][1]
        return (found[0], offsets) + tuple(found[2:])


def unigram_walk(record: Any, pipeline: Any) -> Optional[Walk]:
    """The walk of ``pipeline`` if it is a Unigram configuration the walk
    runs (``record``: its ``tokenizer.json`` record), else ``None``.

    >>> import json
    >>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
    >>> from fasttok.formats.hf_pipeline import pipeline_from_document
    >>> doc = {"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]},
    ...        "pre_tokenizer": {"type": "Whitespace"}}
    >>> record = tokenizer_json_record(json.dumps(doc), "t.json")
    >>> unigram_walk(record, pipeline_from_document(record)) is None
    True
    """
    model = pipeline.model
    if type(model) is not Unigram or model.unk_id is None or not model.get_vocab_size() \
            or pipeline.added.any_normalized:
        return None
    pre_tokenizer = _pre_tokenizer_plan(pipeline.pre_tokenizer)
    if pre_tokenizer is None:
        return None
    # the walk runs the stages it knows; those before them (a Lowercase, an
    # NFKD and StripAccents) are asked of the stages themselves
    stages = _stages(pipeline.normalizer)
    # each plan once: a charsmap's is most of a first encode's time
    plans = ((k, _normalizer_plan(stages[k:])) for k in range(len(stages) + 1))
    lead, (early, charsmap, ops) = next((k, plan) for k, plan in plans if plan is not None)
    whitespace, metaspace = pre_tokenizer
    n_ids = max([model.get_vocab_size()] + [t.id + 1 for t in pipeline.added.tokens])
    core = UnigramWalk(model.core, early, charsmap, ops, whitespace, metaspace, n_ids,
                       pipeline.added)
    if lead:
        return UnigramLeadWalk(core, NormalizerSequence(stages[:lead]), pipeline.added,
                               metaspace is not None and metaspace[1] == "first")
    return UnigramPathWalk(core)
