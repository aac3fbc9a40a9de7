"""The compiled ``tokenizer.json`` reader (:mod:`fasttok.shared._json_reader`,
through :func:`fasttok.loaders.json_document.parse_tokenizer_json`) gives
``json.loads``' document, key order and duplicate keys included, with the
model's ``vocab`` and ``merges`` packed where they have the usual shapes;
every malformed or hostile input is a ``VocabularyFileError`` naming where,
and a byte-level file read packed gives the record the Python path gives.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA, MISSING_DATA_REASON
from fasttok.errors import VocabularyFileError
from fasttok.formats.tiktoken import byte_bpe_tables
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_file_reading, tokenizer_json_record
from fasttok.loaders.json_document import parse_tokenizer_json
from fasttok.shared._bytemap import bytes_to_unicode
from fasttok.shared._json_reader import (MAX_DEPTH, FileBytes, PackedPieces, read_file,
                                         read_tokenizer_document)

HF = DATA / "vocab" / "hf"


def _whole(data: bytes) -> object:
    # the reader's document with the packed model put back
    doc, packed = parse_tokenizer_json(data, "t.json")
    if packed is not None:
        doc["model"] = packed.object()
    return doc


def _same(ours: object, theirs: object) -> None:
    # equal, keys in the same order (json.dumps writes them in dict order)
    assert json.dumps(ours) == json.dumps(theirs)


# ----------------------------------------------------------------- the shared files
FAST_FILES = ["llama2/tokenizer.json", "all-MiniLM-L6-v2/tokenizer.json",
              "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json"]
SLOW_FILES = ["llama3/tokenizer.json", "qwen3/tokenizer.json", "gpt4o/tokenizer.json",
              "gemma3/tokenizer.json"]


@pytest.mark.skipif(not HF.is_dir(), reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("name", FAST_FILES + [pytest.param(n, marks=pytest.mark.slow)
                                               for n in SLOW_FILES])
def test_shared_file_reads_as_json_loads(name):
    data = (HF / name).read_bytes()
    _same(_whole(data), json.loads(data))


@pytest.mark.skipif(not HF.is_dir(), reason=MISSING_DATA_REASON)
def test_shared_file_packs_its_vocab_and_merges():
    data = (HF / "llama2" / "tokenizer.json").read_bytes()
    model = json.loads(data)["model"]
    doc, packed = parse_tokenizer_json(data, "t.json")
    assert "vocab" not in doc["model"] and "merges" not in doc["model"]
    assert packed.vocab.to_dict() == model["vocab"]
    assert packed.merges.to_list() == model["merges"]
    assert list(packed.vocab.ids) == list(model["vocab"].values())
    assert packed.vocab.get("▁Hello") == model["vocab"]["▁Hello"]


# ----------------------------------------------------------------- generated JSON
_text = st.text(st.characters(codec="utf-8"), max_size=12)
_any_text = st.text(max_size=12)  # lone surrogates too
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | _any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_any_text, inner, max_size=4),
    max_leaves=25)


@settings(max_examples=100, deadline=None)
@given(_json, st.booleans(), st.sampled_from([None, 1, "\t"]))
def test_generated_json_reads_as_json_loads_or_is_refused_for_a_lone_surrogate(value, ascii_only,
                                                                               indent):
    data = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode("utf-8", "surrogatepass")
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, which tokenizers' reader refuses
        with pytest.raises(VocabularyFileError, match="lone surrogate"):
            parse_tokenizer_json(data, "t.json")
        return
    _same(_whole(data), json.loads(data))


@settings(max_examples=60, deadline=None)
@given(_json)
def test_generated_utf8_json_is_read_without_json_loads(value):
    # escaped, every document is UTF-8: the compiled reader reads it itself
    data = json.dumps({"x": value}).encode()
    doc, _ = read_tokenizer_document(data)
    _same(doc, json.loads(data))


_merge = st.tuples(_text, _text).map(lambda p: f"{p[0]} {p[1]}") | st.lists(_text, min_size=2,
                                                                            max_size=2) | _text


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_text, st.integers(0, 2**32 - 2), max_size=20),
       st.lists(_merge, max_size=20), st.booleans())
def test_generated_model_packs_as_json_loads_reads_it(vocab, merges, ascii_only):
    model = {"type": "BPE", "vocab": vocab, "merges": merges, "unk_token": None}
    data = json.dumps({"model": model, "x": 1}, ensure_ascii=ascii_only).encode()
    doc, packed = parse_tokenizer_json(data, "t.json")
    assert doc == {"model": {"type": "BPE", "unk_token": None}, "x": 1}
    assert packed.vocab.to_dict() == vocab and packed.merges.to_list() == merges
    _same(packed.object(), model)
    assert all(packed.vocab.get(text) == i for text, i in vocab.items())


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")])
def test_vocab_keys_of_every_length_pack_as_json_loads_reads_them(separators):
    # keys of 0 to 40 bytes, the file ending a few bytes after the last (a
    # compact file's short key is copied in one fixed-size move)
    vocab = {"k" * n + "\u00e9" * (n % 3) + "\\" * (n % 5 == 4): i for i, n in enumerate(range(41))}
    for keys in (vocab, {"ab": 0}, {"": 0, "a": 1}):
        model = {"type": "BPE", "merges": [], "vocab": keys}
        data = json.dumps({"model": model}, separators=separators, ensure_ascii=False).encode()
        doc, packed = parse_tokenizer_json(data, "t.json")
        assert packed.vocab.to_dict() == keys


_score = st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "\u2581b", "<0x41>"]) | _text, _score).map(list),
                max_size=20), st.booleans())
def test_generated_unigram_pieces_pack_as_json_loads_reads_them(vocab, ascii_only):
    model = {"type": "Unigram", "unk_id": None, "vocab": vocab}
    data = json.dumps({"model": model}, ensure_ascii=ascii_only).encode()
    doc, packed = parse_tokenizer_json(data, "t.json")
    assert doc == {"model": {"type": "Unigram", "unk_id": None}}
    assert type(packed.vocab) is PackedPieces
    _same(packed.object(), model)
    # a piece listed twice is looked up as its last entry, as tokenizers does
    last = {text: i for i, (text, _) in enumerate(vocab)}
    assert all(packed.vocab.get(text) == i for text, i in last.items())
    assert packed.vocab.in_order == (len(last) == len(vocab))


# what ends a string's plain run, at each place of the first 16 bytes (the
# reader takes ASCII eight bytes a step and finds the stop inside the word)
_RUN_STOPS = ["", r"\n", r"\"", r"\u00e9", "\u00e9", "\u4e2d", "\U0001F600", "\u2581"]


@pytest.mark.parametrize("run", [" " * k for k in range(18)] + ["\n" + " " * k for k in range(18)]
                         + [" " * k + "\t\r\n " for k in range(10)])
def test_whitespace_runs_of_every_length_are_skipped_as_json_loads_skips_them(run):
    # indentation is read eight spaces a step up to the first other byte
    r = run
    data = (f'{r}{{{r}"model"{r}:{r}{{{r}"vocab"{r}:{r}[{r}[{r}"a"{r},{r}-1.5{r}]{r},{r}'
            f'[{r}"b"{r},{r}2{r}]{r}]{r}}}{r},{r}"v"{r}:{r}{{{r}"x"{r}:{r}[{r}1{r},{r}'
            f'"y"{r}]{r}}}{r}}}{r}').encode()
    doc, packed = read_tokenizer_document(data)  # the compiled reader reads it itself
    doc["model"] = packed.object()
    _same(doc, json.loads(data))
    data = (f'{{"model":{r}{{"vocab":{r}{{{r}"a"{r}:{r}0{r},{r}"b"{r}:{r}1{r}}}{r},{r}'
            f'"merges"{r}:{r}[{r}"a b"{r}]{r}}}}}').encode()
    doc, packed = read_tokenizer_document(data)
    doc["model"] = packed.object()
    _same(doc, json.loads(data))


@pytest.mark.parametrize("stop", _RUN_STOPS)
def test_a_keys_run_stops_where_json_loads_reads_it_to_at_every_place_of_a_word(stop):
    vocab = ",".join(f'"{"abcdefghijklmnopq"[:k]}{stop}{"xyz"[:k % 4]}": {k}' for k in range(17))
    data = ('{"model": {"vocab": {%s}}, "k": "%s"}' % (vocab, stop)).encode()
    doc, packed = read_tokenizer_document(data)  # the compiled reader reads it itself
    doc["model"] = packed.object()
    _same(doc, json.loads(data))


def test_a_control_character_at_every_place_of_a_word_is_refused_as_json_loads_refuses_it():
    for k in range(17):
        data = b'{"model": {"vocab": {"%s\x01": 0}}}' % (b"a" * k)
        with pytest.raises(json.JSONDecodeError):
            json.loads(data)
        with pytest.raises(VocabularyFileError):
            parse_tokenizer_json(data, "t.json")


# a string whose plain run reaches 64 bytes (a Unigram file's 320 kB base64
# charsmap) is looked at whole from there: its closing quote, then whether
# the run holds an escape, a control character or a byte from 0x80 on
@pytest.mark.parametrize("stop", _RUN_STOPS + ["\x7f"])
@pytest.mark.parametrize("at", [56, 63, 64, 65, 71, 72, 200, 1001])
def test_a_long_strings_run_stops_where_json_loads_reads_it_to(stop, at):
    text = ("ABCD+/=0" * 130)[:at] + stop + "tail"
    data = ('{"normalizer": {"precompiled_charsmap": "%s"}, "k": ["%s", {"%s": 1}]}'
            % (text, text, text)).encode()
    doc, packed = read_tokenizer_document(data)  # the compiled reader reads it itself
    _same(doc, json.loads(data))


@pytest.mark.parametrize("at", [63, 64, 65, 200])
def test_a_control_character_in_a_long_string_is_refused_as_json_loads_refuses_it(at):
    for data in (b'{"n": {"charsmap": "%s\x01AAAAAAAAAAAA"}}' % (b"A" * at),
                 b'{"n": {"charsmap": "%s' % (b"A" * at)):
        with pytest.raises(json.JSONDecodeError):
            json.loads(data)
        with pytest.raises(VocabularyFileError):
            parse_tokenizer_json(data, "t.json")


@pytest.mark.parametrize("text", [
    r'"\ud83d\ude00"', r'"a\/b\"\\\b\f\n\r\t"',
    '"\u00e9\u4e2d\U0001F600"', r'"\u00E9"'])
def test_escapes_read_as_json_loads(text):
    data = ('{"model": {"vocab": {%s: 0}, "merges": [%s, [%s, "b"]]}, "k": [%s]}'
            % (text, text, text, text)).encode()
    _same(_whole(data), json.loads(data))


@pytest.mark.parametrize("data, where", [
    (rb'{"model": {"vocab": {"\ud83d": 0}}}', r"\$\.model\.vocab\[\"\\\\ud83d\"\]"),
    (rb'{"model": {"vocab": [["a", 0], ["\ude00\ud83d", 1.5]]}}', r"\$\.model\.vocab\[1\]\[0\]"),
    (rb'{"model": {"merges": ["a \ud83d\u0041"]}}', r"\$\.model\.merges\[0\]"),
    (b'{"k": [1, "\xed\xa0\xbd"]}', r"\$\.k\[1\]"),  # U+D83D's three bytes, not UTF-8
])
def test_lone_surrogate_leaves_the_reader_and_is_refused_naming_its_path(data, where):
    assert read_tokenizer_document(data) is None
    with pytest.raises(VocabularyFileError, match=f"^t.json: field '{where}': .* lone surrogate"):
        parse_tokenizer_json(data, "t.json")


@pytest.mark.parametrize("data", [
    b'{"model": {"vocab": {"a": 0, "a": 1}}}',  # a duplicate text: the last id
    b'{"model": {"vocab": {"a": 0}, "vocab": {"b": 1}}}',  # a duplicate key: the last value
    b'{"model": {"vocab": {"a": 0}, "vocab": 5}}',
    b'{"model": {"vocab": 5, "vocab": {"a": 0}, "type": "BPE"}}',
    b'{"model": {"vocab": {"a": 0}}, "model": {"merges": ["a b"]}}',
    b'{"model": {"vocab": {"a": 1.0, "b": -1, "c": 1e3, "d": 4294967295, "e": 99999999999999999999}}}',
    b'{"model": {"vocab": [["a", -1.5]], "merges": ["a b", 3]}}',
    b'{"model": {"merges": [["a", "b", "c"]]}}',
    b'{"model": {"vocab": [["a", NaN], ["b", 1]]}}',  # no JSON number: the list as Python objects
    b'{"model": {"vocab": [["a", 1, 2]], "type": "Unigram"}}',
    b'{"model": {"vocab": [["a", -0], ["b", 1E400], ["c", 1e-5]], "vocab": [["d", 0.0]]}}',
    b'{"model": {"vocab": [["a", 0]], "vocab": {"b": 1}}, "x": [["c", 1]]}',
    b'{"model": {"vocab": {"b": 1}, "vocab": [["a", 0]]}}',
    b' [NaN, Infinity, -Infinity, -0, 0.5e-3, 1E400, 12345678901234567890123] ',
])
def test_unusual_documents_read_as_json_loads(data):
    _same(_whole(data), json.loads(data))


@pytest.mark.parametrize("data", [b'\xef\xbb\xbf{"model": {"vocab": {"a": 0}}}',
                                  '\ufeff{"model": {"vocab": {"a": 0}}}'])
def test_a_byte_order_mark_is_refused_as_tokenizers_refuses_it(data):
    tokenizers = pytest.importorskip("tokenizers")
    with pytest.raises(Exception, match="expected value at line 1 column 1"):
        tokenizers.Tokenizer.from_str(data if isinstance(data, str) else data.decode("utf-8"))
    with pytest.raises(VocabularyFileError, match="^t.json: .*byte order mark"):
        parse_tokenizer_json(data, "t.json")


def test_model_object_keeps_the_file_key_order():
    data = b'{"model": {"merges": [], "type": "BPE", "vocab": {"a": 0}, "dropout": null}}'
    _, packed = parse_tokenizer_json(data, "t.json")
    assert list(packed.object()) == ["merges", "type", "vocab", "dropout"]


# ----------------------------------------------------------------- errors
@pytest.mark.parametrize("data, where", [
    (b'{\n  "model": {\n    "vocab": {"a": 0,}\n  }\n}', "line 3, byte 36: not JSON: Expecting property name"),
    (b'{"model": {"vocab": {"a": 01}}}', "line 1, byte 27: not JSON: Expecting ','"),
    (b'{"a": "\x01"}', "line 1, byte 7: not JSON: Invalid control character"),
    (b'{"a": "\\x"}', "line 1, byte 7: not JSON: Invalid \\escape"),
    (b'{"a": "\xff"}', "byte 7: not UTF-8"),
    (b'{"model": {"vocab": {"\xc3": 0}}}', "byte 22: not UTF-8"),
    (b'{"a": 1} x', "line 1, byte 9: not JSON: Extra data"),
])
def test_malformed_document_error_names_line_and_byte(data, where):
    with pytest.raises(VocabularyFileError, match="^t.json: " + where.replace("\\", "\\\\")):
        parse_tokenizer_json(data, "t.json")


@pytest.mark.skipif(not HF.is_dir(), reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("cut", [1, 1000, 500_000, 1_200_000, -2])
def test_truncated_file_is_a_vocabulary_file_error(cut):
    data = (HF / "llama2" / "tokenizer.json").read_bytes()
    with pytest.raises(VocabularyFileError, match="not JSON"):
        parse_tokenizer_json(data[:cut], "t.json")


@pytest.mark.parametrize("data", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"model": ' * 50_000 + b"1" + b"}" * 50_000,
    b'{"a": ' + b"9" * 5000 + b"}",
])
def test_hostile_document_is_a_vocabulary_file_error(data):
    with pytest.raises(VocabularyFileError, match="^t.json: not JSON fasttok reads"):
        parse_tokenizer_json(data, "t.json")


def test_nesting_to_the_reader_limit_is_read_by_the_reader():
    data = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert read_tokenizer_document(data) is not None
    assert read_tokenizer_document(b"[" + data + b"]") is None  # json.loads reads that


def test_huge_string_reads_whole():
    text = "é" * 3_000_000
    data = json.dumps({"model": {"vocab": {text: 0}, "merges": [text]}}, ensure_ascii=False).encode()
    _, packed = parse_tokenizer_json(data, "t.json")
    assert packed.vocab.get(text) == 0 and packed.merges.to_list() == [text]


# ----------------------------------------------------------------- the byte-level record
def _byte_level_doc(**model) -> dict:
    alphabet = bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)} | {"ĠĠ": 256, "ab": 257, "<s>": 258}
    return {"version": "1.0", "added_tokens": [{"id": 258, "content": "<s>", "special": True}],
            "normalizer": None, "post_processor": None, "decoder": {"type": "ByteLevel"},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
            "model": {"type": "BPE", "vocab": vocab, "merges": ["Ġ Ġ", ["a", "b"]]} | model}


def test_packed_byte_level_record_is_the_python_paths_record():
    doc = _byte_level_doc()
    reading = tokenizer_json_file_reading(json.dumps(doc).encode(), "/nonexistent/t.json")
    assert reading.tables is not None and reading.record.tokens == ()
    whole = tokenizer_json_record(doc, "/nonexistent/t.json", name="t")
    assert reading.whole() == whole
    assert reading.max_token_value == whole.max_token_value == 258
    assert [reading.tables.find(t) for t in (b"  ", b"ab", b"<s>")] == [256, 257, -1]
    assert reading.tables.to_bytes() == byte_bpe_tables(whole).to_bytes()
    assert reading.model_document() == doc["model"]


@pytest.mark.skipif(not HF.is_dir(), reason=MISSING_DATA_REASON)
@pytest.mark.slow
@pytest.mark.parametrize("name", ["llama3", "qwen3", "gpt4o"])
def test_packed_byte_level_tables_are_the_python_paths_byte_for_byte(name):
    path = str(HF / name / "tokenizer.json")
    with open(path, "rb") as f:
        reading = tokenizer_json_file_reading(f.read(), path)
    assert reading.tables.to_bytes() == byte_bpe_tables(reading.whole()).to_bytes()


@pytest.mark.parametrize("model, problem", [
    ({"merges": ["Ġ x"]}, "'Ġ x': b' x' is not in the vocabulary"),
    ({"merges": ["Ġ €"]}, "'Ġ €': '€' is not in the vocabulary"),
    ({"merges": ["a b c"]}, "a merge has two parts, found 3"),
    ({"merges": [["a", "zz"]]}, "is not in the vocabulary"),
])
def test_packed_byte_level_errors_are_the_python_paths(model, problem):
    data = json.dumps(_byte_level_doc(**model)).encode()
    with pytest.raises(VocabularyFileError) as packed:
        tokenizer_json_file_reading(data, "/nonexistent/t.json")
    with pytest.raises(VocabularyFileError) as plain:
        tokenizer_json_record(json.loads(data), "/nonexistent/t.json")
    assert problem in str(packed.value) and str(packed.value) == str(plain.value)


@pytest.mark.parametrize("model", [
    {"vocab": _byte_level_doc()["model"]["vocab"] | {"€": 259}},  # outside the alphabet
    {"vocab": _byte_level_doc()["model"]["vocab"] | {"ĠĠĠ": 256}},  # an id twice
    # merges making the entry an added token leaves out
    {"vocab": _byte_level_doc()["model"]["vocab"] | {"<s": 259}, "merges": ["< s", "<s >"]},
])
def test_packed_byte_level_hands_unusual_models_to_the_python_path(model):
    doc = _byte_level_doc(**model)
    reading = tokenizer_json_file_reading(json.dumps(doc).encode(), "/nonexistent/t.json")
    assert reading.tables is None
    whole = tokenizer_json_record(doc, "/nonexistent/t.json", name="t")
    assert reading.whole() == whole
    # the record the stages are built from lists no tokens but a byte-level
    # model's (which its core is built from)
    assert reading.record == (whole if whole.merges is not None
                              else whole.replace(tokens=(), ids=None))
    assert reading.max_token_value == whole.max_token_value


_SMALL = json.dumps(_byte_level_doc() | {"x": [1.5, -2, "\\ud83d", None, True]}).encode()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_SMALL) - 1), st.integers(0, 255)), min_size=1,
                max_size=4))
def test_corrupted_document_reads_as_json_loads_or_fails_as_it(edits):
    data = bytearray(_SMALL)
    for at, byte in edits:
        data[at] = byte
    try:
        theirs = json.loads(data)
    except ValueError:
        with pytest.raises(VocabularyFileError):
            parse_tokenizer_json(bytes(data), "t.json")
    else:
        _same(_whole(bytes(data)), theirs)


@pytest.mark.parametrize("entry, field", [
    ({"id": 258, "content": "<s>", "special": 1}, "$.added_tokens[0].special"),
    ({"id": True, "content": "<s>"}, "$.added_tokens[0].id"),
    ({"id": 258, "content": None}, "$.added_tokens[0].content"),
])
def test_added_token_of_the_wrong_kind_is_named(entry, field):
    doc = _byte_level_doc() | {"added_tokens": [entry]}
    with pytest.raises(VocabularyFileError, match=f"field '{re.escape(field)}'"):
        tokenizer_json_file_reading(json.dumps(doc).encode(), "/nonexistent/t.json")


@pytest.mark.skipif(not HF.is_dir(), reason=MISSING_DATA_REASON)
def test_threads_reading_at_once_read_what_one_reads():
    # the packing runs without the GIL: readers overlap
    from concurrent.futures import ThreadPoolExecutor

    data = (HF / "llama2" / "tokenizer.json").read_bytes()
    alone = _whole(data)
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(_whole, [data] * 4))
    assert all(doc == alone for doc in together)


# ----------------------------------------------------------------- read_file
def test_a_file_reads_as_its_bytes(tmp_path):
    path = tmp_path / "tokenizer.json"
    data = json.dumps(_byte_level_doc()).encode()
    path.write_bytes(data)
    read = read_file(path)
    assert type(read) is FileBytes and len(read) == len(data) and bytes(read) == data
    assert b'"ByteLevel"' in read and b'"Absent"' not in read
    _same(parse_tokenizer_json(read, "t.json")[0], parse_tokenizer_json(data, "t.json")[0])


def test_a_file_read_is_a_copy_that_outlives_the_file_cut_short(tmp_path):
    # a mapping of the file itself would fault (SIGBUS) on the lost pages
    path = tmp_path / "tokenizer.json"
    data = b'{"a": "' + b"x" * 100_000 + b'"}'
    path.write_bytes(data)
    read = read_file(path)
    path.write_bytes(b"{}")
    assert bytes(read) == data


def test_an_empty_file_is_read_as_bytes(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b"")
    assert read_file(path) == b""


def test_a_path_with_a_null_byte_is_refused_as_open_refuses_it(tmp_path):
    # the system's open would read the path up to the null: another file
    (tmp_path / "tokenizer.json").write_bytes(b"{}")
    with pytest.raises(ValueError, match="embedded null byte"):
        read_file(f"{tmp_path / 'tokenizer.json'}\0.bak")


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.json"):
        read_file(tmp_path / "nothere.json")
