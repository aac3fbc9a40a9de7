"""The result of encoding one input (or a pair), as Hugging Face ``tokenizers.Encoding``.

Plain lists, one entry per token: ``ids``, ``type_ids``, ``tokens``,
``offsets`` (character spans in the user's text), ``word_ids``,
``special_tokens_mask``, ``attention_mask``; ``overflowing`` holds what
truncation cut off, each piece an ``Encoding`` itself; ``sequence_ranges``
maps a sequence index (0 for the first input, 1 for the pair) to the token
range it covers. Merging, truncating, padding and the word/char/token
look-ups follow ``tokenizers``' ``Encoding`` rule for rule, quirks included
(a truncated encoding forgets its sequence ranges; ``token_to_sequence``
accepts the index one past the end). Their arguments are read as the Rust
binding reads them (:mod:`fasttok.shared.binding_arguments`): an index is a
``usize`` (a word index a ``u32``), so ``-1`` or ``None`` raise tokenizers'
``OverflowError`` or ``TypeError`` rather than answer ``None``.

>>> e = Encoding([5, 6], ["a", "b"], [(0, 1), (2, 3)], [0, 1])
>>> e.truncate(1)
>>> e.ids, e.overflowing[0].ids
([5], [6])
"""

from __future__ import annotations

from fasttok.errors import FasttokError
from fasttok.post_processors._encoding_lists import FIELDS, WalkedField, keep_fields, \
    walked_encoding
from fasttok.shared.binding_arguments import (ENCODING_TRUNCATE_DIRECTION, PADDING_DIRECTION,
                                              as_bool, as_direction, as_instance, as_sequence,
                                              as_str, as_u32, as_usize)

__all__ = ["Encoding"]


