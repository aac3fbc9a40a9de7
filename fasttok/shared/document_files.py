"""Documents read from text and JSON Lines files, a block at a time.

A file is read ``block_size`` bytes at a time and cut only at a document
boundary: the last separator (a newline for JSON Lines) of what has been
read; the bytes after it wait for the next block. So each block holds whole
documents, and a document longer than a block makes that block grow to hold
it. Memory is bounded by the block, not the file: a block alive holds its
bytes (``block_size`` plus the longest document) while they are decoded, then
their text and the documents cut from it, about three times the block size
for ASCII text (a Python ``str`` of wider characters is up to four times its
UTF-8, so up to nine times for text with emoji). With :func:`read_ahead`
three blocks are alive (one encoded, one waiting, one being read): with the
default 4 MiB some 40 MB of ASCII text, at most about 110 MB, whatever the
file's size.

The documents are as gigatoken and nanotoken read them:

* text: the pieces between separators, the separator in none of them (so a
  CRLF file split at ``"\\n"`` leaves each ``"\\r"`` in its document; split at
  ``"\\r\\n"`` instead); an empty piece between two separators is an empty
  document (rows stay aligned with the file's records) and the empty piece
  after a final separator is none (nanotoken's ``data.split(sep)`` less a
  trailing empty document); ``separator=None`` makes each file one document
  (not bounded by the block size then);
* JSON Lines: one document per line that is not blank, the string in
  ``field`` of the object on it.

A line that is not a JSON object, an object without that field, a field that
is not a string, bytes that are not UTF-8 (with ``errors="strict"``) raise
:class:`~fasttok.errors.DocumentFileError` naming the file and the line, as
nanotoken does (gigatoken skips such lines silently, which shifts every later
row against the file's lines). ``errors="replace"`` reads bad bytes as U+FFFD
(nanotoken's rule), ``"ignore"`` drops them.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "d.txt")
>>> with open(path, "wb") as f:
...     _ = f.write(b"one\\ntwo\\n\\nfour\\n")
>>> [block.docs for block in read_documents([path], block_size=6)]
[['one'], ['two', ''], ['four']]
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import Optional, Union

from fasttok.errors import DocumentFileError, FasttokError

__all__ = ["DocumentBlock", "read_documents", "read_ahead", "DEFAULT_BLOCK_SIZE", "FORMATS"]

#: bytes read at a time: large enough that each block gives every thread
#: many documents and the per-block costs (threads started, arrays joined)
#: vanish, small enough to stay in memory beside the output and that its
#: decoding (which holds the GIL, ~10 ms for 4 MB) never stalls the encoders
DEFAULT_BLOCK_SIZE = 4 << 20

FORMATS = ("text", "jsonl")
_ERRORS = ("strict", "replace", "ignore")
# JSON's whitespace: a line of only these is blank
_JSON_SPACE = " \t\r\n"


class DocumentBlock:
    """The documents cut from one block of a file (``docs``, a list of str),
    with where they came from for error messages.

    >>> block = DocumentBlock("f.txt", 3, "a\\nb", ["a", "b"], "\\n", "text")
    >>> block.line_of(1), block.text()
    (4, 'a\\nb')
    """

    __slots__ = ("path", "docs", "_first_line", "_region", "_separator", "_format")

    def __init__(self, path: str, first_line: int, region: str, docs: list,
                 separator: Optional[str], format: str) -> None:
        self.path = path
        self.docs = docs
        self._first_line = first_line
        self._region = region
        self._separator = separator
        self._format = format

    def text(self) -> str:
        """One text holding every document (joined by newlines, or the
        block's own text), so one search covers the block: a special token
        that is in a document is in it."""
        return "\n".join(self.docs) if self._format == "jsonl" else self._region

    def line_of(self, index: int) -> int:
        """The file's line (from 1) where document ``index`` starts."""
        if self._format == "jsonl":
            seen = -1
            for number, line in enumerate(self._region.split("\n")):
                seen += bool(line.strip(_JSON_SPACE))
                if seen == index:
                    return self._first_line + number
            raise IndexError(index)
        before = self.docs[:index]
        return (self._first_line + sum(doc.count("\n") for doc in before)
                + len(before) * (self._separator or "").count("\n"))


def _paths(paths: Union[str, os.PathLike, Iterable]) -> list:
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [paths]
    return list(paths)


def read_documents(paths: Union[str, os.PathLike, Iterable], *, format: str = "text",
                   field: str = "text", separator: Optional[str] = "\n", errors: str = "strict",
                   block_size: int = DEFAULT_BLOCK_SIZE) -> Iterator[DocumentBlock]:
    """The documents of each file in ``paths`` (one path or several), one
    :class:`DocumentBlock` per block read (see the module's docstring for
    what a document is).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "d.jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"text": "a"}\\n\\n{"text": "b", "n": 1}\\n')
    >>> [block.docs for block in read_documents(path, format="jsonl")]
    [['a', 'b']]
    """
    if format not in FORMATS:
        raise FasttokError(f"format must be one of {FORMATS}, not {format!r}")
    if errors not in _ERRORS:
        raise FasttokError(f"errors must be one of {_ERRORS}, not {errors!r}")
    if format == "jsonl":
        separator = "\n"
    elif separator is not None and (not isinstance(separator, str) or not separator):
        raise FasttokError(f"separator must be a non-empty str (or None: a file is one "
                           f"document), not {separator!r}")
    if not isinstance(field, str):
        raise FasttokError(f"field must be a str, not {type(field).__name__}")
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise FasttokError(f"block_size must be an int of 1 or more, not {block_size!r}")
    for path in _paths(paths):
        yield from _read_file(os.fsdecode(path), format, field, separator, errors, block_size)


def read_ahead(items: Iterator) -> Iterator:
    """``items``, each next one made in a thread of its own while the caller
    works on the one it has: reading and cutting a block (a fifth of
    encoding it, with the GIL held) then runs beside the encoding of the
    block before instead of between blocks. One item waits made, one is
    being made, so memory holds three blocks. An error making an item is
    raised where the caller would have received it.

    >>> list(read_ahead(iter(range(3))))
    [0, 1, 2]
    """
    import queue
    import threading  # only a threaded read uses them

    made: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    end = object()

    def produce() -> None:
        try:
            while not stop.is_set():
                item = next(items, end)
                made.put((item, None))
                if item is end:
                    return
        except BaseException as exc:  # re-raised in the caller
            made.put((end, exc))

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    try:
        while True:
            item, error = made.get()
            if error is not None:
                raise error
            if item is end:
                return
            yield item
    finally:
        # a caller that stops early: let the producer's pending put through
        stop.set()
        while producer.is_alive():
            try:
                made.get(timeout=0.01)
            except queue.Empty:
                pass


def _read_file(path: str, format: str, field: str, separator: Optional[str], errors: str,
               block_size: int) -> Iterator[DocumentBlock]:
    sep = separator.encode("utf-8") if separator is not None else None
    # carry grows in place: a document spanning many blocks is copied once
    # when cut, not once a block
    carry, line, offset = bytearray(), 1, 0  # offset: the file's byte where carry starts
    with open(path, "rb") as f:
        while True:
            chunk = f.read(block_size)
            end = not chunk
            if end:
                done, carry = carry, bytearray()
            else:
                searched = max(0, len(carry) - len(sep) + 1) if sep else 0
                carry += chunk
                cut = carry.rfind(sep, searched) if sep else -1
                if cut < 0:
                    continue  # the block holds no boundary: read on
                # UTF-8 is self-synchronising, so a cut at the separator's
                # bytes never splits a character
                done, carry = carry[:cut], carry[cut + len(sep):]
            # the empty piece after a final separator is no document; an
            # empty file read whole is one
            if done or not end or sep is None:
                region = _decode(done, path, line, offset, errors)
                docs = (_json_documents(region, path, line, field) if format == "jsonl"
                        else region.split(separator) if separator is not None else [region])
                yield DocumentBlock(path, line, region, docs, separator, format)
                line += done.count(b"\n") + (sep.count(b"\n") if sep else 0)
                offset += len(done) + (len(sep) if sep else 0)
            if end:
                return


def _decode(data: bytearray, path: str, line: int, offset: int, errors: str) -> str:
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise DocumentFileError(
            path, f"bytes that are not UTF-8 ({exc.reason}); pass errors='replace' to read them "
            f"as U+FFFD, or errors='ignore' to drop them",
            line=line + data.count(b"\n", 0, exc.start), offset=offset + exc.start) from None


def _json_documents(region: str, path: str, first_line: int, field: str) -> list:
    docs = []
    # the decoder's scanner reads one value at the start of a line: json.loads
    # per line spent half its time on the call (0.39 s for 220k lines, the
    # scanner 0.18 s); a line it does not read to the end (blank, spaces
    # around the value, not JSON) goes to json.loads for its verdict and words
    scan = json.JSONDecoder().scan_once
    for number, line in enumerate(region.split("\n"), first_line):
        try:
            record, stop = scan(line, 0)
        except (StopIteration, ValueError):
            stop = -1
        if stop != len(line):
            if not line.strip(_JSON_SPACE):
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise DocumentFileError(path, f"not a JSON value ({exc})", line=number) from None
        text = record.get(field) if isinstance(record, dict) else None
        if not isinstance(text, str):
            problem = (f"the field is {type(text).__name__}, not a string" if field in record
                       else "the object has no such field") if isinstance(record, dict) else \
                f"a JSON {type(record).__name__}, not an object"
            raise DocumentFileError(path, f"{problem}; every line of a JSON Lines file "
                                    f"is an object holding each document's text in that field "
                                    f"(pass field=... to name another)",
                                    line=number, field=field)
        docs.append(text)
    return docs
