"""The layering of fasttok's modules, checked on their import statements.

One line: loaders import only the vocabulary record, errors and the shared
core (the byte-level alphabet, the charsmap checks); the shared core imports
only the record; stages import only the shared core (and their
own stage); formats compose stages, and so do trainers (a trainer runs a
pre-tokenizer and builds what a model reads); the registry names components by string;
``Encoding`` sees only the model interface, the registry and the bulk helpers
(files read in blocks, ragged and padded id arrays) and the inference
helpers, which see only each other (an encoding hands them its calls). Every import
counts, including those inside functions, and ``cimport`` lines of the
compiled modules. No module may import itself back through others, and none
reaches into another module's private names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# modules every layer may use: the vocabulary record, errors and plain data
RECORD = {"fasttok.errors", "fasttok.vocab", "fasttok.embedded", "fasttok.version",
          "fasttok.pre_tokenizers.tiktoken_patterns"}
STAGES = ("normalizers", "pre_tokenizers", "models", "added_tokens", "post_processors",
          "decoders")
# what Encoding's file and array methods are made of
BULK = ("fasttok.shared.document_files", "fasttok.shared.ragged")
# the public API on top: they may use anything below them
API = {"fasttok", "fasttok.__main__", "fasttok.cli", "fasttok.table_cache",
       "fasttok.tokenizer_json", "fasttok.tiktoken_load", "fasttok.tiktoken_ext_plugins",
       "fasttok.model", "fasttok.hf"}


def _module_files() -> dict:
    found = {}
    for base, package in ((ROOT / "fasttok", "fasttok"), (ROOT / "loaders", "fasttok.loaders")):
        for path in sorted(base.rglob("*")):
            if path.suffix not in (".py", ".pyx", ".pxd") or "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([package] + parts)
            found.setdefault(name, []).append(path)
    return found


MODULES = _module_files()
_CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\s+([\w ,()]+)|c?import\s+([\w.]+))",
                            re.M)


def _targets(module: str, names: list) -> set:
    # "from fasttok.x import y": y when it is a module, else fasttok.x
    out = set()
    for name in names:
        sub = f"{module}.{name}"
        out.add(sub if sub in MODULES else module)
    return out


def _imports(name: str) -> set:
    found = set()
    for path in MODULES[name]:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Import):
                    found.update(a.name for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    found |= _targets(node.module, [a.name for a in node.names])
                elif isinstance(node, ast.ImportFrom):
                    raise AssertionError(f"{path}: relative import; fasttok imports absolutely")
        else:
            for m in _CYTHON_IMPORT.finditer(text):
                if m.group(1):
                    names = [n.strip().split(" as ")[0] for n in m.group(2).strip("() ").split(",")]
                    found |= _targets(m.group(1), [n for n in names if n])
                else:
                    found.add(m.group(3))
    return {f for f in found if f.split(".")[0] == "fasttok" and f != name}


GRAPH = {name: _imports(name) for name in MODULES}


def _layer(name: str) -> str:
    if name in RECORD:
        return "record"
    if name in API or name.startswith("fasttok.hf."):
        return "api"
    parts = name.split(".")
    if len(parts) >= 2 and parts[1] in ("loaders", "shared", "formats", "trainers",
                                        "inference") + STAGES:
        return "stage" if parts[1] in STAGES else parts[1]
    return {"fasttok.registry": "registry", "fasttok.core": "encoding",
            "fasttok._encode_entry": "encoding"}[name]


def _allowed(name: str, target: str) -> bool:
    layer, other = _layer(name), _layer(target)
    if other == "record" or layer == "api":
        return True
    if layer == "stage":
        return other == "shared" or (other == "stage" and target.split(".")[1] == name.split(".")[1])
    if layer == "formats":
        return other in ("shared", "stage", "loaders", "registry", "formats")
    if layer == "trainers":
        return other in ("shared", "stage", "loaders", "trainers")
    if layer == "encoding":
        return (other in ("encoding", "inference")
                or target in ("fasttok.registry", "fasttok.models.interface") + BULK)
    if layer == "inference":
        return other == "inference"
    if layer == "loaders":
        return other in ("shared", "loaders")
    return other == layer == "shared"


def test_every_module_has_a_layer():
    assert all(_layer(name) for name in MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_imports_only_the_layers_below(name):
    wrong = sorted(t for t in GRAPH[name] if t in MODULES and not _allowed(name, t))
    assert not wrong, f"{name} ({_layer(name)}) imports {wrong}"


def test_imports_name_existing_modules():
    missing = {name: sorted(t for t in targets if t not in MODULES)
               for name, targets in GRAPH.items()}
    assert not {k: v for k, v in missing.items() if v}


def test_no_import_cycle():
    index: dict = {}
    low: dict = {}
    stack: list = []
    cycles = []

    def visit(v: str) -> None:
        # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH.get(v, ()):
            if w not in MODULES:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    assert not cycles


def _private_definitions(tree: ast.Module) -> set:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.startswith("_"):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


PY_TREES = {name: ast.parse(paths[0].read_text(encoding="utf-8"))
            for name, paths in MODULES.items() if paths[0].suffix == ".py"}
DEFINED = {name: _private_definitions(tree) for name, tree in PY_TREES.items()}


@pytest.mark.parametrize("name", sorted(PY_TREES))
def test_module_uses_no_private_name_of_another(name):
    others = set().union(*(d for n, d in DEFINED.items() if n != name))
    used = set()
    for node in ast.walk(PY_TREES[name]):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fasttok"):
            used.update(a.name for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")
                        and f"{node.module}.{a.name}" not in MODULES)
        elif (isinstance(node, ast.Attribute) and node.attr.startswith("_")
              and not node.attr.startswith("__")
              and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
              and f"{ast.unparse(node.value)}.{node.attr}" not in MODULES
              and node.attr not in DEFINED[name]):
            used.add(node.attr)
    assert not sorted(used & others)