class Encoding:
    """Token ids with their types, strings, offsets, words, masks and sequences.

    >>> a = Encoding([1], ["[CLS]"], [(0, 0)], [None], special_tokens_mask=[1])
    >>> b = Encoding([7, 8], ["hi", "there"], [(0, 2), (3, 8)], [0, 1])
    >>> b.set_sequence_id(0)
    >>> m = Encoding.merge([a, b], growing_offsets=False)
    >>> m.ids, m.sequence_ids, m.special_tokens_mask
    ([1, 7, 8], [None, 0, 0], [1, 0, 0])
    """

    __slots__ = FIELDS

    def __init__(self, ids: list, tokens: list, offsets: list, words: list,
                 type_ids: list | None = None, special_tokens_mask: list | None = None,
                 attention_mask: list | None = None, overflowing: list | None = None,
                 sequence_ranges: dict | None = None) -> None:
        n = len(ids)
        self.ids = ids
        self.tokens = tokens
        self.offsets = offsets
        self.word_ids = words
        self.type_ids = [0] * n if type_ids is None else type_ids
        self.special_tokens_mask = [0] * n if special_tokens_mask is None else special_tokens_mask
        self.attention_mask = [1] * n if attention_mask is None else attention_mask
        self.overflowing = [] if overflowing is None else overflowing
        # sequence index -> (start, stop) token range; empty means one sequence over everything
        self.sequence_ranges = {} if sequence_ranges is None else sequence_ranges

    @classmethod
    def walked(cls, ids: "array", offsets: "array", words: "array", strings: list,
               type_id: int = 0, word: int | None = None, wrap=None,
               odd_tokens: dict | None = None) -> "Encoding":
        """The encoding of a compiled walk's arrays (``ids``; ``offsets``, start
        and end of each token in turn; ``words``), each field made on first use
        as ``tokenizers``' getters make theirs: ``strings[id]`` is a token's
        string; ``word`` replaces every word index (a pre-tokenized word's);
        ``wrap`` (a :class:`~fasttok.post_processors.processor.SingleWrap`)
        puts the post-processor's tokens around them and makes them sequence 0;
        ``odd_tokens``: ``{index: string}`` for tokens whose string is not
        their id's.

        >>> from array import array
        >>> e = Encoding.walked(array("I", [7, 8]), array("i", [0, 2, 3, 5]), array("i", [0, 1]),
        ...                     ["", "", "", "", "", "", "", "hi", "yo"])
        >>> e.offsets, e.tokens, e.word_ids, e.attention_mask
        ([(0, 2), (3, 5)], ['hi', 'yo'], [0, 1], [1, 1])
        """
        return walked_encoding(WalkedEncoding, ids, offsets, words, strings, type_id, word, wrap,
                               odd_tokens)

    def __reduce__(self):
        return Encoding, (self.ids, self.tokens, self.offsets, self.word_ids, self.type_ids,
                          self.special_tokens_mask, self.attention_mask, self.overflowing,
                          self.sequence_ranges)

    @classmethod
    def empty(cls) -> "Encoding":
        """An encoding of no tokens.

        >>> len(Encoding.empty())
        0
        """
        return cls([], [], [], [], [], [], [])

    def copy(self) -> "Encoding":
        """A copy that shares no list with this one (overflowing copied too).

        >>> e = Encoding([1], ["a"], [(0, 1)], [0]); c = e.copy(); c.ids.append(2); e.ids
        [1]
        """
        return Encoding(self.ids[:], self.tokens[:], self.offsets[:], self.word_ids[:],
                        self.type_ids[:], self.special_tokens_mask[:], self.attention_mask[:],
                        [o.copy() for o in self.overflowing], dict(self.sequence_ranges))

    def view(self) -> "Encoding":
        """A new encoding over the same lists (its own sequence ranges, overflowing
        pieces viewed too), for stages that replace lists and never change them.

        >>> e = Encoding([1], ["a"], [(0, 1)], [0]); v = e.view(); v.set_sequence_id(1)
        >>> v.ids is e.ids, e.sequence_ranges
        (True, {})
        """
        return Encoding(self.ids, self.tokens, self.offsets, self.word_ids, self.type_ids,
                        self.special_tokens_mask, self.attention_mask,
                        [o.view() for o in self.overflowing], dict(self.sequence_ranges))

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self.ids)}, ids={self.ids!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Encoding):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in FIELDS)

    __hash__ = None

    @property
    def words(self) -> list:
        """The word of each token (``tokenizers``' older name of :attr:`word_ids`).

        >>> Encoding([1], ["a"], [(0, 1)], [3]).words
        [3]
        """
        return self.word_ids

    @property
    def n_sequences(self) -> int:
        """How many input sequences this encoding holds.

        >>> Encoding([1], ["a"], [(0, 1)], [0]).n_sequences
        1
        """
        return len(self.sequence_ranges) or 1

    def _range(self, sequence_id: int) -> tuple:
        return self.sequence_ranges.get(sequence_id, (0, len(self.ids)))

    @property
    def sequence_ids(self) -> list:
        """The sequence each token belongs to (``None`` for special tokens).

        >>> e = Encoding([1, 2], ["a", "b"], [(0, 1), (0, 1)], [0, 0], sequence_ranges={0: (0, 1), 1: (1, 2)})
        >>> e.sequence_ids
        [0, 1]
        """
        out = [None] * len(self.ids)
        for seq in range(self.n_sequences):
            start, stop = self._range(seq)
            out[start:stop] = [seq] * (stop - start)
        return out

    def set_sequence_id(self, sequence_id: int) -> None:
        """Mark every token as part of sequence ``sequence_id``.

        >>> e = Encoding([1], ["a"], [(0, 1)], [0]); e.set_sequence_id(1); e.token_to_sequence(0)
        1
        """
        self.sequence_ranges[as_usize(sequence_id)] = (0, len(self.ids))

    # ---------------------------------------------------------------- look-ups

    def token_to_sequence(self, token_index: int) -> int | None:
        """The sequence of the token at ``token_index``, or ``None``.

        >>> Encoding([1], ["a"], [(0, 1)], [0]).token_to_sequence(0)
        0
        """
        token_index = as_usize(token_index)
        if token_index > len(self.ids):
            return None
        if not self.sequence_ranges:
            return 0
        for seq, (start, stop) in self.sequence_ranges.items():
            if start <= token_index < stop:
                return seq
        return None

    def token_to_chars(self, token_index: int) -> tuple | None:
        """The character span of the token at ``token_index``, or ``None``.

        >>> Encoding([1], ["ab"], [(3, 5)], [0]).token_to_chars(0)
        (3, 5)
        """
        if self.token_to_sequence(token_index) is None or token_index >= len(self.offsets):
            return None
        return self.offsets[token_index]

    def token_to_word(self, token_index: int) -> int | None:
        """The word of the token at ``token_index``, or ``None``.

        >>> Encoding([1], ["ab"], [(3, 5)], [4]).token_to_word(0)
        4
        """
        if self.token_to_sequence(token_index) is None or token_index >= len(self.word_ids):
            return None
        return self.word_ids[token_index]

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> tuple | None:
        """``(first, last + 1)``: the tokens of word ``word_index`` in sequence ``sequence_index``.

        >>> Encoding([1, 2, 3], ["a", "b", "c"], [(0, 1), (1, 2), (3, 4)], [0, 0, 1]).word_to_tokens(0)
        (0, 2)
        """
        word_index = as_u32(word_index)
        start, stop = self._range(as_usize(sequence_index))
        if start > stop or stop > len(self.word_ids):
            return None
        first = last = None
        for i in range(start, stop):
            w = self.word_ids[i]
            # tokenizers walks while the word (None sorting first) is not past the one asked
            if w is not None and w > word_index:
                break
            if w == word_index:
                if first is None:
                    first = i
                last = i + 1
        return None if first is None else (first, last)

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> tuple | None:
        """The character span of word ``word_index`` in sequence ``sequence_index``.

        >>> Encoding([1, 2], ["a", "b"], [(0, 1), (1, 3)], [0, 0]).word_to_chars(0)
        (0, 3)
        """
        span = self.word_to_tokens(word_index, sequence_index)
        if span is None or span[1] == 0:
            return None
        return (self.offsets[span[0]][0], self.offsets[span[1] - 1][1])

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The token whose span holds character ``char_pos`` of sequence ``sequence_index``.

        >>> Encoding([1, 2], ["a", "b"], [(0, 1), (2, 3)], [0, 1]).char_to_token(2)
        1
        """
        char_pos = as_usize(char_pos)
        start, stop = self._range(as_usize(sequence_index))
        if start > stop or stop > len(self.offsets):
            return None
        for i in range(start, stop):
            s, e = self.offsets[i]
            if s <= char_pos < e:
                return i
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The word holding character ``char_pos`` of sequence ``sequence_index``.

        >>> Encoding([1, 2], ["a", "b"], [(0, 1), (2, 3)], [0, 1]).char_to_word(2)
        1
        """
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.token_to_word(token)

    # ------------------------------------------------------------- transforms

    def part(self, start: int, stop: int) -> "Encoding":
        """The tokens from ``start`` to ``stop`` as a new encoding (no
        sequence ranges, no overflowing pieces).

        >>> Encoding([5, 6], ["a", "b"], [(0, 1), (2, 3)], [0, 1]).part(1, 2).ids
        [6]
        """
        return Encoding(self.ids[start:stop], self.tokens[start:stop], self.offsets[start:stop],
                        self.word_ids[start:stop], self.type_ids[start:stop],
                        self.special_tokens_mask[start:stop], self.attention_mask[start:stop])

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """Keep ``max_length`` tokens; the rest goes to :attr:`overflowing` in windows
        of ``max_length`` that repeat ``stride`` tokens of the window before.

        >>> e = Encoding([1, 2, 3, 4, 5], list("abcde"), [(i, i + 1) for i in range(5)], list(range(5)))
        >>> e.truncate(4, stride=2); e.ids, [o.ids for o in e.overflowing]
        ([1, 2, 3, 4], [[3, 4, 5]])
        """
        max_length, stride = as_usize(max_length), as_usize(stride)
        direction = as_direction(direction, ENCODING_TRUNCATE_DIRECTION)
        n = len(self.ids)
        if max_length >= n:
            return
        if max_length == 0:
            whole = Encoding(self.ids, self.tokens, self.offsets, self.word_ids, self.type_ids,
                             self.special_tokens_mask, self.attention_mask, self.overflowing,
                             self.sequence_ranges)
            self.__init__([], [], [], [], overflowing=[whole])
            return
        if stride >= max_length:
            raise FasttokError(
                f"truncation stride ({stride}) must be smaller than the length kept "
                f"({max_length}, after the special tokens of the post-processor); "
                f"use a smaller stride or a larger max_length")
        step = max_length - stride
        parts = []
        if direction == "right":
            for start in range(0, n, step):
                stop = min(start + max_length, n)
                parts.append((start, stop))
                if stop == n:
                    break
        else:
            for last in range(n - 1, -1, -step):
                start = max(0, last + 1 - max_length)
                parts.append((start, last + 1))
                if start == 0:
                    break
        pieces = [self.part(start, stop) for start, stop in parts]
        kept = pieces[0]
        self.__init__(kept.ids, kept.tokens, kept.offsets, kept.word_ids, kept.type_ids,
                      kept.special_tokens_mask, kept.attention_mask, pieces[1:])

    @staticmethod
    def merge(encodings, growing_offsets: bool = True) -> "Encoding":
        """One encoding of ``encodings`` end to end (offsets shifted past the previous
        one's end when ``growing_offsets``); overflowing pieces are combined as
        ``tokenizers`` combines them.

        >>> a = Encoding([1], ["a"], [(0, 1)], [0]); b = Encoding([2], ["b"], [(0, 1)], [0])
        >>> Encoding.merge([a, b]).offsets
        [(0, 1), (1, 2)]
        """
        encodings = [as_instance(sub, Encoding) for sub in as_sequence(encodings)]
        growing_offsets = as_bool(growing_offsets)
        out = Encoding.empty()
        for sub in encodings:
            out.merge_with(sub, growing_offsets)
        return out

    def merge_with(self, pair: "Encoding", growing_offsets: bool) -> None:
        """Append ``pair`` to this encoding in place (``pair`` is left as it was).

        >>> a = Encoding([1], ["a"], [(0, 1)], [0]); a.merge_with(Encoding([2], ["b"], [(0, 1)], [0]), False)
        >>> a.ids, a.offsets
        ([1, 2], [(0, 1), (0, 1)])
        """
        overflowings = []
        for mine in self.overflowing:
            combined = mine.copy()
            combined.merge_with(pair, growing_offsets)
            overflowings.append(combined)
            for theirs in pair.overflowing:
                combined = mine.copy()
                combined.merge_with(theirs, growing_offsets)
                overflowings.append(combined)
        for theirs in pair.overflowing:
            combined = self.copy()
            combined.merge_with(theirs, growing_offsets)
            overflowings.append(combined)

        n = len(self.ids)
        for seq, (start, stop) in pair.sequence_ranges.items():
            self.sequence_ranges[seq] = (n + start, n + stop)
        self.ids.extend(pair.ids)
        self.type_ids.extend(pair.type_ids)
        self.tokens.extend(pair.tokens)
        self.word_ids.extend(pair.word_ids)
        shift = self.offsets[-1][1] if growing_offsets and self.offsets else 0
        if shift:
            self.offsets.extend([(s + shift, e + shift) for s, e in pair.offsets])
        else:
            self.offsets.extend(pair.offsets)
        self.special_tokens_mask.extend(pair.special_tokens_mask)
        self.attention_mask.extend(pair.attention_mask)
        self.overflowing = overflowings

    def pad(self, length: int, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
            pad_token: str = "[PAD]") -> None:
        """Pad to ``length`` tokens (overflowing pieces too); longer encodings stay as they are.

        >>> e = Encoding([5], ["a"], [(0, 1)], [0]); e.pad(3, direction="left")
        >>> e.ids, e.attention_mask, e.special_tokens_mask
        ([0, 0, 5], [0, 0, 1], [1, 1, 0])
        """
        # in the binding's order (the direction is read whole, value too, as it is met)
        length = as_usize(length)
        direction = as_direction(direction, PADDING_DIRECTION)
        pad_id, pad_type_id = as_u32(pad_id), as_u32(pad_type_id)
        as_str(pad_token)
        for piece in self.overflowing:
            piece.pad(length, direction, pad_id, pad_type_id, pad_token)
        missing = length - len(self.ids)
        if missing <= 0:
            return
        if direction == "left":
            self.sequence_ranges = {seq: (start + missing, stop + missing)
                                    for seq, (start, stop) in self.sequence_ranges.items()}
            self.ids[:0] = [pad_id] * missing
            self.type_ids[:0] = [pad_type_id] * missing
            self.tokens[:0] = [pad_token] * missing
            self.word_ids[:0] = [None] * missing
            self.attention_mask[:0] = [0] * missing
            self.special_tokens_mask[:0] = [1] * missing
            self.offsets[:0] = [(0, 0)] * missing
        else:
            self.ids.extend([pad_id] * missing)
            self.type_ids.extend([pad_type_id] * missing)
            self.tokens.extend([pad_token] * missing)
            self.word_ids.extend([None] * missing)
            self.attention_mask.extend([0] * missing)
            self.special_tokens_mask.extend([1] * missing)
            self.offsets.extend([(0, 0)] * missing)


