"""Helper threads kept from one batch to the next
(:mod:`fasttok.shared.helper_threads`): a batch's helpers are the last
batch's (their per-thread caches warm), calls at once get helpers of their
own, a helper's error reaches the caller and leaves the helper usable, a helper
keeps nothing of a call once it ended, and a forked child starts helpers of
its own."""

from __future__ import annotations

import os
import signal
import threading
import weakref

import pytest

from fasttok.shared.helper_threads import run_with_helpers


def _helper_idents(count: int) -> set:
    seen: set = set()
    lock = threading.Lock()
    # every helper holds on until all have started, so each runs once
    ready = threading.Barrier(count)

    def note() -> None:
        ready.wait(timeout=30)
        with lock:
            seen.add(threading.current_thread())  # (an ident may be reused)

    run_with_helpers(lambda: None, note, count)
    return seen


def test_a_call_runs_the_helper_on_as_many_threads_as_asked():
    seen = _helper_idents(3)
    assert len(seen) == 3 and threading.current_thread() not in seen


def test_the_next_call_runs_on_the_helpers_kept_from_the_last():
    assert _helper_idents(2) == _helper_idents(2)


def test_calls_at_once_get_helpers_of_their_own():
    both = threading.Barrier(2)
    seen: list = []

    def call() -> None:
        # each call's helper waits for the other call's: they overlap
        run_with_helpers(lambda: None, lambda: (both.wait(timeout=30),
                                                seen.append(threading.current_thread())), 1)

    other = threading.Thread(target=call)
    other.start()
    call()
    other.join()
    assert len(set(seen)) == 2


def test_a_helpers_error_is_raised_in_the_caller_and_the_helper_is_kept():
    before = _helper_idents(1)

    def fail() -> None:
        raise KeyError("in a helper")

    with pytest.raises(KeyError, match="in a helper"):
        run_with_helpers(lambda: None, fail, 1)
    assert _helper_idents(1) == before


def test_a_helper_keeps_nothing_of_a_call_once_it_ended():
    # (a batch's job, and its results with it, lived on until the next batch)
    class Marker:
        pass

    marker = Marker()
    gone = weakref.ref(marker)
    run_with_helpers(lambda: None, lambda held=marker: None, 1)
    del marker
    assert gone() is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_runs_its_helpers_on_threads_of_its_own():
    _helper_idents(1)
    pid = os.fork()
    if pid == 0:  # the child: its helper must run (the parent's does not exist here)
        code = 1
        try:
            signal.alarm(20)  # a call waiting on the parent's helper ends the child
            code = 0 if len(_helper_idents(1)) == 1 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
