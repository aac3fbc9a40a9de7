"""Fuzzed vocabulary files load and encode, or fail with a ``VocabularyFileError``.

The cases are made by ``tests/fuzzing.py`` (structure-aware mutations of tiny
hand-built seeds and, now and then, of the real files under
``$FASTTOK_DATA``) and run in worker processes under an address-space limit,
so that a crash or a hang is pinned to its case. Every case must load and
then encode and decode the hostile texts without error, or raise
``VocabularyFileError`` from the load, within a CPU second and a peak RSS
of 20x its file size plus a fixed allowance.

The default run does ``$FASTTOK_FUZZ_CASES`` (300) cases per format;
``pytest -m slow`` runs ``$FASTTOK_FUZZ_SLOW_CASES`` (10000) more per format.
A failure lists the mutation kinds behind it, writes the first failing files
to a temporary folder and gives the command that reruns one case.
"""

from __future__ import annotations

import os

import pytest

from fuzzing import FORMATS, HOSTILE_TEXTS, Limits, Suite, make_case, run_cases

DEFAULT_CASES = int(os.environ.get("FASTTOK_FUZZ_CASES", "300"))
SLOW_CASES = int(os.environ.get("FASTTOK_FUZZ_SLOW_CASES", "10000"))
# Bounds for the runner's own tests: a spinning case is killed after 2 s of
# CPU, a sleeping one after 2 s without any.
QUICK_HANG = Limits(hang_seconds=2, stall_seconds=2)


@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzzed_files_load_and_encode_or_raise_vocabulary_file_error(fmt):
    report = run_cases(fmt, range(DEFAULT_CASES))
    if report.failures():
        pytest.fail(report.describe(), pytrace=False)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_ten_thousand_more_fuzzed_files_per_format_do_too(fmt):
    report = run_cases(fmt, range(DEFAULT_CASES, DEFAULT_CASES + SLOW_CASES))
    print(report.describe())
    if report.failures():
        pytest.fail(report.describe(), pytrace=False)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_case_is_the_same_bytes_every_time(fmt):
    first = [make_case(fmt, i) for i in range(20)]
    again = [make_case(fmt, i) for i in range(20)]
    assert [c.data for c in first] == [c.data for c in again]
    assert len({c.data for c in first}) > 15


def test_hostile_texts_include_lone_surrogates_and_long_runs():
    assert any("\ud800" in t for t in HOSTILE_TEXTS)
    assert max(map(len, HOSTILE_TEXTS)) >= 3000


def test_runner_pins_crash_hang_and_exception_to_their_cases():
    # selftest cases: id % 6 -> ok, raise, crash, sleep forever, allocate 200 MB, spin forever
    report = run_cases("selftest", range(6), batch=6, workers=1, limits=QUICK_HANG)
    outcomes = [r.outcome for r in report.results]
    assert outcomes == ["ok", "exception", "crash", "timeout", "ok", "timeout"]
    assert "signal 11" in report.results[2].detail
    assert "without using CPU" in report.results[3].detail
    assert "of CPU" in report.results[5].detail


def test_runner_times_a_case_from_its_start_not_from_the_worker_start_up():
    # A start-up far longer than the hang bound (a loaded machine) is no hang.
    slow_start = Suite("selftest", ("-c", "import time, sys; time.sleep(2); sys.path.insert(0, "
                                    f"{os.path.dirname(__file__)!r}); import fuzzing; "
                                    "sys.argv[1:] = ['worker', 'selftest']; fuzzing.worker_main()"),
                       lambda case_id: (), lambda case_id, folder: [""])
    report = run_cases(slow_start, [0, 1], workers=1,
                       limits=Limits(hang_seconds=1, stall_seconds=1))
    assert [r.outcome for r in report.results] == ["ok", "exception"]


def test_runner_measures_peak_rss_per_case():
    report = run_cases("selftest", [0, 4, 6], batch=3, workers=1)
    growth = [r.rss_growth >> 20 for r in report.results]
    assert growth[1] >= 190 and growth[0] < 50 and growth[2] < 50
    assert [r.problems for r in report.results] == [[], ["rss"], []]
