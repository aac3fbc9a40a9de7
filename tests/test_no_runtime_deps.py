"""fasttok has no runtime dependencies: using it imports only the standard
library and fasttok's own modules.

A fresh interpreter imports fasttok as installed, loads cl100k_base and
encodes; every module that this imported must be in
``sys.stdlib_module_names`` or be ``fasttok`` / ``fasttok.*``, and every
newly imported file must live in the standard library or inside the fasttok
package (whose ``loaders`` subpackage may sit in its own source folder in an
editable install).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import tomllib

from conftest import REPO_ROOT

SCRIPT = r"""
import sys
before = set(sys.modules)
import fasttok
enc = fasttok.get_encoding("cl100k_base")
ids = enc.encode("hi there")
assert enc.decode(ids) == "hi there", ids
enc.encode_batch(["hi", "there"], num_threads=2)
enc.decode_with_offsets(ids)
after = dict(sys.modules)
import json
print(json.dumps({
    "new": sorted(set(after) - before),
    "all": sorted(after),
    "files": {n: getattr(m, "__file__", None) for n, m in after.items()},
    "fasttok": fasttok.__file__,
}))
"""


def _run_fresh_interpreter(data_dir) -> dict:
    assert importlib.util.find_spec("fasttok") is not None, "fasttok is not importable"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["FASTTOK_VOCAB_DIR"] = str(data_dir / "vocab" / "tiktoken")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120, cwd=str(data_dir))
    assert proc.returncode == 0, (
        f"`import fasttok` + encode failed in a fresh interpreter:\n"
        f"{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _is_cython_runtime(name: str) -> bool:
    # Modules that Cython-compiled extensions create for themselves at import
    # (the shared runtime of fasttok's own extensions), not packages on disk.
    return name == "cython_runtime" or name.startswith("_cython_")


def test_only_stdlib_and_fasttok_modules_are_imported(data_dir):
    report = _run_fresh_interpreter(data_dir)
    foreign = [name for name in report["new"]
               if name.split(".")[0] not in sys.stdlib_module_names
               and name.split(".")[0] not in ("fasttok", "__main__")
               and not _is_cython_runtime(name)]
    assert not foreign, f"non-stdlib modules imported by fasttok: {foreign}"


def test_imported_files_come_from_stdlib_or_fasttok(data_dir):
    report = _run_fresh_interpreter(data_dir)
    package_dir = os.path.dirname(os.path.realpath(report["fasttok"]))
    allowed = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")}
    allowed.add(package_dir)
    allowed.add(os.path.dirname(os.path.realpath(report["files"]["fasttok.loaders"])))
    outside = []
    for name in report["new"]:
        path = report["files"].get(name)
        if path is None:  # built-in or namespace module
            continue
        real = os.path.realpath(path)
        if not any(real == root or real.startswith(root + os.sep) for root in allowed):
            outside.append((name, path))
    assert not outside, f"modules loaded from outside the stdlib and fasttok: {outside}"


def test_pyproject_declares_no_runtime_dependencies():
    with open(REPO_ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    assert project.get("dependencies", []) == []
