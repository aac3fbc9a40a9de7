"""Many documents' token ids as one buffer, and as a padded 2-D batch.

A batch of N documents is two arrays, not N lists: ``ids`` (``array('I')``,
every id in document order) and ``offsets`` (``array('Q')``, N + 1 entries
from 0; document i is ``ids[offsets[i]:offsets[i + 1]]``). It is what the
compiled batch calls return (``encode_many_flat``), so no Python int is made
per token, and numpy (or torch, Arrow) wraps either array without a copy.
:class:`PaddedIds` is the rectangle a model takes: each row one document,
padded to the longest (or cut at ``max_length``), with its lengths and
attention mask. numpy is optional everywhere: the padded form is numpy when
it is installed, else flat arrays plus a shape.

>>> from array import array
>>> batch = RaggedIds(array("I", [5, 6, 7]), array("Q", [0, 2, 2, 3]))
>>> len(batch), batch[0], batch.to_lists()
(3, array('I', [5, 6]), [[5, 6], [], [7]])
>>> pad(batch, pad_id=0, use_numpy=False).ids
array('I', [5, 6, 0, 0, 7, 0])
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Iterator
from typing import Any, Optional

from fasttok.errors import FasttokError

__all__ = ["RaggedIds", "PaddedIds", "append_flat", "pad", "require_numpy"]


def require_numpy(method: str, instead: str) -> Any:
    """The numpy module, or a :class:`~fasttok.errors.FasttokError` saying
    that ``method`` needs it and what to use ``instead``.

    >>> require_numpy("to_numpy", "to_lists").uint32 is not None  # doctest: +SKIP
    True
    """
    try:
        import numpy
    except ImportError:
        raise FasttokError(f"{method} needs numpy, which fasttok does not depend on: "
                           f"`pip install numpy`, or use {instead}") from None
    return numpy


def _optional_numpy() -> Any:
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def append_flat(ids: array, offsets: array, more_ids: array, more_offsets: array) -> None:
    """Append one flat batch (``more_ids``, ``more_offsets``, offsets from 0)
    to another in place: ``offsets`` keeps counting where it ended.

    >>> ids, offsets = array("I", [1]), array("Q", [0, 1])
    >>> append_flat(ids, offsets, array("I", [2, 3]), array("Q", [0, 2]))
    >>> ids, offsets
    (array('I', [1, 2, 3]), array('Q', [0, 1, 3]))
    """
    shift = len(ids)
    tail = more_offsets[1:]
    # map over a bound C method: a third of a generator's time per document
    offsets.extend(map(shift.__add__, tail) if shift else tail)
    ids.extend(more_ids)


class RaggedIds:
    """Token ids of many documents: ``ids`` (``array('I')``, all of them in
    order) and ``offsets`` (``array('Q')``, one more than the documents, from
    0): document i's ids are ``ids[offsets[i]:offsets[i + 1]]``.

    ``batch[i]`` is document i's ids (an ``array('I')`` copy of that slice),
    ``len(batch)`` the number of documents; :meth:`to_numpy` wraps both
    buffers without a copy.

    >>> batch = RaggedIds(array("I", [5, 6, 7]), array("Q", [0, 2, 3]))
    >>> [list(doc) for doc in batch], batch.lengths()
    ([[5, 6], [7]], array('Q', [2, 1]))
    """

    __slots__ = ("ids", "offsets")

    def __init__(self, ids: array, offsets: array) -> None:
        if not offsets or offsets[0] != 0 or offsets[-1] != len(ids):
            raise FasttokError(f"offsets must run from 0 to len(ids) = {len(ids)}")
        self.ids = ids
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> array:
        n = len(self.offsets) - 1
        i = operator.index(index)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"document {index} of {n}")
        return self.ids[self.offsets[i]:self.offsets[i + 1]]

    def __iter__(self) -> Iterator[array]:
        ids, offsets = self.ids, self.offsets
        return (ids[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1))

    def __repr__(self) -> str:
        return f"RaggedIds(documents={len(self)}, tokens={len(self.ids)})"

    def lengths(self) -> array:
        """The number of ids of each document, an ``array('Q')``.

        >>> RaggedIds(array("I", [1, 2]), array("Q", [0, 0, 2])).lengths()
        array('Q', [0, 2])
        """
        offsets = self.offsets
        return array("Q", map(operator.sub, offsets[1:], offsets[:-1]))

    def to_lists(self) -> list:
        """One list of ids per document (a Python int per token: for small
        batches and tests).

        >>> RaggedIds(array("I", [1, 2]), array("Q", [0, 1, 2])).to_lists()
        [[1], [2]]
        """
        flat, bounds = self.ids.tolist(), self.offsets.tolist()
        return [flat[a:b] for a, b in zip(bounds, bounds[1:])]

    def to_numpy(self) -> tuple:
        """``(ids, offsets)`` as numpy ``uint32`` and ``uint64`` arrays that
        share this batch's memory (no copy); needs numpy.

        >>> RaggedIds(array("I", [1, 2]), array("Q", [0, 2])).to_numpy()  # doctest: +SKIP
        (array([1, 2], dtype=uint32), array([0, 2], dtype=uint64))
        """
        np = require_numpy("RaggedIds.to_numpy", "the ids and offsets arrays, which numpy "
                                                 "can wrap later")
        return np.frombuffer(self.ids, dtype=np.uint32), np.frombuffer(self.offsets, dtype=np.uint64)


class PaddedIds:
    """A padded batch: row i is document i's ids, then ``pad_id`` (or the pads
    first, padded on the left), all rows ``shape[1]`` wide.

    With numpy: ``ids`` a ``(rows, width)`` ``uint32`` array wrapping the flat
    buffer (no copy), ``attention_mask`` a ``uint8`` array of that shape (1
    where an id is the document's), ``lengths`` an ``int64`` array. Without:
    ``ids`` an ``array('I')`` and ``attention_mask`` a ``bytearray``, both row
    after row, ``lengths`` an ``array('q')``; ``shape`` says how to read them.

    >>> from array import array
    >>> p = pad(RaggedIds(array("I", [7, 8, 9]), array("Q", [0, 2, 3])), pad_id=0,
    ...         side="left", use_numpy=False)
    >>> p.shape, p.ids, list(p.attention_mask), p.lengths
    ((2, 2), array('I', [7, 8, 0, 9]), [1, 1, 0, 1], array('q', [2, 1]))
    """

    __slots__ = ("ids", "attention_mask", "lengths", "shape")

    def __init__(self, ids: Any, attention_mask: Any, lengths: Any, shape: tuple) -> None:
        self.ids = ids
        self.attention_mask = attention_mask
        self.lengths = lengths
        self.shape = shape

    def __repr__(self) -> str:
        return f"PaddedIds(shape={self.shape})"


def pad(batch: RaggedIds, *, pad_id: int, max_length: Optional[int] = None, side: str = "right",
        use_numpy: Optional[bool] = None) -> PaddedIds:
    """``batch`` as a :class:`PaddedIds`: as wide as its longest document, or
    ``max_length`` when that is less (a longer document keeps its first
    ``max_length`` ids); padded with ``pad_id`` on ``side`` (``"right"`` or
    ``"left"``); numpy arrays when ``use_numpy`` (``None``: when numpy is
    installed).

    >>> pad(RaggedIds(array("I", [1, 2, 3]), array("Q", [0, 3, 3])), pad_id=9, max_length=2,
    ...     use_numpy=False).ids
    array('I', [1, 2, 9, 9])
    """
    if side not in ("right", "left"):
        raise FasttokError(f"side must be 'right' or 'left', not {side!r}")
    if isinstance(pad_id, bool) or not 0 <= operator.index(pad_id) < 2**32:
        raise FasttokError(f"pad_id must be an id, an int from 0 to 2**32 - 1, not {pad_id!r}")
    if max_length is not None and (isinstance(max_length, bool) or operator.index(max_length) < 0):
        raise FasttokError(f"max_length must be an int of 0 or more (or None), not {max_length!r}")
    np = require_numpy("pad(use_numpy=True)", "use_numpy=False") if use_numpy else \
        (None if use_numpy is not None else _optional_numpy())
    lengths = batch.lengths()
    width = max(lengths, default=0)
    if max_length is not None:
        width = min(width, max_length)
    rows = len(lengths)
    ids = array("I", [pad_id]) * (rows * width)
    mask = bytearray(rows * width)
    ones = memoryview(b"\x01" * width)
    source, offsets, kept = batch.ids, batch.offsets, array("q", bytes(8 * rows))
    for row in range(rows):
        start, n = offsets[row], min(lengths[row], width)
        at = row * width + (0 if side == "right" else width - n)
        ids[at:at + n] = source[start:start + n]
        mask[at:at + n] = ones[:n]
        kept[row] = n
    if np is None:
        return PaddedIds(ids, mask, kept, (rows, width))
    return PaddedIds(np.frombuffer(ids, dtype=np.uint32).reshape(rows, width),
                     np.frombuffer(mask, dtype=np.uint8).reshape(rows, width),
                     np.frombuffer(kept, dtype=np.int64), (rows, width))
