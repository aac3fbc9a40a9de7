"""Documents read from text and JSON Lines files a block at a time, and encoded.

A file is read ``block_size`` bytes at a time and cut only at a document
boundary: after the last separator (a newline for JSON Lines) of what has
been read; the bytes after it wait for the next block
(:class:`~fasttok.shared._document_blocks.BlockReader`, in C without the
GIL). So each block holds whole documents, and a document longer than a
block makes that block grow to hold it.

A model that offers a compiled document encoder (``document_encoder()``:
byte-level BPE) encodes the blocks' UTF-8 as it is, with no Python str per
document, on threads that live for the whole call
(:class:`~fasttok.shared._document_blocks.FileJob`): memory holds the ids
and offsets made so far (4 and 8 bytes a token and a document), the block
being encoded and the one being read (each ``block_size`` plus the longest
document, and for JSON Lines its decoded documents as much again), and a
ring of chunk buffers (a few MB): with the default 1 MiB blocks, under 10
MB besides the result, whatever the file's size, and each thread's
pre-token cache for the call (:func:`job_cache_entries`: 16 MiB at most
for all the threads at the default setting, its pages touched as it
fills). Any other
model takes each block's documents as str (two to four times their UTF-8
for text that is not ASCII) through its batch call, the next block read
meanwhile on a thread of its own (:func:`read_ahead`), so three blocks are
alive.

The documents are as gigatoken and nanotoken read them:

* text: the pieces between separators, the separator in none of them (so a
  CRLF file split at ``"\\n"`` leaves each ``"\\r"`` in its document; split at
  ``"\\r\\n"`` instead), found left to right as ``bytes.split`` finds them;
  an empty piece between two separators is an empty document (rows stay
  aligned with the file's records) and the empty piece after a final
  separator is none (nanotoken's ``data.split(sep)`` less a trailing empty
  document); ``separator=None`` makes each file one document (not bounded
  by the block size then);
* JSON Lines: one document per line that is not blank, the string in
  ``field`` of the object on it, as ``json.loads`` reads it (a compiled
  scanner reads the lines it can read exactly and hands the rest to
  ``json.loads``).

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

import os
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Optional, Union

from fasttok.errors import DocumentFileError, FasttokError
from fasttok.shared._document_blocks import Block, BlockReader, FileJob
from fasttok.shared.batching import on_threads
from fasttok.shared.ragged import RaggedIds, append_flat

__all__ = ["read_documents", "read_ahead", "encode_files", "job_cache_entries",
           "DEFAULT_BLOCK_SIZE", "FORMATS"]

#: bytes read at a time: large enough that the per-block costs (a Python
#: call or two, the cut) vanish, small enough to stay in memory beside the
#: output and that a thread reading the next one finishes before the
#: others run out of its chunks; and small enough that a block's text is
#: still in the shared cache when the threads encode it after the read of
#: the next (4 MiB blocks on two threads: the scanner read half of the
#: text again from memory, in callgrind's cache simulation)
DEFAULT_BLOCK_SIZE = 1 << 20

FORMATS = ("text", "jsonl")
_ERRORS = ("strict", "replace", "ignore")

#: a file job's threads each get a pre-token cache of their own for the
#: call, together of up to this many times the process's setting (256k
#: entries, 16 MiB, at the default 16k) and one entry for every this many
#: bytes of the files: a long run sees far more pieces again than a
#: thread's table for every call holds (the bench's 107 MB on one thread,
#: CPU: 1.41-1.43 s with 16k entries, 1.24-1.30 s with 256k, 1.24-1.29 s
#: with 1M; on two threads, quiet machine, wall 0.656 s with 256k each,
#: 0.628 s with 128k: twice 16 MiB filled the shared 32 MiB L3 and took
#: twice the page faults)
JOB_CACHE_SCALE = 16
JOB_CACHE_BYTES = 64


def _paths(paths: Union[str, os.PathLike, Iterable]) -> list:
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [paths]
    return list(paths)


def read_documents(paths: Union[str, os.PathLike, Iterable], *, format: str = "text",
                   field: str = "text", separator: Optional[str] = "\n", errors: str = "strict",
                   block_size: int = DEFAULT_BLOCK_SIZE) -> Iterator[Block]:
    """The documents of each file in ``paths`` (one path or several), one
    :class:`~fasttok.shared._document_blocks.Block` per block read (``docs``
    its documents as str; see the module's docstring for what a document
    is).

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
               block_size: int) -> Iterator[Block]:
    # "surrogatepass": a field naming a lone surrogate matches no key the
    # scanner reads, so json.loads reads every line
    name = field.encode("utf-8", "surrogatepass")
    sep = separator.encode("utf-8") if separator is not None else None
    with open(path, "rb") as f:
        reader = BlockReader(f, path, sep, block_size)
        for block in iter(reader.next, None):
            if block.invalid_utf8() >= 0:
                text = _decode(block.raw(), path, block.first_line, block.offset, errors)
                # UTF-8 is self-synchronising: bad bytes read as U+FFFD (or
                # dropped) neither make nor break a separator
                block.resplit(text.encode("utf-8"), sep)
            if format == "jsonl":
                for index, number, line in block.read_json(name):
                    block.set_document(index, _json_document(line.decode("utf-8"), path,
                                                             block.first_line + number, field))
            yield block


