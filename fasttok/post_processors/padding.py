"""Padding as ``tokenizers``' ``pad_encodings``: to the longest of a batch or a fixed
length, rounded up to a multiple, on the left or the right.

>>> from fasttok.post_processors.encoding import Encoding
>>> batch = [Encoding([1], ["a"], [(0, 1)], [0]), Encoding([1, 2, 3], list("abc"), [(0, 1)] * 3, [0, 1, 2])]
>>> pad_encodings(batch, PaddingParams(pad_to_multiple_of=2))
>>> [e.ids for e in batch]
[[1, 0, 0, 0], [1, 2, 3, 0]]
"""

from __future__ import annotations

import os

from fasttok.errors import FasttokError
from fasttok.post_processors.truncation import direction_of

__all__ = ["PaddingParams", "pad_encodings", "PADDED_POSITION_BYTES"]

#: what one padded position costs an Encoding: a pointer in each of its seven
#: lists (ids, type ids, tokens, offsets, word ids, the two masks; the values
#: are shared objects), and one more in the list it is copied from
PADDED_POSITION_BYTES = 8 * 8


class PaddingParams:
    """``length`` (``None``: the longest in the batch, ``BatchLongest``; a number:
    ``Fixed``), ``direction``, ``pad_to_multiple_of``, ``pad_id``, ``pad_type_id``,
    ``pad_token``.

    >>> PaddingParams(length=8).strategy
    'fixed'
    >>> PaddingParams(pad_id=-1)
    Traceback (most recent call last):
    fasttok.errors.FasttokError: pad_id and pad_type_id must be from 0 to 2**32 - 1, not -1 and 0
    """

    __slots__ = ("length", "direction", "pad_to_multiple_of", "pad_id", "pad_type_id",
                 "pad_token")

    def __init__(self, length: int | None = None, direction: str = "right",
                 pad_to_multiple_of: int | None = None, pad_id: int = 0, pad_type_id: int = 0,
                 pad_token: str = "[PAD]") -> None:
        if (length is not None and length < 0) or (pad_to_multiple_of or 0) < 0:
            raise FasttokError("padding length and pad_to_multiple_of must not be negative")
        if not (0 <= pad_id < 2 ** 32 and 0 <= pad_type_id < 2 ** 32):
            # tokenizers' ids are u32: -1 or 2**32 would pad with an id no vocabulary holds
            raise FasttokError(f"pad_id and pad_type_id must be from 0 to 2**32 - 1, "
                               f"not {pad_id} and {pad_type_id}")
        self.length = length
        self.direction = direction_of(direction, "padding")
        self.pad_to_multiple_of = pad_to_multiple_of
        self.pad_id = pad_id
        self.pad_type_id = pad_type_id
        self.pad_token = pad_token

    @property
    def strategy(self) -> str:
        """``"batch_longest"`` or ``"fixed"``.

        >>> PaddingParams().strategy
        'batch_longest'
        """
        return "batch_longest" if self.length is None else "fixed"

    def __repr__(self) -> str:
        return (f"PaddingParams(length={self.length}, direction={self.direction!r}, "
                f"pad_to_multiple_of={self.pad_to_multiple_of}, pad_id={self.pad_id}, "
                f"pad_type_id={self.pad_type_id}, pad_token={self.pad_token!r})")

    def as_dict(self) -> dict:
        """The parameters as ``tokenizers.Tokenizer.padding`` shows them.

        >>> PaddingParams(length=4).as_dict()["length"]
        4
        """
        return {"length": self.length, "pad_to_multiple_of": self.pad_to_multiple_of,
                "pad_id": self.pad_id, "pad_token": self.pad_token,
                "pad_type_id": self.pad_type_id, "direction": self.direction}

    def as_json(self) -> dict:
        """The parameters as ``tokenizer.json``'s ``padding`` object holds them.

        >>> PaddingParams(length=4).as_json()["strategy"]
        {'Fixed': 4}
        """
        return {"strategy": "BatchLongest" if self.length is None else {"Fixed": self.length},
                "direction": self.direction.capitalize(),
                "pad_to_multiple_of": self.pad_to_multiple_of, "pad_id": self.pad_id,
                "pad_type_id": self.pad_type_id, "pad_token": self.pad_token}


def pad_encodings(encodings: list, params: PaddingParams) -> None:
    """Pad every encoding of ``encodings`` (and its overflowing pieces) in place.

    >>> from fasttok.post_processors.encoding import Encoding
    >>> batch = [Encoding([1], ["a"], [(0, 1)], [0])]
    >>> pad_encodings(batch, PaddingParams(length=2, direction="left")); batch[0].ids
    [0, 1]
    """
    if not encodings:
        return
    length = params.length
    if length is None:
        length = max(len(e.ids) for e in encodings)
    multiple = params.pad_to_multiple_of
    if multiple and length % multiple:
        length += multiple - length % multiple
    _check_fits(encodings, length)
    for e in encodings:
        e.pad(length, params.direction, params.pad_id, params.pad_type_id, params.pad_token)


def _check_fits(encodings: list, length: int) -> None:
    # tokenizers aborts the process where its vectors cannot grow; the sum is
    # checked before anything is allocated, so a length past this machine's
    # memory is an error the caller can act on, not a MemoryError halfway
    stack, positions = list(encodings), 0
    while stack:
        e = stack.pop()
        positions += max(0, length - len(e.ids))
        stack.extend(e.overflowing)
    need = positions * PADDED_POSITION_BYTES
    room = memory_room()
    if room is not None and need > room:
        raise FasttokError(f"padding to {length} tokens needs {need / 2**30:.1f} GiB for "
                           f"{positions} padded positions, more than the {room / 2**30:.1f} GiB "
                           f"this process can hold; pad to a smaller length or "
                           f"pad_to_multiple_of")


def memory_room():
    """The bytes this process could still allocate: the machine's physical
    memory, or less under an address-space limit (``None`` where neither is known).

    >>> memory_room() is None or memory_room() > 0
    True
    """
    try:
        room = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        room = None
    try:
        import resource
    except ImportError:  # not on Windows
        return room
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/statm") as f:
                used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            used = 0
        room = max(0, soft - used) if room is None else min(room, max(0, soft - used))
    return room
