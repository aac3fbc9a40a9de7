"""``Encoding.encode_files``: the documents of text and JSON Lines files,
read a block at a time, give the ids ``encode`` gives each document; the
reader cuts only between documents, holds one block (plus one document) at
a time, and names the file and line of what it cannot read."""

from __future__ import annotations

import json

import pytest

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, ONE_FILE_PER_KIND
from fasttok.errors import DocumentFileError, FasttokError
from fasttok.shared.document_files import job_cache_entries, read_ahead, read_documents

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

DOCS = ["Hello world", "", "  code = f(x)\tand more", "你好, wörld! 🎉", "last one"]


@pytest.fixture(scope="module")
def enc():
    return fasttok.get_encoding("cl100k_base")


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def _each(enc, docs):
    return [enc.encode(d) for d in docs]


def test_text_file_gives_encode_of_each_line(enc, tmp_path):
    path = _write(tmp_path, "d.txt", "\n".join(DOCS) + "\n")
    assert enc.encode_files(path).to_lists() == _each(enc, DOCS)


def test_empty_lines_are_empty_documents_and_a_final_newline_ends_the_last(enc, tmp_path):
    path = _write(tmp_path, "d.txt", "a\n\n\nb\n\n")
    assert enc.encode_files(path).to_lists() == _each(enc, ["a", "", "", "b", ""])


def test_a_file_without_a_final_separator_keeps_its_last_document(enc, tmp_path):
    path = _write(tmp_path, "d.txt", "a\nb")
    assert enc.encode_files(path).to_lists() == _each(enc, ["a", "b"])


def test_an_empty_file_has_no_documents(enc, tmp_path):
    batch = enc.encode_files(_write(tmp_path, "d.txt", ""))
    assert len(batch) == 0 and list(batch.offsets) == [0]


def test_a_longer_separator_splits_only_where_it_stands(enc, tmp_path):
    docs = ["one\nline two", "three <|end", "four"]
    path = _write(tmp_path, "d.txt", "<|doc|>".join(docs))
    assert enc.encode_files(path, separator="<|doc|>").to_lists() == _each(enc, docs)


def test_no_separator_makes_each_file_one_document(enc, tmp_path):
    a = _write(tmp_path, "a.txt", "x\ny\n")
    b = _write(tmp_path, "b.txt", "")
    assert enc.encode_files([a, b], separator=None).to_lists() == _each(enc, ["x\ny\n", ""])


def test_crlf_lines_keep_their_carriage_return_unless_the_separator_is_crlf(enc, tmp_path):
    path = _write(tmp_path, "d.txt", "a b\r\nc\r\n")
    assert enc.encode_files(path).to_lists() == _each(enc, ["a b\r", "c\r"])
    assert enc.encode_files(path, separator="\r\n").to_lists() == _each(enc, ["a b", "c"])


def test_several_files_give_their_documents_in_order(enc, tmp_path):
    a = _write(tmp_path, "a.txt", "one\ntwo\n")
    b = _write(tmp_path, "b.txt", "three\n")
    assert enc.encode_files([a, str(b)]).to_lists() == _each(enc, ["one", "two", "three"])


@pytest.mark.parametrize("block_size", [1, 2, 3, 5, 7, 64])
def test_tiny_blocks_give_what_one_block_gives(enc, tmp_path, block_size):
    # every document crosses a block boundary somewhere in this range
    text = "\n".join(DOCS * 3)
    path = _write(tmp_path, "d.txt", text)
    assert enc.encode_files(path, block_size=block_size).to_lists() == _each(enc, DOCS * 3)
    assert (enc.encode_files(path, separator="ld", block_size=block_size).to_lists()
            == _each(enc, text.split("ld")))


def test_a_block_holds_whole_documents_and_no_more_than_block_size_plus_one(tmp_path):
    docs = [("word " * (i % 13)).strip() for i in range(400)]
    path = _write(tmp_path, "d.txt", "\n".join(docs))
    blocks = list(read_documents(path, block_size=100))
    assert [d for b in blocks for d in b.docs] == docs
    longest = max(len(d) for d in docs) + 1
    assert all(len("\n".join(b.docs)) <= 100 + longest for b in blocks)
    # the memory bound, counted: about the file's size over the block size
    assert len(blocks) >= path.stat().st_size // (100 + longest)


def test_a_document_longer_than_the_block_is_read_whole(enc, tmp_path):
    docs = ["short", "x" * 1000 + " long document", "end"]
    path = _write(tmp_path, "d.txt", "\n".join(docs))
    blocks = list(read_documents(path, block_size=16))
    assert [b.docs for b in blocks if docs[1] in b.docs] == [[docs[1]]]
    assert enc.encode_files(path, block_size=16).to_lists() == _each(enc, docs)


