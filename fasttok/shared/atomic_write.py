"""Replace a file all at once: a reader, a crash or a full disk leaves the
old file or the new one, never a prefix of the new one.

Every fasttok writer (the ``.tiktoken``, ``vocab.txt``, ``tokenizer.json``,
GGUF and SentencePiece ``.model`` writers, ``fasttok train --out``, the table
cache) goes through :func:`write_atomically`. Opening the target with ``"wb"``
would truncate a good vocabulary first, and a prefix of a rank file or of a
``vocab.txt`` loads as a valid, smaller vocabulary that gives other ids.

The bytes go to a temporary file in the target's folder (a rename is atomic
only within one file system), are flushed and fsynced, and the temporary file
is renamed over the target; then the folder is fsynced so the rename itself
survives a crash. On any failure the temporary file is removed and the target
is untouched. A symbolic link is followed (the file it names is replaced, the
link kept), and a target that exists but is no regular file (``/dev/null``, a
named pipe) is written in place, since renaming over it would replace the
device or the pipe.
"""

from __future__ import annotations

import os
import stat
from typing import Optional, Union

__all__ = ["write_atomically"]

_CREATE = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
           | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))


def write_atomically(path: Union[str, "os.PathLike[str]"], data: bytes, *,
                     mode: Optional[int] = None, durable: bool = True) -> None:
    """Replace the file at ``path`` with ``data`` in one step.

    The new file's permissions are ``mode`` less the umask when given (set
    from the moment the file exists, so a 0o600 file is never open to
    others), else the old file's, else 0o666 less the umask.
    ``durable=False`` skips the two fsyncs, for a file whose loss in a crash
    costs nothing (a cache checked on every read).

    >>> import tempfile; p = os.path.join(tempfile.mkdtemp(), "v.txt")
    >>> write_atomically(p, b"new\\n"); open(p, "rb").read()
    b'new\\n'
    """
    target = os.path.realpath(os.fspath(path))
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        with open(target, "wb") as f:
            f.write(data)
        return
    folder = os.path.dirname(target)
    fd, temp = _create_temporary(folder, os.path.basename(target), 0o666 if mode is None else mode)
    try:
        try:
            if mode is None and old is not None:
                # the umask applied at creation; the old file's own bits are kept
                os.chmod(temp, stat.S_IMODE(old.st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    if durable:
        _sync_folder(folder)


def _create_temporary(folder: str, name: str, mode: int) -> tuple:
    # a new file beside the target, created exclusively (O_EXCL, no symlink
    # followed) so nothing planted under a guessed name is written through;
    # secrets imported here (with hmac and hashlib, ~3 ms at import):
    # fasttok.hf imports this module for Tokenizer.save alone
    import secrets

    for _ in range(100):
        temp = os.path.join(folder, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(temp, _CREATE, mode), temp
        except FileExistsError:
            continue
        except OSError as exc:
            # a missing or read-only folder: name the file asked for, not the temporary name
            raise type(exc)(exc.errno, exc.strerror, os.path.join(folder, name)) from None
    raise FileExistsError(f"{folder}: could not create a temporary file beside {name}")


def _sync_folder(folder: str) -> None:
    # The rename is done and the new file in place; a folder that cannot be
    # opened or fsynced (Windows, some network and FUSE file systems) still
    # holds it, so that is no failure of the write.
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
