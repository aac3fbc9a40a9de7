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

import importlib
from typing import Any, Optional

from fasttok.formats.walk import Walk

__all__ = ["Walk", "WALKS", "walk_for"]


#: model type -> the walks that may take its configurations, as (module,
#: builder) in the order tried; each builder returns a walk for the
#: configuration it knows, else ``None``. Only the modules of the file's
#: model type are imported, when its first text is encoded (importing all
#: four was a quarter of ``fasttok.load``'s imports).
WALKS: dict = {
    "BPE": (("fasttok.formats.hf_byte_level", "byte_level_walk"),
            ("fasttok.formats.hf_bpe_path", "bpe_stretch_walk")),
    "WordPiece": (("fasttok.formats.hf_bert", "bert_walk"),),
    "Unigram": (("fasttok.formats.hf_unigram_path", "unigram_walk"),),
}


def walk_for(record: Any, pipeline: Any, walks: Optional[dict] = None) -> Optional[Walk]:
    """The walk of ``pipeline``'s configuration (``record``: its
    ``tokenizer.json`` record), or ``None`` when no walk knows it."""
    # a byte-level record's model is BPE, and left unbuilt until used
    kind = "BPE" if record.merges is not None else type(pipeline.model).__name__
    for module, name in (WALKS if walks is None else walks).get(kind, ()):
        walk = getattr(importlib.import_module(module), name)(record, pipeline)
        if walk is not None:
            return walk
    return None
