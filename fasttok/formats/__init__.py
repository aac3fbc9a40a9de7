"""Formats: each vocabulary file type as a configuration of stages.

* ``tiktoken`` -- ``.tiktoken`` rank files and tiktoken's named encodings:
  regex scanner + byte-level BPE by rank + tiktoken's specials, fused in the
  compiled :class:`fasttok.formats._byte_bpe.CoreBPE`;
* ``gguf`` -- llama.cpp's ``gpt2`` (scanner + BPE by merge list) and ``bert``
  (BERT normalizer + WordPiece) vocabularies behind llama.cpp's special-token
  partition and BOS/EOS rules;
* ``sentencepiece`` -- ``.model`` files and GGUF ``llama``/``t5``:
  charsmap normalizer + Unigram or SentencePiece BPE, fused in the compiled
  :class:`fasttok.formats._sentencepiece.SentencePieceCore`.

>>> from fasttok.formats.tiktoken import build_byte_bpe
>>> callable(build_byte_bpe)
True
"""
