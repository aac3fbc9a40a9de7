"""The exceptions fasttok raises.

Every public error is a ``ValueError`` subclass, because tiktoken users already
catch ``ValueError`` around ``encode`` and loading.

>>> from fasttok.errors import VocabularyFileError
>>> str(VocabularyFileError("x.tiktoken", "line 3: missing rank"))
'x.tiktoken: line 3: missing rank'
"""

from __future__ import annotations

__all__ = ["FasttokError", "VocabularyFileError", "DocumentFileError", "VocabularyError",
           "UnknownEncodingError", "ReferenceFailsError", "not_an_instance"]


class FasttokError(ValueError):
    """Base class of every error fasttok raises on bad input.

    >>> issubclass(FasttokError, ValueError)
    True
    """


class VocabularyFileError(FasttokError):
    """A vocabulary file is truncated, malformed or hostile.

    The message always starts with the file name, then says where (line, byte
    offset, field) and what is wrong.

    >>> err = VocabularyFileError("m.gguf", "bad magic", offset=0)
    >>> err.offset, str(err)
    (0, 'm.gguf: byte 0: bad magic')
    """

    def __init__(self, path: object, problem: str, *, line: int | None = None,
                 offset: int | None = None, field: str | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        self.line = line
        self.offset = offset
        self.field = field
        where = []
        if line is not None:
            where.append(f"line {line}")
        if offset is not None:
            where.append(f"byte {offset}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{self.path}: {prefix + ': ' if prefix else ''}{problem}")


class DocumentFileError(VocabularyFileError):
    """A file of documents (``Encoding.encode_files``' input) cannot be read
    as asked: a JSON Lines line that is not JSON or lacks the field, bytes
    that are not UTF-8, a disallowed special token. Worded as
    :class:`VocabularyFileError` (whose message it shares): the file, the
    line, then what is wrong.

    >>> str(DocumentFileError("c.jsonl", "not JSON", line=7))
    'c.jsonl: line 7: not JSON'
    """


class ReferenceFailsError(FasttokError):
    """The reference library cannot do this either: it panics or errors on
    this input with this vocabulary (a ``Strip`` decoder told to cut more
    than a token holds), so fasttok refuses it too, saying so.

    >>> issubclass(ReferenceFailsError, FasttokError)
    True
    """


class VocabularyError(FasttokError):
    """A vocabulary record is inconsistent (duplicate ids, missing bytes, ...).

    >>> raise VocabularyError("duplicate rank 5")
    Traceback (most recent call last):
    fasttok.errors.VocabularyError: duplicate rank 5
    """


class UnknownEncodingError(FasttokError):
    """A name, file type or model type that fasttok does not know.

    >>> isinstance(UnknownEncodingError("nope"), ValueError)
    True
    """


def not_an_instance(value: object, name: str) -> TypeError:
    """The ``TypeError`` a Rust binding (PyO3) raises for an argument that is
    not of the type ``name``, as tiktoken's and tokenizers' calls raise it; it
    names ``None`` by itself.

    >>> str(not_an_instance(b"x", "str")), str(not_an_instance(None, "str"))
    ("'bytes' object is not an instance of 'str'", "'None' is not an instance of 'str'")
    """
    what = "'None'" if value is None else f"'{type(value).__name__}' object"
    return TypeError(f"{what} is not an instance of '{name}'")
