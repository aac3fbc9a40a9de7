"""Pre-tokenizers: where text is cut into pieces before the model merges them.

``patterns`` holds tiktoken's regex patterns and maps each to its compiled
scanner; ``gguf`` holds llama.cpp's ``tokenizer.ggml.pre`` regex lists;
``_pretokenize`` is the compiled scanners themselves (one hand-written
function per pattern family, no regex engine on the hot path). The
``tokenizer.json`` pre-tokenizers of Hugging Face ``tokenizers`` are
``split`` (Split and the class splitters), ``byte_level``, ``metaspace``,
``unicode_scripts`` and ``sequence``, each with an offset-keeping
``pre_tokenize`` and a ``split_str`` (and ``pre_tokenize_str`` from
``base``), read from JSON by :mod:`fasttok.loaders.hf_stage_json`.

>>> from fasttok.pre_tokenizers.patterns import CL100K, scanner_for
>>> scanner_for(CL100K)
'cl100k'
"""
