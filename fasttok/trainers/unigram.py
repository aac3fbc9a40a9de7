"""Train a SentencePiece Unigram model, as ``sentencepiece``'s trainer does
(``model_type="unigram"``), and build the ``.model`` file it writes.

The steps are sentencepiece's (``trainer_interface.cc`` and
``unigram_model_trainer.cc``), over the compiled core of
:mod:`fasttok.trainers._unigram_trainer`:

1. Each text is cut into lines (sentences). A line longer than
   ``max_sentence_length`` bytes, or holding ``⁇``, is skipped; the strings
   of the meta pieces (``<unk>``, ``<s>``, ``</s>``, control and
   user-defined symbols) become spaces, so they are not learned as text;
   the line is normalized (the SentencePiece normalizer:
   ``precompiled_charsmap``, extra whitespace removed, ``▁`` for spaces and
   as a dummy prefix) and its words counted (a word begins at each ``▁``).
   Memory follows the distinct words, not the corpus.
2. The characters that make up ``character_coverage`` of the text are
   required; the rest become ``⁇``.
3. Seeds: every required character, then the substrings with the highest
   ``frequency * length`` (``seed_size`` in all), scored by the log of that
   share.
4. EM: ``num_sub_iterations`` rounds of forward-backward expected counts
   and the digamma update, then a pruning round that keeps the
   ``shrinking_factor`` share of the pieces whose loss of likelihood would
   be largest, until ``vocab_size * 1.1`` pieces remain.
5. The required characters and then the best-scored pieces fill the
   vocabulary after the meta pieces (ids 0, 1, 2 are ``<unk>``, ``<s>``,
   ``</s>``; then control and user-defined symbols; then the 256 ``<0xXX>``
   byte pieces with ``byte_fallback``).

Where this differs from sentencepiece (the result is equally good, not the
same; the tests hold the token count and likelihood of a corpus within 1%
of sentencepiece's): the seeds come from the distinct words rather than the
whole corpus (see the compiled module's notes), expected counts are summed
in double precision rather than float, and a vocabulary that the corpus
cannot fill is written smaller instead of raising (sentencepiece's
``hard_vocab_limit``). The default normalization is ``identity``; pass the
``precompiled_charsmap`` of a rule (``nmt_nfkc``'s is in any model
sentencepiece trained with its defaults) to train with another.

>>> t = train_unigram(["hello world", "hello there"] * 20, vocab_size=30)
>>> t.proto.pieces[0].piece, t.vocabulary.unk_id, len(t.proto.pieces) <= 30
('<unk>', 0, True)
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
from array import array
from collections.abc import Callable, Iterable
from typing import Optional, Union

from fasttok.errors import FasttokError
from fasttok.loaders.sentencepiece_model import (ModelProto, NormalizerSpec, SentencePiece,
                                                 TrainerSpec, load_sentencepiece)
from fasttok.loaders.sentencepiece_model_writer import dump_model_proto, write_model_proto
from fasttok.models._unigram import UnigramModel
from fasttok.normalizers._spm_normalizer import Normalizer
from fasttok.shared.hf_unicode import script_of
from fasttok.shared.literal_match import longest_first
from fasttok.trainers._bpe_trainer import PieceCounter
from fasttok.trainers._unigram_trainer import (WordTable, add_into, count_words, m_step,
                                               prune)
from fasttok.vocab import TokenType, Vocabulary

__all__ = ["TrainedUnigram", "train_unigram"]

_UNK_CHAR = "\u2047"
_BATCH_LINES = 4096
# sentencepiece's ids for the unknown, begin and end pieces
_FIXED_META = (("<unk>", TokenType.UNKNOWN), ("<s>", TokenType.CONTROL),
               ("</s>", TokenType.CONTROL))
_ANY_SCRIPT = 0xFFFF
_INHERITED = 0xFFFE
_AS_HAN = {"Hiragana", "Katakana"}


@dataclasses.dataclass(frozen=True)
class TrainedUnigram:
    """What training made: the ``.model`` file's contents (``proto``), the
    :class:`~fasttok.vocab.Vocabulary` read back from its bytes, and counts
    that describe the input (``sentences`` is the lines trained on).

    >>> t = train_unigram(["ab ab"], vocab_size=8)
    >>> t.sentences, t.unique_words, t.model_bytes()[:2]
    (1, 1, b'\\n\\x0e')
    """

    proto: ModelProto
    vocabulary: Vocabulary
    corpus_bytes: int
    sentences: int
    unique_words: int

    def model_bytes(self) -> bytes:
        """The ``.model`` file, as ``sentencepiece.SentencePieceProcessor(model_proto=...)``
        reads it.

        >>> len(train_unigram(["ab"], vocab_size=6).model_bytes()) > 0
        True
        """
        return write_model_proto(self.proto)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the ``.model`` file to ``path``.

        >>> train_unigram(["ab"], vocab_size=6).save("/dev/null")
        """
        dump_model_proto(self.proto, path)


