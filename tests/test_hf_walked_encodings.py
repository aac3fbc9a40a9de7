"""A walked encoding (the arrays of a compiled walk, each field made on first
use, the post-processor's wrapping folded in) equals the encoding the stages
make and post-process, field by field.

The walk here is a stand-in that gives the stages' own answer as arrays, so
what is specified is the glue alone: :meth:`Encoding.walked`,
:meth:`PostProcessor.single_wrap` and when :class:`HFPipeline` may use them
(truncation and padding that leave one input alone).
"""

from __future__ import annotations

import gc
import pickle
import weakref
from array import array

import pytest

from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.formats.hf_walks import Walk
from fasttok.loaders.hf_tokenizer_json import load_tokenizer_json
from fasttok.post_processors._encoding_lists import walked_encoding
from fasttok.post_processors.encoding import Encoding, WalkedEncoding
from fasttok.post_processors.processor import PostProcessor
from fasttok.post_processors.template import TemplateProcessing
from conftest import DATA

FILES = ["llama3", "qwen3", "gemma3", "llama2", "all-MiniLM-L6-v2",
         "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json"]
TEXTS = ["", "Hello world!", "  two  spaces\n\nand lines", "héllo wörld ☃ 😀 日本語",
         "a [SEP] b <s> c </s>", "x" * 300]
STRINGS = [""] * 7 + ["hi"]  # id 7's token string
FIELDS = Encoding.__slots__ + ("sequence_ids", "n_sequences")


class StagesAsWalk(Walk):
    """The stages' encoding of a text, given back as a walk's arrays."""

    def __init__(self, pipeline) -> None:
        self.pipeline = pipeline
        self.calls = 0

    def ids(self, text, allowed):
        return None

    def encode(self, text, allowed):
        self.calls += 1
        e = self.pipeline._encode_staged(text, 0, None, allowed)
        strings = self.pipeline._token_strings
        odd = {i: token for i, (token_id, token) in enumerate(zip(e.ids, e.tokens))
               if strings[token_id] != token}
        return (array("I", e.ids), array("i", [x for span in e.offsets for x in span]),
                array("i", e.word_ids), odd)


def _path(name: str) -> str:
    path = DATA / "vocab" / "hf" / (name if name.endswith(".json") else f"{name}/tokenizer.json")
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return str(path)


def _pipelines(name: str):
    record = load_tokenizer_json(_path(name))
    staged = pipeline_from_document(record)
    staged.walk = None
    walked = pipeline_from_document(record)
    walked.walk = StagesAsWalk(walked)
    return staged, walked


def _same(a: Encoding, b: Encoding) -> None:
    for field in FIELDS:
        assert getattr(a, field) == getattr(b, field), field
    assert len(a.overflowing) == len(b.overflowing)
    for x, y in zip(a.overflowing, b.overflowing):
        _same(x, y)


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_walked_encoding_equals_the_staged_one(name, add_special_tokens):
    staged, walked = _pipelines(name)
    for text in TEXTS:
        _same(walked.encode(text, add_special_tokens=add_special_tokens),
              staged.encode(text, add_special_tokens=add_special_tokens))
    assert walked.walk.calls >= len(TEXTS)


@pytest.mark.parametrize("name", ["llama3", "all-MiniLM-L6-v2"])
def test_walked_encoding_equals_the_staged_one_when_truncation_cuts(name):
    staged, walked = _pipelines(name)
    for pipe in (staged, walked):
        pipe.set_truncation(5, 1, "longest_first", "right")
    for text in TEXTS:
        _same(walked.encode(text), staged.encode(text))


@pytest.mark.parametrize("name", ["gemma3", "all-MiniLM-L6-v2"])
def test_walked_batch_equals_the_staged_one_with_padding(name):
    staged, walked = _pipelines(name)
    for length, multiple in ((None, None), (40, None), (None, 8)):
        for pipe in (staged, walked):
            pipe.set_padding("left", 3, 1, "<pad>", length, multiple)
        for a, b in zip(walked.encode_batch(TEXTS), staged.encode_batch(TEXTS)):
            _same(a, b)


