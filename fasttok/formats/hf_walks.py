"""The compiled walks of ``tokenizer.json`` configurations: the one place listing them.

A walk runs all the stages of one configuration (added tokens, normalizer,
pre-tokenizer, model) over a text in one compiled pass, the way
``tokenizers``' ``encode_single_sequence`` does, and gives the ids alone or
the ids with their offsets and word indices -- the same walk with a flag
(``tokenizers``' ``OffsetType::None``). :class:`~fasttok.formats.hf_pipeline.HFPipeline`
asks :func:`walk_for` once; with no walk for its configuration (or a text a
walk declines) it runs its stages one by one, which are also the test
oracle every walk is held to.

Each entry of :data:`WALKS` recognises its configuration from the built
stages (and the record, for what only it holds) and builds the walk from
them: a stage's rule is asked of the stage, never copied.

>>> import json
>>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
>>> from fasttok.formats.hf_pipeline import pipeline_from_document
>>> doc = {"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}
>>> record = tokenizer_json_record(json.dumps(doc), "t.json")
>>> walk_for(record, pipeline_from_document(record)) is None
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

__all__ = ["Walk", "WALKS", "walk_for"]


class Walk:
    """One configuration's stages as one compiled pass.

    ``allowed`` is the set of added-token ids matched as added tokens
    (``None``: all of them, as ``tokenizers`` matches them). Either method
    may return ``None`` for a text it does not take (the pipeline's stages
    then encode it); what it returns is exactly what the stages give.
    """

    def ids(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        """The ids of ``text`` (no post-processor), or ``None``."""
        raise NotImplementedError

    def encode(self, text: str, allowed: Optional[frozenset]) -> Optional[tuple]:
        """``(ids, offsets, words)`` of ``text``, or ``None``: ``ids`` an
        ``array('I')``; ``offsets`` an ``array('i')`` of ``2 * len(ids)``
        character offsets into ``text``, start and end of each token in
        turn, as ``tokenizers``' ``Encoding.offsets`` before
        post-processing; ``words`` an ``array('i')``, each token's word index
        (the index of its pre-tokenizer split, added tokens counting as
        splits), as ``Encoding.word_ids``. A token's string is the
        vocabulary's for its id; a walk whose model gives some token another
        string (Unigram's unknown pieces keep their text) adds a fourth
        item, ``{index: string}`` for those tokens."""
        raise NotImplementedError


def _byte_level(record: Any, pipeline: Any) -> Optional[Walk]:
    from fasttok.formats.hf_byte_level import byte_level_walk
    return byte_level_walk(record, pipeline)


def _bpe_stretches(record: Any, pipeline: Any) -> Optional[Walk]:
    from fasttok.formats.hf_bpe_path import bpe_stretch_walk
    return bpe_stretch_walk(record, pipeline)


def _bert(record: Any, pipeline: Any) -> Optional[Walk]:
    from fasttok.formats.hf_bert import bert_walk
    return bert_walk(record, pipeline)


def _unigram(record: Any, pipeline: Any) -> Optional[Walk]:
    from fasttok.formats.hf_unigram_path import unigram_walk
    return unigram_walk(record, pipeline)


#: recogniser -> builder, in the order tried: each returns a walk for the
#: configuration it knows, else ``None``
WALKS: tuple = (_byte_level, _bpe_stretches, _bert, _unigram)


def walk_for(record: Any, pipeline: Any,
             walks: tuple = WALKS) -> Optional[Walk]:
    """The walk of ``pipeline``'s configuration (``record``: its
    ``tokenizer.json`` record), or ``None`` when no walk knows it."""
    for build in walks:
        try:
            walk = build(record, pipeline)
        except ImportError:
            continue
        if walk is not None:
            return walk
    return None
