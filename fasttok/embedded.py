"""The rank files that ship inside the package, so that tiktoken's named
encodings load with no network and nothing else installed.

``fasttok/ranks/<file>.gz`` holds OpenAI's ``r50k_base``, ``p50k_base``,
``cl100k_base`` and ``o200k_base`` rank files, gzip-compressed (written by
``tools/embed_rank_files.py``). Every name tiktoken knows is built from one
of these four (gpt2 = r50k, p50k_edit = p50k, o200k_harmony = o200k).

Why gzip: it is in every CPython (``zlib``, which pip itself needs), and it
decompresses and hashes cl100k_base / o200k_base in 11 / 22 ms; xz is
28 % smaller (0.56 / 1.15 MB against 0.78 / 1.69 MB) but 4 times slower to
read, and ``lzma`` is optional in CPython builds. The table cache
(:mod:`fasttok.table_cache`) makes that cost a first-load cost only.

The pins below are OpenAI's sha256 of each file uncompressed (as in
tiktoken's ``tiktoken_ext/openai_public.py``). ``setup.py`` refuses to build
when a shipped file does not decompress to its pin, and the rank file parser
checks it again whenever the file is read. This module imports nothing from
fasttok, so that ``setup.py`` can run it before anything is compiled.

>>> sorted(SHA256)[0]
'cl100k_base.tiktoken'
"""

from __future__ import annotations

import os
from typing import Optional

__all__ = ["SHA256", "FOLDER", "embedded_file", "check"]

SHA256 = {
    "r50k_base.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base.tiktoken": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ranks")


def embedded_file(filename: str, sha256: str) -> Optional[str]:
    """The path of the shipped, compressed copy of ``filename`` when the
    package has one whose pin is ``sha256``, else ``None``.

    >>> os.path.basename(embedded_file("cl100k_base.tiktoken", SHA256["cl100k_base.tiktoken"]))
    'cl100k_base.tiktoken.gz'
    >>> embedded_file("cl100k_base.tiktoken", "0" * 64) is None
    True
    """
    if SHA256.get(filename) != sha256.lower():
        return None
    path = os.path.join(FOLDER, filename + ".gz")
    return path if os.path.isfile(path) else None


def check() -> None:
    """Raise ``ValueError`` unless every pinned file is shipped and
    decompresses to its pin (``setup.py`` runs this before building)."""
    import gzip  # here, not above: a load from the table cache never decompresses
    import hashlib

    for filename, pin in SHA256.items():
        path = os.path.join(FOLDER, filename + ".gz")
        with open(path, "rb") as f:
            got = hashlib.sha256(gzip.decompress(f.read())).hexdigest()
        if got != pin:
            raise ValueError(f"{path}: decompresses to sha256 {got}, expected OpenAI's {pin}; "
                             f"rewrite it with tools/embed_rank_files.py")
