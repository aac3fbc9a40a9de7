"""Run tiktoken's own test suite against fasttok.

tiktoken's tests are tiktoken's: this script fetches the sdist (``pip
download tiktoken==VERSION --no-binary :all:``, or ``--sdist PATH``),
extracts its ``tests/`` into a temporary folder and runs pytest there with a
stand-in ``tiktoken`` package first on ``PYTHONPATH`` (so subprocesses the
tests start see it too). The stand-in puts fasttok's modules in
``sys.modules`` under tiktoken's names:

    tiktoken -> fasttok            tiktoken.core -> fasttok.core
    tiktoken.model -> fasttok.model   tiktoken.registry -> fasttok.registry
    tiktoken.load -> fasttok.tiktoken_load

Nothing is installed. The rank files come from ``FASTTOK_VOCAB_DIR`` (or
``--vocab-dir``), so the tests need no network beyond the download.

    python tools/run_tiktoken_suite.py --sdist tiktoken-0.14.0.tar.gz --vocab-dir DATA/vocab/tiktoken

Exit status: pytest's. Extra arguments after ``--`` go to pytest.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "0.14.0"

SHIM = '''"""Stand-in for tiktoken: fasttok under tiktoken's module names (tools/run_tiktoken_suite.py)."""
import sys

import fasttok
import fasttok.core
import fasttok.model
import fasttok.registry
import fasttok.tiktoken_load

sys.modules.update({
    "tiktoken": fasttok,
    "tiktoken.core": fasttok.core,
    "tiktoken.model": fasttok.model,
    "tiktoken.registry": fasttok.registry,
    "tiktoken.load": fasttok.tiktoken_load,
})
'''


# A pytest plugin the run loads (-p): hypothesis (>= 6.131) feeds string
# constants of "local" modules, those outside site-packages, into st.text();
# an editable install makes fasttok's modules local, and the literal
# "<|endoftext|>" then reaches test_hyp_roundtrip, whose plain encode() raises
# on it in tiktoken as in fasttok. Installed tiktoken is never mined, so
# fasttok's files are marked not local, as an installed fasttok's would be.
AS_INSTALLED = '''"""fasttok's modules are not hypothesis's local code (tools/run_tiktoken_suite.py)."""
import os

import fasttok

_ROOT = os.path.dirname(os.path.abspath(fasttok.__file__)) + os.sep

try:
    from hypothesis.internal.conjecture import providers
except ImportError:
    providers = None

if providers is not None and hasattr(providers, "is_local_module_file"):
    _is_local = providers.is_local_module_file

    def _not_fasttok(path):
        return not os.path.abspath(path).startswith(_ROOT) and _is_local(path)

    providers.is_local_module_file = _not_fasttok
'''


def fetch_sdist(dest: Path, version: str) -> Path:
    """Download tiktoken's sdist into ``dest`` with pip (from its cache when it has it).

    pip reads an sdist's metadata by preparing its build, which needs tiktoken's
    build requirement setuptools-rust: pip's own isolated build environment
    fetches it, so this environment need not have it."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--no-binary", ":all:", f"tiktoken=={version}", "-d", str(dest)], check=True)
    found = sorted(dest.glob(f"tiktoken-{version}.tar.gz"))
    if not found:
        raise SystemExit(f"pip left no tiktoken-{version}.tar.gz in {dest}")
    return found[0]


def extract_tests(sdist: Path, dest: Path) -> Path:
    """Extract the sdist's ``tests/`` folder into ``dest``; return its path."""
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers()
                   if m.isfile() and len(Path(m.name).parts) > 2 and Path(m.name).parts[1] == "tests"]
        if not members:
            raise SystemExit(f"{sdist}: no tests/ folder in the archive")
        for m in members:
            m.name = str(Path(*Path(m.name).parts[1:]))
        tar.extractall(dest, members=members, filter="data")
    return dest / "tests"


def write_shim(dest: Path) -> Path:
    """A folder holding the stand-in ``tiktoken`` package, to put first on PYTHONPATH."""
    package = dest / "shim" / "tiktoken"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(SHIM, encoding="utf-8")
    (package.parent / "fasttok_as_installed.py").write_text(AS_INSTALLED, encoding="utf-8")
    return package.parent


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", type=Path, help="tiktoken's sdist (default: pip download it)")
    parser.add_argument("--version", default=VERSION, help=f"tiktoken version (default {VERSION})")
    parser.add_argument("--vocab-dir", help="folder of .tiktoken files (default $FASTTOK_VOCAB_DIR)")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tiktoken-suite-") as tmp:
        work = Path(tmp)
        sdist = args.sdist or fetch_sdist(work / "sdist", args.version)
        tests = extract_tests(sdist, work / "suite")
        shim = write_shim(work)
        (work / "suite" / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(shim)] + [p for p in [env.get("PYTHONPATH")] if p])
        if args.vocab_dir:
            env["FASTTOK_VOCAB_DIR"] = str(Path(args.vocab_dir).resolve())
        env.setdefault("FASTTOK_CACHE_DIR", str(work / "cache"))
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "-p", "fasttok_as_installed",
                   "-c", str(work / "suite" / "pytest.ini"), "--rootdir", str(work / "suite"),
                   str(tests), *args.pytest_args]
        return subprocess.run(command, cwd=work / "suite", env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
