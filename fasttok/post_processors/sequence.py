"""Sequence: post-processors run one after the other on the list of encodings.

>>> from fasttok.post_processors.byte_level import ByteLevel
>>> from fasttok.post_processors.bert import BertProcessing
>>> from fasttok.post_processors.encoding import Encoding
>>> s = Sequence([ByteLevel(), BertProcessing(("[SEP]", 2), ("[CLS]", 1))])
>>> s.process(Encoding([5], ["Ġa"], [(0, 2)], [0])).offsets
[(0, 0), (0, 2), (0, 0)]
"""

from __future__ import annotations

from fasttok.post_processors.processor import PostProcessor
from fasttok.post_processors.special_ids import AddSpecialIds

__all__ = ["Sequence"]


class Sequence(PostProcessor):
    """``tokenizers.processors.Sequence(processors)``.

    >>> Sequence([]).added_tokens(False)
    0
    """

    __slots__ = ("processors",)

    def __init__(self, processors) -> None:
        self.processors = list(processors)

    def __repr__(self) -> str:
        return f"Sequence({self.processors!r})"

    def added_tokens(self, is_pair: bool) -> int:
        """The sum of what each processor adds.

        >>> from fasttok.post_processors.bert import BertProcessing
        >>> Sequence([BertProcessing(("[SEP]", 2), ("[CLS]", 1))] * 2).added_tokens(False)
        4
        """
        return sum(p.added_tokens(is_pair) for p in self.processors)

    def ids_only(self) -> AddSpecialIds:
        """Each processor's ids-only form, the later ones around the earlier.

        >>> from fasttok.post_processors.bert import BertProcessing
        >>> Sequence([BertProcessing(("[SEP]", 2), ("[CLS]", 1))]).ids_only()([7])
        [1, 7, 2]
        """
        head, tail = [], []
        for p in self.processors:
            inner = p.ids_only()
            head = inner.head + head
            tail = tail + inner.tail
        return AddSpecialIds(tuple(head), tuple(tail))

    def process_encodings(self, encodings: list, add_special_tokens: bool) -> list:
        """The encodings through every processor in turn.

        >>> Sequence([]).process_encodings([], True)
        []
        """
        for p in self.processors:
            encodings = p.process_encodings(encodings, add_special_tokens)
        return encodings
