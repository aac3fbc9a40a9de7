"""Arguments of the ``tokenizers`` drop-in read as its Rust binding reads them.

``tokenizers`` is a PyO3 extension: an ``int`` argument is converted to a
Rust ``u32`` or ``usize`` by PyO3, which raises ``TypeError`` for what has no
``__index__`` (a float, a str) and ``OverflowError`` for what the Rust type
cannot hold, each with its own message; a ``str``, ``bool`` or class
argument must be an instance of it, a ``Vec`` any sequence but a ``str``.
The drop-in (``fasttok.hf`` and the ``Encoding`` it returns, a
post-processing object, hence this module's place) raises the same type
with the same message, so code that catches one catches the other (a
``pad_id`` of ``-1`` or ``2**32`` is refused rather than padding with an id
no vocabulary holds). numpy integers pass, as they pass in ``tokenizers``
(through ``__index__``).

>>> as_u32(2**32 - 1), as_usize(True)
(4294967295, 1)
>>> as_u32(-1)
Traceback (most recent call last):
OverflowError: number too small to fit in target type
"""

from __future__ import annotations

import operator
from typing import Any

from fasttok.errors import FasttokError, not_an_instance
from fasttok.shared.surrogates import has_utf8

__all__ = ["as_u32", "as_usize", "as_str", "as_bool", "as_instance", "as_sequence",
           "as_direction", "PADDING_DIRECTION", "TRUNCATION_DIRECTION",
           "ENCODING_TRUNCATE_DIRECTION"]

_C_LONG = 2 ** 63
_U64 = 2 ** 64


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
    if type(value) is int and 0 <= value < _U64:
        return value  # the common case, read once per encoding by the pipeline itself
    number = operator.index(value)
    if number < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if number >= _U64:
        raise OverflowError("int too big to convert")
    return number


def as_str(value: Any) -> str:
    """``value`` if it is a ``str`` of UTF-8, else PyO3's ``TypeError``. A lone
    surrogate (no UTF-8, so no Rust string) is a ``TypeError`` too, as for the
    text ``encode`` refuses; PyO3 raises ``UnicodeEncodeError`` there, which
    fasttok's error contract keeps for bugs.

    >>> as_str(None)
    Traceback (most recent call last):
    TypeError: 'None' is not an instance of 'str'
    >>> as_str("a" + chr(0xD800))
    Traceback (most recent call last):
    TypeError: 'a\\ud800' holds a lone surrogate, which has no UTF-8: remove it
    """
    if not isinstance(value, str):
        raise not_an_instance(value, "str")
    if not has_utf8(value):
        raise TypeError(f"{value!r} holds a lone surrogate, which has no UTF-8: remove it")
    return value


def as_bool(value: Any) -> bool:
    """``value`` if it is a ``bool``, else PyO3's ``TypeError``.

    >>> as_bool(1)
    Traceback (most recent call last):
    TypeError: 'int' object is not an instance of 'bool'
    """
    if not isinstance(value, bool):
        raise not_an_instance(value, "bool")
    return value


def as_instance(value: Any, cls: type) -> Any:
    """``value`` if it is a ``cls``, else PyO3's ``TypeError`` naming ``cls``.

    >>> as_instance("text", int)
    Traceback (most recent call last):
    TypeError: 'str' object is not an instance of 'int'
    """
    if not isinstance(value, cls):
        raise not_an_instance(value, cls.__name__)
    return value


def as_sequence(value: Any) -> list:
    """The items of ``value`` as PyO3 reads a ``Vec``: any sequence in the C
    sense (a list, a tuple, bytes, a numpy array, a ``range``; not a dict,
    a set or an iterator) but a ``str``.

    >>> as_sequence(range(2)), as_sequence(b"a")
    ([0, 1], [97])
    >>> as_sequence({1: 2})
    Traceback (most recent call last):
    TypeError: 'dict' object is not an instance of 'Sequence'
    """
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        raise TypeError("Can't extract `str` to `Vec`")
    # PySequence_Check: the type has __getitem__ and is not a dict (numpy's
    # scalars have a __getitem__ of the mapping kind only); numbers imported
    # here, past the list fast path (0.3 ms at import, ~0.2 us here)
    import numbers

    if (isinstance(value, (dict, numbers.Number))
            or not hasattr(type(value), "__getitem__")):
        raise not_an_instance(value, "Sequence")
    return list(value)


# tokenizers' messages for a direction it does not know, by method
PADDING_DIRECTION = "Unknown `direction`: `{}`. Use one of `left` or `right`"
TRUNCATION_DIRECTION = PADDING_DIRECTION + "."
ENCODING_TRUNCATE_DIRECTION = "Invalid truncation direction value : {}"


def as_direction(value: Any, message: str) -> str:
    """``"left"`` or ``"right"`` exactly, else ``tokenizers``' ``ValueError`` (a
    ``FasttokError``) with ``message``, one of the three it uses.

    >>> as_direction("Left", PADDING_DIRECTION)
    Traceback (most recent call last):
    fasttok.errors.FasttokError: Unknown `direction`: `Left`. Use one of `left` or `right`
    """
    if type(value) is str and value in ("left", "right"):
        return value
    value = as_str(value)
    if value not in ("left", "right"):
        raise FasttokError(message.format(value))
    return value
