"""A batch cut into chunks that threads take in turn.

The compiled models release the GIL inside each batch call, so plain threads
taking chunks of texts run in parallel; the chunk size keeps each thread a
few chunks (so one slow chunk does not leave the others idle) and at least
64 texts (so the per-call cost stays small). Byte-level BPE has its own job
(``CoreBPE.batch_job``), where the calling thread builds the Python lists of
finished chunks while the others encode.

>>> job = ChunkedBatchJob(lambda texts, allowed: [len(t) for t in texts], ["a", "bb"],
...                       None, "count_many", 2)
>>> job.run(); job.finish()
[1, 2]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, Optional

__all__ = ["ChunkedBatchJob"]


class ChunkedBatchJob:
    """``call(chunk, allowed)`` over chunks of ``texts``; ``how`` names the
    result's shape (``encode_many``, ``encode_many_flat`` or ``count_many``)."""

    def __init__(self, call: Callable[[list, Optional[bytes]], Any], texts: list,
                 allowed: Optional[bytes], how: str, num_threads: int) -> None:
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
