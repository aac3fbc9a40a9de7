"""Arguments of the ``tokenizers`` drop-in read as its Rust binding reads them.

``tokenizers`` is a PyO3 extension: an ``int`` argument is converted to a
Rust ``u32`` or ``usize`` by PyO3, which raises ``TypeError`` for what has no
``__index__`` (a float, a str) and ``OverflowError`` for what the Rust type
cannot hold, each with its own message; a ``str`` or ``bool`` argument
must be exactly that type. The drop-in raises the same type with the same
message, so code that catches one catches the other (a ``pad_id`` of ``-1``
or ``2**32`` is refused rather than padding with an id no vocabulary holds).
numpy integers pass, as they pass in ``tokenizers`` (through ``__index__``).

>>> as_u32(2**32 - 1), as_usize(True)
(4294967295, 1)
>>> as_u32(-1)
Traceback (most recent call last):
OverflowError: number too small to fit in target type
"""

from __future__ import annotations

import operator
from typing import Any

from fasttok.errors import FasttokError

__all__ = ["as_u32", "as_usize", "as_str", "as_bool", "as_direction"]

_C_LONG = 2 ** 63


def as_u32(value: Any) -> int:
    """``value`` as PyO3 reads a ``u32`` (through a C ``long``).

    >>> as_u32(2**32)
    Traceback (most recent call last):
    OverflowError: number too large to fit in target type
    """
    number = operator.index(value)
    if not -_C_LONG <= number < _C_LONG:
        raise OverflowError("Python int too large to convert to C long")
    if number < 0:
        raise OverflowError("number too small to fit in target type")
    if number >= 2 ** 32:
        raise OverflowError("number too large to fit in target type")
    return number


def as_usize(value: Any) -> int:
    """``value`` as PyO3 reads a ``usize`` (a 64-bit machine's).

    >>> as_usize(-1)
    Traceback (most recent call last):
    OverflowError: can't convert negative int to unsigned
    """
    number = operator.index(value)
    if number < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if number >= 2 ** 64:
        raise OverflowError("int too big to convert")
    return number


def as_str(value: Any) -> str:
    """``value`` if it is a ``str``, else PyO3's ``TypeError``.

    >>> as_str(None)
    Traceback (most recent call last):
    TypeError: 'None' is not an instance of 'str'
    """
    if not isinstance(value, str):
        what = "'None'" if value is None else f"'{type(value).__name__}' object"
        raise TypeError(f"{what} is not an instance of 'str'")
    return value


def as_bool(value: Any) -> bool:
    """``value`` if it is a ``bool``, else PyO3's ``TypeError``.

    >>> as_bool(1)
    Traceback (most recent call last):
    TypeError: 'int' object is not an instance of 'bool'
    """
    if not isinstance(value, bool):
        raise TypeError(f"'{type(value).__name__}' object is not an instance of 'bool'")
    return value


def as_direction(value: Any, *, period: bool) -> str:
    """``"left"`` or ``"right"`` exactly, else ``tokenizers``' ``ValueError`` (a ``FasttokError``)
    (truncation's message ends with a period, padding's does not).

    >>> as_direction("Left", period=False)
    Traceback (most recent call last):
    fasttok.errors.FasttokError: Unknown `direction`: `Left`. Use one of `left` or `right`
    """
    value = as_str(value)
    if value not in ("left", "right"):
        raise FasttokError(f"Unknown `direction`: `{value}`. Use one of `left` or `right`"
                         + ("." if period else ""))
    return value
