"""Truncation as ``tokenizers``' ``truncate_encodings``: strategies and their errors.

``LongestFirst`` shares ``max_length`` between the two inputs (the shorter
keeps what it has when it fits in half, else each keeps half, the second
input the odd one); ``OnlyFirst`` / ``OnlySecond`` cut one input and fail when
it is too short to lose enough. What is cut goes to ``overflowing``, in
windows that repeat ``stride`` tokens.

>>> from fasttok.post_processors.encoding import Encoding
>>> a = Encoding(list(range(6)), list("abcdef"), [(i, i + 1) for i in range(6)], list(range(6)))
>>> a, _ = truncate_encodings(a, None, TruncationParams(max_length=4))
>>> a.ids
[0, 1, 2, 3]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fasttok.errors import FasttokError

if TYPE_CHECKING:
    # the settings are read at every tokenizer.json load, the ids face's
    # too: their modules do not import the drop-in's Encoding
    from fasttok.post_processors.encoding import Encoding

__all__ = ["TruncationParams", "truncate_encodings", "direction_of", "STRATEGIES"]

STRATEGIES = ("longest_first", "only_first", "only_second")


def direction_of(direction: str, what: str) -> str:
    """``"left"`` or ``"right"`` from a user's spelling (any case), else a ``FasttokError``.

    >>> direction_of("Left", "padding")
    'left'
    """
    value = str(direction).lower()
    if value not in ("left", "right"):
        raise FasttokError(f"{what} direction must be 'left' or 'right', not {direction!r}")
    return value


class TruncationParams:
    """``max_length``, ``stride``, ``strategy`` (``longest_first``, ``only_first``,
    ``only_second``; any case, ``LongestFirst`` too) and ``direction``.

    >>> TruncationParams(max_length=8, strategy="OnlySecond").strategy
    'only_second'
    """

    __slots__ = ("max_length", "stride", "strategy", "direction")

    def __init__(self, max_length: int = 512, stride: int = 0, strategy: str = "longest_first",
                 direction: str = "right") -> None:
        name = {"longestfirst": "longest_first", "onlyfirst": "only_first",
                "onlysecond": "only_second"}.get(strategy.lower().replace("_", ""))
        if name is None:
            raise FasttokError(f"truncation strategy must be one of {', '.join(STRATEGIES)}, "
                               f"not {strategy!r}")
        if max_length < 0 or stride < 0:
            raise FasttokError("truncation max_length and stride must not be negative")
        self.max_length = max_length
        self.stride = stride
        self.strategy = name
        self.direction = direction_of(direction, "truncation")

    def __repr__(self) -> str:
        return (f"TruncationParams(max_length={self.max_length}, stride={self.stride}, "
                f"strategy={self.strategy!r}, direction={self.direction!r})")

    def as_dict(self) -> dict:
        """The parameters as ``tokenizers.Tokenizer.truncation`` shows them.

        >>> TruncationParams(max_length=3).as_dict()["strategy"]
        'longest_first'
        """
        return {"max_length": self.max_length, "stride": self.stride,
                "strategy": self.strategy, "direction": self.direction}

    def as_json(self) -> dict:
        """The parameters as ``tokenizer.json``'s ``truncation`` object holds them.

        >>> TruncationParams(max_length=3, strategy="only_second").as_json()["strategy"]
        'OnlySecond'
        """
        return {"direction": self.direction.capitalize(), "max_length": self.max_length,
                "strategy": self.strategy.title().replace("_", ""), "stride": self.stride}


def truncate_encodings(encoding: Encoding, pair: Encoding | None, params: TruncationParams,
                       max_length: int | None = None) -> tuple:
    """``(encoding, pair)`` truncated in place to ``max_length`` (default
    ``params.max_length``) tokens together.

    >>> from fasttok.post_processors.encoding import Encoding
    >>> a = Encoding([1, 2, 3], list("abc"), [(0, 1)] * 3, [0, 1, 2])
    >>> b = Encoding([4, 5], list("de"), [(0, 1)] * 2, [0, 1])
    >>> a, b = truncate_encodings(a, b, TruncationParams(max_length=3))
    >>> a.ids, b.ids
    ([1, 2], [4])
    """
    limit = params.max_length if max_length is None else max_length
    stride, direction = params.stride, params.direction
    if limit == 0:
        encoding.truncate(0, stride, direction)
        if pair is not None:
            pair.truncate(0, stride, direction)
        return encoding, pair
    total = len(encoding.ids) + (len(pair.ids) if pair is not None else 0)
    if total <= limit:
        return encoding, pair
    to_remove = total - limit
    if params.strategy == "longest_first":
        if pair is None:
            encoding.truncate(limit, stride, direction)
            return encoding, pair
        n1, n2 = len(encoding.ids), len(pair.ids)
        swap = n1 > n2
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > limit else max(n1, limit - n1)
        if n1 + n2 > limit:
            n1 = limit // 2
            n2 = n1 + limit % 2
        if swap:
            n1, n2 = n2, n1
        encoding.truncate(n1, stride, direction)
        pair.truncate(n2, stride, direction)
        return encoding, pair
    if params.strategy == "only_first":
        target = encoding
    elif pair is None:
        raise FasttokError("Truncation error: Second sequence not provided")
    else:
        target = pair
    if len(target.ids) <= to_remove:
        raise FasttokError("Truncation error: Sequence to truncate too short to respect "
                           "the provided max_length")
    target.truncate(len(target.ids) - to_remove, stride, direction)
    return encoding, pair
