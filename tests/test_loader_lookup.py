"""Which reader ``fasttok.load`` picks, and when it looks for plugins.

Readers registered by plugins come after the built-in ones: a file a built-in
reader names or claims by its first bytes is that reader's, so it is found
without scanning the installed packages; any other file waits for the scan,
and a plugin that claims it by content comes before a built-in suffix.
"""

from __future__ import annotations

import pytest

from fasttok import registry
from fasttok.registry import Loader


@pytest.fixture
def no_plugins_yet(monkeypatch):
    scans = []
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    monkeypatch.setattr(registry, "LOADERS", list(registry.LOADERS))
    monkeypatch.setattr(registry, "_load_plugins", lambda: scans.append(1))
    return scans


def test_file_a_built_in_reader_claims_by_content_needs_no_plugin_scan(tmp_path, no_plugins_yet):
    path = tmp_path / "vocab.bin"
    path.write_bytes(b"GGUF" + bytes(60))
    assert registry.find_loader(str(path)).name == "gguf"
    assert no_plugins_yet == []


def test_format_a_built_in_reader_names_needs_no_plugin_scan(tmp_path, no_plugins_yet):
    assert registry.find_loader(str(tmp_path / "absent"), "tiktoken").name == "tiktoken"
    assert no_plugins_yet == []


def test_file_claimed_only_by_suffix_waits_for_the_plugins(tmp_path, no_plugins_yet):
    path = tmp_path / "ranks.tiktoken"
    path.write_bytes(b"YQ== 0\n")
    assert registry.find_loader(str(path)).name == "tiktoken"
    assert no_plugins_yet == [1]


def test_plugin_claiming_by_content_comes_before_a_built_in_suffix(tmp_path, monkeypatch,
                                                                   no_plugins_yet):
    plugin = Loader("mine", lambda path: None, sniff=lambda head: head.startswith(b"MINE"))
    monkeypatch.setattr(registry, "_load_plugins", lambda: registry.LOADERS.append(plugin))
    path = tmp_path / "ranks.tiktoken"
    path.write_bytes(b"MINE 0\n")
    assert registry.find_loader(str(path)) is plugin


def test_format_only_a_plugin_names_is_found_after_the_scan(tmp_path, monkeypatch,
                                                            no_plugins_yet):
    plugin = Loader("mine", lambda path: None)
    monkeypatch.setattr(registry, "_load_plugins", lambda: registry.LOADERS.append(plugin))
    assert registry.find_loader(str(tmp_path / "absent"), "mine") is plugin
