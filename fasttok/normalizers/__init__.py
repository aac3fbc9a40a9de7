"""Normalizers: text in, normalized text (and offsets) out.

``_spm_normalizer`` runs SentencePiece's precompiled charsmap (the
``Precompiled`` normalizer of Hugging Face ``tokenizers``) with its
whitespace rules. llama.cpp's BERT normalizer is fused into the compiled
WordPiece model (:mod:`fasttok.models._wordpiece`), which reads each code
point once for both.

>>> from fasttok.normalizers._spm_normalizer import Normalizer
>>> Normalizer(None, add_dummy_prefix=False, remove_extra_whitespaces=True,
...            escape_whitespaces=False).normalize("  a  b ")
'a b'
"""
