"""SentencePiece models for :class:`fasttok.Encoding`: ``.model`` files and GGUF ``llama`` / ``t5``.

One compiled implementation (:class:`fasttok.formats._sentencepiece.SentencePieceCore`)
runs both sources; what differs is data, picked here by where the
vocabulary came from:

* a SentencePiece ``.model`` file runs as ``SentencePieceProcessor.Encode``
  does (the ``sentencepiece`` flavour): no special tokens in text,
  user-defined symbols kept whole, byte fallback or merged ``unk`` runs,
  sentencepiece's ``decode``;
* a GGUF ``llama`` (SentencePiece BPE) or ``t5`` (Unigram) vocabulary runs as
  llama.cpp does (the ``llama.cpp`` flavour): special tokens are split out
  first by the same partition as every other GGUF model
  (:class:`fasttok.formats.gguf.GGUFModel`, including the LSTRIP/RSTRIP
  attributes llama.cpp gives phi-3 and nomic-bert-moe tokens), each text
  fragment is tokenized by the compiled core, and decoding is
  ``llama_detokenize``. ``add_special_tokens=True`` adds BOS/EOS as the
  file's flags say.

>>> import fasttok                                            # doctest: +SKIP
>>> enc = fasttok.load("tokenizer.model")                     # doctest: +SKIP
>>> enc.encode_as_pieces("Hello world")                       # doctest: +SKIP
['▁Hello', '▁world']
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Optional

from fasttok.errors import FasttokError
from fasttok.formats._sentencepiece import SentencePieceCore
from fasttok.formats.gguf import GGUFModel, first_id_by_bytes
from fasttok.models import unigram_sampling
from fasttok.models.unigram_sampling import UnigramLattice
from fasttok.post_processors.special_ids import from_flags
from fasttok.shared.surrogates import repair_surrogates, repaired_starts
from fasttok.vocab import Vocabulary

__all__ = ["build_sentencepiece", "load_sentencepiece_file", "SentencePieceModel",
           "GGUFSentencePiece", "sample_encode", "nbest_encode"]

# Vocabulary.metadata["tokenizer.ggml.model"] values that run llama.cpp's way
_GGUF_SENTENCEPIECE = frozenset({"llama", "t5"})


def build_sentencepiece(vocab: Vocabulary) -> Any:
    """The compiled model for a ``unigram`` or ``sentencepiece_bpe`` vocabulary.

    >>> from fasttok.vocab import Vocabulary
    >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
    ...                tokens=(b"<unk>", b"a"), scores=(0.0, -1.0), token_types=(2, 1))
    >>> build_sentencepiece(v).encode_ordinary("aa")
    [1, 1]
    """
    if vocab.metadata.get("tokenizer.ggml.model") in _GGUF_SENTENCEPIECE:
        return GGUFSentencePiece(vocab)
    return SentencePieceModel(vocab, flavour="sentencepiece")


def load_sentencepiece_file(path: str, **options: Any) -> Vocabulary:
    """:func:`fasttok.load`'s reader for ``.model`` files (``name=`` is the only option)."""
    from fasttok.loaders.sentencepiece_model import load_sentencepiece

    unknown = set(options) - {"name"}
    if unknown:
        raise FasttokError(f"{path}: a SentencePiece .model file takes only name= "
                           f"(got {', '.join(sorted(unknown))})")
    return load_sentencepiece(path, **options)


