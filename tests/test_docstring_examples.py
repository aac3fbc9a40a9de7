"""The examples in the docstrings of the public modules run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

def _modules() -> list:
    # every module of the installed package, compiled ones and those of
    # subpackages included (fasttok.loaders is a folder of its own)
    import pkgutil

    import fasttok
    import fasttok.loaders

    names = {"fasttok", "fasttok.loaders"}
    for package in (fasttok, fasttok.loaders):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.name.endswith("__main__"):
                names.add(info.name)
    return sorted(names)


def _source_modules(root) -> set:
    """The module name of every ``.py`` and ``.pyx`` file of the source tree at ``root``."""
    names = set()
    for folder, package in (("fasttok", "fasttok"), ("loaders", "fasttok.loaders")):
        base = root / folder
        for path in base.rglob("*"):
            if path.suffix not in (".py", ".pyx") or path.stem == "__main__":
                continue
            parts = path.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.add(".".join((package, *parts)))
    return names


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_every_module_of_the_source_tree_is_collected(request):
    root = request.config.rootpath
    if not (root / "fasttok").is_dir():
        pytest.skip(f"no source tree at {root}")
    missing = _source_modules(root) - set(MODULES)
    assert not missing, f"modules whose docstring examples are not run: {sorted(missing)}"
