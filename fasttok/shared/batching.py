"""A batch cut into chunks that threads take in turn.

The compiled models release the GIL inside each batch call, so plain threads
taking chunks of texts run in parallel; the chunk size keeps each thread a
few chunks (so one slow chunk does not leave the others idle) and at least
64 texts (so the per-call cost stays small). Byte-level BPE has its own job
(``CoreBPE.batch_job``), where the calling thread builds the Python lists of
finished chunks while the others encode. :func:`on_threads` runs a job's
``run`` and ``work`` on threads.

>>> class Lengths:
...     def count_many(self, texts, allowed):
...         return [len(t) for t in texts]
>>> job = ChunkedBatchJob(Lengths(), ["a", "bb"], None, "count_many", 2)
>>> job.run(); job.finish()
[1, 2]
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from typing import Any, Optional

from fasttok.shared.ragged import append_flat

__all__ = ["ChunkedBatchJob", "BATCH_CALLS", "on_threads",
           "default_threads"]


# the batch calls a job may run, each a method of the model of that name
BATCH_CALLS = frozenset({"encode_many", "encode_many_flat", "count_many", "encode_offsets_many"})


def on_threads(main: Callable[[], Any], helper: Callable[[], Any], num_threads: int) -> None:
    """Run ``main`` in the calling thread and ``helper`` in ``num_threads - 1``
    others, kept from one call to the next (their caches stay warm:
    :mod:`fasttok.shared.helper_threads`); re-raise the first error once all
    have ended.

    >>> done = []
    >>> on_threads(lambda: done.append("main"), lambda: done.append("helper"), 2)
    >>> sorted(done)
    ['helper', 'main']
    """
    # (only batches use threads: kept out of import time)
    from fasttok.shared.helper_threads import run_with_helpers

    run_with_helpers(main, helper, num_threads - 1)


# TOKENIZERS_PARALLELISM values that turn tokenizers' parallelism off
_OFF = frozenset({"", "off", "false", "f", "no", "n", "0"})


def default_threads() -> int:
    """The threads a batch of ``fasttok.hf`` runs on, as ``tokenizers`` picks
    them: one when ``TOKENIZERS_PARALLELISM`` turns parallelism off, else
    ``RAYON_NUM_THREADS`` (or ``RAYON_RS_NUM_THREADS``) when set above 0,
    else the CPUs.

    >>> default_threads() >= 1
    True
    """
    switch = os.environ.get("TOKENIZERS_PARALLELISM")
    if switch is not None and switch.strip().lower() in _OFF:
        return 1
    for name in ("RAYON_NUM_THREADS", "RAYON_RS_NUM_THREADS"):
        try:
            count = int(os.environ.get(name, ""))
        except ValueError:
            continue
        if count > 0:
            return count
    return os.cpu_count() or 1


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
            for more in parts[1:]:
                append_flat(ids, offsets, *more)
            return ids, offsets
        result = parts[0]
        for part in parts[1:]:
            result += part
        return result
