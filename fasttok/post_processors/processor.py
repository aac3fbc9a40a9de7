"""What every Hugging Face post-processor shares: ``process`` around ``process_encodings``.

``tokenizers`` gives each input its sequence index (on its overflowing pieces
too) and its type id (0 for the first input, 1 for the pair; not on the
overflowing pieces), lets the post-processor turn the list of encodings into
another list (special tokens become encodings of their own), then merges the
list without shifting offsets. :func:`default_process` is what runs when a
tokenizer has no post-processor.

>>> from fasttok.post_processors.encoding import Encoding
>>> a = Encoding([5], ["a"], [(0, 1)], [0]); b = Encoding([6], ["b"], [(0, 1)], [0])
>>> default_process(a, b).sequence_ids
[0, 1]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fasttok.post_processors.special_ids import AddSpecialIds

if TYPE_CHECKING:
    from fasttok.post_processors._encoding_lists import SingleWrap
    from fasttok.post_processors.encoding import Encoding

# A tokenizer.json load builds its post-processor for the ids face
# (ids_only), which makes no Encoding: the Encoding modules (one of them
# compiled, ~0.7 ms to import) are imported by the methods that make one.

__all__ = ["PostProcessor", "default_process", "surround"]


class PostProcessor:
    """Base of the post-processors: subclasses give ``added_tokens``, ``process_encodings``
    and ``ids_only``.

    >>> PostProcessor().added_tokens(False)
    0
    """

    __slots__ = ()

    #: whether :meth:`process` leaves each input's own tokens as they are
    #: (their ids, strings, offsets and words), only setting type ids and
    #: putting special tokens around them: then processing one input is a
    #: fixed wrapping of it (:meth:`single_wrap`)
    keeps_tokens = True

    def added_tokens(self, is_pair: bool) -> int:
        """How many special tokens ``process`` adds to one input (``is_pair``: to a pair).

        >>> PostProcessor().added_tokens(True)
        0
        """
        return 0

    def process_encodings(self, encodings: list, add_special_tokens: bool) -> list:
        """The encodings with this post-processor's changes (the base changes nothing).

        >>> PostProcessor().process_encodings([], True)
        []
        """
        return encodings

    def ids_only(self) -> AddSpecialIds:
        """The ids-only form of this post-processor on one input: ids -> ids.

        >>> PostProcessor().ids_only()([4])
        [4]
        """
        return AddSpecialIds()

    def single_wrap(self, add_special_tokens: bool) -> "SingleWrap | None":
        """What :meth:`process` of one input does to it when that is a fixed
        wrapping (see :attr:`keeps_tokens`), learnt by processing a
        one-token probe; ``None`` when it is not (a template that repeats its
        input, offsets trimmed by the tokens' text).

        >>> w = PostProcessor().single_wrap(True)
        >>> w.head.ids, w.type_id, w.tail.ids
        ([], 0, [])
        """
        if not self.keeps_tokens:
            return None
        from fasttok.post_processors._encoding_lists import SingleWrap
        from fasttok.post_processors.encoding import Encoding

        out = self.process(Encoding([0], [""], [(0, 0)], [0]), None, add_special_tokens)
        found = [i for i, special in enumerate(out.special_tokens_mask) if not special]
        if len(found) != 1 or out.overflowing or out.sequence_ids[found[0]] != 0:
            return None
        at = found[0]
        return SingleWrap(out.part(0, at), out.type_ids[at], out.part(at + 1, len(out.ids)))

    def process(self, encoding: Encoding, pair: Encoding | None = None,
                add_special_tokens: bool = True) -> Encoding:
        """One encoding of ``encoding`` (and ``pair``) with what this post-processor adds.

        The inputs are left as they were: the stages work on views of them and
        replace lists rather than change them, and the merge builds new lists.

        >>> from fasttok.post_processors.encoding import Encoding
        >>> PostProcessor().process(Encoding([5], ["a"], [(0, 1)], [0])).ids
        [5]
        """
        from fasttok.post_processors.encoding import Encoding

        encodings = [encoding.view()] if pair is None else [encoding.view(), pair.view()]
        for i, e in enumerate(encodings):
            e.set_sequence_id(i)
            for piece in e.overflowing:
                piece.set_sequence_id(i)
            e.type_ids = [i] * len(e.ids)
        return Encoding.merge(self.process_encodings(encodings, add_special_tokens), False)


def default_process(encoding: Encoding, pair: Encoding | None = None) -> Encoding:
    """What ``tokenizers`` does without a post-processor: the pair, if any, appended
    (offsets not shifted), each input marked with its sequence index.

    >>> from fasttok.post_processors.encoding import Encoding
    >>> default_process(Encoding([5], ["a"], [(0, 1)], [0])).ids
    [5]
    """
    if pair is None:
        return encoding
    from fasttok.post_processors.encoding import Encoding

    out = Encoding.empty()
    for i, e in enumerate((encoding, pair)):
        e = e.view()
        e.set_sequence_id(i)
        out.merge_with(e, False)
    return out


def surround(encoding: Encoding, head: tuple | None, tail: tuple | None, head_type: int,
             tail_type: int, sequence_id: int, type_ids: list | None = None) -> Encoding:
    """``encoding`` between the special tokens ``head`` and ``tail`` (each ``(token, id)``
    or ``None``), with its sequence range covering the tokens between them. ``type_ids``
    replaces the encoding's own when given.

    >>> from fasttok.post_processors.encoding import Encoding
    >>> e = surround(Encoding([5], ["a"], [(0, 1)], [0]), ("[CLS]", 1), ("[SEP]", 2), 0, 0, 0)
    >>> e.ids, e.special_tokens_mask, e.sequence_ids
    ([1, 5, 2], [1, 0, 1], [None, 0, None])
    """
    from fasttok.post_processors.encoding import Encoding

    n = len(encoding.ids)
    before = [] if head is None else [head]
    after = [] if tail is None else [tail]
    h, t = len(before), len(after)
    types = encoding.type_ids if type_ids is None else type_ids
    return Encoding(
        [x[1] for x in before] + encoding.ids + [x[1] for x in after],
        [x[0] for x in before] + encoding.tokens + [x[0] for x in after],
        [(0, 0)] * h + encoding.offsets + [(0, 0)] * t,
        [None] * h + encoding.word_ids + [None] * t,
        [head_type] * h + types + [tail_type] * t,
        [1] * h + [0] * n + [1] * t,
        [1] * (n + h + t),
        sequence_ranges={sequence_id: (h, h + n)})
