"""RobertaProcessing: ``<s> A </s>`` and ``<s> A </s></s> B </s>``, every type id 0,
offsets trimmed as :mod:`byte_level` trims them (``trim_offsets``).

>>> from fasttok.post_processors.encoding import Encoding
>>> p = RobertaProcessing(("</s>", 2), ("<s>", 0))
>>> p.process(Encoding([5], ["a"], [(0, 1)], [0]), Encoding([6], ["b"], [(0, 1)], [0])).ids
[0, 5, 2, 2, 6, 2]
"""

from __future__ import annotations

from fasttok.post_processors.byte_level import trim_offsets
from fasttok.post_processors.processor import PostProcessor, surround
from fasttok.post_processors.special_ids import AddSpecialIds

__all__ = ["RobertaProcessing"]


class RobertaProcessing(PostProcessor):
    """``tokenizers.processors.RobertaProcessing(sep, cls, trim_offsets, add_prefix_space)``.

    >>> RobertaProcessing(("</s>", 2), ("<s>", 0)).added_tokens(True)
    4
    """

    __slots__ = ("sep", "cls", "trim_offsets", "add_prefix_space")

    def __init__(self, sep: tuple, cls: tuple, trim_offsets: bool = True,
                 add_prefix_space: bool = True) -> None:
        self.sep = (sep[0], sep[1])
        self.cls = (cls[0], cls[1])
        self.trim_offsets = trim_offsets
        self.add_prefix_space = add_prefix_space

    def __repr__(self) -> str:
        return (f"RobertaProcessing(sep={self.sep!r}, cls={self.cls!r}, "
                f"trim_offsets={self.trim_offsets}, add_prefix_space={self.add_prefix_space})")

    def added_tokens(self, is_pair: bool) -> int:
        """2 for one input, 4 for a pair.

        >>> RobertaProcessing(("</s>", 2), ("<s>", 0)).added_tokens(False)
        2
        """
        return 4 if is_pair else 2

    @property
    def keeps_tokens(self) -> bool:
        """Whether the offsets stay as they are (no ``trim_offsets``).

        >>> RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False).keeps_tokens
        True
        """
        return not self.trim_offsets

    def ids_only(self) -> AddSpecialIds:
        """``<s> ids </s>`` as ids.

        >>> RobertaProcessing(("</s>", 2), ("<s>", 0)).ids_only()([7])
        [0, 7, 2]
        """
        return AddSpecialIds((self.cls[1],), (self.sep[1],))

    def process_encodings(self, encodings: list, add_special_tokens: bool) -> list:
        """Trimmed offsets, type ids 0, and the special tokens around each encoding.

        >>> RobertaProcessing(("</s>", 2), ("<s>", 0)).process_encodings([], True)
        []
        """
        if self.trim_offsets:
            for e in encodings:
                trim_offsets(e, self.add_prefix_space)
                for piece in e.overflowing:
                    trim_offsets(piece, self.add_prefix_space)
        for e in encodings:
            e.type_ids = [0] * len(e.ids)
        if not add_special_tokens:
            return encodings
        out = []
        for i, e in enumerate(encodings):
            head = self.cls if i == 0 else self.sep
            done = surround(e, head, self.sep, 0, 0, i)
            done.overflowing = [surround(piece, head, self.sep, 0, 0, i, [0] * len(piece.ids))
                                for piece in e.overflowing]
            out.append(done)
        return out