def _decode(data: bytes, path: str, line: int, offset: int, errors: str) -> str:
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise DocumentFileError(
            path, f"bytes that are not UTF-8 ({exc.reason}); pass errors='replace' to read them "
            f"as U+FFFD, or errors='ignore' to drop them",
            line=line + data.count(b"\n", 0, exc.start), offset=offset + exc.start) from None


def _json_document(line: str, path: str, number: int, field: str) -> str:
    # a line the compiled scanner left to json.loads: its verdict and words
    import json  # here: `import fasttok` imports this module, and json only a rare line needs

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
    return text


def job_cache_entries(paths: list, setting: int, threads: int = 1) -> int:
    """The pre-token cache entries each of the ``threads`` threads of a file
    job over ``paths`` gets for the call (a power of two), ``setting`` being
    the process's; 0 when that is not more than ``setting`` (the thread's
    own table serves): one entry every :data:`JOB_CACHE_BYTES` bytes of the
    files, at most :data:`JOB_CACHE_SCALE` times ``setting`` for all the
    threads together.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "d.txt")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"x" * 100_000)
    >>> job_cache_entries([path], 1024), job_cache_entries([path], 16), job_cache_entries([path], 0)
    (0, 256, 0)
    >>> job_cache_entries([path], 16, threads=2)
    128
    """
    size = 0
    for path in paths:
        try:
            size += os.stat(path).st_size
        except (OSError, ValueError):
            pass  # the reader names what is wrong with it
    wanted = min(size // JOB_CACHE_BYTES, JOB_CACHE_SCALE * setting // max(1, threads))
    entries = 1 << (wanted.bit_length() - 1) if wanted else 0
    return entries if entries > setting else 0


def _check_specials(block: Block, find: Callable[[int], int],
                    special_error: Callable[[int], str]) -> None:
    # One search of the whole block for a disallowed special (a search per
    # document cost a call each); only when it finds one are the documents
    # searched, to name the line. One found only across two documents is
    # in none of them.
    if find(-1) < 0:
        return
    for i in range(len(block)):
        found = find(i)
        if found >= 0:
            raise DocumentFileError(block.path, special_error(found), line=block.line_of(i))


def encode_files(model: Any, paths: Union[str, os.PathLike, Iterable], *,
                 allowed: Optional[bytes], disallowed: Optional[bytes],
                 special_error: Callable[[int], str], num_threads: int,
                 batch: Callable[[list, Optional[bytes]], tuple], **read: Any) -> RaggedIds:
    """The ids of every document of ``paths`` (read as :func:`read_documents`
    reads them with the options ``read``), encoded by ``model``: special
    tokens ``allowed`` selects are matched (``None``: none), and one that
    ``disallowed`` selects raises :class:`~fasttok.errors.DocumentFileError`
    naming its line, with ``special_error(index)`` as its words. A model
    with ``document_encoder()`` encodes on ``num_threads`` threads (at most
    one a CPU) without a str per document; any other takes each block's
    documents through ``batch(docs, allowed)``, which gives ``(ids,
    offsets)`` as ``encode_many_flat`` does.

    >>> import os, tempfile
    >>> from fasttok.formats._byte_bpe import CoreBPE
    >>> from fasttok.shared._tables import TokenTables
    >>> path = os.path.join(tempfile.mkdtemp(), "d.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("ab\\nba\\n")
    >>> core = CoreBPE(TokenTables([b"a", b"b", b"ab"]), {}, scanner="gpt2")
    >>> encode_files(core, path, allowed=None, disallowed=None, special_error=str,
    ...              num_threads=1, batch=core.encode_many_flat).to_lists()
    [[2], [1, 0]]
    """
    paths = _paths(paths)
    blocks = read_documents(paths, **read)
    if getattr(model, "document_encoder", None) is None:
        ids, offsets = array("I"), array("Q", [0])
        # on more than one thread the next block is read while this one is
        # encoded; one thread stays one thread
        for block in read_ahead(blocks) if num_threads > 1 else blocks:
            docs = block.docs
            if disallowed is not None:
                _check_specials(block, lambda i: model.find_special(
                    block.text() if i < 0 else docs[i], disallowed), special_error)
            append_flat(ids, offsets, *batch(docs, allowed))
        return RaggedIds(ids, offsets)
    from fasttok.shared._piece_cache import entries

    threads = max(1, min(num_threads, os.cpu_count() or 1))
    job = FileJob(model, allowed, threads,
                  cache_entries=job_cache_entries(paths, entries(), threads))
    done: list = []

    def run() -> None:
        try:
            for block in blocks:
                if disallowed is not None:
                    _check_specials(block, lambda i: job.find_special(block, disallowed, i),
                                    special_error)
                job.add(block)
            done.append(job.finish())
        finally:
            job.stop()  # the helpers return once no chunk is left

    on_threads(run, job.work, threads)
    return RaggedIds(*done[0])