class WalkedEncoding(Encoding):
    """An :class:`Encoding` over a compiled walk's arrays (:meth:`Encoding.walked`).

    As ``tokenizers``' getters do, reading a field makes a new list each
    time: lists kept alive by thousands of encodings would make every pass
    of Python's collector longer (reading every field of a batch cost five
    times more). A field set by a stage is kept; before a method that
    changes its lists in place, every field is made and kept.
    """

    # made by Encoding.walked: _walked is the WalkedFields (the slots of
    # Encoding stay unused)
    __slots__ = ("_walked",)

    def _keep(self) -> None:
        keep_fields(self)

    def set_sequence_id(self, sequence_id: int) -> None:
        """:meth:`Encoding.set_sequence_id`, on kept fields."""
        self._keep()
        super().set_sequence_id(sequence_id)

    def merge_with(self, pair: Encoding, growing_offsets: bool) -> None:
        """:meth:`Encoding.merge_with`, on kept fields."""
        self._keep()
        super().merge_with(pair, growing_offsets)

    def truncate(self, *args, **kwargs) -> None:
        """:meth:`Encoding.truncate`, on kept fields (it reads them once a piece)."""
        self._keep()
        super().truncate(*args, **kwargs)

    def pad(self, *args, **kwargs) -> None:
        """:meth:`Encoding.pad`, on kept fields."""
        self._keep()
        super().pad(*args, **kwargs)


for _name in FIELDS:
    # each field made when it is read, in C (WalkedField's __get__), from
    # the WalkedFields an encoding holds in its _walked slot
    setattr(WalkedEncoding, _name, WalkedField(_name, vars(WalkedEncoding)["_walked"]))