class SentencePieceModel(SentencePieceCore):
    """The model of a SentencePiece ``.model`` file: the compiled core, and
    subword regularization as sentencepiece samples.

    >>> from fasttok.vocab import Vocabulary
    >>> v = Vocabulary(name="t", model="sentencepiece_bpe", byte_level=False, unk_id=0,
    ...                tokens=(b"<unk>", b"a", b"b", b"ab"), scores=(0.0, -2.0, -2.0, -1.0),
    ...                token_types=(2, 1, 1, 1))
    >>> SentencePieceModel(v).sample("ab", None, 1.0, -1, random.Random(1))
    [1, 2]
    """

    def __init__(self, vocab: Vocabulary, **options: Any) -> None:
        super().__init__(vocab, **options)
        self.post_processor = from_flags(vocab)
        self._by_bytes: Optional[dict] = None  # token bytes -> first id, made on first use

    @property
    def windows_exact(self) -> bool:
        """Whether the ids of a text from a place on, encoded alone, are
        (after their first ids) the whole text's there, as an appender
        needs (:mod:`fasttok.inference.appender`): not on a Unigram model,
        whose float32 path scores, summed from the start of the text, decide
        ties and near ties ("." + "......" against "......" + ".", "3" +
        "41" against "34" + "1", 0.001 apart) by the size of the sum before
        them.

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
        ...                tokens=(b"<unk>", b"a"), scores=(0.0, -1.0), token_types=(2, 1))
        >>> SentencePieceModel(v).windows_exact
        False
        """
        return self.vocabulary.model != "unigram"

    @property
    def scored_windows(self) -> Optional[Callable]:
        """:meth:`encode_scored`, which an appender encodes its windows with
        where they are not exact alone (:attr:`windows_exact`): a Unigram
        model whose whitespace becomes a ``▁`` before the word (else None,
        and the appender keeps the whole text pending).

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
        ...                add_dummy_prefix=True, escape_whitespaces=True,
        ...                tokens=(b"<unk>", b"a"), scores=(0.0, -1.0), token_types=(2, 1))
        >>> SentencePieceModel(v).scored_windows is not None
        True
        """
        v = self.vocabulary
        if v.model != "unigram" or not (v.add_dummy_prefix and v.escape_whitespaces) or \
                v.metadata.get("treat_whitespace_as_suffix"):
            return None
        return self.encode_scored

    def sample(self, text: str, allowed: Any, alpha: float, nbest_size: int,
               rng: random.Random) -> list:
        """One segmentation drawn as :func:`sample_encode` describes
        (``allowed`` is unused: a ``.model`` file parses no special tokens)."""
        return _sample(self, text, alpha, nbest_size, rng)

    def find_token(self, data: bytes) -> int:
        """The id of the piece spelled ``data`` (vocabulary text, ``▁`` for
        spaces), else of the first token whose :meth:`token_bytes` are
        ``data`` (``b" t"`` for ``▁t``, ``b"\\x00"`` for ``<0x00>``), or -1."""
        found = super().find_token(data)
        if found >= 0:
            return found
        if self._by_bytes is None:
            self._by_bytes = first_id_by_bytes(self.token_bytes, range(self.n_tokens))
        return self._by_bytes.get(bytes(data), -1)

    def token_byte_values(self) -> list:
        """:meth:`token_bytes` of every id, sorted (a ``.model`` file parses
        no special token, so every id is ordinary)."""
        return sorted(self.token_bytes(i) for i in range(self.n_tokens))


