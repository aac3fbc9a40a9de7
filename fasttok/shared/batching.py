"""A batch cut into chunks that threads take in turn.

The compiled models release the GIL inside each batch call, so plain threads
taking chunks of texts run in parallel; the chunk size keeps each thread a
few chunks (so one slow chunk does not leave the others idle) and at least
64 texts (so the per-call cost stays small). Byte-level BPE has its own job
(``CoreBPE.batch_job``), where the calling thread builds the Python lists of
finished chunks while the others encode.

>>> class Lengths:
...     def count_many(self, texts, allowed):
...         return [len(t) for t in texts]
>>> job = ChunkedBatchJob(Lengths(), ["a", "bb"], None, "count_many", 2)
>>> job.run(); job.finish()
[1, 2]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, Optional

__all__ = ["ChunkedBatchJob", "ChunkedBatches", "BATCH_CALLS"]


# the batch calls a job may run, each a method of the model of that name
BATCH_CALLS = frozenset({"encode_many", "encode_many_flat", "count_many"})


class ChunkedBatchJob:
    """``model.<how>(chunk, allowed)`` over chunks of ``texts``, where ``how``
    is one of :data:`BATCH_CALLS` and names the result's shape."""

    def __init__(self, model: Any, texts: list, allowed: Optional[bytes], how: str,
                 num_threads: int) -> None:
        if how not in BATCH_CALLS:
            raise ValueError(f"unknown batch call {how!r}; one of {sorted(BATCH_CALLS)}")
        call: Callable[[list, Optional[bytes]], Any] = getattr(model, how)
        step = max(64, -(-len(texts) // (4 * max(1, num_threads))))
        self._chunks = [texts[i:i + step] for i in range(0, len(texts), step)]
        self._parts: list = [None] * len(self._chunks)
        self._next = itertools.count()  # next() is atomic under the GIL
        self._call = call
        self._allowed = allowed
        self._how = how

    def run(self) -> None:
        """Take chunks until none is left."""
        for k in iter(self._next.__next__, None):
            if k >= len(self._chunks):
                return
            self._parts[k] = self._call(self._chunks[k], self._allowed)

    work = run

    def finish(self) -> Any:
        """The parts joined in order."""
        parts = self._parts
        if not parts:
            return self._call([], self._allowed)
        if self._how == "encode_many_flat":
            ids, offsets = parts[0]
            for more_ids, more_offsets in parts[1:]:
                shift = len(ids)
                offsets.extend(o + shift for o in more_offsets[1:])
                ids.extend(more_ids)
            return ids, offsets
        result = parts[0]
        for part in parts[1:]:
            result += part
        return result


class ChunkedBatches:
    """``batch_job`` for models whose batch calls release the GIL themselves
    (or need no threads): a :class:`ChunkedBatchJob` over the model."""

    def batch_job(self, texts: list, allowed: Optional[bytes], how: str,
                  num_threads: int) -> ChunkedBatchJob:
        """Chunks of ``texts`` through the batch call ``how`` names, for ``num_threads`` threads."""
        return ChunkedBatchJob(self, texts, allowed, how, num_threads)
