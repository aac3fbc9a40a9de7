"""Writer of BERT's ``vocab.txt``: one WordPiece token per line, line *n* (from 0) the token of id *n*.

The format ``tokenizers``' ``WordPiece.from_file`` and BERT's own tokenizer
read. It has no field for anything else (the unknown token, the prefix, the
normalizer): those are the reader's settings. A token holding a line break,
or ending in whitespace (tokenizers trims each line's end), cannot be written.

>>> vocab_txt_lines({"[UNK]": 0, "a": 1, "##b": 2})
'[UNK]\\na\\n##b\\n'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Union

from fasttok.errors import FasttokError
from fasttok.shared.atomic_write import write_atomically

__all__ = ["vocab_txt_lines", "write_vocab_txt"]


def vocab_txt_lines(vocab: Mapping) -> str:
    """The file's text for ``{token: id}`` with ids 0 to n - 1.

    >>> vocab_txt_lines({"b": 1, "a": 0})
    'a\\nb\\n'
    """
    tokens = sorted(vocab, key=vocab.__getitem__)
    if [vocab[t] for t in tokens] != list(range(len(tokens))):
        raise FasttokError("vocab.txt numbers tokens by line: the ids must run 0 to n - 1")
    for token in tokens:
        if "\n" in token or "\r" in token or token != token.rstrip():
            raise FasttokError(f"token {token!r} holds a line break or ends in whitespace, "
                               "which vocab.txt cannot hold: write a tokenizer.json instead")
    return "".join(token + "\n" for token in tokens)


def write_vocab_txt(path: Union[str, "os.PathLike[str]"], vocab: Mapping) -> None:
    """Write ``{token: id}`` to ``path`` as ``vocab.txt`` (UTF-8), replacing
    any old file all at once (:mod:`fasttok.shared.atomic_write`).

    >>> import os, tempfile; p = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> write_vocab_txt(p, {"a": 0}); open(p).read()
    'a\\n'
    """
    write_atomically(path, vocab_txt_lines(vocab).encode("utf-8"))
