"""Decoders: ids back to bytes, whole or one id at a time.

The per-token byte maps live with each model's compiled tables (byte-level
alphabet, byte fallback, ``▁``), and SentencePiece's decode runs fused in its
compiled core (``fasttok.formats._sentencepiece``: byte-fallback runs, ``▁``,
the dummy-prefix space, the denormalizer, each id's start found in the same
pass); this package holds what runs on the joined bytes: llama.cpp's clean-up of tokenization spaces (``cleanup``) and the
streaming decoders that hold bytes back until no later id can change them
(``stream``).

The ``hf_*`` modules are Hugging Face ``tokenizers``' decoders, which work
on token strings (``decode_chain``: tokens in, tokens out): ``hf_byte_level``,
``hf_byte_fallback``, ``hf_metaspace``, ``hf_wordpiece`` (WordPiece, CTC),
``hf_bpe``, ``hf_replace``, ``hf_simple`` (Fuse, Strip, Sequence), read from
a ``tokenizer.json`` by :mod:`fasttok.loaders.hf_stage_json`; ``hf_stream`` is
tokenizers' ``DecodeStream`` and ``hf_starts`` finds each token's start in one decode.
``joined`` joins many byte pieces without a buffer table per piece.

>>> from fasttok.decoders.cleanup import clean_up_spaces
>>> clean_up_spaces(b"Hi , there 's")
b"Hi, there's"
"""
