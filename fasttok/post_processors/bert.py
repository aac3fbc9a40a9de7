"""BertProcessing: ``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]``, the pair's part of type 1.

>>> from fasttok.post_processors.encoding import Encoding
>>> p = BertProcessing(("[SEP]", 102), ("[CLS]", 101))
>>> p.process(Encoding([5], ["a"], [(0, 1)], [0]), Encoding([6], ["b"], [(0, 1)], [0])).type_ids
[0, 0, 0, 1, 1]
"""

from __future__ import annotations

from fasttok.post_processors.processor import PostProcessor, surround
from fasttok.post_processors.special_ids import AddSpecialIds

__all__ = ["BertProcessing"]


class BertProcessing(PostProcessor):
    """``tokenizers.processors.BertProcessing(sep, cls)``; ``sep`` and ``cls`` are ``(token, id)``.

    >>> BertProcessing(("[SEP]", 102), ("[CLS]", 101)).added_tokens(True)
    3
    """

    __slots__ = ("sep", "cls")

    def __init__(self, sep: tuple, cls: tuple) -> None:
        self.sep = (sep[0], sep[1])
        self.cls = (cls[0], cls[1])

    def __repr__(self) -> str:
        return f"BertProcessing(sep={self.sep!r}, cls={self.cls!r})"

    def added_tokens(self, is_pair: bool) -> int:
        """2 for one input, 3 for a pair.

        >>> BertProcessing(("[SEP]", 102), ("[CLS]", 101)).added_tokens(False)
        2
        """
        return 3 if is_pair else 2

    def ids_only(self) -> AddSpecialIds:
        """``[CLS] ids [SEP]`` as ids.

        >>> BertProcessing(("[SEP]", 102), ("[CLS]", 101)).ids_only()([7])
        [101, 7, 102]
        """
        return AddSpecialIds((self.cls[1],), (self.sep[1],))

    def process_encodings(self, encodings: list, add_special_tokens: bool) -> list:
        """Each encoding (and its overflowing pieces) with its special tokens around it.

        >>> BertProcessing(("[SEP]", 102), ("[CLS]", 101)).process_encodings([], True)
        []
        """
        if not add_special_tokens:
            return encodings
        out = []
        for i, e in enumerate(encodings):
            head, kind = (self.cls, 0) if i == 0 else (None, 1)
            done = surround(e, head, self.sep, kind, kind, i)
            done.overflowing = [surround(piece, head, self.sep, kind, kind, i)
                                for piece in e.overflowing]
            out.append(done)
        return out