def _sentences(texts: Iterable[str], max_bytes: int, meta) -> Iterable[str]:
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"texts must be str, not {type(text).__name__}")
        for line in text.split("\n"):
            if len(line) * 4 > max_bytes and len(line.encode("utf-8")) > max_bytes:
                continue
            if _UNK_CHAR in line:
                continue
            yield line if meta is None else meta.sub(" ", line)


def _count(texts: Iterable[str], normalizer: Normalizer, max_bytes: int, meta) -> tuple:
    counter = PieceCounter()
    finals = PieceCounter()
    n_sentences = 0
    corpus_bytes = 0
    batch: list = []
    for line in _sentences(texts, max_bytes, meta):
        raw = line.encode("utf-8", "surrogatepass")
        corpus_bytes += len(raw)
        normalized = normalizer.normalize_bytes(raw)
        if not normalized:
            continue
        n_sentences += 1
        batch.append(normalized)
        if len(batch) >= _BATCH_LINES:
            count_words(counter, finals, batch)
            batch = []
    count_words(counter, finals, batch)
    at_end = dict(finals.items())
    return sorted((w, n, at_end.get(w, 0)) for w, n in counter.items()), n_sentences, corpus_bytes


def _required_chars(counts: list, coverage: float) -> list:
    """The characters that cover ``coverage`` of the text, most frequent
    first: ``[(code point, count)]``."""
    counts = [(cp, n) for cp, n in counts if cp not in (0, 0x20) and not 0xD800 <= cp <= 0xDFFF]
    total = sum(n for _, n in counts)
    required = []
    covered = 0
    for cp, n in sorted(counts, key=lambda item: (-item[1], item[0])):
        if total and covered / total >= coverage:
            break
        covered += n
        required.append((cp, n))
    return required


def _script_table(chars: Iterable[int], split_by_number: bool) -> array:
    # script numbers for the characters present; the rest are never looked up
    table = array("H", bytes(2 * 0x110000))
    numbers: dict = {"Common": 0}
    for cp in chars:
        c = chr(cp)
        script = script_of(c)
        if script in _AS_HAN or cp == 0x30FC:
            script = "Han"
        if script == "Unknown":
            script = "Common"
        if script == "Inherited":
            table[cp] = _INHERITED
        elif not split_by_number and c.isdigit():
            table[cp] = _ANY_SCRIPT
        else:
            table[cp] = numbers.setdefault(script, len(numbers))
    return table


def _model(pieces: list, scores: array) -> UnigramModel:
    # the pieces, and the unknown piece after them (in no trie)
    n = len(pieces)
    return UnigramModel(pieces + [None], scores + array("d", [0.0]),
                        [TokenType.NORMAL] * n + [TokenType.UNKNOWN], n)


