"""Hugging Face post-processors against ``tokenizers`` 0.23.3, field by field.

Each test builds a WordLevel ``tokenizers.Tokenizer`` over the example's words
(:mod:`hf_encodings`), attaches a post-processor, and compares every field of
``encode`` (single and pair, with and without special tokens) with fasttok's
post-processing of the same model output: TemplateProcessing (both template
spellings, multi-token special tokens, type ids past 1), BertProcessing,
RobertaProcessing and ByteLevel (offset trimming, with ``add_prefix_space``),
Sequence, no post-processor; ``added_tokens``; the ids-only form; the
post-processors of every shared ``tokenizer.json``; the JSON reader's
spellings and errors.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, Mismatches
from hf_encodings import attempt, compare, from_json, inputs, reference, text_of

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import processors  # noqa: E402

from fasttok.errors import FasttokError  # noqa: E402
from fasttok.loaders.hf_stage_json import post_processor_from_json  # noqa: E402
from fasttok.post_processors.bert import BertProcessing  # noqa: E402
from fasttok.post_processors.byte_level import ByteLevel  # noqa: E402
from fasttok.post_processors.pipeline import post_process  # noqa: E402
from fasttok.post_processors.roberta import RobertaProcessing  # noqa: E402
from fasttok.post_processors.sequence import Sequence  # noqa: E402
from fasttok.post_processors.template import TemplateProcessing  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
WORDS = st.lists(st.sampled_from("a b c dd e ff ggg".split()), max_size=7)
# words that carry spaces, for ByteLevel's trimming: split on "|" instead
SPACED = st.lists(st.text(st.sampled_from("aĠ \u3000\x1c\xa0"), min_size=1, max_size=4),
                  max_size=6)
SPECIALS = [("[CLS]", 1001), ("[SEP]", 1002), ("<cls>", 1003)]
MULTI = {"id": "[M]", "ids": [2001, 2002, 2003], "tokens": ["<m1>", "<m2>", "<m3>"]}
TEMPLATES = [
    ("$A", "$A:0 $B:1"),
    ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
    ("$A [SEP] <cls>:2", "$A [SEP] $B:1 [SEP]:1 <cls>:2"),
    ("[M] $0 [M]:1", "$B:1 [M] $A:3 [CLS]:2"),
    ("$1 [SEP]", "[CLS] $b:0 [SEP] $a:5 [SEP]"),
    ("$A $A:1", "$A $B $A:2 $B:3"),
    ("[CLS] $", "$:1 [M] $B"),
]


def _reference_template(single, pair):
    return processors.TemplateProcessing(single=single, pair=pair,
                                         special_tokens=SPECIALS + [MULTI])


def _check(found: Mismatches, tok, ours_pp, a_words, b_words, add: bool, split_on_bar=False):
    a = text_of(a_words, split_on_bar)
    b = None if b_words is None else text_of(b_words, split_on_bar)
    theirs = attempt(tok.encode, a, b, add_special_tokens=add)
    enc, pair = inputs(tok, a, b)
    ours = attempt(post_process, enc, pair, add, ours_pp)
    found.check(compare(ours, theirs), f"{a!r} | {b!r} | special={add}")


def _run(words_a, words_b, theirs_pp, ours_pp, what: str, split_on_bar=False):
    tok = reference(words_a + (words_b or []), split_on_bar)
    tok.post_processor = theirs_pp
    found = Mismatches(what)
    for b in (None, words_b):
        for add in (True, False):
            _check(found, tok, ours_pp, words_a, b, add, split_on_bar)
    found.assert_none()


@SETTINGS
@given(WORDS, WORDS, st.sampled_from(TEMPLATES))
def test_template_processing_matches_tokenizers(a, b, template):
    single, pair = template
    _run(a, b, _reference_template(single, pair),
         TemplateProcessing(single, pair, SPECIALS + [MULTI]), f"template {template}")


@pytest.mark.parametrize("template", TEMPLATES)
def test_template_list_of_strings_is_the_string_template(template):
    single, pair = template
    ours = TemplateProcessing(single.split(" "), pair.split(" "), SPECIALS + [MULTI])
    _run(["a", "b"], ["c"], _reference_template(single, pair), ours, f"template list {template}")


@SETTINGS
@given(WORDS, WORDS)
def test_bert_processing_matches_tokenizers(a, b):
    _run(a, b, processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101)),
         BertProcessing(("[SEP]", 102), ("[CLS]", 101)), "bert")


@SETTINGS
@given(SPACED, SPACED, st.booleans(), st.booleans())
def test_roberta_processing_matches_tokenizers(a, b, trim, prefix):
    _run(a, b, processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=trim,
                                            add_prefix_space=prefix),
         RobertaProcessing(("</s>", 2), ("<s>", 0), trim, prefix),
         f"roberta trim={trim} prefix={prefix}", split_on_bar=True)


@SETTINGS
@given(SPACED, SPACED, st.booleans(), st.booleans())
def test_byte_level_trims_offsets_as_tokenizers(a, b, trim, prefix):
    _run(a, b, processors.ByteLevel(trim_offsets=trim, add_prefix_space=prefix),
         ByteLevel(prefix, trim), f"byte level trim={trim} prefix={prefix}", split_on_bar=True)


@SETTINGS
@given(SPACED, SPACED, st.sampled_from(TEMPLATES[:4]))
def test_sequence_of_byte_level_and_template_matches_tokenizers(a, b, template):
    single, pair = template
    theirs = processors.Sequence([processors.ByteLevel(trim_offsets=True),
                                  _reference_template(single, pair)])
    ours = Sequence([ByteLevel(True, True), TemplateProcessing(single, pair, SPECIALS + [MULTI])])
    _run(a, b, theirs, ours, f"sequence {template}", split_on_bar=True)


@SETTINGS
@given(WORDS, WORDS)
def test_no_post_processor_matches_tokenizers(a, b):
    _run(a, b, None, None, "no post-processor")


@pytest.mark.parametrize("template", TEMPLATES)
def test_added_tokens_match_tokenizers(template):
    theirs = _reference_template(*template)
    ours = TemplateProcessing(*template, SPECIALS + [MULTI])
    for pair in (False, True):
        assert ours.added_tokens(pair) == theirs.num_special_tokens_to_add(pair)
    for theirs, ours in ((processors.BertProcessing(("[SEP]", 1), ("[CLS]", 2)),
                          BertProcessing(("[SEP]", 1), ("[CLS]", 2))),
                         (processors.RobertaProcessing(("</s>", 1), ("<s>", 2)),
                          RobertaProcessing(("</s>", 1), ("<s>", 2))),
                         (processors.ByteLevel(), ByteLevel())):
        for pair in (False, True):
            assert ours.added_tokens(pair) == theirs.num_special_tokens_to_add(pair)


@pytest.mark.parametrize("template", [t for t in TEMPLATES if t[0].count("$") == 1])
def test_ids_only_form_gives_the_ids_of_the_template(template):
    tok = reference(["a", "b", "c"])
    tok.post_processor = _reference_template(*template)
    ours = TemplateProcessing(*template, SPECIALS + [MULTI]).ids_only()
    for text in ("", "a", "a b c c"):
        model_ids = tok.encode(text, add_special_tokens=False).ids
        assert ours(model_ids) == tok.encode(text).ids


@pytest.mark.parametrize("single", ["$A $A", "[CLS]", "[CLS] $A [SEP] $A"])
def test_ids_only_form_places_the_input_as_often_as_the_template_does(single):
    plain, tok = reference(["a", "b", "c"]), reference(["a", "b", "c"])
    tok.post_processor = _reference_template(single, "$A $B")
    ours = TemplateProcessing(single, "$A $B", SPECIALS).ids_only()
    for text in ("", "a b"):
        assert ours(plain.encode(text).ids) == tok.encode(text).ids


SEQUENCES_OF_ADDING_PROCESSORS = [
    ("bert twice", [processors.BertProcessing(("[SEP]", 1), ("[CLS]", 2))] * 2,
     [BertProcessing(("[SEP]", 1), ("[CLS]", 2))] * 2),
    # the second template takes the first one's special token and input as a pair
    ("template, byte level, template",
     [_reference_template("[CLS] $A", "$A [SEP] $B:1"), processors.ByteLevel(),
      _reference_template("[CLS] $A", "$A [SEP] $B:1")],
     [TemplateProcessing("[CLS] $A", "$A [SEP] $B:1", SPECIALS), ByteLevel(),
      TemplateProcessing("[CLS] $A", "$A [SEP] $B:1", SPECIALS)]),
]


@pytest.mark.parametrize("label,theirs,ours", SEQUENCES_OF_ADDING_PROCESSORS,
                         ids=[s[0] for s in SEQUENCES_OF_ADDING_PROCESSORS])
def test_ids_only_form_of_a_sequence_whose_processors_each_add_tokens(label, theirs, ours):
    plain, tok = reference(["a", "b", "c"]), reference(["a", "b", "c"])
    tok.post_processor = processors.Sequence(theirs)
    ids_only = Sequence(ours).ids_only()
    for text in ("", "a", "a b c c"):
        assert ids_only(plain.encode(text).ids) == tok.encode(text).ids, label


def test_ids_only_form_refuses_a_single_template_using_the_pair():
    with pytest.raises(FasttokError, match=r"uses \$B"):
        TemplateProcessing("$B", "$A $B").ids_only()


def test_template_without_both_inputs_in_the_pair_is_refused():
    with pytest.raises(FasttokError, match="both sequences"):
        TemplateProcessing("$A", "$A [CLS]", SPECIALS)


def test_template_with_an_undefined_special_token_is_refused():
    with pytest.raises(FasttokError, match="Missing SpecialToken"):
        TemplateProcessing("[X] $A", "$A $B", SPECIALS)


@pytest.mark.parametrize("bad", ["$C", "$A:", "$A:x", "a:1:2", "$-1"])
def test_template_piece_spellings_tokenizers_refuses_are_refused(bad):
    with pytest.raises(Exception):
        processors.TemplateProcessing(single=bad, pair="$A $B")
    with pytest.raises(FasttokError):
        TemplateProcessing(bad, "$A $B")


# ------------------------------------------------------------- JSON specs

def _fail(where, problem):
    return ValueError(f"{where}: {problem}")


def _shared_files():
    if DATA_MISSING:
        return []
    hf = DATA / "vocab" / "hf"
    return sorted(hf.glob("*/tokenizer.json")) + sorted((hf / "unigram").glob("*.json"))


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("path", _shared_files(), ids=lambda p: p.parent.name + "/" + p.name)
def test_post_processor_of_every_shared_file_matches_tokenizers(path):
    spec = json.loads(path.read_text(encoding="utf-8"))["post_processor"]
    ours = post_processor_from_json(spec, "$.post_processor", _fail)
    theirs = from_json("post_processor", spec).post_processor
    found = Mismatches(f"{path.name} post_processor")
    for a, b in ((["a", "b"], None), ([], None), (["a"], ["b", "c"]), ([], []),
                 (["Ġa", "bĠ", "Ġ"], ["ĠĠc"])):
        tok = reference(a + (b or []))
        tok.post_processor = theirs
        for add in (True, False):
            _check(found, tok, ours, a, b, add)
    found.assert_none()


BERT = {"sep": ["[SEP]", 1], "cls": ["[CLS]", 2]}
ROBERTA = {**BERT, "trim_offsets": False, "add_prefix_space": True}
BYTE_LEVEL = {"add_prefix_space": False, "trim_offsets": True}
TEMPLATE = {"single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [7, 8], "tokens": ["x", "y"]}}}
ACCEPTED = [
    ("bert", {"type": "BertProcessing", **BERT}),
    ("roberta", {"type": "RobertaProcessing", **ROBERTA}),
    ("roberta without its flags reads as bert", {"type": "RobertaProcessing", **BERT}),
    ("bert with roberta's flags reads as roberta", {"type": "BertProcessing", **ROBERTA}),
    ("byte level without use_regex", {"type": "ByteLevel", **BYTE_LEVEL}),
    ("byte level", {"type": "ByteLevel", **BYTE_LEVEL, "use_regex": False}),
    ("template, pair without $B", {"type": "TemplateProcessing", **TEMPLATE}),
    ("sequence", {"type": "Sequence", "processors": [{"type": "ByteLevel", **BYTE_LEVEL},
                                                     {"type": "BertProcessing", **BERT}]}),
]


@pytest.mark.parametrize("label,spec", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_json_spellings_tokenizers_accepts_read_the_same(label, spec):
    ours = post_processor_from_json(spec, "$.post_processor", _fail)
    theirs = from_json("post_processor", spec).post_processor
    assert type(ours).__name__ == type(theirs).__name__
    found = Mismatches(label)
    for a, b in ((["a", "b"], None), (["Ġa"], ["b", "cĠ"])):
        tok = reference(a + (b or []))
        tok.post_processor = theirs
        for add in (True, False):
            _check(found, tok, ours, a, b, add)
    found.assert_none()


REFUSED = [
    ("byte level without trim_offsets", {"type": "ByteLevel", "add_prefix_space": True},
     "$.post_processor.trim_offsets"),
    ("bert id too large", {"type": "BertProcessing", "sep": ["[SEP]", 2 ** 32],
                           "cls": ["[CLS]", 1]}, "$.post_processor.sep[1]"),
    ("template piece without type_id",
     {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A"}}], "pair": [],
      "special_tokens": {}}, "$.post_processor.single[0].Sequence.type_id"),
    ("template sequence C",
     {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "C", "type_id": 0}}],
      "pair": [], "special_tokens": {}}, "$.post_processor.single[0].Sequence.id"),
    ("template string spelling", {"type": "TemplateProcessing", "single": "$A", "pair": "$A $B",
                                  "special_tokens": {}}, "$.post_processor.single"),
    ("sequence item wrong", {"type": "Sequence", "processors": [{"type": "ByteLevel"}]},
     "$.post_processor.processors[0].add_prefix_space"),
]


@pytest.mark.parametrize("label,spec,where", REFUSED, ids=[r[0] for r in REFUSED])
def test_json_tokenizers_refuses_is_refused_naming_the_field(label, spec, where):
    with pytest.raises(Exception):
        from_json("post_processor", spec)
    with pytest.raises(ValueError) as err:
        post_processor_from_json(spec, "$.post_processor", _fail)
    assert str(err.value).startswith(where + ":")


@pytest.mark.parametrize("spec", [BERT, {"type": "Nope", **BERT}], ids=["no type", "unknown"])
def test_json_post_processor_needs_a_known_type(spec):
    # tokenizers goes by the fields whatever "type" says; fasttok asks for a known one
    with pytest.raises(ValueError, match=r"^\$\.post_processor\.type: unknown post-processor"):
        post_processor_from_json(spec, "$.post_processor", _fail)


def test_json_template_naming_an_undefined_special_token_is_refused():
    # tokenizers reads it and fails only when it adds the token
    spec = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "X", "type_id": 0}}],
            "pair": [], "special_tokens": {}}
    with pytest.raises(ValueError, match=r"single\[0\].SpecialToken.id: special token 'X'"):
        post_processor_from_json(spec, "$.post_processor", _fail)


def test_json_null_is_no_post_processor():
    assert post_processor_from_json(None, "$.post_processor", _fail) is None
