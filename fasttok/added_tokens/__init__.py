"""Added (special) tokens: cutting text at the token strings matched whole.

tiktoken's specials are matched inside the compiled byte-level BPE
(``CoreBPE``: leftmost, longest first); llama.cpp's partition of text at its
control and user-defined tokens is :mod:`fasttok.added_tokens.partition`.

>>> from fasttok.added_tokens.partition import SpecialTokenPartition
>>> SpecialTokenPartition([(7, "<s>", 0)]).partition("a<s>b", [(7, "<s>", 0)])
['a', 7, 'b']
"""