def _ranges(table: WordTable, parts: int) -> list:
    step = -(-table.n_words // parts)
    return [(lo, min(lo + step, table.n_words)) for lo in range(0, table.n_words, step)] or [(0, 0)]


def _in_threads(run: Callable, table: WordTable, size: int, threads: int) -> tuple:
    """``run(lo, hi, out)`` over the words in ``threads`` ranges, each into its
    own array; the arrays summed (integers: any order gives the same sum)."""
    ranges = _ranges(table, threads)
    outs = [array("q", bytes(8 * size)) for _ in ranges]
    results: list = [None] * len(ranges)
    failures: list = []

    def work(i: int) -> None:
        try:
            results[i] = run(ranges[i][0], ranges[i][1], outs[i])
        except BaseException as exc:  # handed to the calling thread
            failures.append(exc)

    if len(ranges) == 1:
        work(0)
    else:
        pool = [threading.Thread(target=work, args=(i,)) for i in range(len(ranges))]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    if failures:
        raise failures[0]
    for other in outs[1:]:
        add_into(outs[0], other)
    return outs[0], results


def train_unigram(texts: Iterable[str], *, vocab_size: int,
                  user_defined_symbols: Iterable[str] = (), control_symbols: Iterable[str] = (),
                  character_coverage: float = 0.9995, byte_fallback: bool = False,
                  num_threads: Optional[int] = None, seed_size: int = 1_000_000,
                  num_sub_iterations: int = 2, shrinking_factor: float = 0.75,
                  max_piece_length: int = 16, max_sentence_length: int = 4192,
                  split_by_unicode_script: bool = True, split_by_number: bool = True,
                  split_digits: bool = False, normalization: str = "identity",
                  precompiled_charsmap: Optional[bytes] = None, add_dummy_prefix: bool = True,
                  remove_extra_whitespaces: bool = True, name: str = "trained",
                  progress: Optional[Callable[[int, int], None]] = None) -> TrainedUnigram:
    """Train a Unigram model on ``texts`` (any iterable of str, read once;
    each line is a sentence), with sentencepiece's options of the same names.

    ``vocab_size`` counts every piece, the meta pieces included.
    ``progress(pieces, target)``, if given, is called after each pruning round.

    >>> t = train_unigram(["low lower lowest"] * 10, vocab_size=20, user_defined_symbols=["<sep>"])
    >>> [p.piece for p in t.proto.pieces[:4]]
    ['<unk>', '<s>', '</s>', '<sep>']
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts is an iterable of str (a list, a file's lines), not one "
                        f"{type(texts).__name__}: wrap a single text in a list")
    if not 0.0 < character_coverage <= 1.0:
        raise FasttokError(f"character_coverage must be in (0, 1], not {character_coverage}")
    if not 0.0 < shrinking_factor < 1.0:
        raise FasttokError(f"shrinking_factor must be in (0, 1), not {shrinking_factor}")
    if max_piece_length < 1 or num_sub_iterations < 1 or seed_size < 1:
        raise FasttokError("max_piece_length, num_sub_iterations and seed_size must be 1 or more")
    meta = list(_FIXED_META)
    meta += [(s, TokenType.CONTROL) for s in dict.fromkeys(control_symbols)]
    meta += [(s, TokenType.USER_DEFINED) for s in dict.fromkeys(user_defined_symbols)]
    if byte_fallback:
        meta += [(f"<0x{b:02X}>", TokenType.BYTE) for b in range(256)]
    seen: dict = {}
    for piece, kind in meta:
        if not isinstance(piece, str) or not piece:
            raise FasttokError(f"symbol {piece!r} must be a non-empty str")
        if piece in seen:
            raise FasttokError(f"symbol {piece!r} is given twice (or is one of <unk>, <s>, </s>)")
        seen[piece] = kind
    normalizer = Normalizer(precompiled_charsmap or None, add_dummy_prefix=add_dummy_prefix,
                            remove_extra_whitespaces=remove_extra_whitespaces,
                            escape_whitespaces=True)
    items, n_sentences, corpus_bytes = _count(texts, normalizer, max_sentence_length,
                                              longest_first(seen))
    table = WordTable(items)
    required = _required_chars(table.char_counts(), character_coverage)
    if not required:
        raise FasttokError("there is no text to train on (every line was empty, too long or "
                           f"held {_UNK_CHAR!r})")
    if len(required) + len(meta) > vocab_size:
        raise FasttokError(f"vocab_size {vocab_size} is too small: the {len(required)} required "
                           f"characters and {len(meta)} meta pieces need "
                           f"{len(required) + len(meta)}; raise vocab_size or lower "
                           "character_coverage")
    kept = bytearray(0x110000)
    for cp, _ in required:
        kept[cp] = 1
    rare = table.rare_words(kept)
    if rare:
        merged = {word: (count, final) for word, count, final in items}
        for i, word in rare:
            count, final = merged.pop(items[i][0])
            before = merged.get(word, (0, 0))
            merged[word] = (before[0] + count, before[1] + final)
        items = sorted((word, count, final) for word, (count, final) in merged.items())
        table = WordTable(items)
    del items
    threads = max(1, num_threads or os.cpu_count() or 1)

    script = _script_table((cp for cp, _ in required), split_by_number)
    pieces, counts = table.seed_pieces(script, max_piece_length,
                                       max(0, seed_size - len(required)),
                                       split_by_unicode_script, split_digits)
    del script
    pieces[:0] = [chr(cp).encode("utf-8") for cp, _ in required]
    counts[:0] = array("q", [n for _, n in required])
    log_total = math.log(sum(counts))
    scores = array("d", [math.log(n) - log_total for n in counts])
    del counts

    desired = int(vocab_size * 1.1)
    while True:
        for _ in range(num_sub_iterations):
            model = _model(pieces, scores)
            expected, _ = _in_threads(lambda lo, hi, out: table.expected_counts(model, lo, hi, out),
                                      table, len(pieces) + 1, threads)
            keep, scores = m_step(expected, len(pieces))
            pieces = [pieces[i] for i in keep]
        if len(pieces) <= desired:
            break
        model = _model(pieces, scores)
        counts, _ = _in_threads(lambda lo, hi, out: table.viterbi_counts(model, lo, hi, out),
                                table, len(pieces) + 1, threads)
        keep = prune(model, pieces, counts, max(desired, int(shrinking_factor * len(pieces))))
        pieces = [pieces[i] for i in keep]
        scores = array("d", [scores[i] for i in keep])
        if progress is not None:
            progress(len(pieces), desired)

    final = _finalize(pieces, scores, required, vocab_size - len(meta))
    proto = _proto(meta, final, vocab_size, byte_fallback, max_piece_length,
                   split_by_unicode_script, split_by_number, split_digits,
                   NormalizerSpec(name=normalization, precompiled_charsmap=precompiled_charsmap or b"",
                                  add_dummy_prefix=add_dummy_prefix,
                                  remove_extra_whitespaces=remove_extra_whitespaces,
                                  escape_whitespaces=True))
    vocabulary = load_sentencepiece(write_model_proto(proto), name=name)
    return TrainedUnigram(proto=proto, vocabulary=vocabulary, corpus_bytes=corpus_bytes,
                          sentences=n_sentences, unique_words=table.n_words)


def _finalize(pieces: list, scores: list, required: list, size: int) -> list:
    """The final ``[(piece, score)]``: every required character (one the EM
    dropped gets the lowest score plus 0.0001 for each such character before
    it, as sentencepiece does), then
    the best-scored pieces, ``size`` in all, best first."""
    current = dict(zip(pieces, scores))
    lowest = min(scores) if scores else 0.0
    final: dict = {}
    penalty = 0.0
    for cp, _ in required:
        piece = chr(cp).encode("utf-8")
        if piece in current:
            final[piece] = current[piece]
        else:
            final[piece] = lowest + penalty
            penalty += 0.0001
    for piece, score in sorted(current.items(), key=lambda item: (-item[1], item[0])):
        if len(final) >= size:
            break
        final.setdefault(piece, score)
    return sorted(final.items(), key=lambda item: (-item[1], item[0]))


def _proto(meta: list, final: list, vocab_size: int, byte_fallback: bool, max_piece_length: int,
           split_by_unicode_script: bool, split_by_number: bool, split_digits: bool,
           normalizer: NormalizerSpec) -> ModelProto:
    pieces = [SentencePiece(piece, 0.0, kind) for piece, kind in meta]
    pieces += [SentencePiece(piece.decode("utf-8"), score) for piece, score in final]
    trainer = TrainerSpec(
        model_type=1, vocab_size=len(pieces), byte_fallback=byte_fallback,
        split_digits=split_digits, split_by_number=split_by_number,
        split_by_unicode_script=split_by_unicode_script, max_sentencepiece_length=max_piece_length,
        control_symbols=tuple(p for p, kind in meta[3:] if kind == TokenType.CONTROL),
        user_defined_symbols=tuple(p for p, kind in meta if kind == TokenType.USER_DEFINED))
    return ModelProto(pieces=tuple(pieces), trainer_spec=trainer, normalizer_spec=normalizer)