def test_read_ahead_makes_at_most_two_items_beyond_the_callers():
    made, taken = [], []

    def source():
        for i in range(200):
            # the one being made, one waiting, the caller's
            assert len(made) - len(taken) <= 2
            made.append(i)
            yield i

    for item in read_ahead(source()):
        taken.append(item)
    assert taken == list(range(200))


def test_read_ahead_raises_the_makers_error_in_the_caller():
    def source():
        yield 1
        raise DocumentFileError("f.jsonl", "not JSON", line=2)

    items = read_ahead(source())
    assert next(items) == 1
    with pytest.raises(DocumentFileError, match="f.jsonl: line 2"):
        next(items)


def test_read_ahead_stops_making_when_the_caller_stops():
    made = []

    def source():
        for i in range(10**6):
            made.append(i)
            yield i

    items = read_ahead(source())
    next(items)
    items.close()
    assert len(made) <= 3


@pytest.mark.parametrize("size, setting, entries", [
    (100_000, 1024, 0),  # no more than the setting: the thread's own table
    (100_000, 16, 256),  # at most 16 times the setting
    (100_000, 128, 1024),  # an entry every 64 bytes, rounded down to a power of two
    (100_000, 0, 0),  # a cache turned off stays off
    (0, 16, 0),
])
def test_a_file_job_gets_a_cache_by_its_files_size_and_the_setting(tmp_path, size, setting,
                                                                   entries):
    path = _write(tmp_path, "d.txt", b"x" * size)
    assert job_cache_entries([path, tmp_path / "missing.txt"], setting) == entries


@pytest.mark.parametrize("threads, entries", [(1, 256), (2, 128), (3, 64), (16, 0)])
def test_a_file_jobs_threads_share_the_bound_of_its_caches(tmp_path, threads, entries):
    path = _write(tmp_path, "d.txt", b"x" * 100_000)
    assert job_cache_entries([path], 16, threads) == entries


@pytest.mark.parametrize("num_threads", [1, 2, 3])
def test_threads_give_the_ids_of_one_thread(enc, num_threads):
    path = DATA / "corpus" / "multi.txt"
    lines = path.read_text(encoding="utf-8").split("\n")[:3000]
    whole = enc.encode_ordinary_batch(lines, num_threads=1)
    head = path.read_bytes()[:len("\n".join(lines).encode())]
    batch = enc.encode_files(path, num_threads=num_threads, block_size=len(head) // 5,
                             disallowed_special=())
    assert batch.to_lists()[:3000] == whole


def test_jsonl_gives_encode_of_each_field(enc, tmp_path):
    lines = [json.dumps({"id": i, "text": d}) for i, d in enumerate(DOCS)]
    path = _write(tmp_path, "d.jsonl", "\n".join(lines) + "\n")
    assert enc.encode_files(path, format="jsonl").to_lists() == _each(enc, DOCS)


def test_jsonl_blank_lines_are_skipped_and_crlf_is_whitespace(enc, tmp_path):
    path = _write(tmp_path, "d.jsonl", '{"text": "a"}\r\n\r\n  \n{"text": "b\\nc"}\r\n')
    assert enc.encode_files(path, format="jsonl").to_lists() == _each(enc, ["a", "b\nc"])


def test_jsonl_spaces_around_the_object_are_whitespace(enc, tmp_path):
    path = _write(tmp_path, "d.jsonl", '  {"text": "a"} \t\n')
    assert enc.encode_files(path, format="jsonl").to_lists() == _each(enc, ["a"])


def test_jsonl_text_after_the_object_is_refused(enc, tmp_path):
    path = _write(tmp_path, "d.jsonl", '{"text": "a"}\n{"text": "b"} {"text": "c"}\n')
    with pytest.raises(DocumentFileError, match=r"line 2: not a JSON value \(Extra data"):
        enc.encode_files(path, format="jsonl")


def test_jsonl_reads_the_named_field(enc, tmp_path):
    path = _write(tmp_path, "d.jsonl", '{"text": 1, "body": "hello"}\n')
    assert enc.encode_files(path, format="jsonl", field="body").to_lists() == _each(enc, ["hello"])


@pytest.mark.parametrize("block_size", [1, 10, 1 << 20])
def test_jsonl_bad_line_names_file_and_line(enc, tmp_path, block_size):
    path = _write(tmp_path, "d.jsonl", '{"text": "a"}\n\n{"text": "b"\n{"text": "c"}\n')
    with pytest.raises(DocumentFileError, match=r"d\.jsonl: line 3: not a JSON value") as info:
        enc.encode_files(path, format="jsonl", block_size=block_size)
    assert info.value.line == 3 and info.value.path == str(path)


