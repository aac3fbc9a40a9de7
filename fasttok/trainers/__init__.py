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
