"""BOS/EOS (or CLS/SEP) around the ids: the template of ``add_special_tokens=True``.

One rule for every format: a vocabulary's ``add_bos``/``add_eos`` flags pick
its BOS and EOS (:func:`from_flags`); llama.cpp's WordPiece always adds
``[CLS]`` and ``[SEP]`` (:func:`cls_sep`).

>>> from fasttok.vocab import Vocabulary
>>> v = Vocabulary(name="v", model="byte_bpe", tokens=(b"a", b"<s>"), bos_id=1, add_bos=True)
>>> from_flags(v)([0])
[1, 0]
"""

from __future__ import annotations

from fasttok.vocab import Vocabulary

__all__ = ["AddSpecialIds", "SpecialIdsTemplate", "from_flags", "cls_sep"]


class AddSpecialIds:
    """ids -> ``head + ids + tail``."""

    __slots__ = ("head", "tail")

    def __init__(self, head: tuple = (), tail: tuple = ()) -> None:
        self.head = list(head)
        self.tail = list(tail)

    def __call__(self, ids: list) -> list:
        if not self.head and not self.tail:
            return ids
        return self.head + list(ids) + self.tail

    def __repr__(self) -> str:
        return f"AddSpecialIds(head={tuple(self.head)}, tail={tuple(self.tail)})"


class SpecialIdsTemplate:
    """ids -> the template's pieces joined: runs of special ids, and the ids
    wherever the template places its input (any number of times, even none,
    as ``tokenizers`` applies such a template).

    >>> SpecialIdsTemplate([(1,), None, (2,), None])([7, 8])
    [1, 7, 8, 2, 7, 8]
    >>> SpecialIdsTemplate([(1,)])([7])
    [1]
    """

    __slots__ = ("pieces",)

    def __init__(self, pieces: list) -> None:
        self.pieces = [None if piece is None else list(piece) for piece in pieces]

    def __call__(self, ids: list) -> list:
        out: list = []
        for piece in self.pieces:
            out += ids if piece is None else piece
        return out

    def __repr__(self) -> str:
        return f"SpecialIdsTemplate({self.pieces!r})"


def from_flags(vocab: Vocabulary) -> AddSpecialIds:
    """BOS if the vocabulary sets ``add_bos``, EOS if ``add_eos`` (ids it names only).

    >>> from fasttok.vocab import Vocabulary
    >>> from_flags(Vocabulary(name="v", model="byte_bpe", tokens=(b"a",)))
    AddSpecialIds(head=(), tail=())
    """
    head = (vocab.bos_id,) if vocab.add_bos and vocab.bos_id is not None else ()
    tail = (vocab.eos_id,) if vocab.add_eos and vocab.eos_id is not None else ()
    return AddSpecialIds(head, tail)


def cls_sep(vocab: Vocabulary) -> AddSpecialIds:
    """BOS (``[CLS]``) and SEP, whatever the add flags say, as llama.cpp's WordPiece.

    >>> from fasttok.vocab import Vocabulary
    >>> cls_sep(Vocabulary(name="v", model="wordpiece", tokens=(b"a", b"[CLS]", b"[SEP]"),
    ...                    bos_id=1, sep_id=2))([0])
    [1, 0, 2]
    """
    head = (vocab.bos_id,) if vocab.bos_id is not None else ()
    tail = (vocab.sep_id,) if vocab.sep_id is not None else ()
    return AddSpecialIds(head, tail)
