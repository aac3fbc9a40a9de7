"""Trainers: vocabularies learned from text, exactly as the reference trainers learn them.

* ``bpe`` -- byte-level BPE as ``rustbpe`` (``flavour="rustbpe"``) or Hugging
  Face ``tokenizers``' ``BpeTrainer`` (``flavour="hf"``) trains it, over the
  compiled pre-token counter and merge loop of ``_bpe_trainer``.
* ``unigram`` -- SentencePiece Unigram as ``sentencepiece``'s trainer trains
  it (equally good, not identical), written as a ``.model`` file, over the
  word table, seeds and EM steps of ``_unigram_trainer``.

>>> from fasttok.trainers.bpe import train_bpe
>>> len(train_bpe(["hello hello"], vocab_size=260).ranks)
260
"""