class GGUFSentencePiece(GGUFModel):
    """A GGUF ``llama`` or ``t5`` vocabulary, tokenized as llama.cpp does.

    Special tokens, BOS/EOS, ``detokenize``'s options and the stream come
    from the GGUF model base class; text fragments, ``decode_bytes`` and
    ``decode_with_offsets`` go to the compiled SentencePiece core. llama.cpp's SPM
    tokenizer puts the space prefix on the first fragment and on every
    fragment that follows a special token; its UGM tokenizer normalizes each
    fragment on its own (so each gets the prefix when the file asks).
    """

    def __init__(self, vocab: Vocabulary) -> None:
        super().__init__(vocab, False)
        # the core decodes by the attributes llama.cpp amends the file's types to
        self.core = SentencePieceCore(vocab, flavour="llama.cpp", hidden=self._hidden)

    def _encode(self, text: str, entries: list) -> list:
        out: list = []
        first = True
        encode = self.core.encode_fragment
        for frag in self._fragments(text, entries):
            if type(frag) is int:
                out.append(frag)
                first = True
            else:
                out += encode(frag, first)
                first = False
        return out

    def _encode_text(self, text: str) -> list:
        return self.core.encode_fragment(text, True)

    @property
    def windows_exact(self) -> bool:
        """Whether the ids of a text from a place on, encoded alone, are
        (after their first ids) the whole text's there: not on a ``t5``
        (Unigram) vocabulary, whose Viterbi sums double scores from its
        fragment's start, so that a tie between the same pieces in another
        order ("f" + "ff", "ff" + "f") goes by how the sum before it rounds.

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
        ...                tokens=(b"<unk>", b"a"), scores=(0.0, -1.0), token_types=(2, 1))
        >>> GGUFSentencePiece(v).windows_exact
        False
        """
        return self.vocab.model != "unigram"

    @property
    def scored_windows(self) -> Optional[Callable]:
        """:meth:`encode_scored`, which an appender encodes its windows
        with where they are not exact alone (:attr:`windows_exact`): a
        ``t5`` vocabulary's; None for ``llama``.

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
        ...                tokens=(b"<unk>", b"a"), scores=(0.0, -1.0), token_types=(2, 1))
        >>> m = GGUFSentencePiece(v)
        >>> m.scored_windows == m.encode_scored
        True
        """
        return self.encode_scored if self.vocab.model == "unigram" else None

    def encode_scored(self, text: str, state: Any = None, cut: bool = True,
                      allowed: Any = None) -> tuple:
        """``(ids, k, c, state_at_c)``: :meth:`encode`'s ids of ``text``
        (``allowed`` as there) as the whole text has them where ``text``
        begins, ``state`` there, and with ``cut`` where an appender keeps
        the ids before: ``ids[:k]`` are ``text[:c]``'s whatever follows
        (``c`` 0: no cut), and ``text[c:]`` encodes on from ``state_at_c``.

        llama.cpp's UGM tokenizer normalizes each fragment between special
        tokens on its own and runs its Viterbi over it from 0, so ``state``
        goes into the first fragment only where ``text`` begins with text,
        every other fragment starts afresh, and the cut is inside the last
        one, where the core finds it
        (:meth:`~fasttok.formats._sentencepiece.SentencePieceCore.encode_scored`),
        else where it begins after a special token (state None: the text
        after it encodes as a text's start), so that short fragments between
        special tokens are cut too.

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
        ...                add_dummy_prefix=True, remove_extra_whitespaces=True,
        ...                escape_whitespaces=True, tokens=(b"<unk>", "\u2581a".encode(), b"a"),
        ...                scores=(0.0, -1.0, -2.0), token_types=(2, 1, 1))
        >>> m = GGUFSentencePiece(v)
        >>> ids, k, c, state = m.encode_scored("a " * 40)
        >>> ids == m.encode_ordinary("a " * 40), k, c
        (True, 23, 46)
        >>> m.encode_scored(("a " * 40)[c:], state, cut=False)[0] == ids[k:]
        True
        """
        repaired = repair_surrogates(text)
        frags = self._specials.partition_spans(repaired, self._entries_for(allowed))
        if len(repaired) != len(text):
            # the core counts c in text, whose surrogate pairs are one character here
            at = repaired_starts(text)
            frags = [f[:-2] + (at[f[-2]], at[f[-1]]) for f in frags]
        last = max((i for i, f in enumerate(frags) if len(f) == 2), default=-1)
        ids: list = []
        k, c, state_at_c = 0, 0, state
        for i, frag in enumerate(frags):
            if len(frag) == 3:
                ids.append(frag[0])
                continue
            start, end = frag
            if i == last or start == 0 and state is not None:
                found, k_frag, c_frag, at_c = self.core.encode_scored(
                    text[start:end], state if start == 0 else None, cut and i == last)
                if c_frag:
                    k, c, state_at_c = len(ids) + k_frag, start + c_frag, at_c
                elif cut and i == last and i > 0:
                    k, c, state_at_c = len(ids), start, None
                ids += found
            else:
                ids += self.core.encode_fragment(text[start:end], True)
        return ids, k, c, state_at_c

    def _fragment_offsets(self, fragment: str, first: bool) -> tuple:
        return self.core.encode_with_offsets(fragment, None, first)

    def sample(self, text: str, allowed: Any, alpha: float, nbest_size: int,
               rng: random.Random) -> list:
        """One segmentation drawn at random: BPE-dropout of each fragment
        between special tokens (``llama``), or Unigram sampling (``t5``) as
        :func:`sample_encode` describes."""
        bpe = self.vocab.model == "sentencepiece_bpe"
        out: list = []
        first = True
        for frag in self._fragments(text, self._entries_for(allowed)):
            if type(frag) is int:
                out.append(frag)
                first = True
            elif bpe:
                out += self.core.sample_bpe(frag, alpha, rng.getrandbits(64), first)
                first = False
            else:
                # UGM normalizes each fragment on its own, as encode does
                out += _sample(self.core, frag, alpha, nbest_size, rng)
        return out

    def _piece(self, i: int) -> bytes:
        return self.core.token_bytes(i)

    def decode_bytes(self, tokens: Any) -> bytes:
        """``llama_detokenize(remove_special=False, unparse_special=False)``, compiled."""
        return self.core.decode_bytes(tokens)

    def decode_with_offsets(self, tokens: Any) -> tuple:
        """:meth:`decode_bytes` and where each id's bytes start in them, from
        the same compiled pass (``SentencePieceCore.decode_with_offsets``)."""
        return self.core.decode_with_offsets(tokens)

    def encode_bytes_piece(self, piece: bytes) -> list:
        """Segment bytes as already-normalized text (no prefix, no escaping)."""
        return self.core.encode_bytes_piece(piece)

    def _find_spelled(self, data: bytes) -> int:
        return self.core.find_token(data)

    def encode_as_pieces(self, text: str) -> list:
        """The vocabulary text of each id of ``encode_ordinary(text)``."""
        return [self.core.id_to_piece(i) for i in self.encode_ordinary(text)]

    def normalize(self, text: str) -> str:
        """``text`` as the first fragment is normalized before segmentation."""
        return self.core.normalize(text)

    def lattice(self, text: str) -> list:
        """The Unigram lattice of ``text`` (see ``SentencePieceCore.lattice``)."""
        return self.core.lattice(text)

    def resolve_unknowns(self, normalized: bytes, pieces: list) -> list:
        """The ids of a lattice path (see ``SentencePieceCore.resolve_unknowns``)."""
        return self.core.resolve_unknowns(normalized, pieces)

    @property
    def vocabulary(self) -> Vocabulary:
        return self.vocab