def test_jsonl_missing_field_names_line_and_field(enc, tmp_path):
    path = _write(tmp_path, "d.jsonl", '{"text": "a"}\n{"body": "b"}\n')
    with pytest.raises(DocumentFileError, match=r"line 2, field 'text': the object has no such"):
        enc.encode_files(path, format="jsonl")


@pytest.mark.parametrize("line, problem", [('{"text": null}', "the field is NoneType"),
                                           ('{"text": 5}', "the field is int"),
                                           ('["text"]', "a JSON list, not an object")])
def test_jsonl_field_that_is_not_a_string_is_refused(enc, tmp_path, line, problem):
    path = _write(tmp_path, "d.jsonl", line + "\n")
    with pytest.raises(DocumentFileError, match=f"line 1, field 'text': {problem}"):
        enc.encode_files(path, format="jsonl")


@pytest.mark.parametrize("block_size", [1, 4, 1 << 20])
def test_bytes_that_are_not_utf8_name_line_and_byte(enc, tmp_path, block_size):
    path = _write(tmp_path, "d.txt", b"ok\nfine\nbad \xff here\n")
    with pytest.raises(DocumentFileError, match=r"line 3, byte 12: bytes that are not UTF-8"):
        enc.encode_files(path, block_size=block_size)


def test_errors_replace_reads_bad_bytes_as_replacement_characters(enc, tmp_path):
    path = _write(tmp_path, "d.txt", b"ok\nbad \xff\n")
    batch = enc.encode_files(path, errors="replace")
    assert batch.to_lists() == _each(enc, ["ok", "bad \ufffd"])


def test_a_disallowed_special_names_its_line(enc, tmp_path):
    path = _write(tmp_path, "d.txt", "a\nb\nc <|endoftext|>\n")
    with pytest.raises(DocumentFileError, match=r"line 3: Encountered text corresponding to "
                                                r"disallowed special token '<\|endoftext\|>'"):
        enc.encode_files(path)


def test_allowed_specials_are_encoded_as_specials(enc, tmp_path):
    path = _write(tmp_path, "d.txt", "a<|endoftext|>\nb\n")
    batch = enc.encode_files(path, allowed_special="all")
    assert batch.to_lists() == [enc.encode(d, allowed_special="all") for d in ["a<|endoftext|>", "b"]]
    assert enc.encode_files(path, disallowed_special=()).to_lists() == \
        [enc.encode_ordinary(d) for d in ["a<|endoftext|>", "b"]]


def test_a_special_only_across_two_documents_is_in_neither(enc, tmp_path):
    path = _write(tmp_path, "d.txt", "a<|endof\ntext|>b\n")
    batch = enc.encode_files(path, separator="\ntext")
    assert batch.to_lists() == _each(enc, ["a<|endof", "|>b\n"])


@pytest.mark.parametrize("arguments, message", [
    ({"format": "csv"}, "format must be one of"),
    ({"errors": "surrogateescape"}, "errors must be one of"),
    ({"separator": ""}, "separator must be a non-empty str"),
    ({"block_size": 0}, "block_size must be an int of 1 or more"),
    ({"field": 3}, "field must be a str"),
])
def test_bad_arguments_say_which_and_what(enc, tmp_path, arguments, message):
    path = _write(tmp_path, "d.txt", "a\n")
    with pytest.raises(FasttokError, match=message):
        enc.encode_files(path, **arguments)


def test_a_missing_file_raises_the_os_error_naming_it(enc, tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        enc.encode_files(tmp_path / "nope.txt")


@pytest.mark.parametrize("kind", sorted(ONE_FILE_PER_KIND))
def test_every_vocabulary_kind_encodes_files(kind, tmp_path):
    kind_enc = fasttok.load(str(ONE_FILE_PER_KIND[kind]))
    path = _write(tmp_path, "d.txt", "\n".join(DOCS))
    assert kind_enc.encode_files(path, block_size=8).to_lists() == \
        [kind_enc.encode(d) for d in DOCS]


@pytest.mark.parametrize("kind", sorted(ONE_FILE_PER_KIND))
def test_every_vocabulary_kind_encodes_special_text_as_plain_text_when_none_is_allowed(kind, tmp_path):
    # no special allowed: the walk gets no mask and searches for none
    kind_enc = fasttok.load(str(ONE_FILE_PER_KIND[kind]))
    docs = [f"a {special} b" for special in sorted(kind_enc.special_tokens_set)[:20]] + DOCS
    path = _write(tmp_path, "d.txt", "\n".join(docs))
    assert kind_enc.encode_files(path, disallowed_special=()).to_lists() == \
        [kind_enc.encode(d, disallowed_special=()) for d in docs]


def test_a_document_file_error_is_caught_from_the_package_and_as_a_vocabulary_file_error():
    assert fasttok.DocumentFileError is DocumentFileError
    assert issubclass(fasttok.DocumentFileError, fasttok.VocabularyFileError)
