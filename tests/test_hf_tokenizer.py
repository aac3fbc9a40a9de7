"""``fasttok.hf.Tokenizer`` against ``tokenizers.Tokenizer`` on every shared ``tokenizer.json``.

For each file under ``vocab/hf`` (and ``vocab/hf/unigram``) both tokenizers
load the same file; on the lines of ``testcases/lines.jsonl``, a sample of
each corpus file (every line under ``-m slow``) and hypothesis text with the
file's added tokens spliced in, every field of the result must be equal:
``ids``, ``tokens``, ``offsets``, ``type_ids``, ``attention_mask``,
``special_tokens_mask``, ``word_ids``, ``sequence_ids`` and ``overflowing``
(recursively), for single sequences and pairs, with ``add_special_tokens``
true and false, with the file's own truncation and padding, and with the
truncation and padding strategies set by ``enable_truncation`` /
``enable_padding``. ``decode`` must give ``tokenizers``' text with and
without ``skip_special_tokens``.
"""

from __future__ import annotations

import contextlib
import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, missing_data_reason, read_jsonl, \
    read_text

tokenizers = pytest.importorskip("tokenizers")
from fasttok.hf import Tokenizer  # noqa: E402

HF = DATA / "vocab" / "hf"
FILES = ("llama3", "qwen3", "gpt4o", "llama2", "gemma3", "all-MiniLM-L6-v2",
         "unigram/botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto.json",
         "unigram/botchan_unigram_5000.v4.57.6.AlbertTokenizer.json",
         "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json",
         "unigram/botchan_unigram_5000.v5.24.0.from_spm_proto.json",
         "unigram/kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json",
         "unigram/kyoto_ja_unigram_8000.v5.24.0.from_spm_proto.json")
FIELDS = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
          "word_ids", "sequence_ids")
SAMPLE_EVERY = 100
CORPUS = sorted((DATA / "corpus").glob("*.txt")) if not DATA_MISSING else []


def _path(name: str):
    path = HF / name if name.endswith(".json") else HF / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return str(path)


@functools.lru_cache(maxsize=None)
def _loaded(name: str) -> tuple:
    path = _path(name)
    return Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(path)


@contextlib.contextmanager
def _reconfigured(name: str):
    # the shared pair with the file's own truncation and padding put back
    # afterwards, so no test pays for a second load of a large file
    pair = _loaded(name)
    saved = [(t.truncation, t.padding) for t in pair]
    try:
        yield pair
    finally:
        for t, (truncation, padding) in zip(pair, saved):
            t.no_truncation()
            t.no_padding()
            if truncation is not None:
                t.enable_truncation(**truncation)
            if padding is not None:
                t.enable_padding(**padding)


@pytest.fixture(params=FILES)
def name(request):
    return request.param


def _fields(enc) -> dict:
    out = {f: list(getattr(enc, f)) for f in FIELDS}
    out["offsets"] = [tuple(o) for o in out["offsets"]]
    out["overflowing"] = [_fields(o) for o in enc.overflowing]
    return out


def _first_difference(a: dict, b: dict) -> str:
    for key in a:
        if a[key] != b[key]:
            if key == "overflowing":
                return f"overflowing: {a[key]!r} != {b[key]!r}"[:400]
            i = next((i for i, (x, y) in enumerate(zip(a[key], b[key])) if x != y),
                     min(len(a[key]), len(b[key])))
            return (f"{key}[{i}]: ours {a[key][i:i + 4]!r} theirs {b[key][i:i + 4]!r} "
                    f"(lengths {len(a[key])}, {len(b[key])})")
    return ""


def _compare(ours, theirs, inputs: list, *, pair: bool = False, add_special_tokens: bool = True):
    bad = []
    for i, item in enumerate(inputs):
        args = item if pair else (item,)
        mine = _fields(ours.encode(*args, add_special_tokens=add_special_tokens))
        ref = _fields(theirs.encode(*args, add_special_tokens=add_special_tokens))
        if mine != ref:
            bad.append(f"input {i} {item!r:.80}: {_first_difference(mine, ref)}")
    assert not bad, f"{len(bad)} of {len(inputs)} differ; first: " + "\n".join(bad[:5])


def _lines() -> list:
    path = DATA / "testcases" / "lines.jsonl"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return [row["text"] for row in read_jsonl(path)]


def _corpus_lines(every: int) -> list:
    if not CORPUS:
        pytest.skip(MISSING_DATA_REASON)
    lines = []
    for path in CORPUS:
        lines += read_text(path).split("\n")[::every]
    return lines


@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_every_field_equals_tokenizers_on_every_shared_test_line(name, add_special_tokens):
    ours, theirs = _loaded(name)
    _compare(ours, theirs, _lines(), add_special_tokens=add_special_tokens)


def test_every_field_equals_tokenizers_on_a_sample_of_every_corpus_file(name):
    ours, theirs = _loaded(name)
    _compare(ours, theirs, _corpus_lines(SAMPLE_EVERY))


@pytest.mark.slow
def test_every_field_equals_tokenizers_on_every_corpus_line(name):
    ours, theirs = _loaded(name)
    _compare(ours, theirs, _corpus_lines(1))


