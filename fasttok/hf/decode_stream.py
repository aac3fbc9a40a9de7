"""``tokenizers.decoders.DecodeStream`` for the drop-in ``Tokenizer``.

The stream holds no tokenizer: each :meth:`DecodeStream.step` is given one
and an id (or a list of ids), and returns the text those ids complete, or
``None`` while it may still change (an incomplete UTF-8 character at the
end); the rule is :class:`~fasttok.decoders.hf_stream.HFDecodeStream`'s.
Ids are read as ``tokenizers`` reads them: any integer (numpy's too) that
fits a ``u32``; an id no token has is left out, as ``decode`` leaves it out.

>>> import json
>>> from fasttok.hf import Tokenizer
>>> tok = Tokenizer.from_str(json.dumps({"model": {"type": "WordLevel",
...     "vocab": {"a": 0, "b": 1}, "unk_token": "a"}}))
>>> stream = DecodeStream()
>>> [stream.step(tok, i) for i in (0, 1, 7)]
['a', ' b', None]
"""

from __future__ import annotations

import copy
import operator
from typing import Any, Optional

from fasttok.decoders.hf_stream import HFDecodeStream

__all__ = ["DecodeStream"]

_BAD_INPUT = "StreamInput must be either an integer or a list of integers"


def _stream_id(value: Any) -> int:
    # tokenizers' StreamInput::Id, a u32
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(_BAD_INPUT) from None
    if not 0 <= number < 2 ** 32:
        raise TypeError(_BAD_INPUT)
    return number


def _stream_input(value: Any) -> Any:
    # an id, or (StreamInput::Ids) any sequence of them but a str
    try:
        return _stream_id(value)
    except TypeError:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
            raise
    return [_stream_id(v) for v in value]


class DecodeStream:
    """Text of ids that arrive one at a time, as ``tokenizers``' ``DecodeStream``.

    ``ids``: ids already given out (their text is not returned again);
    ``skip_special_tokens``: leave out the special tokens, as ``decode`` does.

    >>> DecodeStream(ids=True)
    Traceback (most recent call last):
    TypeError: 'bool' object is not an instance of 'Sequence'
    """

    __slots__ = ("_stream",)

    def __init__(self, ids: Optional[list] = None, skip_special_tokens: bool = False) -> None:
        if ids is not None and (isinstance(ids, (str, bytes)) or not hasattr(ids, "__len__")):
            raise TypeError(f"'{type(ids).__name__}' object is not an instance of 'Sequence'")
        self._stream = HFDecodeStream(None, bool(skip_special_tokens),
                                      None if ids is None else [_stream_id(i) for i in ids])

    def step(self, tokenizer: Any, id: Any) -> Optional[str]:
        """The text ``id`` (an int, or a list of them) completes, or ``None``.

        >>> DecodeStream().step(None, -1)
        Traceback (most recent call last):
        TypeError: StreamInput must be either an integer or a list of integers
        """
        given = _stream_input(id)
        pipeline = tokenizer._pipeline
        self._stream.decoder = pipeline.decoder
        return self._stream.step(_token_of(pipeline), given)

    def __copy__(self) -> "DecodeStream":
        return self.__deepcopy__({})

    def __deepcopy__(self, memo: dict) -> "DecodeStream":
        # the state is copied, the decoder (a stage of some tokenizer) shared
        clone = DecodeStream.__new__(DecodeStream)
        memo[id(self._stream.decoder)] = self._stream.decoder
        clone._stream = copy.deepcopy(self._stream, memo)
        return clone


def _token_of(pipeline: Any):
    special = pipeline.added.special_contents

    def token_of(token_id: int, skip_special_tokens: bool) -> Optional[str]:
        token = pipeline.id_to_token(token_id)
        if token is not None and skip_special_tokens and token in special:
            return None
        return token
    return token_of
