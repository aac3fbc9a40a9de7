"""Hugging Face tokenizers' ``Unigram`` model (a ``tokenizer.json`` ``model`` of that type).

The pieces are cut by the Viterbi of :mod:`fasttok.models._unigram` in its
``tokenizers`` flavour (f64 scores, the unknown score ``min_score - 10`` over
every piece, ties to the piece that starts first), then tokenizers' rules:
unknown characters next to each other are one token, which becomes the
``<0xXX>`` pieces of its bytes under ``byte_fallback`` when they all exist,
else ``unk_id``. Offsets are in characters of the sequence the model is given.

The scores are read from JSON as tokenizers reads them
(:func:`fasttok.models.hf_fields.serde_f64`, in C by
:func:`fasttok.models._unigram.tokenizers_scores`): a fifth of them are one step
off the double Python's ``json`` makes, and where two segmentations tie up
to rounding (``"00" + "0"`` or ``"0" + "00"``) that step decides.

>>> m = unigram_from_json({"type": "Unigram", "unk_id": 0, "vocab": [
...     ["<unk>", 0.0], ["a", -1.0], ["b", -2.0], ["ab", -2.5]]}, "$.model", ValueError)
>>> m.tokenize("abba")
[(3, 'ab', (0, 2)), (2, 'b', (2, 3)), (1, 'a', (3, 4))]
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from fasttok.models.hf_fields import is_int, model_object
from fasttok.shared._json_reader import PackedPieces
from fasttok.shared.built_once import built_once

if TYPE_CHECKING:
    from fasttok.models._unigram import TokenizersUnigram


class Unigram:
    """A Unigram model over ``vocab`` (``[(piece, score)]``, ids by position).

    ``never``: ids whose pieces text never matches (the special added
    tokens, for fasttok's Encoding; see :class:`TokenizersUnigram`).

    The compiled model (its trie and character tables, half of a Unigram
    file's load) is built by the first call that needs it, once, whichever
    thread calls first: a load builds the stages, an encode runs them.

    >>> m = Unigram([("<unk>", 0.0), ("▁hi", -1.0)], unk_id=0)
    >>> m.tokenize_ids("▁hi!"), m.token_to_id("▁hi"), m.id_to_token(0)
    ([1, 0], 1, '<unk>')
    """

    def __init__(self, vocab: list, unk_id: int | None = None, byte_fallback: bool = False,
                 never: frozenset = frozenset()):
        self._setup([piece for piece, _ in vocab], [float(score) for _, score in vocab], unk_id,
                    byte_fallback, never)

    def _setup(self, pieces: Any, scores: Any, unk_id: int | None, byte_fallback: bool,
               never: frozenset) -> None:
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self._parts = (pieces, scores, never)
        self._size = len(pieces)

    @classmethod
    def from_pieces(cls, pieces: Any, scores: Any, unk_id: int | None = None,
                    byte_fallback: bool = False, never: frozenset = frozenset()) -> "Unigram":
        """The model of ``Unigram(list(zip(pieces, scores)), ...)``, from the
        pieces as they are (a list of ``str``, or the
        :class:`~fasttok.shared._json_reader.PackedPieces` a file was read
        into: its UTF-8 is placed in the trie, and no ``str`` is made for a
        piece until asked for) and the scores (floats; ``None`` with
        ``PackedPieces`` whose numbers are in range: read by the first use).

        >>> Unigram.from_pieces(["<unk>", "a"], [0.0, -1.0], unk_id=0).tokenize_ids("ab")
        [1, 0]
        """
        model = cls.__new__(cls)
        model._setup(pieces, scores, unk_id, byte_fallback, never)
        return model

    # vocab and the piece -> id map are made on first use: a file whose
    # walk encodes never asks for them (they were a fifth of the model's build)
    @functools.cached_property
    def vocab(self) -> list:
        """``[(piece, score)]`` by id.

        >>> Unigram([("a", -1)]).vocab
        [('a', -1.0)]
        """
        return list(zip(self.core.piece_texts(), self.core.scores()))

    @functools.cached_property
    def _ids(self) -> dict:
        return {piece: i for i, piece in enumerate(self.core.piece_texts())}

    @built_once
    def core(self) -> TokenizersUnigram:
        """The compiled model this one runs (what a compiled walk of the
        whole pipeline cuts its pieces with), built by the first call.

        >>> Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=0).core.ids("ab")
        [1, 0]
        """
        # under built_once's lock: the build gives up the GIL while it
        # places the pieces, so a second thread would otherwise build its own;
        # the compiled module (and the ones it cimports) imported by the
        # first use too, not by a load
        from fasttok.models._unigram import TokenizersUnigram, tokenizers_scores

        pieces, scores, never = self._parts
        if scores is None:
            # a packed vocabulary whose numbers are all in range: read here
            scores = tokenizers_scores(pieces)
        core = TokenizersUnigram(pieces, scores, self.unk_id, self.byte_fallback, never=never)
        self._parts = None
        return core

    def tokenize(self, sequence: str) -> list:
        """``[(id, token, (start, end))]``, offsets in characters of ``sequence``.

        >>> Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=0).tokenize("axy")
        [(1, 'a', (0, 1)), (0, 'xy', (1, 3))]
        """
        return self.core.tokenize(sequence)

    def tokenize_ids(self, sequence: str) -> list:
        """The ids of :meth:`tokenize` alone.

        >>> Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=0).tokenize_ids("axy")
        [1, 0]
        """
        return self.core.ids(sequence)

    def tokenize_ids_many(self, sequences: list) -> list:
        """The ids of :meth:`tokenize_ids` of each of ``sequences``, one list.

        >>> Unigram([("<unk>", 0.0), ("a", -1.0)], unk_id=0).tokenize_ids_many(["a", "xa"])
        [1, 0, 1]
        """
        return self.core.ids_many(sequences)

    def sample_ids(self, sequence: str, rate: tuple, seed: int) -> list:
        """The ids of one segmentation of ``sequence`` drawn as sentencepiece's
        subword regularization draws a Unigram one
        (:func:`fasttok.models.unigram_sampling.sample`, scores added in
        double as tokenizers adds them); ``rate``: ``(alpha, nbest_size)``,
        ``seed``: the draw's. Unknown nodes drawn are fused as
        :meth:`tokenize_ids` fuses them.

        >>> m = Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.5)], unk_id=0)
        >>> sorted({tuple(m.sample_ids("ab", (0.1, -1), s)) for s in range(40)})
        [(1, 2), (3,)]
        """
        # imported on first use: few callers sample, and every load would pay for them
        import random

        from fasttok.models import unigram_sampling
        core = self.core
        raw = sequence.encode("utf-8")
        lattice = unigram_sampling.UnigramLattice(raw, core.lattice(sequence), lambda path: core.resolve(raw, path),
                                 lambda: core.ids(sequence), float)
        alpha, nbest_size = rate
        return unigram_sampling.sample(lattice, alpha, nbest_size, random.Random(seed))

    def token_to_id(self, token: str) -> int | None:
        """The id of piece ``token`` (its last id if spelled twice), or ``None``.

        >>> Unigram([("a", 0.0)]).token_to_id("b") is None
        True
        """
        return self._ids.get(token)

    def id_to_token(self, id: int) -> str | None:
        """The piece of ``id``, or ``None``.

        >>> Unigram([("a", 0.0)]).id_to_token(0)
        'a'
        """
        return self.core.piece(id) if 0 <= id < len(self.core) else None

    @property
    def texts_by_id(self) -> list:
        """The pieces by id (an id is its piece's place), not to be changed:
        what an encoding spells its tokens with, no dict of the vocabulary
        made for it (as :attr:`fasttok.models.hf_bpe.BPE.texts_by_id`).

        >>> Unigram([("a", 0.0), ("b", -1.0)]).texts_by_id
        ['a', 'b']
        """
        return self.core.piece_texts()

    def get_vocab(self) -> dict:
        """``{piece: id}``.

        >>> Unigram([("a", 0.0), ("b", -1.0)]).get_vocab()
        {'a': 0, 'b': 1}
        """
        return dict(self._ids)

    def get_vocab_size(self) -> int:
        """The number of pieces (ids), as tokenizers counts them.

        >>> Unigram([("a", 0.0), ("a", -1.0)]).get_vocab_size()
        2
        """
        return self._size


def unigram_from_json(spec: dict | None, where: str, fail,
                      never: frozenset = frozenset()) -> Unigram | None:
    """The :class:`Unigram` of a ``tokenizer.json`` model object ``spec`` at JSON path ``where``.

    ``fail(where, problem)`` makes the exception raised for a bad field;
    ``never``: ids no text matches (see :class:`Unigram`).

    >>> unigram_from_json({"type": "Unigram", "vocab": [["a", -1]]}, "$.model", ValueError).unk_id
    >>> unigram_from_json({"vocab": [["a", -1]], "unk_id": 1}, "$.model",
    ...                   lambda w, p: ValueError(f"{w}: {p}"))
    Traceback (most recent call last):
    ...
    ValueError: $.model.unk_id: unk_id 1 is not the id of one of the 1 pieces
    """
    if model_object(spec, where, fail, "Unigram") is None:
        return None
    if "vocab" not in spec:
        raise fail(f"{where}.vocab", "missing: the list of [piece, score] pairs")
    vocab = spec["vocab"]
    packed = type(vocab) is PackedPieces
    if not (packed or isinstance(vocab, list)):
        raise fail(f"{where}.vocab", "expected a list of [piece, score] pairs")
    # scores that cannot fail are read by the model's build, on first use
    # (5,000 of them were a tenth of a T5 conversion's load)
    if packed and vocab.numbers_in_range():
        scores = None
    else:
        from fasttok.models._unigram import tokenizers_scores

        scores = tokenizers_scores(vocab)
    if type(scores) is int:
        entry = vocab.to_list()[scores] if packed else vocab[scores]
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and (is_int(entry[1]) or isinstance(entry[1], float))):
            raise fail(f"{where}.vocab[{scores}]", "expected a [piece, score] pair (a string and "
                                                  "a number)")
        # beyond a double: json made inf of it, or serde's scaling does
        raise fail(f"{where}.vocab[{scores}]", "the score is out of the range of a double")
    pieces = vocab if packed else [entry[0] for entry in vocab]
    unk_id = spec.get("unk_id")
    if unk_id is not None:
        if not is_int(unk_id) or unk_id < 0:
            raise fail(f"{where}.unk_id", "expected a piece id (an integer >= 0) or null")
        if not vocab:
            raise fail(f"{where}.vocab", "empty, but unk_id needs at least its piece")
        if unk_id >= len(vocab):
            raise fail(f"{where}.unk_id",
                       f"unk_id {unk_id} is not the id of one of the {len(vocab)} pieces")
    byte_fallback = spec.get("byte_fallback", False)
    if not isinstance(byte_fallback, bool):
        raise fail(f"{where}.byte_fallback", "expected true or false")
    return Unigram.from_pieces(pieces, scores, unk_id, byte_fallback, never)
