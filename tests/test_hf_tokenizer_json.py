"""Hugging Face ``tokenizer.json`` (byte-level BPE) against ``tokenizers`` itself.

The reference is the live ``tokenizers`` library of the test extra, on the
shared files (llama3, qwen3, gpt4o under ``vocab/hf``):

* ``encode(text, allowed_special="all")`` == ``Tokenizer.encode(text,
  add_special_tokens=False).ids`` on every line of ``testcases/lines.jsonl``,
  a sample of every corpus file (all of it under ``-m slow``) and hypothesis
  text with the added tokens spliced in;
* ``encode_ordinary`` is the same on text that holds no added token
  (``tokenizers`` always matches added tokens, so there is no reference for
  ordinary encoding of their text);
* ``add_special_tokens=True`` == ``encode(text).ids`` (the file's post-processor);
* ``decode`` == ``decode(ids, skip_special_tokens=False)``.

Files of kinds fasttok does not read yet must raise ``VocabularyFileError``
saying so. Small documents written here check both merges forms, the errors'
JSON paths and a ``TemplateProcessing`` BOS, each against ``tokenizers`` too.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
import fasttok.hf
from fasttok.errors import ReferenceFailsError
from conftest import DATA, DATA_MISSING, HF_BYTE_LEVEL, HF_OTHER, MISSING_DATA_REASON, \
    Mismatches, describe_mismatch, missing_data_reason, read_jsonl, read_text

tokenizers = pytest.importorskip("tokenizers")

HF = DATA / "vocab" / "hf"
CORPUS = sorted((DATA / "corpus").glob("*.txt")) if not DATA_MISSING else []
SAMPLE_EVERY = 40  # corpus lines per file in the default run: one in this many


def _file(name: str):
    path = HF / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return path


@functools.lru_cache(maxsize=None)
def _pair(name: str) -> tuple:
    path = str(_file(name))
    return fasttok.load(path), tokenizers.Tokenizer.from_file(path)


@pytest.fixture(params=HF_BYTE_LEVEL)
def pair(request):
    return _pair(request.param)


def _compare_ids(pair, texts, what: str) -> None:
    ours, theirs = pair
    mine = ours.encode_batch(texts, allowed_special="all")
    refs = [e.ids for e in theirs.encode_batch_fast(texts, add_special_tokens=False)]
    found = Mismatches(f"{ours.name}: {what}")
    for i, (a, b) in enumerate(zip(mine, refs)):
        found.check(None if a == b else describe_mismatch(a, b, texts[i], enc=ours), str(i))
    found.assert_none()


def _corpus_lines(every: int) -> list:
    if not CORPUS:
        pytest.skip(MISSING_DATA_REASON)
    lines = []
    for path in CORPUS:
        lines += read_text(path).split("\n")[::every]
    return lines


# ---------------------------------------------------------------- real files: ids

def test_ids_equal_tokenizers_on_every_shared_test_line(pair):
    path = DATA / "testcases" / "lines.jsonl"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    _compare_ids(pair, [case["text"] for case in read_jsonl(path)], "lines.jsonl")


def test_ids_equal_tokenizers_on_a_sample_of_every_corpus_file(pair):
    _compare_ids(pair, _corpus_lines(SAMPLE_EVERY), f"one corpus line in {SAMPLE_EVERY}")


@pytest.mark.slow
def test_ids_equal_tokenizers_on_every_corpus_line(pair):
    _compare_ids(pair, _corpus_lines(1), "every corpus line")


def test_encode_ordinary_equals_tokenizers_on_text_without_added_tokens(pair):
    ours, theirs = pair
    texts = [t for t in _corpus_lines(SAMPLE_EVERY * 5)
             if not any(s in t for s in ours.special_tokens_set)]
    assert ours.encode_ordinary_batch(texts) == \
        [e.ids for e in theirs.encode_batch_fast(texts, add_special_tokens=False)]


_TEXT = st.text(st.characters(codec="utf-8"), max_size=60) | st.text(
    st.sampled_from("aé\u0301\u0338 \n\t'sS1٣你>!Ⅻ\U0001F999"), max_size=40)


@pytest.mark.parametrize("name", HF_BYTE_LEVEL)
def test_ids_equal_tokenizers_on_hypothesis_text_with_added_tokens(name):
    ours, theirs = _pair(name)
    specials = sorted(ours.special_tokens_set)

    @settings(max_examples=100, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(_TEXT | st.sampled_from(specials), max_size=5))
    def check(parts):
        text = "".join(parts)
        assert ours.encode(text, allowed_special="all") == \
            theirs.encode(text, add_special_tokens=False).ids, text

    check()


def test_nfc_normalizes_each_stretch_between_added_tokens():
    # ">" + U+0338 composes to U+226F, but tokenizers matches <|im_end|>
    # before normalizing, so the mark stays apart there
    ours, theirs = _pair("qwen3")
    for text in ["<|im_end|>\u0338x", "e\u0301", "a<think>\u0301b", "x\u0338<|im_end|>=\u0338"]:
        assert ours.encode(text, allowed_special="all") == \
            theirs.encode(text, add_special_tokens=False).ids, text


def test_add_special_tokens_adds_what_the_files_post_processor_adds(pair):
    # none of the three adds anything: llama3's file has a ByteLevel
    # post-processor only, no TemplateProcessing
    ours, theirs = pair
    text = "Hello world"
    assert ours.encode(text, add_special_tokens=True) == theirs.encode(text).ids


# ---------------------------------------------------------------- real files: decode

def test_decode_equals_tokenizers_on_encoded_lines_and_every_added_token(pair):
    ours, theirs = pair
    texts = _corpus_lines(SAMPLE_EVERY * 5)
    ids = [e.ids for e in theirs.encode_batch_fast(texts, add_special_tokens=False)]
    ids += [[i] for i in sorted(ours.vocabulary.special_tokens.values())]
    assert [ours.decode(x) for x in ids] == theirs.decode_batch(ids, skip_special_tokens=False)


def test_decode_equals_tokenizers_on_random_ids_that_split_characters(pair):
    ours, theirs = pair
    rng = random.Random(7)
    vocab = ours.vocabulary
    pool = [i for i, _ in vocab.ordinary_tokens()] + list(vocab.special_tokens.values())
    ids = [[rng.choice(pool) for _ in range(rng.randint(1, 8))] for _ in range(2000)]
    assert [ours.decode(x) for x in ids] == theirs.decode_batch(ids, skip_special_tokens=False)


# ---------------------------------------------------------------- the other configurations

def _other_files() -> list:
    found = [HF / name / "tokenizer.json" for name in HF_OTHER]
    found += sorted((HF / "unigram").glob("*.json"))
    found = [p for p in found if p.is_file()]
    if not found:
        pytest.skip(missing_data_reason(HF))
    return found


def test_ids_of_the_other_configurations_equal_tokenizers_on_every_shared_test_line(test_strings):
    files = _other_files()
    lines = [row["text"] for row in test_strings]
    for path in files:
        ours, theirs = fasttok.load(str(path)), tokenizers.Tokenizer.from_file(str(path))
        # the Encoding's ids are the post-processor's, without the file's
        # truncation and padding (those belong to fasttok.hf.Tokenizer)
        theirs.no_truncation()
        theirs.no_padding()
        _compare_ids((ours, theirs), lines, path.name)
        mine = [ours.encode(t, allowed_special="all", add_special_tokens=True) for t in lines]
        refs = [e.ids for e in theirs.encode_batch(lines, add_special_tokens=True)]
        assert mine == refs, path.name


# ---------------------------------------------------------------- small documents

def _alphabet() -> dict:
    from fasttok.shared._bytemap import bytes_to_unicode
    return bytes_to_unicode()


def _tiny_doc(merges_as_pairs: bool) -> dict:
    """A byte-level BPE document tokenizers itself accepts: 256 bytes and five merges."""
    a = _alphabet()
    vocab = {a[b]: b for b in range(256)}
    merges = [("h", "e"), ("l", "l"), ("he", "ll"), ("Ġ", "w"), ("hell", "o")]
    for left, right in merges:
        vocab[left + right] = len(vocab)
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": len(vocab), "content": "<|bos|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False,
                          "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab,
                  "merges": [list(m) if merges_as_pairs else " ".join(m) for m in merges]},
    }


def _both(tmp_path, doc: dict, name: str = "tokenizer.json") -> tuple:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return fasttok.load(str(path)), tokenizers.Tokenizer.from_str(json.dumps(doc))


@pytest.mark.parametrize("as_pairs", [False, True], ids=["a-b-strings", "pairs"])
def test_both_merges_forms_give_tokenizers_ids(tmp_path, as_pairs):
    ours, theirs = _both(tmp_path, _tiny_doc(as_pairs))
    for text in ["hello world", "hell, oh hello<|bos|>hello", "", "\u00e9 w"]:
        assert ours.encode(text, allowed_special="all") == \
            theirs.encode(text, add_special_tokens=False).ids, text
    assert ours.encode("hello") == [256 + 4]


@pytest.mark.parametrize("as_pairs", [False, True], ids=["a-b-strings", "pairs"])
def test_merge_listed_twice_keeps_its_last_place(tmp_path, as_pairs):
    # ("l", "l") again after ("he", "ll"): tokenizers' map of merges keeps
    # the later rank, so "he" + "l" ... merges in another order
    doc = _tiny_doc(as_pairs)
    merges = doc["model"]["merges"]
    merges.insert(3, merges[1])
    doc["model"]["vocab"]["el"] = len(doc["model"]["vocab"])
    doc["added_tokens"][0]["id"] = len(doc["model"]["vocab"])
    merges.insert(2, ["e", "l"] if as_pairs else "e l")
    ours, theirs = _both(tmp_path, doc)
    pipeline = fasttok.hf.Tokenizer.from_str(json.dumps(doc))
    for text in ["hello", "hell", "ellel", "shell hello"]:
        want = theirs.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == want, text
        assert pipeline.encode(text, add_special_tokens=False).ids == want, text


def test_template_processing_bos_is_added_with_add_special_tokens(tmp_path):
    doc = _tiny_doc(True)
    bos = doc["added_tokens"][0]["id"]
    doc["post_processor"] = {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        {"type": "TemplateProcessing",
         "single": [{"SpecialToken": {"id": "<|bos|>", "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
         "special_tokens": {"<|bos|>": {"id": "<|bos|>", "ids": [bos], "tokens": ["<|bos|>"]}}}]}
    ours, theirs = _both(tmp_path, doc)
    assert ours.encode("hello", add_special_tokens=True) == theirs.encode("hello").ids == \
        [bos, 256 + 4]
    assert ours.encode("hello") == theirs.encode("hello", add_special_tokens=False).ids


def test_ignore_merges_emits_a_piece_that_is_a_token_whole(tmp_path):
    # "hello" is a token but its merges cannot build it from "he"+"llo"
    doc = _tiny_doc(True)
    doc["model"]["merges"] = doc["model"]["merges"][:3]  # no ("hell", "o")
    for ignore in (False, True):
        doc["model"]["ignore_merges"] = ignore
        ours, theirs = _both(tmp_path, doc)
        assert ours.encode("hello") == theirs.encode("hello", add_special_tokens=False).ids


def test_malformed_json_error_names_the_file_and_position(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(_tiny_doc(True), indent=1)[:500], encoding="utf-8")
    with pytest.raises(fasttok.VocabularyFileError,
                       match=r"tokenizer\.json: line \d+, byte \d+: not JSON: .* at column"):
        fasttok.load(str(path))


@pytest.mark.parametrize("load", [fasttok.load, fasttok.hf.Tokenizer.from_file])
def test_vocabulary_text_with_a_lone_surrogate_is_refused_naming_its_entry(tmp_path, load):
    tokenizers = pytest.importorskip("tokenizers")
    doc = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
           "post_processor": None, "decoder": None,
           "model": {"type": "Unigram", "unk_id": 0,
                     "vocab": [["<unk>", 0.0], ["a", -1.0], ["b\ud800", -2.0]]}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(fasttok.VocabularyFileError,
                       match=r"tokenizer\.json: field '\$\.model\.vocab\[.*lone surrogate"):
        load(str(path))


def test_a_document_given_parsed_with_a_lone_surrogate_token_is_refused_naming_its_entry():
    # a trainer's in-memory document skips the reader's check of the bytes or text
    from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record

    doc = {"model": {"type": "WordLevel", "vocab": {"a": 0, "b\ud800": 1, "[UNK]": 2},
                     "unk_token": "[UNK]"}}
    with pytest.raises(fasttok.VocabularyFileError,
                       match=r"t\.json: field '\$\.model\.vocab\[.*lone surrogate, which no UTF-8"):
        tokenizer_json_record(doc, "t.json")


# tokenizers' reader (serde_json) refuses a lone surrogate wherever it stands;
# each place: how to put one there, and the JSON path the error names
_LONE_SURROGATE_PLACES = {
    "added token content": (lambda d: d["added_tokens"][0].update(content="<|b\ud800|>"),
                            r"\$\.added_tokens\[0\]\.content"),
    "added token key": (lambda d: d["added_tokens"][0].update({"x\udc00": 1}),
                        r"\$\.added_tokens\[0\]\[\"x\\\\udc00\"\]"),
    "vocabulary key": (lambda d: d["model"]["vocab"].update({"q\ud800": 300}),
                       r"\$\.model\.vocab\[\"q\\\\ud800\"\]"),
    "merge": (lambda d: d["model"]["merges"].append("h \ud800"), r"\$\.model\.merges\[5\]"),
    "normalizer pattern": (lambda d: d.update(normalizer={
        "type": "Replace", "pattern": {"String": "a\ud800"}, "content": "b"}),
        r"\$\.normalizer\.pattern\.String"),
    "decoder field": (lambda d: d["decoder"].update(x=["\udfff"]), r"\$\.decoder\.x\[0\]"),
    "low half before high": (lambda d: d["model"].update(x="\ude00\ud83d"), r"\$\.model\.x"),
}


@pytest.mark.parametrize("load", [fasttok.load, fasttok.hf.Tokenizer.from_file])
@pytest.mark.parametrize("place", _LONE_SURROGATE_PLACES)
def test_lone_surrogate_escape_anywhere_is_refused_naming_its_json_path(tmp_path, load, place):
    put, where = _LONE_SURROGATE_PLACES[place]
    doc = _tiny_doc(False)
    put(doc)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="ascii")  # the surrogate as a \u escape
    with pytest.raises(Exception, match="hex escape"):  # serde's words for a lone half
        tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(fasttok.VocabularyFileError,
                       match=rf"tokenizer\.json: field '{where}': .* lone surrogate"):
        load(str(path))


@pytest.mark.parametrize("load", [fasttok.load, fasttok.hf.Tokenizer.from_file])
def test_lone_surrogate_as_raw_bytes_is_refused_naming_its_json_path(tmp_path, load):
    doc = _tiny_doc(False)
    doc["decoder"]["x"] = "a\ud800"
    path = tmp_path / "tokenizer.json"
    # the three bytes json.loads reads as U+D800 (surrogatepass), not UTF-8
    path.write_bytes(json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(fasttok.VocabularyFileError, match=r"'\$\.decoder\.x': .* lone surrogate"):
        load(str(path))


@pytest.mark.parametrize("ensure_ascii", [True, False], ids=["escaped", "raw"])
def test_lone_surrogate_in_a_document_given_as_text_is_refused(ensure_ascii):
    doc = _tiny_doc(False)
    doc["decoder"]["x"] = "a\ud800"
    text = json.dumps(doc, ensure_ascii=ensure_ascii)
    with pytest.raises(Exception):  # escaped: serde's error; raw: the str has no UTF-8
        tokenizers.Tokenizer.from_str(text)
    with pytest.raises(fasttok.VocabularyFileError, match=r"'\$\.decoder\.x': .* lone surrogate"):
        fasttok.hf.Tokenizer.from_str(text)


def test_surrogate_pair_escape_is_read_as_its_character(tmp_path):
    doc = _tiny_doc(False)
    doc["added_tokens"][0]["content"] = "<|\U0001F600|>"
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="ascii")  # "\ud83d\ude00"
    theirs = tokenizers.Tokenizer.from_file(str(path))
    ours = fasttok.load(str(path))
    text = "he<|\U0001F600|>llo"
    assert ours.encode(text, allowed_special="all") == \
        theirs.encode(text, add_special_tokens=False).ids

@pytest.mark.parametrize("merge, problem", [
    (["h"], "two parts"), ("h e l", "two parts"), (3, "expected"), (["q", "Ω"], "not in the vocabulary"),
    (["q", "z"], "not in the vocabulary")])
def test_bad_merge_error_names_its_json_path(tmp_path, merge, problem):
    doc = _tiny_doc(True)
    doc["model"]["merges"][4] = merge
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(fasttok.VocabularyFileError, match=rf"'\$\.model\.merges\[4\]'.*{problem}"):
        fasttok.load(str(path))


@pytest.mark.parametrize("where, value, path", [
    ("normalizer", {"type": "NFKX"}, r"\$\.normalizer"),
    ("decoder", {"type": "WordPieces"}, r"\$\.decoder"),
    ("post_processor", {"type": "Roberta"}, r"\$\.post_processor"),
    ("pre_tokenizer", {"type": "Whitespaces"}, r"\$\.pre_tokenizer"),
    ("model", {"type": "Bigram", "vocab": {}}, r"\$\.model"),
])
def test_an_unknown_component_type_names_its_path_and_the_known_types(
        tmp_path, where, value, path):
    doc = copy.deepcopy(_tiny_doc(True))
    doc[where] = value
    with pytest.raises(fasttok.VocabularyFileError, match=rf"'{path}.*known"):
        _both(tmp_path, doc)[0]


def test_a_json_file_is_found_by_content_under_any_name(tmp_path):
    path = tmp_path / "vocab.data"
    path.write_text(json.dumps(_tiny_doc(True), indent=2), encoding="utf-8")
    assert fasttok.load(str(path)).encode("hello") == [256 + 4]


@pytest.mark.parametrize("behavior, invert", [("Isolated", False), ("Removed", True)])
def test_split_of_an_unknown_pattern_keeps_or_drops_the_text_between_matches(
        tmp_path, behavior, invert):
    # \p{L}+ leaves ", " and "!" unmatched: Isolated keeps them as pieces,
    # inverted Removed drops them
    doc = _tiny_doc(True)
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"\p{L}+"}, "behavior": behavior, "invert": invert},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]}
    ours, theirs = _both(tmp_path, doc)
    for text in ["hello, world!", "héllo wörld", "  ", "ab1cd"]:
        assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids, text


def test_a_vocabulary_entry_outside_the_byte_level_alphabet_loads_as_tokenizers_loads_it(
        tmp_path):
    # tokenizers accepts it (the ByteLevel pre-tokenizer never produces it)
    doc = _tiny_doc(True)
    doc["model"]["vocab"]["Ω"] = len(doc["model"]["vocab"]) + 1
    ours, theirs = _both(tmp_path, doc)
    for text in ["hello world", "Ω hello"]:
        assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids, text


# ---------------------------------------------------------------- hostile and odd files

def _with_template(doc: dict, single: list, specials: dict) -> dict:
    doc["post_processor"] = {
        "type": "TemplateProcessing", "single": single,
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {name: {"id": name, "ids": [i], "tokens": [name]}
                           for name, i in specials.items()}}
    return doc


_A = {"Sequence": {"id": "A", "type_id": 0}}


def _special(name: str) -> dict:
    return {"SpecialToken": {"id": name, "type_id": 0}}


def test_json_nested_past_the_parsers_depth_is_a_vocabulary_file_error(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": ' + "[" * 100000 + "]" * 100000 + "}", encoding="utf-8")
    with pytest.raises(fasttok.VocabularyFileError, match="nested too deeply"):
        fasttok.load(str(path))


def test_a_template_id_no_token_holds_is_emitted_counted_and_decodes_to_nothing(tmp_path):
    doc = _with_template(_tiny_doc(True), [_special("[CLS]"), _A], {"[CLS]": 5000})
    ours, theirs = _both(tmp_path, doc)
    ids = ours.encode("hello", add_special_tokens=True)
    assert ids == theirs.encode("hello").ids == [5000, 256 + 4]
    assert ours.max_token_value == 5000
    assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=False) == "hello"
    assert ours.decode_single_token_bytes(5000) == b""


@pytest.mark.parametrize("single", [[_special("<|bos|>")], [_A, _special("<|bos|>"), _A]],
                         ids=["no-input", "input-twice"])
def test_a_template_holding_the_input_other_than_once_gives_tokenizers_ids(tmp_path, single):
    doc = _tiny_doc(True)
    doc = _with_template(doc, single, {"<|bos|>": doc["added_tokens"][0]["id"]})
    ours, theirs = _both(tmp_path, doc)
    assert ours.encode("hello", add_special_tokens=True) == theirs.encode("hello").ids


def test_a_single_template_using_the_pair_is_refused(tmp_path):
    doc = _with_template(_tiny_doc(True), [{"Sequence": {"id": "B", "type_id": 0}}], {})
    with pytest.raises(fasttok.VocabularyFileError, match=r"single\[0\].*uses \$B"):
        _both(tmp_path, doc)


@pytest.mark.parametrize("model", [
    {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "[UNK]"},
    {"type": "WordPiece", "vocab": {"a": 0}, "unk_token": "[UNK]",
     "continuing_subword_prefix": "##", "max_input_chars_per_word": 100},
    {"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "<unk>"},
    {"type": "Unigram", "vocab": [["a", -1.0]], "unk_id": None},
], ids=["wordlevel", "wordpiece", "bpe", "unigram"])
def test_a_model_that_cannot_spell_every_text_is_refused_when_read(tmp_path, model):
    # tokenizers loads it and fails on the first text it cannot spell (checked
    # here); fasttok refuses the file, naming it, the field and what tokenizers does
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"model": model}), encoding="utf-8")
    theirs = tokenizers.Tokenizer.from_file(str(path))
    assert theirs.encode("a").ids == [0]
    with pytest.raises(Exception):
        theirs.encode("z")
    for load in (fasttok.load, fasttok.hf.Tokenizer.from_file):
        with pytest.raises(fasttok.VocabularyFileError,
                           match=r"tokenizer\.json: field '\$\.model\.unk_(token|id)'.*"
                                 r"tokenizers loads the file and fails on the first text"):
            load(str(path))


def _word_level(vocab: dict, added: list = ()) -> dict:
    return {"added_tokens": [{"id": token_id, "content": content, "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": False,
                              "special": True} for token_id, content in added],
            "pre_tokenizer": {"type": "WhitespaceSplit"},
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}}


@pytest.mark.parametrize("top", [2**31, 2**32 - 2], ids=["2**31", "2**32-2"])
def test_ids_up_to_the_largest_but_one_u32_give_tokenizers_ids(tmp_path, top):
    ours, theirs = _both(tmp_path, _word_level({"a": 0, "b": top, "[UNK]": 1}))
    hf = fasttok.hf.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ["a b", "b c a"]:
        assert ours.encode(text) == hf.encode(text).ids == theirs.encode(text).ids


def test_the_largest_u32_id_is_refused_saying_why(tmp_path):
    # tokenizers takes it; fasttok's compiled models keep it to mean no token
    doc = _word_level({"a": 0, "b": 2**32 - 1, "[UNK]": 1})
    assert tokenizers.Tokenizer.from_str(json.dumps(doc)).encode("b").ids == [2**32 - 1]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(fasttok.VocabularyFileError,
                       match=r"tokenizer\.json: field '\$\.model\.vocab\[\"b\"\]': id 4294967295 "
                             r"\(2\*\*32 - 1\) is the one u32 tokenizers takes that fasttok cannot"):
        fasttok.load(str(path))


def test_an_added_token_with_empty_content_is_never_matched_as_tokenizers_does(tmp_path):
    ours, theirs = _both(tmp_path, _word_level({"a": 0, "[UNK]": 1}, [(2, "")]))
    hf = fasttok.hf.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ["a", "a b", ""]:
        assert ours.encode(text, allowed_special="all") == hf.encode(text).ids \
            == theirs.encode(text).ids


def test_null_inside_a_sequence_is_refused(tmp_path):
    doc = _tiny_doc(True)
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [doc["pre_tokenizer"], None]}
    with pytest.raises(fasttok.VocabularyFileError, match=r"pretokenizers\[1\].*null"):
        _both(tmp_path, doc)


def test_a_byte_level_vocabulary_missing_a_byte_drops_it_as_tokenizers_does(tmp_path):
    doc = _tiny_doc(True)
    del doc["model"]["vocab"][_alphabet()[ord("x")]]
    # tokenizers would give the added <|bos|> the vocabulary's size, 260, which
    # is also "hello"'s id: a control id the Encoding's merges never make
    doc["added_tokens"] = []
    ours, theirs = _both(tmp_path, doc)
    for text in ["hex", "x", "hello xx world"]:
        assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids, text


def test_lone_surrogates_are_repaired_by_encoding_and_refused_by_the_drop_in(tmp_path):
    from fasttok.hf import Tokenizer

    doc = _tiny_doc(True)
    doc["pre_tokenizer"] = {"type": "Whitespace"}  # not the fused byte-level path
    ours, _ = _both(tmp_path, doc)
    assert ours.encode("h\ud800") == ours.encode("h\ufffd")
    with pytest.raises(TypeError, match="TextInputSequence must be str"):
        Tokenizer.from_str(json.dumps(doc)).encode("h\ud800")


def test_a_strip_decoder_that_tokenizers_panics_on_raises_reference_fails_error(tmp_path):
    doc = _tiny_doc(True)
    doc["decoder"] = {"type": "Strip", "content": "h", "start": 0, "stop": 2}
    ours, _ = _both(tmp_path, doc)
    with pytest.raises(ReferenceFailsError, match="tokenizers panics"):
        ours.decode([ord("h")])


def test_a_precompiled_charsmap_pointing_past_its_replacements_is_refused(tmp_path):
    from fuzzing import build_charsmap

    blob = bytearray(build_charsmap({"\uff21": "A"}))
    leaf = next(i for i in range(4, len(blob) - 3, 4)
                if int.from_bytes(blob[i:i + 4], "little") >> 31)
    blob[leaf:leaf + 4] = (0x80000000 | 4096).to_bytes(4, "little")
    doc = _tiny_doc(True)
    doc["normalizer"] = {"type": "Precompiled",
                         "precompiled_charsmap": base64.b64encode(bytes(blob)).decode()}
    with pytest.raises(fasttok.VocabularyFileError, match="replacement starts at byte 4096"):
        _both(tmp_path, doc)
