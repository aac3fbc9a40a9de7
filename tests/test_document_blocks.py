"""The compiled file reader behind ``encode_files``: UTF-8 checked as Python
decodes it, blocks cut wherever they fall into the documents ``bytes.split``
gives, JSON Lines read as ``json.loads`` reads them (a line the scanner
cannot vouch for goes to ``json.loads``), and the threaded job giving the
ids of one thread, in order, whatever the chunks and the ring."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON
from fasttok.errors import DocumentFileError
from fasttok.shared._document_blocks import BlockReader, FileJob, first_invalid_utf8


def _blocks(data: bytes, separator, block_size: int) -> list:
    reader = BlockReader(io.BytesIO(data), "f", separator, block_size)
    return list(iter(reader.next, None))


def _split(data: bytes, separator) -> list:
    # the documents of a file: bytes.split less the empty piece after a
    # final separator (and an empty file has none)
    if separator is None:
        return [data.decode()]
    pieces = data.split(separator)
    if pieces[-1] == b"":
        pieces.pop()
    return [p.decode() for p in pieces]


@given(st.binary(max_size=40))
@example(b"\xed\xa0\x80")  # a surrogate
@example(b"\xf4\x90\x80\x80")  # past U+10FFFF
@example(b"\xc0\xaf")  # overlong
@example(b"abcdefgh\xe2\x82")  # cut short after an 8-byte ASCII run
def test_utf8_check_accepts_what_python_decodes(data):
    assert (first_invalid_utf8(data) < 0) == _decodes(data)


@given(st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_utf8_check_of_encoded_text(data):
    assert (first_invalid_utf8(data) < 0) == _decodes(data)


@given(st.lists(st.sampled_from([b"a", b" ", b"\xc3\xa9", b"\xe4\xb8\xad", b"\xf0\x9f\x98\x80",
                                  b"\x80", b"\xe4\xb8", b"\xed\xa0\x80", b"\xe0\x9f\xbf",
                                  b"\xf4\x90\x80\x80", b"0123456789abcdef"]), max_size=12)
       .map(b"".join))
@example(b"0123456789abcdef\xc2\x80")  # a character after a whole 16-byte ASCII step
@example(b"\xe0\xa0\x80\xed\x9f\xbf\xef\xbf\xbf")  # the ends of the 3-byte ranges
def test_utf8_check_points_at_the_byte_python_refuses(data):
    refused = _refused_at(data)
    assert first_invalid_utf8(data) == refused


def test_utf8_check_of_every_lead_and_second_byte_is_the_decoders():
    # the lead bytes' table against Python's rule, after a 16-byte ASCII step
    for lead in range(0x80, 0x100):
        for second in range(0x100):
            for tail in (b"", b"\x80", b"\x80\x80"):
                data = b"0123456789abcdefg" + bytes([lead, second]) + tail
                refused = _refused_at(data)
                assert first_invalid_utf8(data) == refused, data


def test_utf8_check_of_cjk_runs_points_at_the_byte_python_refuses():
    # a run of three-byte characters (CJK's, and the edges of their lead
    # bytes' ranges) with each of its bytes broken, and cut before every
    # kind of character
    run = "\u4e2d\u6587\uff0c\u9fff\u1000\uefff".encode("utf-8")
    for at in range(len(run)):
        for byte in (0x00, 0x41, 0x80, 0xBF, 0xC0, 0xE0, 0xED, 0xF0, 0xFF):
            data = run[:at] + bytes([byte]) + run[at + 1:]
            refused = _refused_at(data)
            assert first_invalid_utf8(data) == refused, data
    for tail in (b"", b"a", b"\xc3\xa9", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xf0\x90\x80\x80",
                 b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xe4\xb8"):
        for n in range(len(run) + 1):
            data = run[:n] + tail
            assert (first_invalid_utf8(data) < 0) == _decodes(data), data


def test_utf8_check_across_the_32_byte_steps_points_at_the_byte_python_refuses():
    # the 32-byte steps (AVX2) hand a step with a bad byte, and the last
    # bytes, to the character-a-step check: every lead byte with every
    # second byte placed on each side of a step's edge, after ASCII and
    # after a run of CJK, with the input going on past the step or not
    for pad in (b"a" * 29, b"a" * 30, b"a" * 31, b"a" * 32, "\u4e2d\u6587".encode() * 5 + b"ab",
                "\u4e2d\u6587".encode() * 5 + b"a", "\U0001f600".encode() * 7 + b"ab"):
        for lead in range(0x80, 0x100):
            for second in range(0x100):
                for tail in (b"", b"\x80", b"\x80\x80", b"z" * 40, b"\x80" + b"z" * 40,
                             b"\x80\x80" + b"z" * 40):
                    data = pad + bytes([lead, second]) + tail
                    assert first_invalid_utf8(data) == _refused_at(data), data


@settings(max_examples=300)
@given(st.text(min_size=20, max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
       st.lists(st.tuples(st.integers(0, 10 ** 6), st.sampled_from(
           [0x00, 0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED,
            0xEF, 0xF0, 0xF4, 0xF5, 0xFF])), max_size=3))
def test_utf8_check_of_long_text_with_broken_bytes_points_at_the_byte_python_refuses(data, breaks):
    broken = bytearray(data)
    for at, byte in breaks:
        broken[at % len(broken)] = byte
    assert first_invalid_utf8(bytes(broken)) == _refused_at(bytes(broken))


def _refused_at(data: bytes) -> int:
    # where Python's decoder refuses data, or -1 where it decodes it
    try:
        data.decode("utf-8")
        return -1
    except UnicodeDecodeError as exc:
        return exc.start


def _decodes(data: bytes) -> bool:
    return _refused_at(data) < 0


@pytest.mark.parametrize("separator", [b"\n", b"\r\n", b"aa", b"<|doc|>", None])
def test_blocks_cut_anywhere_give_the_documents_of_split(separator):
    data = b"aaa\r\nxaaaa<|doc|>\n\n\xc3\xa9aa<|do\r\n<|doc|>aaaaa\nend\r\n"
    whole = _split(data, separator)
    for block_size in range(1, len(data) + 2):
        docs = [d for b in _blocks(data, separator, block_size) for d in b.docs]
        assert docs == whole, block_size


@given(st.lists(st.sampled_from(["a", "b", "\n", "ab", "é"]), max_size=30), st.integers(1, 12))
def test_blocks_of_any_text_give_the_documents_of_split(parts, block_size):
    data = "".join(parts).encode()
    for separator in (b"\n", b"ab", b"bab"):
        docs = [d for b in _blocks(data, separator, block_size) for d in b.docs]
        assert docs == _split(data, separator)


@given(st.lists(st.sampled_from(["a", "bb", "\n", "\n\n", "x" * 20, "\u00e9", "\u4e2d" * 9]),
                min_size=20, max_size=120), st.integers(1, 400))
def test_long_blocks_cut_at_a_byte_give_the_documents_of_split(parts, block_size):
    # a one-byte separator is cut 64 bytes a step: blocks of hundreds of
    # bytes put separators on every side of a step's edges
    data = "".join(parts).encode()
    for separator in (b"\n", b"a"):
        docs = [d for b in _blocks(data, separator, block_size) for d in b.docs]
        assert docs == _split(data, separator)


@given(st.lists(st.sampled_from(["a", "bb", "\n", "\n\n", "x" * 50, "\u4e2d" * 9]), max_size=80),
       st.integers(1, 200))
def test_blocks_let_go_as_they_are_read_give_the_documents_of_split(parts, block_size):
    # each block read takes the buffers of the one let go before it, of any
    # size (a document longer than a block grew it)
    data = "".join(parts).encode()
    for separator in (b"\n", b"ab"):
        reader = BlockReader(io.BytesIO(data), "f", separator, block_size)
        docs = []
        for block in iter(reader.next, None):
            docs += block.docs
            del block
        assert docs == _split(data, separator)


@given(st.lists(st.sampled_from(['{"text": "one"}', '{"text": "%s"}' % ("\\u4e2d" * 40),
                                 '{"te\\u0078t": "escaped key"}', "", '{"text": "x", "n": [1]}']),
                max_size=40), st.integers(1, 300))
def test_json_blocks_let_go_as_they_are_read_give_what_json_loads_gives(lines, block_size):
    # read_json and set_document replace a block's bytes before they go back
    data = "\n".join(lines).encode() + b"\n"
    reader = BlockReader(io.BytesIO(data), "f", b"\n", block_size)
    docs = []
    for block in iter(reader.next, None):
        for index, _, line in block.read_json(b"text"):
            block.set_document(index, json.loads(line)["text"])
        docs += block.docs
        del block
    assert docs == _loads_docs(lines)


def test_a_files_first_blocks_grow_from_256_kib_to_the_block_size():
    # (the threads that encode wait for the first block only)
    data = b"".join(b"line %7d\n" % i for i in range(400_000))  # 5.2 MB of 13-byte lines
    blocks = _blocks(data, b"\n", 2 << 20)
    read = [len(b.raw()) + 1 for b in blocks]
    limits = [256 << 10, 512 << 10, 1 << 20] + [2 << 20] * (len(read) - 3)
    assert all(abs(n - limit) < 13 for n, limit in zip(read[:-1], limits))  # a line carried
    assert [d for b in blocks for d in b.docs] == _split(data, b"\n")


def test_each_block_names_the_line_of_each_document():
    data = b"one\ntwo\n\nfour\nfive"
    for block_size in (1, 3, 100):
        lines = [(b.line_of(i), doc) for b in _blocks(data, b"\n", block_size)
                 for i, doc in enumerate(b.docs)]
        assert lines == [(1, "one"), (2, "two"), (3, ""), (4, "four"), (5, "five")]
    with_newlines = _blocks(b"a\nb<>c<>\nd", b"<>", 2)
    assert [(b.line_of(i), d) for b in with_newlines for i, d in enumerate(b.docs)] == \
        [(1, "a\nb"), (2, "c"), (2, "\nd")]


# ---------------------------------------------------------------- JSON Lines

def _json_docs(lines: list, field: str = "text", handed: list = None) -> list:
    # what encode_files' reader makes of the lines: the scanner's documents,
    # the ones it hands back (their lines into handed) read by json.loads
    data = "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"
    out = []
    for block in _blocks(data, b"\n", 1 << 20):
        for index, number, line in block.read_json(field.encode()):
            record = json.loads(line.decode())
            block.set_document(index, record[field])
            if handed is not None:
                handed.append(number)
        out += block.docs
    return out


def _loads_docs(lines: list, field: str = "text") -> list:
    return [json.loads(line)[field] for line in lines if line.strip(" \t\r\n")]


TEXTS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)
SCALARS = (st.none() | st.booleans() | st.integers()
           | st.floats(allow_nan=False, allow_infinity=False) | TEXTS)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(TEXTS, inner, max_size=3), max_leaves=5)


@settings(max_examples=80)
@given(st.lists(st.tuples(st.dictionaries(TEXTS, VALUES, max_size=3), TEXTS, st.booleans(),
                          st.sampled_from(["", " ", "\t", "\r"])), max_size=6))
def test_json_lines_give_what_json_loads_gives(rows):
    lines, plain = [], []
    for i, (record, text, ascii_only, space) in enumerate(rows):
        record = dict(record, text=text)
        lines.append(space + json.dumps(record, ensure_ascii=ascii_only) + space)
        # the scanner reads a line itself unless a key has an escape
        if all(k.isascii() and k.isprintable() and '"' not in k and "\\" not in k
               for k in record):
            plain.append(i)
    handed: list = []
    assert _json_docs(lines, handed=handed) == _loads_docs(lines)
    assert not set(handed) & set(plain)


@pytest.mark.parametrize("line, text", [
    (r'{"text": "\ud83d\ude00 pair"}', "\U0001F600 pair"),
    (r'{"text": "\"\\\/\b\f\n\r\t\u00e9\u0000"}', "\"\\/\b\f\n\r\t\u00e9\x00"),
    ('{"text": "first", "text": "last"}', "last"),
    ('{"text": 1, "text": "string wins"}', "string wins"),
    ('{"n": [1, -2.5e+3, 0, {"a": [true, false, null]}], "text": "x"}', "x"),
    ('{"text":"tight","more":{}}', "tight"),
    (r'{"text": "\u4E2D\u4e2dA\uD83D\uDE00"}', "\u4e2d\u4e2dA\U0001F600"),  # either case of hex
    ('{"te\\u0078t": "escaped key"}', "escaped key"),
    ('\t{"text": "spaces"} \r', "spaces"),
])
def test_json_lines_read_as_json_loads_reads_them(line, text):
    assert _json_docs([line]) == [text] == _loads_docs([line])


@pytest.mark.parametrize("line", [
    r'{"text": "\ud83d lone high"}',
    r'{"text": "lone low \ude00"}',
    r'{"text": "\ud83d\u0041 high then A"}',
])
def test_a_lone_surrogate_is_left_to_json_loads_and_encoded_as_encode_does(tmp_path, line):
    enc = fasttok.get_encoding("gpt2")
    path = tmp_path / "d.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    text = json.loads(line)["text"]
    block = _blocks(path.read_bytes(), b"\n", 100)[0]
    assert [index for index, _, _ in block.read_json(b"text")] == [0]
    assert enc.encode_files(path, format="jsonl").to_lists() == [enc.encode(text)]


@pytest.mark.parametrize("line, words", [
    ('{"text": "a",}', "not a JSON value"),
    ('{"text": "a"} x', "not a JSON value"),
    ('{"text": "tab\there"}', "not a JSON value"),
    ('{"text": "bad \\x escape"}', "not a JSON value"),
    ('{"text": "bad \\u12g4 hex"}', "not a JSON value"),
    ('{"text": "cut', "not a JSON value"),
    ('{"text": 01}', "not a JSON value"),
    ('{"text": NaN}', "the field is float"),
    ('{"text": [1, 2]}', "the field is list"),
    ('{"other": "a"}', "the object has no such field"),
    ('{}', "the object has no such field"),
    ('"text"', "a JSON str, not an object"),
    ('{"text": "a", "text": 2}', "the field is int"),
])
def test_a_line_json_loads_refuses_is_refused_with_its_words(tmp_path, line, words):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "ok"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(DocumentFileError, match=f"line 3.*{words}"):
        fasttok.get_encoding("gpt2").encode_files(path, format="jsonl")


def test_a_number_past_640_digits_is_left_to_json_loads():
    line = '{"n": ' + "1" * 700 + ', "text": "x"}'
    block = _blocks(line.encode() + b"\n", b"\n", 1 << 20)[0]
    assert [index for index, _, _ in block.read_json(b"text")] == [0]


def test_nesting_past_64_is_left_to_json_loads():
    line = '{"n": ' + "[" * 70 + "]" * 70 + ', "text": "x"}'
    block = _blocks(line.encode() + b"\n", b"\n", 1 << 20)[0]
    assert [index for index, _, _ in block.read_json(b"text")] == [0]


def test_json_lines_with_bad_bytes_read_as_replacement_characters(tmp_path):
    enc = fasttok.get_encoding("gpt2")
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{"text": "bad \xff"}\n')
    assert enc.encode_files(path, format="jsonl", errors="replace").to_lists() == \
        [enc.encode("ok"), enc.encode("bad \ufffd")]


def test_a_disallowed_special_in_json_lines_names_its_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "a"}\n\n{"text": "b <|endoftext|>"}\n', encoding="utf-8")
    with pytest.raises(DocumentFileError, match=r"line 3: Encountered text corresponding to "
                                                r"disallowed special token"):
        fasttok.get_encoding("gpt2").encode_files(path, format="jsonl")


# ---------------------------------------------------------------- the threaded job

def _run(job, threads: int, data: bytes) -> tuple:
    # job's (ids, offsets) of data's lines, handed in blocks of 20,000 bytes,
    # with threads - 1 helpers working beside the caller
    import threading

    helpers = [threading.Thread(target=job.work) for _ in range(threads - 1)]
    for h in helpers:
        h.start()
    try:
        for block in _blocks(data, b"\n", 20_000):
            job.add(block)
        return job.finish()
    finally:
        job.stop()
        for h in helpers:
            h.join()


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("threads, chunk_bytes", [(1, 1), (2, 1), (2, 50), (3, 1 << 16)])
def test_the_job_gives_the_ids_of_one_call_per_document(threads, chunk_bytes):
    # chunks of one document make a 600-line block more chunks than the
    # ring holds, so publishing waits for room and slots are reused
    enc = fasttok.get_encoding("cl100k_base")
    data = (DATA / "corpus" / "multi.txt").read_bytes()[:60_000]
    data = data[:data.rindex(b"\n") + 1]
    docs = data.decode().split("\n")[:-1]
    job = FileJob(enc._core, None, threads, chunk_bytes)
    flat, ends = enc.encode_ordinary_batch(docs, num_threads=1, flat=True)
    assert _run(job, threads, data) == (flat, ends)


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cache_entries", [1, 2, 4096])
def test_the_jobs_own_caches_of_any_size_give_the_ids_of_one_call(threads, cache_entries):
    # a table of one entry, or one set, evicts at every piece
    enc = fasttok.get_encoding("cl100k_base")
    data = (DATA / "corpus" / "code.txt").read_bytes()[:60_000]
    data = data[:data.rindex(b"\n") + 1]
    job = FileJob(enc._core, None, threads, 4096, cache_entries)
    flat, ends = enc.encode_ordinary_batch(data.decode().split("\n")[:-1], num_threads=1,
                                           flat=True)
    assert _run(job, threads, data) == (flat, ends)


def test_the_jobs_caches_take_a_power_of_two_entries():
    from fasttok.formats._byte_bpe import CoreBPE
    from fasttok.shared._tables import TokenTables

    core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")
    with pytest.raises(ValueError, match="power of two, not 3"):
        FileJob(core, None, 1, 4096, 3)


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
def test_a_big_files_pieces_go_to_the_jobs_cache_and_a_small_ones_to_the_threads(tmp_path):
    from fasttok.shared import _piece_cache

    enc = fasttok.get_encoding("cl100k_base")
    text = (DATA / "corpus" / "en.txt").read_bytes()
    text = text[:text.rindex(b"\n", 0, 40_000) + 1]
    small, big = tmp_path / "small.txt", tmp_path / "big.txt"
    small.write_bytes(text[:500])
    big.write_bytes(text)
    previous = fasttok.set_pretoken_cache(64)  # a job over 40 kB gets 512 entries
    try:
        enc.encode_files(big, num_threads=1)
        assert _piece_cache.thread_info()["used"] == 0
        enc.encode_files(small, num_threads=1)
        assert _piece_cache.thread_info()["used"] > 0
    finally:
        fasttok.set_pretoken_cache(previous)


def test_a_chunk_with_more_ids_than_the_room_made_for_them_keeps_them_all():
    # one id a byte: four times the ids a chunk's buffer has room for at first
    from fasttok.formats._byte_bpe import CoreBPE
    from fasttok.shared._tables import TokenTables

    core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")
    data = bytes(range(32, 127)) * 1000 + b"\n"
    job = FileJob(core, None, 1)
    job.add(_blocks(data, b"\n", len(data))[0])
    ids, offsets = job.finish()
    assert (list(ids), list(offsets)) == (list(data[:-1]), [0, len(data) - 1])


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("num_threads", [1, 2])
def test_encode_files_on_tiny_blocks_gives_the_ids_of_big_ones(tmp_path, num_threads):
    enc = fasttok.get_encoding("cl100k_base")
    data = (DATA / "corpus" / "code.txt").read_bytes()[:20_000]
    path = tmp_path / "d.txt"
    path.write_bytes(data)
    whole = enc.encode_files(path, num_threads=1, disallowed_special=())
    small = enc.encode_files(path, num_threads=num_threads, block_size=97, disallowed_special=())
    assert (small.ids, small.offsets) == (whole.ids, whole.offsets)


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
def test_a_model_without_a_document_encoder_takes_str_documents(tmp_path):
    # Qwen 3's NFC normalizer: its batch, not the raw UTF-8, decides
    path = tmp_path / "d.txt"
    path.write_text("cafe\u0301\nplain\n", encoding="utf-8")
    enc = fasttok.load(str(DATA / "vocab" / "hf" / "qwen3" / "tokenizer.json"))
    assert getattr(enc._core, "document_encoder", None) is None
    assert enc.encode_files(path).to_lists() == [enc.encode("cafe\u0301"), enc.encode("plain")]


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("name", ["llama3", "gpt4o"])
def test_a_byte_level_tokenizer_json_reads_utf8_straight_with_its_specials(tmp_path, name):
    enc = fasttok.load(str(DATA / "vocab" / "hf" / name / "tokenizer.json"))
    special = sorted(enc.special_tokens_set)[0]
    docs = ["Hello world", "", f"a{special}b 你好 🎉", "  code = f(x)\t"]
    path = tmp_path / "d.txt"
    path.write_text("\n".join(docs), encoding="utf-8")
    assert enc._core.document_encoder is not None
    assert enc.encode_files(path, allowed_special="all").to_lists() == \
        [enc.encode(d, allowed_special="all") for d in docs]
    with pytest.raises(DocumentFileError, match="line 3: Encountered"):
        enc.encode_files(path)
