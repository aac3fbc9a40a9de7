"""The C-level pieces every stage builds on, each declared in a ``.pxd``.

UTF-8 views of ``str`` (``_utf8``), array growth (``_growth``), token-id
conversion (``_token_ids``), the token tables and their hash index
(``_tables``), the Unicode 16.0 property tables (``_unicode``, generated into
``unicode_tables.h``), llama.cpp's own Unicode 15.1 tables (``llama_unicode``),
the GPT-2 byte-level alphabet (``_bytemap``), SentencePiece's charsmap
(``_charsmap``), per-thread scratch buffers (``ft_thread_cache.h``) and the
batch runner (``batching``); in Python: text with its alignment and splits
(``normalized``), lone-surrogate repair (``surrogates``), regex translation for ``re`` (``regex_translate``), Unicode
as Hugging Face ``tokenizers`` sees it (``hf_unicode``) and the checked
reading of ``tokenizer.json`` fields (``json_fields``). Nothing here imports
a stage.

>>> from fasttok.shared._bytemap import encode_byte_level
>>> encode_byte_level(b" a")
'Ġa'
"""

#: Metaspace's prepend schemes, in the order its pre-tokenizer's errors list
#: them, and its decoder's: here, where the ``tokenizer.json`` reader and the
#: two stages read them, so that a load checks the field and imports neither
#: stage's package
PREPEND_SCHEMES = ("always", "first", "never")
DECODER_PREPEND_SCHEMES = ("always", "never", "first")
