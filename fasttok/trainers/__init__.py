"""Trainers: vocabularies learned from text, exactly as the reference trainers learn them.

* ``bpe`` -- byte-level BPE as ``rustbpe`` (``flavour="rustbpe"``) or Hugging
  Face ``tokenizers``' ``BpeTrainer`` (``flavour="hf"``) trains it, over the
  compiled pre-token counter and merge loop of ``_bpe_trainer``;
* ``hf_bpe`` -- ``BpeTrainer`` on any alphabet (characters, ``limit_alphabet``,
  ``initial_alphabet``, affixes, ``max_token_length``) over the same loop;
* ``hf_words`` -- the words tokenizers trains on: a ``tokenizer.json``
  normalizer and pre-tokenizer run over the texts;
* ``wordpiece`` -- ``WordPieceTrainer``: ``hf_bpe`` with ``##`` behind BERT's stages.
* ``unigram`` -- SentencePiece Unigram as ``sentencepiece``'s trainer trains
  it (equally good, not identical), written as a ``.model`` file, over the
  word table, seeds and EM steps of ``_unigram_trainer``.

>>> from fasttok.trainers.bpe import train_bpe
>>> len(train_bpe(["hello hello"], vocab_size=260).ranks)
260
"""

from __future__ import annotations

import operator
import os
import sys
import warnings
from collections.abc import Iterable
from typing import Optional

from fasttok.errors import FasttokError
from fasttok.vocab import MAX_ID

__all__ = ["check_sizes", "check_special_tokens", "warn_vocabulary_size"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def check_sizes(vocab_size: int, num_threads: Optional[int], *,
                names: tuple = ("vocab_size", "num_threads")) -> None:
    """Refuse what every trainer would take and then fail on deep inside (a C
    integer overflow past 32-bit ids) or quietly change (threads below one).

    ``names`` are the caller's spellings of the two (the CLI's options).

    >>> check_sizes(2**40, None)
    Traceback (most recent call last):
    fasttok.errors.FasttokError: vocab_size 1099511627776 is more than 32-bit ids can number: give at most 4294967295
    >>> check_sizes(300, 0, names=("--vocab-size", "--threads"))
    Traceback (most recent call last):
    fasttok.errors.FasttokError: --threads must be 1 or more, not 0 (leave it out to use every CPU)
    """
    if operator.index(vocab_size) > MAX_ID + 1:
        raise FasttokError(f"{names[0]} {vocab_size} is more than 32-bit ids can number: "
                           f"give at most {MAX_ID + 1}")
    if num_threads is not None and operator.index(num_threads) < 1:
        raise FasttokError(f"{names[1]} must be 1 or more, not {num_threads} "
                           "(leave it out to use every CPU)")


def check_special_tokens(special_tokens: Iterable[str]) -> list:
    """The special tokens, each once in the order given; an empty one, which
    no text spells, is refused.

    >>> check_special_tokens(["<s>", "</s>", "<s>"])
    ['<s>', '</s>']
    >>> check_special_tokens(["<s>", ""])
    Traceback (most recent call last):
    fasttok.errors.FasttokError: special token 2 of 2 is empty: a special token is the text that stands for its id
    """
    specials = list(special_tokens)
    for number, token in enumerate(specials, 1):
        if token == "":
            raise FasttokError(f"special token {number} of {len(specials)} is empty: a special "
                               "token is the text that stands for its id")
    return list(dict.fromkeys(specials))


def warn_vocabulary_size(size: int, vocab_size: int, merges: int, min_frequency: int) -> None:
    """Warn (``UserWarning``) when training made ``size`` tokens, not the
    ``vocab_size`` asked: fewer when the texts ran out of pairs to merge,
    more when the alphabet alone (every character seen, which tokenizers
    keeps whole) is past it. tokenizers' trainers say nothing; a vocabulary
    of single characters is seldom what was meant.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_vocabulary_size(260, 1000, 4, 0)
    >>> print(caught[0].message)
    learned 260 tokens of the 1000 asked (vocab_size=1000): 4 merges, then the texts had no pair left to merge
    """
    if size == vocab_size or (size > vocab_size and merges):
        return
    tokens = f"{size} token{'' if size == 1 else 's'}"
    if size < vocab_size:
        why = (f"then no pair left occurred min_frequency={min_frequency} times or more"
               if min_frequency > 1 else "then the texts had no pair left to merge")
        message = (f"learned {tokens} of the {vocab_size} asked (vocab_size={vocab_size}): "
                   f"{merges} merge{'' if merges == 1 else 's'}, {why}")
    else:
        message = (f"learned {tokens}, past the {vocab_size} asked (vocab_size={vocab_size}), "
                   "and no merge: the alphabet and the special tokens alone are that many, so "
                   "every word is cut into single characters; raise vocab_size or bound the "
                   "alphabet with limit_alphabet")
    warnings.warn(message, UserWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    # the warning names the first caller outside fasttok, whichever of its
    # entry points (train, train_wordpiece, the CLI) led here
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
