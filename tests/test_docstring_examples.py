"""The examples in the docstrings of the public modules run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

def _modules() -> list:
    # every module of the installed package, compiled ones included
    import pkgutil

    import fasttok
    import fasttok.loaders

    names = {"fasttok", "fasttok.loaders"}
    for package in (fasttok, fasttok.loaders):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            if not info.name.endswith("__main__"):
                names.add(info.name)
    return sorted(names)


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
