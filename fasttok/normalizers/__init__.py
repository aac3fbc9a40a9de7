"""Normalizers: text in, normalized text (and offsets) out.

``_spm_normalizer`` runs SentencePiece's precompiled charsmap with its
whitespace rules, as sentencepiece does. The ``tokenizer.json`` normalizers
of Hugging Face ``tokenizers`` are one module per family (``unicode_forms``,
``bert``, ``replace``, ``strip``, ``simple``, ``nmt``, ``precompiled`` --
tokenizers' own reading of the charsmap --, ``sequence``), each with an
alignment-keeping ``normalize`` and a ``normalize_str``, read from JSON by
:mod:`fasttok.loaders.hf_stage_json`. llama.cpp's BERT normalizer is fused into the compiled
WordPiece model (:mod:`fasttok.models._wordpiece`), which reads each code
point once for both.

>>> from fasttok.normalizers._spm_normalizer import Normalizer
>>> Normalizer(None, add_dummy_prefix=False, remove_extra_whitespaces=True,
...            escape_whitespaces=False).normalize("  a  b ")
'a b'
"""
