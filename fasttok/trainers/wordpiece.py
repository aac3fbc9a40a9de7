"""Train a WordPiece vocabulary exactly as Hugging Face ``tokenizers``' ``WordPieceTrainer`` does.

tokenizers' ``WordPieceTrainer`` is its ``BpeTrainer`` with
``continuing_subword_prefix="##"`` whose vocabulary becomes a ``WordPiece``
model (``models/wordpiece/trainer.rs``); the merges are dropped, the
unknown token is the model's (``[UNK]``). So is this one, with one
difference: where the special tokens lack the unknown token, it is added
after them, as ``BertWordPieceTokenizer`` trains with it among its defaults
(the trainer leaves it out, and its file names an unknown token its
vocabulary lacks: it fails on the first text holding a character no token
spells, and fasttok refuses it). The words are counted through the
normalizer and pre-tokenizer (BERT's by default, as a tokenizers user sets
them; :mod:`fasttok.trainers.hf_words`), then
:func:`fasttok.trainers.hf_bpe.train_words` makes the vocabulary.

>>> t = train_wordpiece(["Hello hello world"], vocab_size=30, special_tokens=["[UNK]"])
>>> t.vocab["[UNK]"], t.vocab["hello"], t.vocabulary().model
(0, 16, 'hf_pipeline')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Optional

from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.loaders.hf_tokenizer_json_writer import wordpiece_tokenizer_json
from fasttok.trainers import check_special_tokens
from fasttok.trainers.hf_bpe import TrainedWords
from fasttok.trainers.hf_words import BERT_NORMALIZER, BERT_PRE_TOKENIZER
from fasttok.trainers.words_bpe import train_bpe_words
from fasttok.vocab import Vocabulary

__all__ = ["TrainedWordPiece", "train_wordpiece"]


@dataclasses.dataclass(frozen=True)
class TrainedWordPiece:
    """What training made: the vocabulary (``trained.tokens``, special
    tokens first), the stages it was trained behind (``tokenizer.json``
    objects), and the input's size.

    >>> t = train_wordpiece([], vocab_size=5, special_tokens=["[UNK]"]); t.vocab, t.unique_words
    ({'[UNK]': 0}, 0)
    """

    trained: TrainedWords
    normalizer: Optional[dict]
    pre_tokenizer: Optional[dict]
    unk_token: str
    continuing_subword_prefix: str
    corpus_bytes: int
    unique_words: int
    dropped_words: int = 0

    @property
    def vocab(self) -> dict:
        """``{token: id}``."""
        return self.trained.vocab

    def document(self) -> dict:
        """The ``tokenizer.json`` document (what ``tokenizers`` saves after training)."""
        return wordpiece_tokenizer_json(self.vocab, self.trained.special, self.normalizer,
                                        self.pre_tokenizer, self.unk_token,
                                        self.continuing_subword_prefix)

    def vocabulary(self, name: str = "trained") -> Vocabulary:
        """The record an :class:`~fasttok.Encoding` is built from (that of the document)."""
        return tokenizer_json_record(self.document(), name, name=name)


def train_wordpiece(texts: Iterable[str], *, vocab_size: int = 30000,
                    special_tokens: Iterable[str] = (), min_frequency: int = 0,
                    limit_alphabet: Optional[int] = None, initial_alphabet: Iterable[str] = (),
                    continuing_subword_prefix: str = "##",
                    end_of_word_suffix: Optional[str] = None,
                    normalizer: Optional[dict] = BERT_NORMALIZER,
                    pre_tokenizer: Optional[dict] = BERT_PRE_TOKENIZER,
                    unk_token: str = "[UNK]", spellings: Iterable[str] = (),
                    max_pretokens: Optional[int] = None, progress=None) -> TrainedWordPiece:
    """``tokenizers.trainers.WordPieceTrainer`` with these options, on ``texts``
    (any iterable of str, read once) behind ``normalizer`` and
    ``pre_tokenizer`` (``tokenizer.json`` objects; ``None`` for none).

    ``spellings``: the ``##`` tokens in the id order of another run (see
    :mod:`fasttok.trainers.hf_bpe`); ``max_pretokens`` bounds the distinct
    words held while counting (exact while ``dropped_words`` is 0);
    ``progress(done, total)`` as merges are made. ``unk_token`` joins the
    special tokens, last, when they do not hold it: the vocabulary is
    ``WordPieceTrainer``'s with it among its special tokens.

    Where the vocabulary is not ``vocab_size`` tokens (the words ran out of
    pairs to merge, or their alphabet alone is larger), a ``UserWarning``
    says how many were learned and why; tokenizers says nothing.

    >>> train_wordpiece(["ab ab"], vocab_size=10).trained.tokens
    ['[UNK]', 'a', 'b', '##b', 'ab']
    """
    if not isinstance(continuing_subword_prefix, str) or not isinstance(unk_token, str):
        raise TypeError("continuing_subword_prefix and unk_token must be str")
    special_tokens = check_special_tokens(special_tokens)
    if unk_token not in special_tokens:
        special_tokens.append(unk_token)
    # tokenizers' WordPieceTrainer is its BpeTrainer with the ## prefix
    words = train_bpe_words(texts, vocab_size=vocab_size, pre_tokenizer=pre_tokenizer,
                            normalizer=normalizer, special_tokens=special_tokens,
                            min_frequency=min_frequency, limit_alphabet=limit_alphabet,
                            initial_alphabet=initial_alphabet,
                            continuing_subword_prefix=continuing_subword_prefix,
                            end_of_word_suffix=end_of_word_suffix, spellings=spellings,
                            max_pretokens=max_pretokens, progress=progress)
    return TrainedWordPiece(words.trained, normalizer, pre_tokenizer, unk_token,
                            continuing_subword_prefix, words.corpus_bytes, words.unique_words,
                            words.dropped_words)
