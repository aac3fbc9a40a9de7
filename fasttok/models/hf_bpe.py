"""Hugging Face ``tokenizers``' ``BPE`` model (0.23.3), over the compiled
core in :mod:`fasttok.models._hf_bpe` (whose notes give the rules).

Building it follows ``BpeBuilder::build``: every merge's two parts and its
result (``a + b[len(prefix):]``, bytes cut from ``b`` whether or not it
starts with the prefix) must be in the vocabulary, else the model is not
built; a pair listed twice takes its last rank. ``dropout`` is checked as
tokenizers' ``f32``. tokenizers draws dropout from an unseeded generator;
here ``seed`` fixes the draws (``None``: a fresh seed).

>>> bpe = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
>>> bpe.tokenize("abb")
[(2, 'ab', (0, 2)), (1, 'b', (2, 3))]
"""

from __future__ import annotations

import functools
import operator
import os
import struct
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

from fasttok.errors import FasttokError
from fasttok.models._hf_bpe import PREPEND_EACH, PREPEND_FIRST, PREPEND_UNLESS_THERE, HfBpeCore, \
    StretchWalker, UnkTokenNotFoundError, merge_slots, packed_merge_slots
from fasttok.shared._json_reader import PackedMerges, PackedVocab
from fasttok.shared._tables import TokenTables
from fasttok.shared.built_once import built_once
from fasttok.shared.json_fields import all_ints

__all__ = ["BPE", "BpeMergeError", "StretchWalker", "UnkTokenNotFoundError", "bpe_from_json",
           "vocab_from_json", "as_f32"]


# text_walker's prepend_scheme: None for the Prepend normalizer, else Metaspace's
_PREPEND_WHEN = {None: PREPEND_EACH, "always": PREPEND_UNLESS_THERE, "first": PREPEND_FIRST}


def _rewriting(space_to: Optional[str], prepend: str, prepend_scheme: Optional[str]) -> tuple:
    # the compiled walk's first arguments
    return (None if space_to is None else space_to.encode("utf-8"), prepend.encode("utf-8"),
            _PREPEND_WHEN[prepend_scheme])


class BpeMergeError(FasttokError):
    """A merge of a BPE model names a token that is not in the vocabulary
    (``index`` is the merge's position in the list): tokenizers refuses to
    build such a model. Add the token or drop the merge."""

    def __init__(self, index: int, message: str):
        super().__init__(f"merge {index}: {message}")
        self.index = index
        self.problem = message


def as_f32(value: float) -> float:
    """``value`` rounded to a 32-bit float, as tokenizers stores ``dropout``
    (``inf`` when it is out of range).

    >>> as_f32(0.1)
    0.10000000149011612
    """
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _merge_slots(tokens: list, slot_ints: tuple, unique: bool, merges: Sequence, prefix: str,
                 empty_slot: int, never_slots: list) -> array:
    # (left, right, merged) slots per merge, in rank order, end to end in
    # one array('I'), a pair of ids given twice keeping its last rank
    # (tokenizers collects them into a map keyed by the parts' ids; where
    # ids and slots are one to one, ``unique``, the compiled core does that itself); a
    # merge into a never slot is left out. The legacy form when every merge
    # is a string (in more than one form, each is taken as a pair: the first
    # string is the merge not of the form).
    legacy = bool(merges) and type(merges[0]) is str and set(map(type, merges)) == {str}
    skip = None
    if never_slots:
        skip = bytearray(len(tokens))
        for slot in never_slots:
            skip[slot] = 1
    found = merge_slots(merges, TokenTables(tokens), len(prefix.encode("utf-8")), empty_slot,
                        legacy=legacy, skip=skip)
    if type(found) is tuple:
        index, part = found
        merge = merges[index]
        if part == 3:
            raise BpeMergeError(index, f"expected two tokens separated by one space, got {merge!r}"
                                if legacy else "expected a pair of token strings (all merges in "
                                "one form: \"a b\" strings or [\"a\", \"b\"] pairs)")
        a, b = merge.split(" ") if legacy else merge
        if part < 2:
            raise BpeMergeError(index, f"token `{(a, b)[part]}` is not in the vocabulary")
        # tokenizers panics here rather than reporting the token
        raise BpeMergeError(index, f"the merged token of `{a}` and `{b}` is not in the vocabulary")
    if unique:
        return found
    by_ids = list(zip(map(slot_ints.__getitem__, found[0::3]),
                      map(slot_ints.__getitem__, found[1::3])))
    last = dict(zip(by_ids, range(len(by_ids))))
    keep = [k for k, pair in enumerate(by_ids) if last[pair] == k]
    return array("I", [slot for k in keep for slot in found[3 * k:3 * k + 3]])


