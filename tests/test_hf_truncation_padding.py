"""Truncation and padding against ``tokenizers`` 0.23.3, in its order: truncate,
post-process (overflowing pieces too), pad; batches padded to their longest.

Every strategy (LongestFirst, OnlyFirst, OnlySecond), direction and stride,
single and pair, with and without special tokens, under no post-processor,
BertProcessing, RobertaProcessing, ByteLevel then Bert, and multi-token
TemplateProcessings (one using each input twice); the errors where
``tokenizers`` fails (stride not below the length kept, the second sequence
missing or too short) must be ``FasttokError``s at the same inputs. Padding:
BatchLongest and Fixed, both directions, ``pad_to_multiple_of``, pad id, type
and token, one encoding and a batch. The ``truncation`` and ``padding`` of the
shared all-MiniLM-L6-v2 file, and the JSON spellings of both.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, Mismatches, missing_data_reason
from hf_encodings import attempt, compare, from_json, inputs, reference, text_of

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import processors  # noqa: E402

from fasttok.errors import FasttokError  # noqa: E402
from fasttok.loaders.hf_stage_json import post_processor_from_json  # noqa: E402
from fasttok.post_processors.bert import BertProcessing  # noqa: E402
from fasttok.post_processors.byte_level import ByteLevel  # noqa: E402
from fasttok.post_processors.hf_json import padding_from_json, truncation_from_json  # noqa: E402
from fasttok.post_processors.padding import PaddingParams  # noqa: E402
from fasttok.post_processors.pipeline import check_truncation, post_process, post_process_batch  # noqa: E402
from fasttok.post_processors.roberta import RobertaProcessing  # noqa: E402
from fasttok.post_processors.sequence import Sequence  # noqa: E402
from fasttok.post_processors.template import TemplateProcessing  # noqa: E402
from fasttok.post_processors.truncation import TruncationParams  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
VOCAB = "a b c d e f g h i j".split()
WORDS = st.lists(st.sampled_from(VOCAB), max_size=12)
STRATEGIES = ("longest_first", "only_first", "only_second")
SPECIALS = [("[CLS]", 101), ("[SEP]", 102), {"id": "[M]", "ids": [7, 8], "tokens": ["m1", "m2"]}]
PROCESSORS = {
    "none": (lambda: None, lambda: None),
    "bert": (lambda: processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101)),
             lambda: BertProcessing(("[SEP]", 102), ("[CLS]", 101))),
    "template": (lambda: processors.TemplateProcessing("[M] $A [SEP]", "[CLS] $A [M]:1 $B:1 [SEP]:2",
                                                       SPECIALS),
                 lambda: TemplateProcessing("[M] $A [SEP]", "[CLS] $A [M]:1 $B:1 [SEP]:2",
                                            SPECIALS)),
    "template, inputs twice": (
        lambda: processors.TemplateProcessing("$A [M] $A:1", "$B:1 [CLS] $A $B:2", SPECIALS),
        lambda: TemplateProcessing("$A [M] $A:1", "$B:1 [CLS] $A $B:2", SPECIALS)),
    "roberta": (lambda: processors.RobertaProcessing(("</s>", 2), ("<s>", 0)),
                lambda: RobertaProcessing(("</s>", 2), ("<s>", 0))),
    "byte level, bert": (
        lambda: processors.Sequence([processors.ByteLevel(),
                                     processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101))]),
        lambda: Sequence([ByteLevel(), BertProcessing(("[SEP]", 102), ("[CLS]", 101))])),
}


def _tokenizer(kind: str):
    tok = reference(VOCAB)
    tok.post_processor = PROCESSORS[kind][0]()
    return tok, PROCESSORS[kind][1]()


@SETTINGS
@given(WORDS, st.none() | WORDS, st.integers(0, 14), st.integers(0, 6),
       st.sampled_from(STRATEGIES), st.sampled_from(("left", "right")),
       st.sampled_from(sorted(PROCESSORS)), st.booleans())
def test_truncation_matches_tokenizers(a, b, max_length, stride, strategy, direction, kind, add):
    tok, ours_pp = _tokenizer(kind)
    params = TruncationParams(max_length=max_length, stride=stride, strategy=strategy,
                              direction=direction)
    theirs_set = attempt(tok.enable_truncation, max_length, stride=stride, strategy=strategy,
                         direction=direction)
    ours_set = attempt(check_truncation, params, ours_pp)
    assert isinstance(theirs_set, BaseException) == isinstance(ours_set, FasttokError), \
        (theirs_set, ours_set)
    if isinstance(theirs_set, BaseException):
        return
    ta, tb = text_of(a), None if b is None else text_of(b)
    theirs = attempt(tok.encode, ta, tb, add_special_tokens=add)
    enc, pair = inputs(tok, ta, tb)
    ours = attempt(post_process, enc, pair, add, ours_pp, params)
    problem = compare(ours, theirs)
    assert problem is None, f"{ta!r} | {tb!r} | {params} | {kind} | special={add}: {problem}"


@SETTINGS
@given(st.lists(st.tuples(WORDS, st.none() | WORDS), min_size=1, max_size=4),
       st.none() | st.integers(0, 16), st.sampled_from(("left", "right")),
       st.none() | st.integers(0, 5), st.integers(0, 9), st.integers(0, 3),
       st.sampled_from(("[PAD]", "<pad>")), st.sampled_from(sorted(PROCESSORS)), st.booleans(),
       st.none() | st.integers(2, 6))
def test_padding_of_a_batch_matches_tokenizers(batch, length, direction, multiple, pad_id,
                                               pad_type_id, pad_token, kind, add, max_length):
    tok, ours_pp = _tokenizer(kind)
    tok.enable_padding(direction=direction, pad_id=pad_id, pad_type_id=pad_type_id,
                       pad_token=pad_token, length=length, pad_to_multiple_of=multiple)
    truncation = None
    if max_length is not None:
        # stride 0 and room for the specials: overflowing pieces get padded too
        tok.enable_truncation(max_length + 5)
        truncation = TruncationParams(max_length=max_length + 5)
    padding = PaddingParams(length=length, direction=direction, pad_to_multiple_of=multiple,
                            pad_id=pad_id, pad_type_id=pad_type_id, pad_token=pad_token)
    texts = [(text_of(a), None if b is None else text_of(b)) for a, b in batch]
    theirs = tok.encode_batch([t if t[1] is not None else t[0] for t in texts],
                              add_special_tokens=add)
    ours = post_process_batch([inputs(tok, a, b) for a, b in texts], add, ours_pp, truncation,
                              padding)
    found = Mismatches(f"padding {padding} {kind} special={add}")
    for i, (x, y) in enumerate(zip(ours, theirs)):
        found.check(compare(x, y), f"{texts[i]}")
    found.assert_none()


@pytest.mark.parametrize("direction", ["left", "right"])
def test_padding_of_one_encoding_matches_tokenizers(direction):
    tok, ours_pp = _tokenizer("bert")
    tok.enable_padding(direction=direction, length=9, pad_to_multiple_of=4)
    padding = PaddingParams(length=9, direction=direction, pad_to_multiple_of=4)
    for text in ("", "a b", "a b c d e f g h i j"):
        enc, _ = inputs(tok, text, None)
        assert compare(post_process(enc, None, True, ours_pp, None, padding), tok.encode(text)) \
            is None


@pytest.mark.parametrize("strategy", ["only_first", "only_second"])
def test_truncating_a_sequence_too_short_fails_as_in_tokenizers(strategy):
    tok, ours_pp = _tokenizer("none")
    tok.enable_truncation(3, strategy=strategy)
    params = TruncationParams(max_length=3, strategy=strategy)
    a, b = ("a", "b c d e f") if strategy == "only_first" else ("a b c d", "e")
    with pytest.raises(Exception, match="too short"):
        tok.encode(a, b)
    enc, pair = inputs(tok, a, b)
    with pytest.raises(FasttokError, match="too short"):
        post_process(enc, pair, True, ours_pp, params)


def test_only_second_without_a_pair_fails_as_in_tokenizers():
    tok, ours_pp = _tokenizer("none")
    tok.enable_truncation(2, strategy="only_second")
    with pytest.raises(Exception, match="Second sequence not provided"):
        tok.encode("a b c")
    enc, _ = inputs(tok, "a b c", None)
    with pytest.raises(FasttokError, match="Second sequence not provided"):
        post_process(enc, None, True, ours_pp, TruncationParams(max_length=2,
                                                                 strategy="only_second"))


def test_stride_as_long_as_the_kept_length_fails_when_an_input_is_cut():
    # accepted when set (1 is not below the effective 3 - 2), refused when cutting
    tok, ours_pp = _tokenizer("bert")
    tok.enable_truncation(3, stride=1)
    params = TruncationParams(max_length=3, stride=1)
    check_truncation(params, ours_pp)
    with pytest.raises(BaseException, match="stride"):
        tok.encode("a b c")
    enc, _ = inputs(tok, "a b c", None)
    with pytest.raises(FasttokError, match="stride"):
        post_process(enc, None, True, ours_pp, params)


def test_max_length_below_the_special_tokens_truncates_nothing():
    tok, ours_pp = _tokenizer("bert")
    tok.enable_truncation(1)
    enc, _ = inputs(tok, "a b c", None)
    ours = post_process(enc, None, True, ours_pp, TruncationParams(max_length=1))
    assert compare(ours, tok.encode("a b c")) is None
    assert ours.ids == [101] + [tok.token_to_id(w) for w in "abc"] + [102]


# ------------------------------------------------------------------- JSON

def _fail(where, problem):
    return ValueError(f"{where}: {problem}")


MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"


@pytest.mark.skipif(DATA_MISSING or not MINILM.is_file(), reason=missing_data_reason(MINILM))
def test_all_minilm_truncation_and_padding_match_tokenizers():
    doc = json.loads(MINILM.read_text(encoding="utf-8"))
    truncation = truncation_from_json(doc["truncation"], "$.truncation", _fail)
    padding = padding_from_json(doc["padding"], "$.padding", _fail)
    processor = post_processor_from_json(doc["post_processor"], "$.post_processor", _fail)
    ref = from_json("post_processor", doc["post_processor"])
    tok = reference(VOCAB)
    tok.post_processor = ref.post_processor
    tok.enable_truncation(**{k: v for k, v in truncation.as_dict().items()})
    tok.enable_padding(**padding.as_dict())
    found = Mismatches("all-MiniLM-L6-v2 truncation + padding")
    for n, m in ((0, None), (3, None), (126, None), (127, None), (300, None), (100, 100),
                 (2, 200), (0, 0)):
        a = " ".join(VOCAB[i % 10] for i in range(n))
        b = None if m is None else " ".join(VOCAB[i % 7] for i in range(m))
        enc, pair = inputs(tok, a, b)
        ours = attempt(post_process, enc, pair, True, processor, truncation, padding)
        found.check(compare(ours, attempt(tok.encode, a, b)), f"{n} + {m} words")
    found.assert_none()


TRUNCATIONS = [
    {"max_length": 5, "strategy": "OnlySecond", "stride": 1},
    {"max_length": 5, "strategy": "LongestFirst", "stride": 0, "direction": "Left"},
    {"max_length": 0, "strategy": "OnlyFirst", "stride": 3, "direction": "Right"},
]
PADDINGS = [
    {"strategy": "BatchLongest", "direction": "Right", "pad_id": 3, "pad_type_id": 1,
     "pad_token": "<pad>"},
    {"strategy": {"Fixed": 7}, "direction": "Left", "pad_to_multiple_of": 4, "pad_id": 0,
     "pad_type_id": 0, "pad_token": "[PAD]"},
    {"strategy": {"Fixed": 7}, "direction": "Left", "pad_to_multiple_of": None, "pad_id": 0,
     "pad_type_id": 0, "pad_token": "[PAD]"},
]


@pytest.mark.parametrize("spec", TRUNCATIONS)
def test_truncation_json_reads_as_tokenizers_reads_it(spec):
    assert truncation_from_json(spec, "$.truncation", _fail).as_dict() == \
        from_json("truncation", spec).truncation


@pytest.mark.parametrize("spec", PADDINGS)
def test_padding_json_reads_as_tokenizers_reads_it(spec):
    assert padding_from_json(spec, "$.padding", _fail).as_dict() == \
        from_json("padding", spec).padding


BAD = [
    ("truncation", {"max_length": 5, "strategy": "LongestFirst"}, "$.truncation.stride"),
    ("truncation", {"max_length": 5, "stride": 0}, "$.truncation.strategy"),
    ("truncation", {"max_length": -1, "strategy": "OnlyFirst", "stride": 0},
     "$.truncation.max_length"),
    ("truncation", {"max_length": 5, "strategy": "OnlyFirst", "stride": 0, "direction": "left"},
     "$.truncation.direction"),
    ("padding", {"strategy": "BatchLongest", "pad_id": 0, "pad_type_id": 0, "pad_token": "x"},
     "$.padding.direction"),
    ("padding", {"strategy": "Fixed", "direction": "Left", "pad_id": 0, "pad_type_id": 0,
                 "pad_token": "x"}, "$.padding.strategy"),
    ("padding", {"strategy": "BatchLongest", "direction": "Left", "pad_type_id": 0,
                 "pad_token": "x"}, "$.padding.pad_id"),
    ("padding", {"strategy": "BatchLongest", "direction": "Left", "pad_id": 0,
                 "pad_type_id": 0}, "$.padding.pad_token"),
]


@pytest.mark.parametrize("kind,spec,where", BAD, ids=[b[2] for b in BAD])
def test_json_tokenizers_refuses_is_refused_naming_the_field(kind, spec, where):
    with pytest.raises(Exception):
        from_json(kind, spec)
    read = truncation_from_json if kind == "truncation" else padding_from_json
    with pytest.raises(ValueError) as err:
        read(spec, f"$.{kind}", _fail)
    assert str(err.value).startswith(where + ":")


def test_json_null_is_no_truncation_and_no_padding():
    assert truncation_from_json(None, "$.truncation", _fail) is None
    assert padding_from_json(None, "$.padding", _fail) is None
