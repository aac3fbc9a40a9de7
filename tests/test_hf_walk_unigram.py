"""The Unigram walk (``fasttok.formats.hf_unigram_path``) gives ``tokenizers``'
ids, character offsets and word indices, and the pipeline's stages' answer
for both of fasttok's faces.

The shared ``vocab/hf/unigram`` files are T5 (Precompiled, WhitespaceSplit
and Metaspace), ALBERT and XLNet (quote Replaces, Precompiled, a squeeze
of spaces) and the SentencePiece conversions (Precompiled, the four space
Replaces, Metaspace without split; byte fallback). Documents made from the
T5 file cover an XLM-R-style file (an ``lstrip`` mask token), every
Metaspace prepend scheme with and without split, WhitespaceSplit alone, no
normalizer, and byte fallback behind T5's pre-tokenizer.
"""

from __future__ import annotations

import copy
import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, missing_data_reason, read_jsonl, read_text, without_truncation_or_padding
from fasttok.formats import hf_walks
from fasttok.formats.hf import control_ids
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.formats.hf_unigram_path import UnigramLeadWalk, UnigramPathWalk
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.normalizers.precompiled import Precompiled

tokenizers = pytest.importorskip("tokenizers")

UNIGRAM_DIR = DATA / "vocab" / "hf" / "unigram"
SHARED = ("botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto",
          "botchan_unigram_5000.v4.57.6.AlbertTokenizer",
          "botchan_unigram_5000.v5.24.0.T5Tokenizer",
          "botchan_unigram_5000.v5.24.0.from_spm_proto",
          "kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer",
          "kyoto_ja_unigram_8000.v5.24.0.from_spm_proto")
T5 = "botchan_unigram_5000.v5.24.0.T5Tokenizer"
BYTES = "botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto"


def _shared(name: str) -> dict:
    path = UNIGRAM_DIR / f"{name}.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return json.loads(path.read_text(encoding="utf-8"))


def _metaspace(scheme: str, split: bool) -> dict:
    return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme,
            "split": split}


def _special(token_id: int, content: str, **flags) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True, **flags}