@pytest.mark.slow
def test_ids_equal_tokenizers_on_every_corpus_file_whole(name):
    ours, theirs = _loaded(name)
    for path in CORPUS:
        text = read_text(path)
        assert ours.encode(text).ids == theirs.encode(text).ids, path.name


@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_pairs_equal_tokenizers(name, add_special_tokens):
    ours, theirs = _loaded(name)
    lines = _lines()
    pairs = list(zip(lines[::7], lines[3::7]))
    _compare(ours, theirs, pairs, pair=True, add_special_tokens=add_special_tokens)


def test_pretokenized_input_equals_tokenizers(name):
    ours, theirs = _loaded(name)
    words = [line.split() for line in _lines()[::5]]
    for w in words:
        assert _fields(ours.encode(w, is_pretokenized=True)) == \
            _fields(theirs.encode(w, is_pretokenized=True)), w


@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second"])
@pytest.mark.parametrize("direction", ["right", "left"])
@pytest.mark.parametrize("stride", [0, 3])
def test_truncation_equals_tokenizers(strategy, direction, stride):
    for name in ("all-MiniLM-L6-v2", "llama3",
                 "unigram/kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json"):
        with _reconfigured(name) as (ours, theirs):
            for t in (ours, theirs):
                t.no_padding()
                t.enable_truncation(12, stride=stride, strategy=strategy, direction=direction)
            lines = [x for x in _lines() if len(x) > 30][:24]
            outcomes = []
            for a, b in zip(lines[::2], lines[1::2]):
                results = []
                for t in (ours, theirs):
                    try:
                        results.append(_fields(t.encode(a, b)))
                    except (KeyboardInterrupt, SystemExit):
                        raise
                    except BaseException:  # tokenizers panics where truncation cannot be done
                        results.append("raised")
                outcomes.append(results[0] == results[1])
        assert all(outcomes), f"{name}: {outcomes.count(False)} of {len(outcomes)} differ"


@pytest.mark.parametrize("direction", ["right", "left"])
@pytest.mark.parametrize("length,multiple", [(None, None), (40, None), (None, 8)])
def test_padding_equals_tokenizers_in_batches(direction, length, multiple):
    for name in ("all-MiniLM-L6-v2", "gemma3"):
        with _reconfigured(name) as (ours, theirs):
            for t in (ours, theirs):
                t.no_truncation()
                t.enable_padding(direction=direction, pad_id=0, pad_type_id=1,
                                 pad_token="[PAD]", length=length, pad_to_multiple_of=multiple)
            batch = _lines()[:30]
            mine = [_fields(e) for e in ours.encode_batch(batch)]
            ref = [_fields(e) for e in theirs.encode_batch(batch)]
        assert mine == ref, name


def test_the_files_own_truncation_and_padding_apply():
    ours, theirs = _loaded("all-MiniLM-L6-v2")
    assert ours.truncation == theirs.truncation
    assert ours.padding == theirs.padding
    text = " ".join(_lines()[:40])
    assert _fields(ours.encode(text)) == _fields(theirs.encode(text))


@pytest.mark.parametrize("skip", [True, False])
def test_decode_equals_tokenizers(name, skip):
    ours, theirs = _loaded(name)
    ids = [theirs.encode(x).ids for x in _lines()]
    assert ours.decode_batch(ids, skip_special_tokens=skip) == \
        theirs.decode_batch(ids, skip_special_tokens=skip)


def test_vocabulary_queries_equal_tokenizers(name):
    ours, theirs = _loaded(name)
    assert ours.get_vocab_size() == theirs.get_vocab_size()
    assert ours.get_vocab_size(False) == theirs.get_vocab_size(False)
    assert ours.get_vocab() == theirs.get_vocab()
    assert ours.get_vocab(with_added_tokens=False) == theirs.get_vocab(with_added_tokens=False)
    for i in range(0, theirs.get_vocab_size(), 97):
        token = theirs.id_to_token(i)
        assert ours.id_to_token(i) == token
        assert ours.token_to_id(token) == theirs.token_to_id(token)
    assert ours.id_to_token(10**9) is None and ours.token_to_id("\x00not a token\x00") is None
    for pair in (False, True):
        assert ours.num_special_tokens_to_add(pair) == theirs.num_special_tokens_to_add(pair)


def _added_token_text(name: str):
    _, theirs = _loaded(name)
    added = [t.content for t in theirs.get_added_tokens_decoder().values()][:50]
    pieces = st.text(st.characters(codec="utf-8"), max_size=12)
    if added:
        pieces = st.one_of(pieces, st.sampled_from(added), st.sampled_from([" ", "  ", "\n"]))
    return st.lists(pieces, max_size=8).map("".join)


@pytest.mark.parametrize("name", FILES)
def test_every_field_equals_tokenizers_on_hypothesis_text(name):
    ours, theirs = _loaded(name)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=True)
    @given(_added_token_text(name))
    def check(text):
        assert _fields(ours.encode(text)) == _fields(theirs.encode(text))

    check()
