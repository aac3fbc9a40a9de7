"""The SentencePiece-style BPE walk (``fasttok.formats.hf_bpe_path``) gives
``tokenizers``' ids, character offsets and word indices, and the pipeline's
stages' answer for both of fasttok's faces.

Llama 2 (Prepend and Replace) and Gemma 3 (Replace, a Split at spaces,
6,415 added tokens) are the shared files; small documents cover each
normalizer the walk takes, byte fallback with and without every byte
token, a model without an unknown token (dropped characters shift
tokenizers' offsets), and what the walk leaves to the stages.
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, missing_data_reason, read_text, without_truncation_or_padding
from fasttok.formats import hf_walks
from fasttok.formats.hf import control_ids
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.loaders.hf_tokenizer_json import load_tokenizer_json, tokenizer_json_record
from fasttok.models.hf_bpe import StretchWalker

tokenizers = pytest.importorskip("tokenizers")

SHARED = ("llama2", "gemma3")


def _path(name: str):
    path = DATA / "vocab" / "hf" / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return path


@functools.lru_cache(maxsize=None)
def _record(name: str):
    return load_tokenizer_json(str(_path(name)))


@functools.lru_cache(maxsize=None)
def _walked(name: str, face: str) -> tuple:
    # (walk, pipeline) of a shared file: "hf" is tokenizers' face, "load"
    # fasttok.load's (special added tokens never made from text)
    record = _record(name)
    never = control_ids(record) if face == "load" else frozenset()
    pipeline = pipeline_from_document(record, never=never)
    return hf_walks.walk_for(record, pipeline), pipeline


@functools.lru_cache(maxsize=None)
def _reference(name: str):
    theirs = without_truncation_or_padding(tokenizers.Tokenizer.from_file(str(_path(name))))
    return theirs


def _answer(walk, text: str, allowed=None) -> tuple:
    ids, offsets, words = walk.encode(text, allowed)
    return list(ids), list(zip(offsets[::2], offsets[1::2])), list(words)


def _first_difference(walk, theirs, texts) -> str | None:
    # the first text whose walk differs from tokenizers (ids alone, and ids,
    # offsets and words), described; None when all agree
    for text in texts:
        encoding = theirs.encode(text, add_special_tokens=False)
        want = (encoding.ids, encoding.offsets, encoding.word_ids)
        got = _answer(walk, text)
        if got != want or walk.ids(text, None) != encoding.ids:
            for field, mine, their in zip(("ids", "offsets", "words"), got, want):
                if mine != their:
                    i = next((k for k, (a, b) in enumerate(zip(mine, their)) if a != b),
                             min(len(mine), len(their)))
                    return (f"{text!r}: {field} differ at token {i}: "
                            f"walk {mine[i:i + 4]}, tokenizers {their[i:i + 4]}")
            return f"{text!r}: walk.ids {walk.ids(text, None)} != {encoding.ids}"
    return None


@pytest.fixture(scope="module", params=SHARED)
def shared(request):
    walk, _ = _walked(request.param, "hf")
    return walk, _reference(request.param)


def test_shared_sentencepiece_style_files_have_the_walk(shared):
    walk, _ = shared
    assert isinstance(walk, StretchWalker)


def test_test_lines_give_tokenizers_ids_offsets_and_words(shared):
    walk, theirs = shared
    lines = read_text(DATA / "testcases" / "lines.jsonl").splitlines()
    assert _first_difference(walk, theirs, [json.loads(line)["text"] for line in lines]) is None


def test_corpus_lines_give_tokenizers_ids_offsets_and_words(shared):
    walk, theirs = shared
    for path in sorted((DATA / "corpus").glob("*.txt")):
        lines = read_text(path).split("\n")
        assert _first_difference(walk, theirs, lines[::50]) is None, path.name


def test_a_whole_text_of_many_lines_gives_tokenizers_answer(shared):
    # Gemma 3's newlines are added tokens: every line is a split of its own
    walk, theirs = shared
    text = "\n".join(read_text(DATA / "corpus" / "en.txt").split("\n")[:300])
    assert _first_difference(walk, theirs, [text]) is None


def test_long_runs_give_tokenizers_answer(shared):
    # one span of thousands of parts (the merge queue, past any cache entry),
    # byte-fallback runs, space runs, added tokens back to back
    walk, theirs = shared
    texts = [unit * 3000 for unit in ("a", "😀", " ", "<s>", "\n", "ab 日\n😀<s>")]
    assert _first_difference(walk, theirs, texts) is None


def test_each_byte_token_of_a_character_spans_that_character():
    walk, _ = _walked("llama2", "hf")
    ids, offsets, words = _answer(walk, "\U00010400 z")
    assert ids == [28705, 243, 147, 147, 131, 686]  # ▁ <0xF0> <0x90> <0x90> <0x80> ▁z
    assert offsets == [(0, 1)] * 5 + [(1, 3)]
    assert words == [0] * 6


_PIECES = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", "▁", "▁▁", "<start_of_turn>", "<s>",
                           "</s>", "<unk>", "<unused7>", "a", "é", "e\u0301", "中文", "😀",
                           "\U0001f468\u200d\U0001f469", "\u0301", "x y", "\ufffd", "\x00"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=12))
def test_spaces_marks_emoji_and_added_token_texts_give_tokenizers_answer(parts):
    text = "".join(parts)
    for name in SHARED:
        walk, _ = _walked(name, "hf")
        assert _first_difference(walk, _reference(name), [text]) is None


ALLOWED = (None, frozenset(), frozenset({1, 2}), frozenset({106}))


@pytest.mark.parametrize("name, face", [
    ("llama2", "hf"), ("llama2", "load"), ("gemma3", "hf"),
    # a second Gemma 3 pipeline takes seconds to build
    pytest.param("gemma3", "load", marks=pytest.mark.slow)])
def test_the_walk_gives_its_pipeline_stages_answer(name, face):
    walk, pipeline = _walked(name, face)
    texts = ["<s>hi</s>", "<unk> <s> </s><start_of_turn>user\n", "<bos><eos> <pad>",
             "a  b\n\n c", "", " ", "😀 日本語 <mask>"]
    for allowed in ALLOWED:
        for text in texts:
            staged = pipeline.encode(text, add_special_tokens=False, allowed=allowed)
            want = (staged.ids, staged.offsets, staged.word_ids)
            assert _answer(walk, text, allowed) == want, (text, allowed)
            assert walk.ids(text, allowed) == pipeline.encode_ids(text, allowed), (text, allowed)


# ---------------------------------------------------------------- small documents

def _doc(normalizer, pre_tokenizer=None, *, byte_tokens=range(256), unk="<unk>",
         prefix=None) -> dict:
    vocab = {"<unk>": 0, "<x>": 1}
    for b in byte_tokens:
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for c in ["a", "b", "é", "日", "本", "▁", "_", " ", "\u0301"]:
        vocab[c] = len(vocab)
    merges = [("▁", "a"), ("a", "b"), ("▁a", "b"), ("▁", "▁"), ("_", "a"), ("_", "_"),
              ("日", "本"), ("é", "\u0301")]
    if prefix:
        vocab.update({prefix + c: len(vocab) + i for i, c in enumerate("ab")})
        merges = [("a", prefix + "b")]
    for left, right in merges:
        vocab.setdefault(left + right[len(prefix or ""):], len(vocab))
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 1, "content": "<x>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": None,
        "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": unk,
                  "continuing_subword_prefix": prefix, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": [list(m) for m in merges]},
    }


def _replace(content: str) -> dict:
    return {"type": "Replace", "pattern": {"String": " "}, "content": content}


def _prepend(text: str) -> dict:
    return {"type": "Prepend", "prepend": text}


def _sequence(*normalizers) -> dict:
    return {"type": "Sequence", "normalizers": list(normalizers)}


def _small(doc: dict) -> tuple:
    record = tokenizer_json_record(json.dumps(doc), "tokenizer.json")
    walk = hf_walks.walk_for(record, pipeline_from_document(record))
    return walk, tokenizers.Tokenizer.from_str(json.dumps(doc))


TAKEN = {
    "prepend-then-replace": (_sequence(_prepend("▁"), _replace("▁")), None),
    "replace-then-prepend": (_sequence(_replace("_"), _prepend("▁")), None),
    "two-character-strings": (_sequence(_prepend("_ "), _replace("▁▁")), None),
    "replace": (_replace("▁"), None),
    "prepend": (_prepend("▁"), None),
    "split-at-replaced-spaces": (_replace("▁"), {"type": "Split", "pattern": {"String": " "},
                                                 "behavior": "MergedWithPrevious",
                                                 "invert": False}),
    "none": (None, None),
    # Metaspace without its split, as newer Llama and Mistral conversions have it
    "metaspace-first": (None, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
                               "split": False}),
    "metaspace-always": (None, {"type": "Metaspace", "replacement": "▁",
                                "prepend_scheme": "always", "split": False}),
    "metaspace-never": (None, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never",
                               "split": False}),
}
SMALL_TEXTS = ["a b", " ab", "ab<x>ab", "<x> <x>", "", " ", "b  a<x> ", "日本 é\u0301",
               "\U00010400", "a\U0001f600b", "c d", "▁a", "<x>▁a", "<x>a"]
_SMALL = st.text(st.sampled_from(list("ab _▁<x>é日本\u0301") + ["😀", "\U00010400", "c"]),
                 max_size=12)


@pytest.mark.parametrize("case", list(TAKEN))
def test_each_normalizer_the_walk_takes_gives_tokenizers_answer(case):
    walk, theirs = _small(_doc(*TAKEN[case]))
    assert isinstance(walk, StretchWalker)
    assert _first_difference(walk, theirs, SMALL_TEXTS) is None


@settings(max_examples=40, deadline=None)
@given(_SMALL)
def test_small_documents_give_tokenizers_answer_on_any_text(text):
    for case in ("two-character-strings", "replace-then-prepend", "metaspace-first"):
        walk, theirs = _small_cached(case)
        assert _first_difference(walk, theirs, [text]) is None


@functools.lru_cache(maxsize=None)
def _small_cached(case: str) -> tuple:
    return _small(_doc(*TAKEN[case]))


def test_a_character_missing_a_byte_token_is_the_unknown_token_over_its_span():
    walk, theirs = _small(_doc(_prepend("▁"), byte_tokens=range(0x80)))
    assert _first_difference(walk, theirs, ["a😀😀b c", "日月 é"]) is None
    assert _answer(walk, "a😀😀b")[1][-2:] == [(1, 3), (3, 4)]


def test_characters_dropped_without_an_unknown_token_shift_offsets_as_tokenizers_does():
    walk, theirs = _small(_doc(_prepend("▁"), byte_tokens=range(0x80), unk=None))
    assert _first_difference(walk, theirs, ["😀a b", "a月月b", "月"]) is None


def test_a_continuing_subword_prefix_gives_tokenizers_answer():
    walk, theirs = _small(_doc(_replace("▁"), prefix="##"))
    assert _first_difference(walk, theirs, ["ab", "abab", "ba<x>ab"]) is None


def test_a_prefix_written_as_byte_tokens_leaves_offsets_to_the_stages():
    # tokenizers counts each byte token of "##é" one byte of a two-byte
    # character: the tokens run past the stretch, offsets uncorrected
    walk, theirs = _small(_doc(_replace("▁"), prefix="##"))
    assert walk.encode("a😀", None) is None
    assert walk.ids("a😀", None) == theirs.encode("a😀", add_special_tokens=False).ids


def test_a_lone_surrogate_is_left_to_the_stages():
    walk, _ = _small(_doc(_replace("▁")))
    assert walk.ids("a\ud800", None) is None
    assert walk.encode("a\ud800", None) is None


def test_a_text_with_an_added_token_given_lstrip_is_left_to_the_stages():
    # tests/test_hf_walk_sentencepiece_bpe_flags.py: the texts without one
    doc = _doc(_replace("▁"))
    doc["added_tokens"][0]["lstrip"] = True
    walk, _ = _small(doc)
    assert walk.encode("a <x>", None) is None
    assert walk.ids("a <x>", None) is None


def test_a_text_with_a_token_of_the_normalized_pass_is_left_to_the_stages():
    # "<x>" is looked for as "▁<x>" in each stretch's normalization
    doc = _doc(_sequence(_prepend("▁"), _replace("▁")))
    doc["added_tokens"][0].update(normalized=True, special=False)
    walk, theirs = _small(doc)
    assert walk.encode("a <x>", None) is None
    assert walk.ids("<x>b", None) is None
    assert _first_difference(walk, theirs, ["a<x>", "ab b", "<x", ""]) is None


REFUSED = {
    "metaspace-that-splits": _doc(None, {"type": "Metaspace", "replacement": "▁",
                                         "prepend_scheme": "first", "split": True}),
    "lowercase": _doc(_sequence({"type": "Lowercase"}, _replace("▁"))),
    "split-at-kept-spaces": _doc(_prepend("▁"), {"type": "Split", "pattern": {"String": " "},
                                                 "behavior": "Isolated", "invert": False}),
    "dropout": {**_doc(_replace("▁")),
                "model": {**_doc(_replace("▁"))["model"], "dropout": 0.5}},
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_other_configurations_get_no_bpe_walk(case):
    walk, _ = _small(REFUSED[case])
    assert not isinstance(walk, StretchWalker)
