"""Parsing a JSON vocabulary file: every way the bytes can fail is a ``VocabularyFileError`` naming the file and where.

>>> parse_json_document(b'{"a": [1, 2]}', "t.json")
{'a': [1, 2]}
>>> parse_json_document(b'{"a": [1, 2}', "t.json")
Traceback (most recent call last):
fasttok.errors.VocabularyFileError: t.json: line 1, byte 11: not JSON: Expecting ',' delimiter at column 12
"""

from __future__ import annotations

import json
from typing import Any, Union

from fasttok.errors import VocabularyFileError

__all__ = ["parse_json_document"]


def parse_json_document(data: Union[bytes, bytearray, str], source: str) -> Any:
    """The parsed document of ``data`` (the contents of ``source``).

    Nesting deeper than the parser's recursion limit is an error of the
    file, not of the reader:

    >>> parse_json_document("[" * 100000 + "]" * 100000, "deep.json")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: deep.json: not JSON fasttok reads: nested too deeply
    """
    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        raise VocabularyFileError(source, f"not UTF-8: {exc}", offset=exc.start) from None
    except json.JSONDecodeError as exc:
        raise VocabularyFileError(source, f"not JSON: {exc.msg} at column {exc.colno}",
                                  line=exc.lineno, offset=exc.pos) from None
    except RecursionError:
        raise VocabularyFileError(source, "not JSON fasttok reads: nested too deeply") from None