def _packed_build(packed: Any, prefix: str, never_slots: list) -> Optional[tuple]:
    # (tokens(), merge slots) from the packed vocabulary and merges of fasttok's
    # tokenizer.json reader, found in its UTF-8 in C (Gemma 3: 262k entries,
    # 514k merges, no Python string made for one); None where the Python
    # build must run: nothing packed, ids that are not the entries' places,
    # or a merge that fails (its error is then reported as it always is)
    if packed is None or packed.vocab is None or packed.merges is None \
            or not packed.vocab.in_order:
        return None
    skip = None
    if never_slots:
        skip = bytearray(len(packed.vocab))
        for slot in never_slots:
            skip[slot] = 1
    found = packed_merge_slots(packed.vocab, packed.merges, len(prefix.encode("utf-8")), skip=skip)
    if type(found) is tuple:
        return None
    return packed.vocab.utf8_texts, found


class BPE:
    """A ``tokenizers`` BPE model: ``vocab`` maps token strings to ids,
    ``merges`` lists ``(left, right)`` token strings by rank, or the
    ``"left right"`` strings of tokenizer.json's older form (a
    ``#version`` line skipped).

    ``never``: ids no merge makes and ``ignore_merges`` does not look up
    whole (the special added tokens, for fasttok's Encoding: ``["<unk",
    ">"]`` does not merge into the ``<unk>`` id).

    ``packed``: the packed model of fasttok's ``tokenizer.json`` reader
    that ``vocab`` and ``merges`` were read from (a ``ModelObject``'s):
    the tokens and merges are then taken from its UTF-8 in C, and from the
    Python objects only where it does not serve (ids that are not the
    entries' places, a merge that fails).

    >>> BPE({"<unk>": 0, "a": 1}, [], unk_token="<unk>", fuse_unk=True).tokenize_ids("axxa")
    [1, 0, 1]
    >>> BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")], never=frozenset({2})).tokenize_ids("ab")
    [0, 1]
    """

    def __init__(self, vocab: Mapping, merges: Sequence, *, unk_token: Optional[str] = None,
                 continuing_subword_prefix: Optional[str] = None,
                 end_of_word_suffix: Optional[str] = None, fuse_unk: bool = False,
                 byte_fallback: bool = False, ignore_merges: bool = False,
                 dropout: Optional[float] = None, seed: Optional[int] = None,
                 never: frozenset = frozenset(), packed: Any = None):
        if dropout is not None and not 0.0 <= as_f32(dropout) <= 1.0:
            raise FasttokError(f"dropout must be between 0 and 1, got {dropout}")
        # a PackedVocab (of a ModelObject) is kept as it is: its dict is made
        # only if get_vocab is called
        packed_vocab = vocab if type(vocab) is PackedVocab and vocab.in_order else None
        self._vocab = packed_vocab if packed_vocab is not None else (
            vocab.to_dict() if type(vocab) is PackedVocab else dict(vocab))
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        self.dropout = dropout
        in_order = packed_vocab is not None or (
            packed is not None and packed.vocab is not None and packed.vocab.in_order)
        n = len(self._vocab)
        slot_ints = tuple(range(n)) if in_order else tuple(self._vocab.values())
        # The slots are the entries by id. Ids 0..n-1 in the file's order
        # (every shared file) are those already, each id one token's.
        unique = self._unique = in_order or slot_ints == tuple(range(n))
        prefix = continuing_subword_prefix or ""
        if packed_vocab is not None:
            # the token strings are left to the core, which decodes them on
            # first use (Llama 2's 32k were a tenth of its load)
            texts = None
            unk_slot = packed_vocab.get(unk_token, -1)
            never_slots = sorted(i for i in never if 0 <= i < n)
        else:
            texts = tuple(self._vocab)
            if not unique:
                entries = sorted(self._vocab.items(), key=operator.itemgetter(1))
                texts = tuple(map(operator.itemgetter(0), entries))
                slot_ints = tuple(map(operator.itemgetter(1), entries))
                unique = len(set(slot_ints)) == len(slot_ints)
            self._texts = texts
            unk_slot = texts.index(unk_token) if unk_token in self._vocab else -1
            never_slots = [slot for slot, i in enumerate(slot_ints) if i in never] if never else []
        self._slot_ints = slot_ints
        built = _packed_build(packed, prefix, never_slots) if texts is None else None
        if built is None:
            if texts is None:
                texts = self._texts = packed_vocab.texts()
            tokens = [token.encode("utf-8") for token in texts]
            merges = merges.to_list() if type(merges) is PackedMerges else (
                merges if isinstance(merges, list) else list(merges))
            empty_slot = texts.index("") if "" in self._vocab else -1
            built = (lambda: tokens), _merge_slots(tokens, slot_ints, unique, merges, prefix,
                                                   empty_slot, never_slots)
        tokens_of, slot_merges = built
        # The merges are checked (above); the core's tables are built on
        # first use (_core): Llama 2's took ~10 ms of a ~28 ms load that
        # the first encode pays anyway, and a load that never encodes skips
        options = dict(
            names=None if texts is None else texts if unique else tuple(
                map(self._id_to_token.__getitem__, slot_ints)),
            unk_slot=unk_slot if unk_token is not None else -1,
            unk_token=unk_token,
            prefix=(continuing_subword_prefix or "").encode("utf-8"),
            suffix=(end_of_word_suffix or "").encode("utf-8"),
            fuse_unk=fuse_unk, byte_fallback=byte_fallback, ignore_merges=ignore_merges,
            dropout=as_f32(dropout) if dropout is not None else 0.0,
            not_whole=never_slots,
            seed=(seed if seed is not None else int.from_bytes(os.urandom(8), "little")) % 2**64)
        self._build_core: Optional[Callable[[], HfBpeCore]] = lambda: HfBpeCore(
            tokens_of(), slot_ints, slot_merges, **options)

    @built_once
    def _core(self) -> HfBpeCore:
        # the compiled core, built once by whichever thread asks first
        core = self._build_core()
        self._build_core = None
        return core

    @functools.cached_property
    def _texts(self) -> tuple:
        # the slots' token strings of a packed vocabulary (set in __init__
        # for any other): the core's names, decoded on first use
        return self._core.slot_names

    @property
    def texts_by_id(self) -> Optional[tuple]:
        """The token strings by id when the ids are the entries' places (an
        Encoding spells its tokens from them), else ``None``.

        >>> BPE({"a": 0, "b": 1}, []).texts_by_id, BPE({"a": 1}, []).texts_by_id
        (('a', 'b'), None)
        """
        return self._texts if self._unique else None

    @functools.cached_property
    def _id_to_token(self) -> dict:
        # made on first use (decoding): an id listed under two strings names
        # the first of them
        texts, slot_ints = self._texts, self._slot_ints
        found = dict(zip(reversed(slot_ints), reversed(texts)))
        if len(found) < len(texts):
            return dict(sorted(found.items()))
        return dict(zip(slot_ints, texts))

    def tokenize(self, sequence: str) -> list:
        """``[(id, token, (start, end))]`` of ``sequence`` as one word, with
        character offsets (tokenizers' ``Model::tokenize`` seen through its
        pipeline).

        >>> BPE({"a": 0, "b": 1}, []).tokenize("ba")
        [(1, 'b', (0, 1)), (0, 'a', (1, 2))]
        """
        return self._core.tokenize(sequence)

    def tokenize_ids(self, sequence: str) -> list:
        """The ids of :meth:`tokenize`, without building tokens or offsets.

        >>> BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).tokenize_ids("aba")
        [2, 0]
        """
        return self._core.tokenize_ids(sequence)

    def text_walker(self, cuts_for: Callable[[Optional[frozenset]], tuple], *,
                    space_to: Optional[str] = None, prepend: str = "",
                    prepend_scheme: Optional[str] = None,
                    walker: type = StretchWalker) -> StretchWalker:
        """A compiled walk of whole texts: each stretch between added tokens
        normalized (each space written as ``space_to`` when given,
        ``prepend`` before a non-empty stretch, or, with ``prepend_scheme``
        ``"always"`` or ``"first"``, where ``Metaspace`` would put it) and
        tokenized as :meth:`tokenize_ids` does, the text cut by what
        ``cuts_for(allowed)`` gives (see
        :class:`StretchWalker`), one call a text; ``walker``: the class made
        (a subclass adds what its layer offers).

        >>> bpe = BPE({"a": 0, "_": 1, "_a": 2}, [("_", "a")])
        >>> bpe.text_walker(lambda allowed: (lambda text: [text], {}, None, None), space_to="_").ids(
        ...     "a a", None)
        [0, 2]
        """
        return walker(self._core, *_rewriting(space_to, prepend, prepend_scheme), cuts_for)

    def sample_ids(self, sequence: str, rate: float, seed: int) -> list:
        """The ids of ``sequence`` with BPE-dropout at ``rate`` (each merge
        skipped with that chance when its turn comes), drawn from ``seed``.

        >>> BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).sample_ids("ab", 1.0, 7)
        [0, 1]
        """
        if not 0.0 <= rate <= 1.0:
            raise FasttokError(f"dropout must be between 0 and 1, got {rate}")
        return self._core.sample_ids(sequence, rate, seed % 2**64)

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token``, or ``None``.

        >>> BPE({"a": 0}, []).token_to_id("b") is None
        True
        """
        return self._vocab.get(token)

    def id_to_token(self, id: int) -> Optional[str]:
        """The token of ``id``, or ``None``.

        >>> BPE({"a": 0}, []).id_to_token(0)
        'a'
        """
        return self._id_to_token.get(id)

    def get_vocab(self) -> dict:
        """The vocabulary, token string to id.

        >>> BPE({"a": 0}, []).get_vocab()
        {'a': 0}
        """
        return self._vocab.to_dict() if type(self._vocab) is PackedVocab else dict(self._vocab)

    def get_vocab_size(self) -> int:
        """How many entries the vocabulary has (tokenizers counts entries, not ids).

        >>> BPE({"a": 0, "b": 7}, []).get_vocab_size()
        2
        """
        return len(self._vocab)


def _optional(spec: dict, key: str, kind: type, where: str, fail) -> Any:
    value = spec.get(key)
    if value is not None and (not isinstance(value, kind) or (kind is not bool and isinstance(value, bool))):
        raise fail(f"{where}.{key}", f"expected {kind.__name__} or null, got {type(value).__name__}")
    return value


def vocab_from_json(spec: dict, where: str, fail) -> dict:
    """The ``vocab`` object of a model (token -> id), checked as tokenizers
    reads it (ids are 32-bit unsigned).

    >>> vocab_from_json({"vocab": {"a": 0}}, "$.model", None)
    {'a': 0}
    """
    vocab = spec.get("vocab")
    if type(vocab) is PackedVocab:
        return vocab  # fasttok's reader packs ids 0..2**32-2 only
    if not isinstance(vocab, dict):
        raise fail(f"{where}.vocab", "expected an object of token -> id")
    packed = getattr(spec, "packed", None)
    # fasttok's reader packs a vocabulary only when its ids are 0..2**32-2
    if (packed is not None and packed.vocab is not None) or all_ints(vocab.values(), 2**32):
        return vocab
    for token, token_id in vocab.items():
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < 2**32:
            raise fail(f"{where}.vocab", f"token {token!r}: expected an id in 0..2**32-1, got {token_id!r}")
    return vocab


def _merges_from_json(merges: Any, where: str, fail) -> Any:
    # the merges as BPE takes them, [["a", "b"], ...] pairs or the legacy
    # ["a b", ...], split and checked in C: a merge not of the form is BPE's
    # error; or the PackedMerges of fasttok's reader (a ModelObject's)
    if type(merges) is PackedMerges:
        return merges
    if not isinstance(merges, list):
        raise fail(where, "expected a list of merges")
    return merges


def bpe_from_json(spec: dict, where: str, fail, never: frozenset = frozenset()) -> BPE:
    """The BPE model of a ``tokenizer.json`` ``model`` object (fields and
    defaults as tokenizers reads them).

    >>> def fail(where, problem):
    ...     return ValueError(f"{where}: {problem}")
    >>> bpe_from_json({"type": "BPE", "vocab": {"a": 0}, "merges": [["a", "x"]]}, "$.model", fail)
    Traceback (most recent call last):
    ValueError: $.model.merges[0]: token `x` is not in the vocabulary
    """
    vocab = vocab_from_json(spec, where, fail)
    if "merges" not in spec:
        raise fail(f"{where}.merges", "missing (a BPE model needs vocab and merges)")
    merges = _merges_from_json(spec["merges"], f"{where}.merges", fail)
    options = {key: _optional(spec, key, str, where, fail)
               for key in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix")}
    options.update({key: bool(_optional(spec, key, bool, where, fail))
                    for key in ("fuse_unk", "byte_fallback", "ignore_merges")})
    dropout = spec.get("dropout")
    if dropout is not None:
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
            raise fail(f"{where}.dropout", f"expected a number or null, got {type(dropout).__name__}")
        if not 0.0 <= as_f32(dropout) <= 1.0:
            raise fail(f"{where}.dropout", f"must be between 0 and 1, got {dropout}")
    try:
        return BPE(vocab, merges, dropout=dropout, never=never,
                   packed=getattr(spec, "packed", None), **options)
    except BpeMergeError as error:
        raise fail(f"{where}.merges[{error.index}]", error.problem) from None
