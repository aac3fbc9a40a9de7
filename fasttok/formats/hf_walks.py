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

from typing import Any, Optional

from fasttok.formats.hf_bert import bert_walk
from fasttok.formats.hf_bpe_path import bpe_stretch_walk
from fasttok.formats.hf_byte_level import byte_level_walk
from fasttok.formats.hf_unigram_path import unigram_walk
from fasttok.formats.walk import Walk

__all__ = ["Walk", "WALKS", "walk_for"]


#: recogniser -> builder, in the order tried: each returns a walk for the
#: configuration it knows, else ``None``
WALKS: tuple = (byte_level_walk, bpe_stretch_walk, bert_walk, unigram_walk)


def walk_for(record: Any, pipeline: Any, walks: tuple = WALKS) -> Optional[Walk]:
    """The walk of ``pipeline``'s configuration (``record``: its
    ``tokenizer.json`` record), or ``None`` when no walk knows it."""
    for build in walks:
        walk = build(record, pipeline)
        if walk is not None:
            return walk
    return None
