"""Train a BPE model on words, as ``tokenizers``' ``BpeTrainer`` does behind any normalizer and pre-tokenizer.

The byte-level case is :mod:`fasttok.trainers.bpe`; this is the other one:
the words of a ``tokenizer.json`` normalizer and pre-tokenizer
(:mod:`fasttok.trainers.hf_words`), their characters as the alphabet, and
every ``BpeTrainer`` option (:func:`fasttok.trainers.hf_bpe.train_words`).
The result is a ``BPE`` model's ``tokenizer.json`` document.

>>> t = train_bpe_words(["ab ab ac"], vocab_size=4, pre_tokenizer={"type": "Whitespace"})
>>> t.trained.tokens, t.trained.merges
(['a', 'b', 'c', 'ab'], [('a', 'b')])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Optional

from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.loaders.hf_tokenizer_json_writer import bpe_tokenizer_json
from fasttok.trainers.bpe import PretokenBound
from fasttok.trainers.hf_bpe import TrainedWords, train_words
from fasttok.trainers.hf_words import count_stage_words
from fasttok.vocab import Vocabulary

__all__ = ["TrainedBPEWords", "train_bpe_words"]


@dataclasses.dataclass(frozen=True)
class TrainedBPEWords:
    """The vocabulary and merges (``trained``), the stages and the options
    the model keeps, and the input's size.

    >>> train_bpe_words([], vocab_size=5, pre_tokenizer=None).document()["model"]["type"]
    'BPE'
    """

    trained: TrainedWords
    normalizer: Optional[dict]
    pre_tokenizer: Optional[dict]
    continuing_subword_prefix: Optional[str]
    end_of_word_suffix: Optional[str]
    corpus_bytes: int
    unique_words: int
    dropped_words: int = 0

    def document(self) -> dict:
        """The ``tokenizer.json`` document (what ``tokenizers`` saves after training)."""
        return bpe_tokenizer_json(self.trained.vocab, self.trained.merges, self.trained.special,
                                  self.normalizer, self.pre_tokenizer,
                                  self.continuing_subword_prefix, self.end_of_word_suffix)

    def vocabulary(self, name: str = "trained") -> Vocabulary:
        """The record an :class:`~fasttok.Encoding` is built from (that of the document)."""
        return tokenizer_json_record(self.document(), name, name=name)


def train_bpe_words(texts: Iterable[str], *, vocab_size: int, pre_tokenizer: Optional[dict],
                    normalizer: Optional[dict] = None, special_tokens: Iterable[str] = (),
                    min_frequency: int = 0, limit_alphabet: Optional[int] = None,
                    initial_alphabet: Iterable[str] = (),
                    continuing_subword_prefix: Optional[str] = None,
                    end_of_word_suffix: Optional[str] = None,
                    max_token_length: Optional[int] = None, spellings: Iterable[str] = (),
                    max_pretokens: Optional[int] = None, progress=None) -> TrainedBPEWords:
    """``tokenizers.trainers.BpeTrainer`` with these options on ``texts``
    behind ``normalizer`` and ``pre_tokenizer`` (``tokenizer.json`` objects).
    ``max_pretokens`` bounds the distinct words held while counting, as
    :class:`~fasttok.trainers.bpe.PretokenBound` does for byte-level BPE
    (exact while ``dropped_words`` is 0).

    >>> train_bpe_words(["aa"], vocab_size=9, pre_tokenizer=None, end_of_word_suffix="</w>").trained.tokens
    ['a', 'a</w>', 'aa</w>']
    """
    bound = PretokenBound(max_pretokens) if max_pretokens is not None else None
    counter = count_stage_words(texts, normalizer, pre_tokenizer, bound)
    corpus_bytes, unique = counter.n_bytes, len(counter)
    trained = train_words(counter, vocab_size=vocab_size, special_tokens=special_tokens,
                          min_frequency=min_frequency, limit_alphabet=limit_alphabet,
                          initial_alphabet=initial_alphabet,
                          continuing_subword_prefix=continuing_subword_prefix,
                          end_of_word_suffix=end_of_word_suffix,
                          max_token_length=max_token_length, spellings=spellings,
                          progress=progress)
    return TrainedBPEWords(trained, normalizer, pre_tokenizer, continuing_subword_prefix,
                           end_of_word_suffix, corpus_bytes, unique,
                           bound.dropped if bound is not None else 0)
