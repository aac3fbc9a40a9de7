"""The collector pause around reading large vocabularies: nests, spans
threads, and leaves the collector as it found it."""

from __future__ import annotations

import gc
import threading

import pytest

from fasttok.shared.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    gc.enable()


def test_collector_is_off_inside_and_on_again_after():
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collector_is_on_again_after_an_exception():
    with pytest.raises(KeyError):
        with gc_paused():
            raise KeyError
    assert gc.isenabled()


def test_nested_pause_ends_with_the_outer_one():
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collector_that_was_off_stays_off():
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_pauses_in_two_threads_end_with_the_last():
    inside, release = threading.Barrier(2), threading.Event()
    seen = []

    def other() -> None:
        with gc_paused():
            inside.wait()
            release.wait()

    thread = threading.Thread(target=other)
    thread.start()
    with gc_paused():
        inside.wait()
    seen.append(gc.isenabled())  # the other thread still pauses
    release.set()
    thread.join()
    assert seen == [False] and gc.isenabled()