def test_walked_pairs_and_pre_tokenized_input_equal_the_staged_ones():
    staged, walked = _pipelines("all-MiniLM-L6-v2")
    _same(walked.encode("first one", "second"), staged.encode("first one", "second"))
    _same(walked.encode(["pre", "tokenized words"], is_pretokenized=True),
          staged.encode(["pre", "tokenized words"], is_pretokenized=True))


def test_a_walked_encoding_makes_a_new_list_each_time_a_field_is_read():
    # as tokenizers' getters: nothing read is kept alive by the encoding
    e = Encoding.walked(array("I", [7]), array("i", [0, 2]), array("i", [0]), STRINGS)
    e.ids.append(8)
    assert e.ids == [7]
    assert e.offsets == [(0, 2)] and not e._walked.kept


def test_a_subclass_of_the_walked_class_reads_its_fields_as_the_class_does():
    # (the class's own encodings are read at its slot's place; others by name)
    class Sub(WalkedEncoding):
        __slots__ = ("extra",)

    args = (array("I", [7]), array("i", [0, 2]), array("i", [0]), STRINGS, 0, None, None, None)
    mine, sub = walked_encoding(WalkedEncoding, *args), walked_encoding(Sub, *args)
    assert type(sub) is Sub
    _same(sub, mine)


def test_a_walked_encoding_is_left_to_reference_counting_until_a_field_is_kept():
    e = Encoding.walked(array("I", [7]), array("i", [0, 2]), array("i", [0]), STRINGS)
    assert not gc.is_tracked(e) and not gc.is_tracked(e._walked)
    e.ids = [8]
    assert gc.is_tracked(e) and gc.is_tracked(e._walked)


def test_a_walked_encoding_changed_in_place_is_tracked():
    e = Encoding.walked(array("I", [7]), array("i", [0, 2]), array("i", [0]), STRINGS)
    e.pad(3, pad_id=0)
    assert gc.is_tracked(e) and gc.is_tracked(e._walked)


def test_a_cycle_through_a_kept_field_is_collected():
    class Marker:
        pass

    e = Encoding.walked(array("I", [7]), array("i", [0, 2]), array("i", [0]), STRINGS)
    marker = Marker()
    gone = weakref.ref(marker)
    e.tokens = [e, marker]  # e -> its fields -> the kept list -> e
    del e, marker
    gc.collect()
    assert gone() is None


def test_a_walked_encoding_keeps_what_a_stage_changes():
    walked = Encoding.walked(array("I", [7]), array("i", [0, 2]), array("i", [0]), STRINGS)
    plain = Encoding([7], ["hi"], [(0, 2)], [0])
    for e in (walked, plain):
        e.set_sequence_id(1)
        e.pad(3, pad_id=0)
    _same(walked, plain)
    assert walked.ids == [7, 0, 0]


def test_a_walked_encoding_pickles_as_its_lists():
    strings = ["x"] * 100_000
    e = Encoding.walked(array("I", [7]), array("i", [0, 2]), array("i", [0]), strings)
    data = pickle.dumps(e)
    assert len(data) < 1_000
    assert pickle.loads(data) == e


def test_a_template_that_repeats_its_input_is_not_a_wrapping():
    assert TemplateProcessing("$A $A", "$A $B", []).single_wrap(True) is None


def test_a_template_wraps_one_input_with_its_special_tokens_and_type_id():
    wrap = TemplateProcessing("[CLS]:1 $A:2 [SEP]:3", "$A $B", [("[CLS]", 1), ("[SEP]", 2)]
                              ).single_wrap(True)
    assert (wrap.head.ids, wrap.head.type_ids, wrap.type_id, wrap.tail.ids, wrap.tail.type_ids) \
        == ([1], [1], 2, [2], [3])


def test_the_base_post_processor_is_the_empty_wrapping():
    wrap = PostProcessor().single_wrap(False)
    assert (wrap.head.ids, wrap.type_id, wrap.tail.ids) == ([], 0, [])
