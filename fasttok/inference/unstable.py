"""tiktoken's ``encode_with_unstable`` for every vocabulary kind.

tiktoken leaves the tokens of the text's last pre-tokenizer piece out of
the stable ones and lists the token sequences that could continue them.
A vocabulary that is not tiktoken's has its own pre-tokenizer and
normalizer, so the ids left out are the ones
:func:`~fasttok.inference.stability.split_stable` does not find final (the
same rule the appender cuts by), and the completions are the ids of the
unstable tail as the text has them and every single token whose bytes
start with the tail's bytes (from the one
:class:`~fasttok.inference.prefix_table.PrefixTable`).

>>> from fasttok.inference.prefix_table import PrefixTable
>>> encode = lambda s: [ord(ch) for ch in s]
>>> table = PrefixTable([(bytes([i]), i) for i in range(128)] + [(b"cd", 128)])
>>> spell = lambda i: bytes([i]) if i < 128 else b"cd"
>>> with_unstable(encode, spell, lambda ids: b"".join(map(spell, ids)), table, "ab c",
...               encode("ab c"))
([97, 98, 32], [[99], [128]])
"""

from __future__ import annotations

from collections.abc import Callable

from fasttok.inference.prefix_table import PrefixTable
from fasttok.inference.stability import split_stable

__all__ = ["with_unstable"]


def with_unstable(encode: Callable[[str], list], token_bytes: Callable[[int], bytes],
                  decode_bytes: Callable[[list], bytes], table: PrefixTable, text: str,
                  ids: list) -> tuple:
    """``(stable_ids, completions)`` of ``text`` whose encoding is ``ids``
    (see the module doc); ``completions`` is empty when every id is stable.
    A token is a completion when its bytes start with the tail's and it
    decodes (``decode_bytes``) to what the tail decodes to and more: a
    decoder's clean-up (llama.cpp drops the space of ``" !"``) can make the
    one true without the other.

    >>> from fasttok.inference.prefix_table import PrefixTable
    >>> encode = lambda s: [ord(ch) for ch in s]
    >>> with_unstable(encode, bytes.__mul__, bytes, PrefixTable([]), "", [])
    ([], [])
    """
    found = split_stable(encode, text, ids, 0)
    k = found[1] if found else 0
    tail = ids[k:]
    if not tail:
        return ids, []
    spelled = b"".join(map(token_bytes, tail))
    decoded = decode_bytes(tail)
    completions = [tail] + [[t] for t in table.extending(spelled)
                            if [t] != tail and decode_bytes([t]).startswith(decoded)]
    return ids[:k], completions
