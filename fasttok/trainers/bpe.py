"""Train a byte-level BPE vocabulary, exactly as ``rustbpe`` or Hugging Face ``tokenizers`` does.

The texts are read once, streaming: each batch is cut into pre-tokens and
counted (:class:`~fasttok.trainers._bpe_trainer.PieceCounter`, one per
thread, merged at the end), so memory follows the number of distinct
pre-tokens, not the corpus. Then the merge loop runs on those
(:class:`~fasttok.trainers._bpe_trainer.BpeCore`; its notes list every
rule and where the two references differ).

``flavour="rustbpe"`` gives ``rustbpe.Tokenizer().train_from_iterator(texts,
vocab_size - len(special_tokens), pattern=pattern)``'s
``get_mergeable_ranks()``; the special tokens take the ids after the last
rank. ``flavour="hf"`` gives the vocabulary and merges of ``tokenizers``'
``BpeTrainer(vocab_size=..., min_frequency=..., special_tokens=...,
initial_alphabet=ByteLevel.alphabet())`` behind ``Split(pattern,
"isolated")`` and ``ByteLevel(use_regex=False)``: specials first, then the
256 byte-level characters in code point order, then the merges; with
``initial_alphabet`` (byte-level characters; default all 256) and
``limit_alphabet`` the alphabet is cut as tokenizers cuts it
(:mod:`fasttok.trainers.hf_bpe`), and ``max_token_length`` bounds the merges.
A vocabulary without all 256 bytes is read through its ``tokenizer.json``
(tokenizers leaves out a byte it has no token for).
Special tokens in the texts are trained on as ordinary text, as both
references do.

>>> t = train_bpe(["abab abab abac"], vocab_size=258, pattern=r"\\w+| ")
>>> t.merges[0], t.ranks[256:]
((b'a', b'b'), [(b'ab', 256), (b'abab', 257)])
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Optional

from fasttok.errors import FasttokError
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.loaders.hf_tokenizer_json_writer import tokenizer_json
from fasttok.pre_tokenizers.patterns import CL100K, compile_generic, scanner_for
from fasttok.shared._bytemap import bytes_to_unicode, unicode_to_bytes
from fasttok.trainers import check_special_tokens, warn_vocabulary_size
from fasttok.trainers._bpe_trainer import BpeCore, PieceCounter
from fasttok.trainers.hf_bpe import check_options, compute_alphabet, run_merges
from fasttok.vocab import Vocabulary, token_layout

__all__ = ["TrainedBPE", "PretokenBound", "count_pretokens", "train_bpe", "FLAVOURS"]

FLAVOURS = ("rustbpe", "hf")

# a batch handed to a counting thread: enough text that releasing the GIL
# once per batch costs nothing, little enough that the threads stay busy
_BATCH_CHARS = 1 << 18
_BATCH_TEXTS = 4096


@dataclasses.dataclass(frozen=True)
class TrainedBPE:
    """What training made.

    ``ranks``: ``(token bytes, rank)`` for every token in rank order, as the
    reference lists them (rustbpe may list the same bytes twice; the
    vocabulary keeps the later rank). ``merges``: the merged pairs in order,
    as ``tokenizer.json`` lists them. ``vocabulary``: the record an
    :class:`~fasttok.Encoding` is built from. ``corpus_bytes`` and
    ``unique_pretokens`` describe the input, ``pattern`` cut it;
    ``dropped_pretokens``: the rare pre-tokens a ``max_pretokens`` bound
    dropped (0: the result is exact).

    >>> TrainedBPE([], [], None, 0, 0).corpus_bytes
    0
    """

    ranks: list
    merges: list
    vocabulary: Optional[Vocabulary]
    corpus_bytes: int
    unique_pretokens: int
    pattern: Optional[str] = None
    dropped_pretokens: int = 0


def _batches(texts: Iterable[str]) -> Iterable[list]:
    batch: list = []
    size = 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= _BATCH_CHARS or len(batch) >= _BATCH_TEXTS:
            yield batch
            batch = []
            size = 0
    if batch:
        yield batch


class PretokenBound:
    """A cap on the distinct pre-tokens a count holds, so that memory stays
    bounded whatever the corpus: when a counter passes ``limit``, the
    pre-tokens counted fewer than ``below`` times are dropped, ``below``
    doubling until at most half the limit remain (each thread's counter gets
    its share). Training is exact while nothing is dropped; ``dropped`` says
    how many were.

    >>> bound = PretokenBound(4)
    >>> counter = count_pretokens(["a a a b c d e f"], r"\\w+| ", num_threads=1, bound=bound)
    >>> sorted(counter.items()), bound.dropped
    ([(b' ', 7), (b'a', 3)], 5)
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise FasttokError(f"max_pretokens must be 1 or more, not {limit}")
        self.limit = limit
        self.below = 2
        self.dropped = 0
        self._lock = threading.Lock()

    def keep_within(self, counter: PieceCounter, share: int = 1) -> None:
        """Prune ``counter`` if it holds more than ``limit / share`` pre-tokens."""
        limit = max(1, self.limit // share)
        if len(counter) <= limit:
            return
        with self._lock:
            while len(counter) > limit // 2:
                self.dropped += counter.prune(self.below)
                if len(counter) > limit // 2:
                    self.below *= 2


def count_pretokens(texts: Iterable[str], pattern: str = CL100K,
                    num_threads: Optional[int] = None,
                    bound: Optional[PretokenBound] = None) -> PieceCounter:
    """Count the distinct pre-tokens of ``texts`` under ``pattern``.

    A pattern with a compiled scanner is counted on ``num_threads`` threads
    (default: the CPUs); any other runs through the linear-time regex
    engine in this thread. ``bound`` caps the distinct pre-tokens held (see
    :class:`PretokenBound`).

    >>> sorted(count_pretokens(["a b", "a"], num_threads=2).items())
    [(b' b', 1), (b'a', 2)]
    """
    scanner = scanner_for(pattern)
    if scanner is None:
        regex = compile_generic(pattern)
        counter = PieceCounter()
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be str, not {type(text).__name__}")
            counter.add_pieces(regex.findall(text), len(text.encode("utf-8")))
            if bound is not None:
                bound.keep_within(counter)
        return counter
    threads = max(1, num_threads or os.cpu_count() or 1)
    if threads == 1:
        counter = PieceCounter(scanner)
        for batch in _batches(texts):
            counter.add_texts(batch)
            if bound is not None:
                bound.keep_within(counter)
        return counter
    work: queue.Queue = queue.Queue(maxsize=2 * threads)
    counters = [PieceCounter(scanner) for _ in range(threads)]
    failures: list = []

    def worker(counter: PieceCounter) -> None:
        while (batch := work.get()) is not None:
            if not failures:
                try:
                    counter.add_texts(batch)
                    if bound is not None:
                        bound.keep_within(counter, threads)
                except BaseException as exc:  # handed to the reading thread
                    failures.append(exc)

    pool = [threading.Thread(target=worker, args=(c,), daemon=True) for c in counters]
    for t in pool:
        t.start()
    try:
        for batch in _batches(texts):
            if failures:
                break
            work.put(batch)
    finally:
        for _ in pool:
            work.put(None)
        for t in pool:
            t.join()
    if failures:
        raise failures[0]
    for other in counters[1:]:
        counters[0].merge(other)
    if bound is not None:
        bound.keep_within(counters[0])
    return counters[0]


def _byte_alphabet(counter: PieceCounter, initial_alphabet: Optional[Iterable[str]],
                   limit_alphabet: Optional[int]) -> list:
    # the alphabet's bytes in id order: tokenizers' cut over the byte-level characters
    stand_in = bytes_to_unicode()
    to_byte = unicode_to_bytes()
    if initial_alphabet is None:
        initial_alphabet = list(stand_in.values())
    initial = list(initial_alphabet)
    strange = [c for c in initial if isinstance(c, str) and c and c[0] not in to_byte]
    if strange:
        raise FasttokError(f"initial_alphabet: {strange[0]!r} is no byte-level character "
                           "(byte-level training sees only those; see ByteLevel.alphabet())")
    counts = {ord(stand_in[b]): n for b, n in counter.unit_counts(False).items()}
    return [to_byte[chr(cp)] for cp in compute_alphabet(counts, initial, limit_alphabet)]


def train_bpe(texts: Iterable[str], *, vocab_size: int, pattern: Optional[str] = None,
              special_tokens: Iterable[str] = (), min_frequency: int = 0,
              flavour: str = "rustbpe", num_threads: Optional[int] = None,
              name: str = "trained",
              progress: Optional[Callable[[int, int], None]] = None,
              limit_alphabet: Optional[int] = None,
              initial_alphabet: Optional[Iterable[str]] = None,
              max_token_length: Optional[int] = None,
              max_pretokens: Optional[int] = None) -> TrainedBPE:
    """Train byte-level BPE on ``texts`` (any iterable of str, read once).

    ``max_pretokens`` bounds the memory of counting: at most that many
    distinct pre-tokens are held, the rarest dropped when more come
    (:class:`PretokenBound`; ``TrainedBPE.dropped_pretokens`` says how many
    were: while none are, the result is exact).

    ``vocab_size`` counts the 256 bytes, the merges and the special tokens.
    ``progress(done, total)``, if given, is called as merges are made.
    ``limit_alphabet``, ``initial_alphabet`` and ``max_token_length`` are
    tokenizers' (``flavour="hf"``).

    >>> t = train_bpe(["aaaa aaaaa"], vocab_size=258)
    >>> [token for token, _ in t.ranks[256:]]
    [b'aa', b'aaaa']
    >>> train_bpe([], vocab_size=257, special_tokens=["<|end|>"]).vocabulary.special_tokens
    mappingproxy({'<|end|>': 256})
    >>> len(train_bpe(["ab"], vocab_size=9, flavour="hf", initial_alphabet=[]).ranks)
    3
    """
    if flavour not in FLAVOURS:
        raise FasttokError(f"flavour must be one of {', '.join(map(repr, FLAVOURS))}, "
                           f"not {flavour!r}")
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts is an iterable of str (a list, a file's lines), not one "
                        f"{type(texts).__name__}: wrap a single text in a list")
    hf_only = (limit_alphabet is not None or initial_alphabet is not None
               or max_token_length is not None)
    if flavour == "rustbpe" and hf_only:
        raise FasttokError("limit_alphabet, initial_alphabet and max_token_length are "
                           "tokenizers' options: pass flavour='hf'")
    check_options(vocab_size, min_frequency, limit_alphabet, max_token_length)
    pattern = CL100K if pattern is None else pattern
    specials = check_special_tokens(special_tokens)
    if flavour == "rustbpe" and vocab_size < 256 + len(specials):
        raise FasttokError(f"vocab_size {vocab_size} is too small: the 256 bytes and "
                           f"{len(specials)} special tokens need {256 + len(specials)}")
    bound = PretokenBound(max_pretokens) if max_pretokens is not None else None
    counter = count_pretokens(texts, pattern, num_threads, bound)
    if flavour == "hf":
        core = BpeCore(counter, flavour, min_frequency,
                       units=_byte_alphabet(counter, initial_alphabet, limit_alphabet),
                       max_token_length=max_token_length or 0)
    else:
        core = BpeCore(counter, flavour, min_frequency)
    corpus_bytes, unique = counter.n_bytes, len(counter)
    del counter  # the words are copied into the core; the merge loop is the peak
    run_merges(core, vocab_size - len(specials), progress)
    tokens = core.tokens()
    merge_ids = core.merge_list()
    merges = [(tokens[a], tokens[b]) for a, b, _ in merge_ids]
    warn_vocabulary_size(len(tokens) + len(specials), vocab_size, len(merges), min_frequency)
    if flavour == "rustbpe":
        ranks = list(zip(tokens, range(len(tokens))))
        special_ids = {s: len(tokens) + i for i, s in enumerate(specials)}
    else:
        # ids as tokenizers gives them: the specials first; a merge it saw
        # twice is listed once, at its later place, as its model keeps it
        ranks = [(token, len(specials) + i) for i, token in enumerate(tokens)]
        special_ids = {s: i for i, s in enumerate(specials)}
        last = {pair: i for i, pair in enumerate(merges)}
        merges = [pair for i, pair in enumerate(merges) if last[pair] == i]
    by_bytes = dict(ranks)
    if all(bytes([b]) in by_bytes for b in range(256)):
        token_tuple, ids = token_layout([(rank, token) for token, rank in by_bytes.items()])
        vocab = Vocabulary(name=name, model="byte_bpe", tokens=token_tuple, ids=ids,
                           merges=tuple(merges), special_tokens=special_ids, pattern=pattern,
                           metadata={"trained_by": flavour}).validate()
    else:
        vocab = tokenizer_json_record(tokenizer_json(by_bytes, merges, pattern, special_ids),
                                      name, name=name)
    return TrainedBPE(ranks=ranks, merges=merges, vocabulary=vocab,
                      corpus_bytes=corpus_bytes, unique_pretokens=unique, pattern=pattern,
                      dropped_pretokens=bound.dropped if bound is not None else 0)