def _made(name: str) -> dict:
    # the documents made from the T5 file (see the module docstring)
    doc = copy.deepcopy(_shared(T5))
    charsmap = doc["normalizer"]
    if name == "xlmr_style":
        doc["normalizer"] = {"type": "Sequence", "normalizers": [
            charsmap, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
        doc["pre_tokenizer"] = _metaspace("always", True)
        doc["added_tokens"] = [_special(0, "<unk>"), _special(1, "<s>"), _special(2, "</s>"),
                               _special(5000, "<mask>", lstrip=True)]
    elif name.startswith(("meta_", "ws_meta_")):
        scheme, split = name.split("_")[-2:]
        pre = _metaspace(scheme, split == "split")
        doc["pre_tokenizer"] = pre if name.startswith("meta_") else {
            "type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, pre]}
    elif name == "ws_only":
        doc["pre_tokenizer"] = {"type": "WhitespaceSplit"}
    elif name == "no_normalizer":
        doc["normalizer"] = None
    elif name == "bytes_t5":
        pre = doc["pre_tokenizer"]
        doc = copy.deepcopy(_shared(BYTES))
        doc["normalizer"] = charsmap
        doc["pre_tokenizer"] = pre
    return doc


MADE = ("xlmr_style", "meta_first_split", "meta_never_whole", "ws_meta_first_split", "ws_only",
        "no_normalizer", "bytes_t5")
CONFIGS = SHARED + MADE


@functools.lru_cache(maxsize=None)
def _document(name: str) -> str:
    return json.dumps(_shared(name) if name in SHARED else _made(name))


@functools.lru_cache(maxsize=None)
def _walked(name: str, face: str) -> tuple:
    # (walk, pipeline): "hf" is tokenizers' face, "load" fasttok.load's
    # (special added tokens never made from text by the model)
    record = tokenizer_json_record(_document(name), f"{name}.json")
    never = control_ids(record) if face == "load" else frozenset()
    pipeline = pipeline_from_document(record, never=never)
    return hf_walks.walk_for(record, pipeline), pipeline


@functools.lru_cache(maxsize=None)
def _reference(name: str):
    theirs = without_truncation_or_padding(tokenizers.Tokenizer.from_str(_document(name)))
    return theirs


def _answer(walk, text: str, allowed=None) -> tuple:
    # (ids, offsets, words) of encode
    ids, offsets, words = walk.encode(text, allowed)[:3]
    return list(ids), list(zip(offsets[::2], offsets[1::2])), list(words)


def _unknown_texts(walk, text: str, allowed=None) -> dict:
    # encode's fourth item, which it gives only when some token is an unknown run
    found = walk.encode(text, allowed)
    assert len(found) == 3 or found[3]
    return found[3] if len(found) > 3 else {}


def _describe(text: str, got: tuple, want: tuple) -> str:
    for field, mine, theirs in zip(("ids", "offsets", "words"), got, want):
        if mine != theirs:
            i = next((k for k, (a, b) in enumerate(zip(mine, theirs)) if a != b),
                     min(len(mine), len(theirs)))
            return (f"{text!r}: {field} differ at token {i}: "
                    f"{mine[i:i + 3]} (walk) != {theirs[i:i + 3]}")
    return f"{text!r}: the ids alone differ"


def _first_difference_from_tokenizers(name: str, texts) -> str | None:
    walk, _ = _walked(name, "hf")
    theirs = _reference(name)
    for text in texts:
        encoding = theirs.encode(text, add_special_tokens=False)
        want = (encoding.ids, encoding.offsets, encoding.word_ids)
        got = _answer(walk, text)
        if got != want or walk.ids(text, None) != encoding.ids:
            return _describe(text, got, want)
        unknown = _unknown_texts(walk, text)
        if any(encoding.tokens[i] != token for i, token in unknown.items()):
            return f"{text!r}: unknown-run token strings {unknown} differ: {encoding.tokens}"
    return None


def _first_difference_from_stages(name: str, face: str, texts, allowed=None) -> str | None:
    walk, pipeline = _walked(name, face)
    for text in texts:
        staged = pipeline._encode_staged(text, 0, None, allowed)
        want = (staged.ids, [tuple(o) for o in staged.offsets], staged.word_ids)
        got = _answer(walk, text, allowed)
        ids = walk.ids(text, allowed)
        if got != want or ids != staged.ids:
            return _describe(text, got, want)
        unknown = _unknown_texts(walk, text, allowed)
        if any(staged.tokens[i] != token for i, token in unknown.items()):
            return f"{text!r}: unknown-run token strings {unknown} differ: {staged.tokens}"
    return None


def _lines() -> list:
    return [case["text"] for case in read_jsonl(DATA / "testcases" / "lines.jsonl")]


def _corpus(name: str, count: int) -> list:
    return read_text(DATA / "corpus" / f"{name}.txt").split("\n")[:count]


# --------------------------------------------------------------- which files walk
@pytest.mark.parametrize("name", CONFIGS)
def test_each_configuration_has_the_unigram_walk(name):
    walk, _ = _walked(name, "hf")
    assert isinstance(walk, UnigramPathWalk)


@pytest.mark.parametrize("normalizer", [
    {"type": "Lowercase"}, {"type": "NFKC"}, {"type": "Strip", "strip_left": True,
                                               "strip_right": True},
    {"type": "Replace", "pattern": {"Regex": "a+"}, "content": "b"}])
def test_a_normalizer_the_compiled_walk_does_not_run_runs_as_itself_before_it(normalizer):
    # tests/test_hf_walk_unigram_lead.py holds these walks to tokenizers
    doc = json.loads(_document(T5))
    doc["normalizer"] = normalizer
    record = tokenizer_json_record(json.dumps(doc), "t.json")
    assert isinstance(hf_walks.walk_for(record, pipeline_from_document(record)),
                      UnigramLeadWalk)


def test_a_pre_tokenizer_the_walk_does_not_run_leaves_the_file_to_the_stages():
    doc = json.loads(_document(T5))
    doc["pre_tokenizer"] = {"type": "Whitespace"}
    record = tokenizer_json_record(json.dumps(doc), "t.json")
    assert hf_walks.walk_for(record, pipeline_from_document(record)) is None


def test_a_model_without_an_unknown_id_leaves_the_file_to_the_stages():
    doc = json.loads(_document(BYTES))     # byte pieces: the loader takes it
    doc["model"]["unk_id"] = None
    record = tokenizer_json_record(json.dumps(doc), "t.json")
    assert hf_walks.walk_for(record, pipeline_from_document(record)) is None


# --------------------------------------------------------------- against tokenizers
def test_an_unknown_run_token_string_is_the_fourth_item_of_encode():
    # tokenizers' token string for an unknown run is its text, which no id gives
    walk, _ = _walked(T5, "hf")
    ids, _, words, unknown = walk.encode("x \u65e5\u672c", None)
    assert list(ids) == [16, 2109, 16, 2] and unknown == {3: "\u65e5\u672c"}
    assert _reference(T5).encode("x \u65e5\u672c", add_special_tokens=False).tokens[3] == \
        "\u65e5\u672c"


def test_a_text_without_unknown_runs_gives_three_items():
    walk, _ = _walked(T5, "hf")
    assert len(walk.encode("x y", None)) == 3


def test_t5_golden_ids_offsets_and_words():
    # "▁" and "!" both come from "!": the prepended ▁ takes its span
    walk, _ = _walked(T5, "hf")
    assert _answer(walk, "Hi  there <extra_id_0>!", None) == (
        [1012, 56, 5099, 16, 80], [(0, 2), (4, 9), (10, 22), (22, 23), (22, 23)],
        [0, 1, 2, 3, 3])


@pytest.mark.parametrize("name", CONFIGS)
def test_lines_match_tokenizers(name):
    lines = _lines()
    assert _first_difference_from_tokenizers(name, lines if name in SHARED else lines[:80]) is None


@pytest.mark.parametrize("name", SHARED)
@pytest.mark.parametrize("corpus", ["en", "code", "zh", "multi"])
def test_corpus_lines_match_tokenizers(name, corpus):
    assert _first_difference_from_tokenizers(name, _corpus(corpus, 40)) is None


@pytest.mark.slow
@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("corpus", ["en", "code", "zh", "multi"])
def test_many_corpus_lines_match_tokenizers(name, corpus):
    assert _first_difference_from_tokenizers(name, _corpus(corpus, 2000)) is None


EDGES = ["", " ", "   ", "\t\n", "a", " a", "a ", "  a  b  ", "\u2581", "\u2581a", "a\u2581\u2581b",
         "e\u0301", "\u0301a", "a\u0301\u0301\u0301", "\u0600\u0661", "\r\n", "a\r\nb", "\r",
         "\ufb03x", "\uff21\uff22", "\u200bab", "a\u200b", "\u00a8 x", "\U0001f600",
         "\U0001f44d\U0001f3fd", "\u0915\u094d\u0937", "x" * 300, "<s>", "a</s>b",
         "<extra_id_1> <extra_id_2>", " <mask> x", "x<mask>", "\u3000\u3000a",
         "\u1100\u1161\u11a8", "\U0001d165\U0001d16d", "say ``hi'' ```` '''' ''\u0301"]


@pytest.mark.parametrize("name", CONFIGS)
def test_edge_texts_match_tokenizers(name):
    assert _first_difference_from_tokenizers(name, EDGES) is None


@pytest.mark.parametrize("name", SHARED)
def test_each_charsmap_rule_between_letters_matches_tokenizers(name):
    # every character with a rule of its own, the last one too (its
    # replacement once ran on into the Replace stages' strings)
    _, pipeline = _walked(name, "hf")
    charsmap = next(s for s in getattr(pipeline.normalizer, "normalizers", [pipeline.normalizer])
                    if isinstance(s, Precompiled))
    chars = charsmap.rules.rule_chars()
    assert _first_difference_from_tokenizers(name, [f"a{c}b" for c in chars]) is None


_ALPHABET = st.sampled_from(list("ab  \t\n\r\u2581.,'`\"") + [
    "\u0301", "\u0308", "\u200d", "\u200b", "\u0600", "\ufb03", "\uff21", "\u00a8", "\u3000",
    "\u00e9", "\u65e5", "\u0915", "\u094d", "\U0001f600", "\U0001f3fd", "<s>", "</s>",
    "<extra_id_0>", "<mask>", "``", "''", "\u1100", "\u1161"])
_TEXTS = st.lists(_ALPHABET, max_size=24).map("".join) | st.text(max_size=24)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXTS, name=st.sampled_from(CONFIGS))
def test_hypothesis_text_matches_tokenizers(text, name):
    walk, _ = _walked(name, "hf")
    if walk.ids(text, None) is None:
        return   # declined: a lone surrogate (tested below)
    assert _first_difference_from_tokenizers(name, [text]) is None


# --------------------------------------------------------------- against the stages
@pytest.mark.parametrize("face", ["hf", "load"])
@pytest.mark.parametrize("name", CONFIGS)
def test_edge_texts_and_lines_match_the_stages_of_both_faces(name, face):
    texts = EDGES + _lines()[:25]
    assert _first_difference_from_stages(name, face, texts) is None


@pytest.mark.slow
@pytest.mark.parametrize("face", ["hf", "load"])
@pytest.mark.parametrize("name", CONFIGS)
def test_all_lines_match_the_stages_of_both_faces(name, face):
    assert _first_difference_from_stages(name, face, _lines()) is None


@pytest.mark.parametrize("name", ["xlmr_style", T5])
def test_added_tokens_not_allowed_are_text_for_the_walk_as_for_the_stages(name):
    texts = ["<s>a</s>", "x <mask> y", "<extra_id_0>b"]
    for face in ("hf", "load"):
        assert _first_difference_from_stages(name, face, texts, frozenset()) is None
        assert _first_difference_from_stages(name, face, texts, frozenset({1})) is None


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXTS, name=st.sampled_from(CONFIGS))
def test_hypothesis_text_matches_the_load_face_stages(text, name):
    walk, _ = _walked(name, "load")
    if walk.ids(text, None) is None:
        return
    assert _first_difference_from_stages(name, "load", [text]) is None


# --------------------------------------------------------------- declines
def test_a_lone_surrogate_is_declined():
    walk, _ = _walked(T5, "hf")
    assert walk.ids("a\ud800b", None) is None and walk.encode("\udfff", None) is None


# --------------------------------------------------------------- the pre-token cache and threads
def test_a_text_walked_again_gives_the_same_answer_from_the_cache():
    # the second walk takes every piece from the thread's pre-token cache
    # (tests/test_hf_walk_unigram_cache.py holds it to tokenizers)
    walk, _ = _walked(T5, "hf")
    texts = _corpus("en", 30) + ["\U0001f600 x\u0301y", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]
    first = [_answer(walk, text) for text in texts]
    assert [_answer(walk, text) for text in texts] == first
    assert [walk.ids(text, None) for text in texts] == [ids for ids, _, _ in first]


def test_threads_walking_together_give_the_serial_answers():
    import threading
    walk, _ = _walked("xlmr_style", "hf")
    texts = _corpus("multi", 40) + _corpus("en", 40)
    serial = [_answer(walk, text) for text in texts]
    found: dict = {}

    def work(k: int) -> None:
        order = texts[k:] + texts[:k]
        found[k] = [_answer(walk, text) for text in order]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert found[k] == serial[k:] + serial[:k]


@pytest.mark.slow
def test_the_cluster_classes_scan_of_some_planes_equals_a_scan_of_every_code_point():
    import re
    from fasttok.normalizers import precompiled
    every = "".join(map(chr, range(0x110000)))
    full = tuple("".join(re.findall(pattern, every)) for pattern in (
        precompiled._PREPEND, precompiled._control(), precompiled._extend()))
    assert precompiled.cluster_classes() == full
