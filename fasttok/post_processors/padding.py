"""Padding as ``tokenizers``' ``pad_encodings``: to the longest of a batch or a fixed
length, rounded up to a multiple, on the left or the right.

>>> from fasttok.post_processors.encoding import Encoding
>>> batch = [Encoding([1], ["a"], [(0, 1)], [0]), Encoding([1, 2, 3], list("abc"), [(0, 1)] * 3, [0, 1, 2])]
>>> pad_encodings(batch, PaddingParams(pad_to_multiple_of=2))
>>> [e.ids for e in batch]
[[1, 0, 0, 0], [1, 2, 3, 0]]
"""

from __future__ import annotations

from fasttok.errors import FasttokError
from fasttok.post_processors.encoding import direction_of

__all__ = ["PaddingParams", "pad_encodings"]


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
    for e in encodings:
        e.pad(length, params.direction, params.pad_id, params.pad_type_id, params.pad_token)
