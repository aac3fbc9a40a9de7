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
from typing import Optional

from fasttok.errors import FasttokError
from fasttok.vocab import MAX_ID

__all__ = ["check_sizes"]


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

