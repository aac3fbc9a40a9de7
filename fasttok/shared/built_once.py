"""An attribute built on first use, once, whichever thread asks first.

A model's compiled core is large to build (Llama 2's BPE tables, BERT's
WordPiece texts) and a load that never encodes needs none of it, so it is
built when first asked for. ``functools.cached_property`` would do, but since
Python 3.12 it holds no lock: threads meeting it unbuilt would each build
one. One reentrant lock serves every such attribute (a build may ask for
another); once built, the value is an instance attribute, read without it.
:func:`made_later` is the same idea for a value that is no attribute: a
stage read and checked at load, built when first asked for.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any, Optional

__all__ = ["built_once", "made_later"]

_LOCK = threading.RLock()
_MISSING = object()


class built_once:
    """A method made an attribute computed on first use, under a lock, and
    kept in the instance's ``__dict__``.

    >>> class Model:
    ...     @built_once
    ...     def core(self) -> list:
    ...         print("building")
    ...         return [1, 2]
    >>> m = Model()
    >>> m.core
    building
    [1, 2]
    >>> m.core
    [1, 2]
    """

    def __init__(self, func: Callable[[Any], Any]) -> None:
        self.func = func
        self.name: Optional[str] = None
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Optional[type] = None) -> Any:
        if instance is None:
            return self
        with _LOCK:
            found = instance.__dict__.get(self.name, _MISSING)
            if found is _MISSING:
                found = instance.__dict__[self.name] = self.func(instance)
        return found


def made_later(module: str, name: str, *args: Any, **kwargs: Any) -> Callable[[], Any]:
    """What calls ``module.name(*args, **kwargs)`` when called, importing
    ``module`` then: a ``tokenizer.json`` stage whose fields were read and
    checked at load, and whose module is imported and object built only when
    something asks for it (a load and its first encode of ids never ask for
    the decoder or the post-processor).

    >>> make = made_later("fractions", "Fraction", 1, 3)
    >>> make()
    Fraction(1, 3)
    """
    def make() -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return make
