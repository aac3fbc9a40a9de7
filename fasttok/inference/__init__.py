"""What an inference app asks of a tokenizer besides encode and decode.

Token healing (:mod:`fasttok.inference.healing`), the appendable encoder
(:mod:`fasttok.inference.appender`) and logit masks over token bytes
(:mod:`fasttok.inference.prefix_table`) all rest on one rule, in
:mod:`fasttok.inference.stability`: which ids of a text's encoding no
continuation of the text can change. Each module works on any
:class:`fasttok.Encoding` through callables it is handed (its encode with
the caller's special-token arguments, its token bytes), so the rule is
written once for every vocabulary kind.

>>> from fasttok.inference.prefix_table import PrefixTable
>>> PrefixTable([(b"a", 0), (b"ab", 1)]).extending(b"a")
[0, 1]
"""
