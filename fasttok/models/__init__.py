"""Models: pieces in, token ids out, and the interface every model offers.

``_bpe`` is the one BPE merge loop (byte-level BPE by rank or by merge
list, and SentencePiece BPE by score), ``_unigram`` the Unigram Viterbi and
lattice, ``_wordpiece`` WordPiece's linear-time longest match.
:mod:`fasttok.models.interface` declares what :class:`fasttok.Encoding`
calls on a model; the formats (:mod:`fasttok.formats`) put a model together
with its normalizer, pre-tokenizer, added tokens and decoder.

>>> from fasttok.models.interface import Model
>>> "encode_ordinary" in Model.__dict__
True
"""
