"""Writer of tiktoken's ``.tiktoken`` rank files (the inverse of :mod:`fasttok.loaders.tiktoken_file`).

One line per token, in rank order: ``base64(token bytes) SP rank``. The
pattern and the special tokens are not part of the format; a trained
vocabulary records them beside the file (:func:`load_call`).

>>> import io
>>> out = io.BytesIO(); write_tiktoken(out, {b"!": 0, b"ab": 1}); out.getvalue()
b'IQ== 0\\nYWI= 1\\n'
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from typing import IO, Union

from fasttok.shared.atomic_write import write_atomically

__all__ = ["write_tiktoken", "tiktoken_lines", "load_call"]


def tiktoken_lines(ranks: Mapping) -> bytes:
    """The file's contents for ``{token bytes: rank}``, in rank order.

    The empty token is written ``=`` (base64 of nothing is no text, which
    would leave the line one field), as Whisper's files spell it.

    >>> tiktoken_lines({b"b": 1, b"a": 0, b"": 2})
    b'YQ== 0\\nYg== 1\\n= 2\\n'
    """
    return b"".join((base64.b64encode(token) or b"=") + b" %d\n" % rank
                    for token, rank in sorted(ranks.items(), key=lambda item: item[1]))


def write_tiktoken(target: Union[str, "os.PathLike[str]", IO[bytes]], ranks: Mapping) -> None:
    """Write ``{token bytes: rank}`` to a path (replaced all at once, see
    :mod:`fasttok.shared.atomic_write`) or a binary file object.

    >>> import io; out = io.BytesIO(); write_tiktoken(out, {}); out.getvalue()
    b''
    """
    data = tiktoken_lines(ranks)
    if hasattr(target, "write"):
        target.write(data)
        return
    write_atomically(target, data)


def load_call(path: str, pat_str: str, special_tokens: Mapping) -> str:
    """The ``fasttok.load`` call that reads a written file back with its
    pattern and special tokens (tiktoken's ``Encoding`` takes the same two).

    >>> load_call("v.tiktoken", "\\\\s+", {"<|end|>": 300})
    "fasttok.load('v.tiktoken', pat_str='\\\\\\\\s+', special_tokens={'<|end|>': 300})"
    """
    return (f"fasttok.load({path!r}, pat_str={pat_str!r}, "
            f"special_tokens={dict(special_tokens)!r})")
