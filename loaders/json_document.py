"""Parsing a JSON vocabulary file: every way the bytes can fail is a ``VocabularyFileError`` naming the file and where.

:func:`parse_tokenizer_json` reads a ``tokenizer.json`` with the compiled
reader (:mod:`fasttok.shared._json_reader`), which keeps the model's
vocabulary and merges packed, and hands to ``json.loads`` what it does not
read exactly as ``json.loads`` does, errors included.

>>> parse_json_document(b'{"a": [1, 2]}', "t.json")
{'a': [1, 2]}
>>> parse_json_document(b'{"a": [1, 2}', "t.json")
Traceback (most recent call last):
fasttok.errors.VocabularyFileError: t.json: line 1, byte 11: not JSON: Expecting ',' delimiter at column 12
"""

from __future__ import annotations

from typing import Any, Optional, Union

from fasttok.errors import VocabularyFileError
from fasttok.shared._json_reader import FileBytes, read_tokenizer_document

__all__ = ["parse_json_document", "parse_tokenizer_json"]

# json is imported by the fallback and the errors that use it: the compiled
# reader reads every other document, and json's import (~1 ms) was a part of
# each tokenizer.json load.


def parse_json_document(data: Union[bytes, bytearray, str], source: str) -> Any:
    """The parsed document of ``data`` (the contents of ``source``).

    Nesting deeper than the parser's recursion limit is an error of the
    file, not of the reader:

    >>> parse_json_document("[" * 100000 + "]" * 100000, "deep.json")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: deep.json: not JSON fasttok reads: nested too deeply
    """
    if isinstance(data, (bytes, bytearray)):
        # the compiled reader reads what it reads as json.loads does, and
        # leaves json the rest (and the errors): a tokenizer_config.json
        # beside a tokenizer.json costs no import of json (~1 ms of a load)
        read = read_tokenizer_document(data)
        if read is not None and read[1] is None:
            return read[0]
    import json

    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        raise VocabularyFileError(source, f"not UTF-8: {exc}", offset=exc.start) from None
    except json.JSONDecodeError as exc:
        raise VocabularyFileError(source, f"not JSON: {exc.msg} at column {exc.colno}",
                                  line=exc.lineno, offset=exc.pos) from None
    except RecursionError:
        raise VocabularyFileError(source, "not JSON fasttok reads: nested too deeply") from None
    except ValueError as exc:  # an integer of more digits than int() converts
        raise VocabularyFileError(source, f"not JSON fasttok reads: {exc}") from None


def parse_tokenizer_json(data: Union[bytes, bytearray, FileBytes, str], source: str) -> tuple:
    """``(document, packed)``: the parsed document of ``data`` (the contents
    of ``source``, as :func:`~fasttok.shared._json_reader.read_file` gives them, or text) less the model's ``vocab`` and ``merges`` where
    ``packed`` (a :class:`~fasttok.shared._json_reader.PackedModel`, else
    ``None``) holds them; ``packed.object()`` is the whole model object.

    A string holding a lone surrogate, anywhere, is refused, as tokenizers'
    reader (serde_json) refuses it; ``json.loads`` would read it. So is a
    UTF-8 byte order mark before the document, which ``json.loads`` skips.

    >>> doc, packed = parse_tokenizer_json(b'{"model": {"vocab": {"a": 0}}, "x": 1}', "t.json")
    >>> doc, packed.object()
    ({'model': {}, 'x': 1}, {'vocab': {'a': 0}})
    >>> parse_tokenizer_json(b'{"model": 1', "t.json")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: t.json: line 1, byte 11: not JSON: Expecting ',' delimiter at column 12
    >>> parse_tokenizer_json(rb'{"decoder": {"x": ["a\\ud800"]}}', "t.json")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: t.json: field '$.decoder.x[0]': "a\\ud800" holds a lone surrogate, which tokenizers refuses: pair it or remove it
    """
    if data[:1] == "\ufeff" if isinstance(data, str) else bytes(memoryview(data)[:3]) == _BOM:
        raise VocabularyFileError(source, "starts with a UTF-8 byte order mark, which tokenizers "
                                  "refuses ('expected value at line 1 column 1'): save it without one",
                                  offset=0)
    read: Optional[tuple] = None
    if isinstance(data, (bytes, bytearray, FileBytes)):
        # the compiled reader leaves a document with a lone surrogate to json.loads
        read = read_tokenizer_document(data)
    if read is None:
        # the surrogates' module is imported here and by the error paths:
        # the compiled reader's documents need no such check
        from fasttok.shared.surrogates import has_utf8

        doc = parse_json_document(bytes(data) if type(data) is FileBytes else data, source)
        # text holds one only as a \\u escape or a surrogate itself (which an
        # ASCII str cannot hold; isascii is a flag, encode a copy)
        if not isinstance(data, str) or "\\ud" in data or "\\uD" in data \
                or not has_utf8(data):
            _refuse_lone_surrogates(doc, "$", source)
        return doc, None
    return read


_BOM = b"\xef\xbb\xbf"


def _refuse_lone_surrogates(value: Any, where: str, source: str) -> None:
    # the error naming the first string (key or value) of value, at JSON path
    # where, that holds a lone surrogate; an iterative walk, as the document
    # may be nested as deeply as json.loads reads
    import json

    from fasttok.shared.surrogates import has_utf8

    todo = [(value, where)]
    while todo:
        value, where = todo.pop()
        if type(value) is str:
            if not has_utf8(value):
                raise VocabularyFileError(
                    source, f"{json.dumps(value)} holds a lone surrogate, which tokenizers "
                            "refuses: pair it or remove it", field=where)
        elif type(value) is list:
            todo += reversed([(item, f"{where}[{i}]") for i, item in enumerate(value)])
        elif type(value) is dict:
            items = []
            for key, item in value.items():
                at = f"{where}.{key}" if key.isidentifier() else f"{where}[{json.dumps(key)}]"
                items.append((key, at))
                items.append((item, at))
            todo += reversed(items)
