"""What `import fasttok` and a first `fasttok.load` import: only what they use.

Each test runs one fresh interpreter. The interpreter's own start-up may have
imported some of the named modules already (a `.pth` file can import certifi,
and with it pathlib and tempfile), so the child first drops them from
`sys.modules`: a module that comes back was imported again by fasttok.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import DATA, REPO_ROOT, missing_data_reason

T5 = DATA / "vocab" / "hf" / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json"

# the standard modules a program that only encodes never needs (each costs
# from a few tenths of a ms to several ms to import)
HEAVY = ("dataclasses", "inspect", "ast", "dis", "hashlib", "json", "base64", "secrets", "hmac",
         "numbers", "random", "tempfile", "zipfile", "pathlib", "certifi", "importlib.resources",
         "urllib")

_CHILD = r"""
import json, sys
heavy = json.loads(sys.argv[1])
for name in list(sys.modules):
    if any(name == h or name.startswith(h + ".") for h in heavy):
        del sys.modules[name]
before = set(sys.modules)
import fasttok
after_import = set(sys.modules)
path = sys.argv[2]
if path:
    fasttok.load(path)
print(json.dumps({"import": sorted(after_import - before),
                  "load": sorted(set(sys.modules) - after_import)}))
if path:
    # the drop-in, built after the ids face in the same process
    import fasttok.hf
    enc = fasttok.hf.Tokenizer.from_file(path).encode("Hello world, it's a test.")
    print(json.dumps({"ids": enc.ids, "tokens": enc.tokens, "offsets": enc.offsets}))
"""


def _run(path: str = "", heavy: tuple = HEAVY) -> list:
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(heavy), path],
                         capture_output=True, text=True, check=True, cwd=REPO_ROOT.parent,
                         env={"FASTTOK_CACHE": "0", "PATH": "", "PYTHONPATH": str(REPO_ROOT)})
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_import_fasttok_imports_none_of_the_heavy_standard_modules():
    imported = set(_run()[0]["import"])
    assert not {m for m in imported if m.partition(".")[0] in HEAVY
                or m.startswith("importlib.resources")}


def test_loading_a_unigram_tokenizer_json_imports_no_drop_in_module_and_the_drop_in_works_after():
    if not T5.is_file():
        pytest.skip(missing_data_reason(T5))
    tokenizers = pytest.importorskip("tokenizers")
    modules, drop_in = _run(str(T5))
    loaded = set(modules["load"])
    assert "fasttok.models._unigram" in loaded  # the load did build the file's stages
    assert not loaded & {"fasttok.hf", "fasttok.post_processors.padding",
                         "fasttok.post_processors.truncation", "fasttok.post_processors.pipeline",
                         "fasttok.decoders.hf_stream", "json", "hashlib", "secrets",
                         "numbers", "dataclasses"}
    expected = tokenizers.Tokenizer.from_file(str(T5)).encode("Hello world, it's a test.")
    assert drop_in == {"ids": expected.ids, "tokens": expected.tokens,
                       "offsets": [list(o) for o in expected.offsets]}