# ---------------------------------------------------------------- subword regularization

def _lattice(core: Any, text: str) -> UnigramLattice:
    # the lattice of text after the model's normalizer (sentencepiece's
    # float32 sums; unknown nodes resolved by the model's own rule)
    if core.vocabulary.model != "unigram":
        raise FasttokError(f"{core.vocabulary.name}: n-best segmentations come from a Unigram "
                           "lattice; a SentencePiece BPE model has one segmentation per text "
                           "(sample it with encode(text, sample=True, alpha=...))")
    normalized = core.normalize(text).encode("utf-8")
    return UnigramLattice(normalized, core.lattice(text),
                          lambda path: core.resolve_unknowns(normalized, path),
                          lambda: core.encode_ordinary(text))


def sample_encode(core: Any, text: str, *, alpha: float = 0.1, nbest_size: int = -1,
                  seed: Optional[int] = None) -> list:
    """One segmentation of ``text`` drawn as sentencepiece's subword
    regularization draws it.

    Unigram models: ``nbest_size=-1`` samples from every segmentation of the
    lattice with probability proportional to ``exp(alpha * score)``
    (forward filtering, backward sampling); ``nbest_size > 1`` draws among
    the ``nbest_size`` best ones with the same weights; 0 or 1 gives the best
    one (:func:`fasttok.models.unigram_sampling.sample`). SentencePiece BPE
    models: BPE-dropout, each merge skipped with probability ``alpha``
    (``nbest_size`` is ignored, as sentencepiece ignores it). ``seed`` makes
    the draw reproducible (sentencepiece's own generator is not reproduced,
    so the same seed gives other draws than ``sentencepiece``, with the same
    distribution).

    >>> from fasttok.vocab import Vocabulary
    >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
    ...                tokens=(b"<unk>", b"a", b"b", b"ab"), scores=(0.0, -1.0, -1.0, -1.5),
    ...                token_types=(2, 1, 1, 1))
    >>> sorted({tuple(sample_encode(build_sentencepiece(v), "ab", seed=s)) for s in range(40)})
    [(1, 2), (3,)]
    """
    return core.sample(text, None, alpha, nbest_size, random.Random(seed))


def _sample(core: Any, text: str, alpha: float, nbest_size: int, rng: random.Random) -> list:
    # sample_encode for a SentencePiece model read from a .model file, or
    # for a GGUF t5 (Unigram) one
    if core.vocabulary.model == "sentencepiece_bpe":
        return core.sample_bpe(text, alpha, rng.getrandbits(64))
    return unigram_sampling.sample(_lattice(core, text), alpha, nbest_size, rng)


def nbest_encode(core: Any, text: str, nbest_size: int, *, with_scores: bool = False) -> list:
    """The ``nbest_size`` best segmentations of ``text``, best first, as
    sentencepiece's ``nbest_encode`` lists them (Unigram models). With
    ``with_scores``, ``[(ids, score)]``.

    This is sentencepiece's ``Lattice::NBest``
    (:func:`fasttok.models.unigram_sampling.nbest`): A* from the end of the
    text with the exact Viterbi score as the heuristic, in float32, on a
    ``std::priority_queue`` whose order among equal scores is libstdc++'s
    heap order (the Linux wheels'), including the agenda's shrinking.
    ``nbest_size`` is capped at 1024; below 2 it gives ``[encode(text)]``.

    >>> from fasttok.vocab import Vocabulary
    >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
    ...                tokens=(b"<unk>", b"a", b"b", b"ab"), scores=(0.0, -1.0, -1.0, -1.5),
    ...                token_types=(2, 1, 1, 1))
    >>> nbest_encode(build_sentencepiece(v), "ab", 3)
    [[3], [1, 2]]
    """
    out = unigram_sampling.nbest(_lattice(core, text), nbest_size)
    return out if with_scores else [ids for ids, _ in out]
