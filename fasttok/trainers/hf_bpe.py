"""tokenizers' ``BpeTrainer`` over any alphabet: the words' characters, an
initial alphabet, a limit, affixes, a longest token; the merge rule is the
compiled one of :class:`~fasttok.trainers._bpe_trainer.BpeCore`.

tokenizers 0.23.3 (``models/bpe/trainer.rs``) builds the vocabulary in this
order, and so does :func:`train_words`:

1. the special tokens, each once;
2. the alphabet (:func:`compute_alphabet`): every character of the words,
   counted by the words' counts, and the ``initial_alphabet`` (first
   character of each string) counted as infinitely frequent; with
   ``limit_alphabet``, the rarest are dropped until that many are left;
   the rest get ids in code point order;
3. the spellings with ``continuing_subword_prefix`` (every character of a
   word but its first) and ``end_of_word_suffix`` (its last), in the order
   the words are read -- tokenizers reads them in hash-map order, which
   changes from run to run; fasttok reads them in byte order (a word's
   characters left to right), and ``spellings=`` replays another run's;
4. the merges: the pair of highest count, ties to the smallest ids; the
   new token joins the left part with the right one stripped of the prefix;
   one already in the vocabulary keeps its id and the merge does not count
   towards ``vocab_size``; a pair longer than ``max_token_length - 1``
   characters is not counted when a merge makes it (pairs of the words
   as read are all counted, as tokenizers counts them).

Characters the alphabet lost are left out of the words (the character after
one still takes the prefix). Where counts tie at the ``limit_alphabet`` cut
tokenizers drops characters in an order its sort leaves open; fasttok drops
the lower code points first.

>>> from fasttok.trainers._bpe_trainer import PieceCounter
>>> c = PieceCounter(); c.add_counts({"abab".encode(): 3, "abac".encode(): 1})
>>> t = train_words(c, vocab_size=7, continuing_subword_prefix="##")
>>> t.tokens, t.merges
(['a', 'b', 'c', '##b', '##a', '##c', 'ab'], [('a', '##b')])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Optional

from fasttok.errors import FasttokError
from fasttok.trainers import check_special_tokens, warn_vocabulary_size
from fasttok.trainers._bpe_trainer import BpeCore, PieceCounter

__all__ = ["TrainedWords", "compute_alphabet", "train_words", "check_options"]


@dataclasses.dataclass(frozen=True)
class TrainedWords:
    """The vocabulary as tokenizers' trainer leaves it: ``tokens`` in id
    order (the special tokens first), ``merges`` as pairs of tokens in
    priority order (each pair once, at its last place, as tokenizers' model
    keeps it), and the number of ``special`` tokens at the start.

    >>> TrainedWords(["[UNK]", "a"], [], 1).vocab
    {'[UNK]': 0, 'a': 1}
    """

    tokens: list
    merges: list
    special: int

    @property
    def vocab(self) -> dict:
        """``{token: id}``."""
        return {token: i for i, token in enumerate(self.tokens)}


def check_options(vocab_size: int, min_frequency: int, limit_alphabet: Optional[int],
                  max_token_length: Optional[int]) -> None:
    """Raise :class:`~fasttok.FasttokError` for an option no trainer takes.

    >>> check_options(100, 0, None, None)
    """
    for name, value, low in (("vocab_size", vocab_size, 0), ("min_frequency", min_frequency, 0),
                             ("limit_alphabet", limit_alphabet, 0),
                             ("max_token_length", max_token_length, 1)):
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if value < low:
            raise FasttokError(f"{name} must be {low} or more, not {value}")


def _first_chars(initial_alphabet: Iterable[str]) -> list:
    if isinstance(initial_alphabet, str):
        raise TypeError("initial_alphabet is a list of characters, not one str: "
                        "pass list(text)")
    chars = []
    for item in initial_alphabet:
        if not isinstance(item, str):
            raise TypeError(f"initial_alphabet holds str, not {type(item).__name__}")
        if item:  # tokenizers keeps the first character of each string
            chars.append(item[0])
    return chars


def compute_alphabet(counts: Mapping, initial_alphabet: Iterable[str] = (),
                     limit_alphabet: Optional[int] = None) -> list:
    """The alphabet's code points in id order from ``{code point: count}``.

    >>> compute_alphabet({ord("b"): 5, ord("a"): 1, ord("c"): 1}, ["z"], 3)
    [98, 99, 122]
    """
    counts = dict(counts)
    for c in _first_chars(initial_alphabet):
        counts[ord(c)] = float("inf")
    if limit_alphabet is not None and len(counts) > limit_alphabet:
        ranked = sorted(counts, key=lambda u: (counts[u], u))
        for u in ranked[:len(counts) - limit_alphabet]:
            del counts[u]
    return sorted(counts)


def train_words(counter: PieceCounter, *, vocab_size: int, special_tokens: Iterable[str] = (),
                min_frequency: int = 0, limit_alphabet: Optional[int] = None,
                initial_alphabet: Iterable[str] = (),
                continuing_subword_prefix: Optional[str] = None,
                end_of_word_suffix: Optional[str] = None,
                max_token_length: Optional[int] = None, spellings: Iterable[str] = (),
                progress=None) -> TrainedWords:
    """tokenizers' ``BpeTrainer`` on the counted words (UTF-8 pre-tokens).

    ``spellings``: affixed tokens to number first, in this order (another
    run's); ``progress(done, total)`` is called as merges are made.

    >>> c = PieceCounter(); c.add_counts({b"ab": 2})
    >>> train_words(c, vocab_size=10, special_tokens=["<s>"], end_of_word_suffix="</w>").tokens
    ['<s>', 'a', 'b', 'b</w>', 'ab</w>']
    """
    check_options(vocab_size, min_frequency, limit_alphabet, max_token_length)
    specials = check_special_tokens(special_tokens)
    alphabet = compute_alphabet(counter.unit_counts(True), initial_alphabet, limit_alphabet)
    # a special token of one character stands for that character in the words
    alphabet += [ord(s) for s in specials if len(s) == 1 and ord(s) not in set(alphabet)]
    core = BpeCore(counter, "hf", min_frequency, initial=[s.encode() for s in specials],
                   units=alphabet, chars=True,
                   prefix=(continuing_subword_prefix or "").encode(),
                   suffix=(end_of_word_suffix or "").encode(),
                   max_token_length=max_token_length or 0,
                   spellings=[s.encode() for s in spellings])
    run_merges(core, vocab_size, progress)
    tokens = [t.decode("utf-8") for t in core.tokens()]
    merges = [(tokens[a], tokens[b]) for a, b, _ in core.merge_list()]
    warn_vocabulary_size(len(tokens), vocab_size, len(merges), min_frequency)
    last = {pair: i for i, pair in enumerate(merges)}
    merges = [pair for i, pair in enumerate(merges) if last[pair] == i]
    return TrainedWords(tokens, merges, len(specials))


def run_merges(core: BpeCore, max_tokens: int, progress=None) -> None:
    """Merge until ``core`` holds ``max_tokens`` tokens or nothing is left,
    calling ``progress(done, total)`` about a hundred times on the way.

    >>> c = PieceCounter(); c.add_counts({b"abab": 1}); core = BpeCore(c, "hf", 0)
    >>> run_merges(core, 300); core.n_tokens
    258
    """
    # a merge that reuses a token's id adds none, so the count of tokens, not
    # of merges, says when to stop
    start = core.n_tokens
    total = max(0, max_tokens - start)
    step = max(1, total // 100)
    while core.n_tokens < max_tokens and core.run(max_tokens, step):
        if progress is not None:
            progress(min(core.n_tokens - start, total), total)
