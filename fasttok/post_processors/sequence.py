"""Sequence: post-processors run one after the other on the list of encodings.

>>> from fasttok.post_processors.byte_level import ByteLevel
>>> from fasttok.post_processors.bert import BertProcessing
>>> from fasttok.post_processors.encoding import Encoding
>>> s = Sequence([ByteLevel(), BertProcessing(("[SEP]", 2), ("[CLS]", 1))])
>>> s.process(Encoding([5], ["Ġa"], [(0, 2)], [0])).offsets
[(0, 0), (0, 2), (0, 0)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fasttok.post_processors.processor import PostProcessor
from fasttok.post_processors.special_ids import AddSpecialIds

if TYPE_CHECKING:
    from fasttok.post_processors.encoding import Encoding

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

    @property
    def keeps_tokens(self) -> bool:
        """Whether every processor keeps the tokens.

        >>> from fasttok.post_processors.byte_level import ByteLevel
        >>> Sequence([ByteLevel(trim_offsets=True)]).keeps_tokens
        False
        """
        return all(p.keeps_tokens for p in self.processors)

    def ids_only(self):
        """ids -> ids of this Sequence on one input. With one processor that adds
        tokens, that processor's own ids-only form; with several, each works on
        what the one before it made (a template hands the next one its pieces as
        separate inputs), so the ids go through :meth:`process` itself.

        >>> from fasttok.post_processors.bert import BertProcessing
        >>> from fasttok.post_processors.byte_level import ByteLevel
        >>> Sequence([ByteLevel(), BertProcessing(("[SEP]", 2), ("[CLS]", 1))]).ids_only()([7])
        [1, 7, 2]
        >>> Sequence([BertProcessing(("[SEP]", 2), ("[CLS]", 1))] * 2).ids_only()([7])
        [1, 1, 7, 2, 2]
        """
        adding = [p for p in self.processors if p.added_tokens(False)]
        if len(adding) > 1:
            return _ProcessedIds(self)
        return adding[0].ids_only() if adding else AddSpecialIds()

    def process_encodings(self, encodings: list, add_special_tokens: bool) -> list:
        """The encodings through every processor in turn.

        >>> Sequence([]).process_encodings([], True)
        []
        """
        for p in self.processors:
            encodings = p.process_encodings(encodings, add_special_tokens)
        return encodings


class _ProcessedIds:
    # ids -> the ids of the processor's whole process() on them; the tokens and
    # offsets it also builds are not read, so they are left empty
    __slots__ = ("processor",)

    def __init__(self, processor: PostProcessor) -> None:
        self.processor = processor

    def __call__(self, ids: list) -> list:
        # imported here: a load builds the processors for their ids only (processor's note)
        from fasttok.post_processors.encoding import Encoding

        ids = list(ids)
        n = len(ids)
        encoding = Encoding(ids, [""] * n, [(0, 0)] * n, [None] * n)
        return self.processor.process(encoding, None, True).ids
