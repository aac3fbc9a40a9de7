"""``fasttok.hf.Tokenizer`` answers as ``tokenizers.Tokenizer`` 0.23.3 beyond encoding:
pickling and copies, added tokens, ``to_str`` / ``save``, the stages' own
methods, ``encode_batch_fast``, ``decode`` of numpy ids,
``encode_special_tokens``, ``DecodeStream``, the checks of the truncation
and padding arguments (exception types and messages) and the file's
BPE-dropout. Each test sets the two tokenizers up alike and compares.
"""

from __future__ import annotations

import copy
import functools
import json
import multiprocessing
import os

import pytest

from conftest import DATA, missing_data_reason, read_jsonl

tokenizers = pytest.importorskip("tokenizers")
np = pytest.importorskip("numpy")
from tokenizers.decoders import DecodeStream as TheirDecodeStream  # noqa: E402

from fasttok.hf import AddedToken, DecodeStream, Tokenizer  # noqa: E402

HF = DATA / "vocab" / "hf"
# the four large vocabularies take seconds to load twice: they run under -m slow
FILES = (*(pytest.param(name, marks=pytest.mark.slow)
           for name in ("llama3", "qwen3", "gpt4o", "gemma3")),
         "llama2", "all-MiniLM-L6-v2",
         "unigram/botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto.json",
         "unigram/botchan_unigram_5000.v4.57.6.AlbertTokenizer.json",
         "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json",
         "unigram/botchan_unigram_5000.v5.24.0.from_spm_proto.json",
         "unigram/kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json",
         "unigram/kyoto_ja_unigram_8000.v5.24.0.from_spm_proto.json")
SMALL = "all-MiniLM-L6-v2"
TEXTS = ["Hello world <new> foo foobar <sp>bar hello", "héllo 😀 x [CLS] <s> </s> <x>  y",
         "  leading\n\ttabs <unk> <pad> HELLO <NEW>", "日本語のテキスト <new>です"]
FIELDS = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
          "word_ids", "sequence_ids")


def _path(name: str) -> str:
    path = HF / name if name.endswith(".json") else HF / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return str(path)


def _fresh(name: str) -> tuple:
    """A new pair (ours, theirs) that a test may change."""
    path = _path(name)
    return Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(path)


@functools.lru_cache(maxsize=None)
def _shared(name: str) -> tuple:
    """A pair that tests only read."""
    return _fresh(name)


@functools.lru_cache(maxsize=None)
def _lines() -> list:
    path = DATA / "testcases" / "lines.jsonl"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return [row["text"] for row in read_jsonl(path)]


def _sample(count: int) -> list:
    """``count`` test lines spread over the file (its first lines are all whitespace)."""
    lines = _lines()
    return lines[::max(1, len(lines) // count)][:count]


def _fields(enc) -> dict:
    out = {f: list(getattr(enc, f)) for f in FIELDS}
    out["offsets"] = [tuple(o) for o in out["offsets"]]
    out["overflowing"] = [_fields(o) for o in enc.overflowing]
    return out


def _outcome(call) -> tuple:
    # ("ok", value) or the exception's type and message
    try:
        return "ok", call()
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__ if not isinstance(error, ValueError) else "ValueError", \
            str(error)


def _add_the_same_tokens(ours, theirs) -> list:
    counts = []
    for tok, made in ((ours, AddedToken), (theirs, tokenizers.AddedToken)):
        counts.append((
            tok.add_tokens(["hello", "<new>", made("foo", single_word=True), "<new>", ""]),
            tok.add_special_tokens(["<sp>", "bar", made("<x>", lstrip=True, rstrip=True)]),
            tok.add_tokens([made("<new>", normalized=False)])))
    return counts


def _decoders(tok) -> list:
    # in tokenizers' order
    return [(i, repr(t)) for i, t in tok.get_added_tokens_decoder().items()]


@pytest.fixture(params=FILES)
def name(request):
    return request.param


# ------------------------------------------------------------------ pickling and copies
def test_a_pickled_tokenizer_encodes_in_a_spawn_pool_as_in_the_parent():
    ours, _ = _fresh(SMALL)
    ours.add_tokens(["<new>"])
    ours.enable_truncation(16)
    texts = _sample(8) + ["a <new> b"]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        theirs = pool.map(ours.encode, texts)
    assert [_fields(e) for e in theirs] == [_fields(ours.encode(t)) for t in texts]


def test_a_deep_copy_encodes_as_the_original_and_changes_alone():
    ours, _ = _fresh(SMALL)
    clone = copy.deepcopy(ours)
    assert clone.encode(TEXTS[0]).ids == ours.encode(TEXTS[0]).ids
    clone.add_tokens(["<new>"])
    assert ours.token_to_id("<new>") is None and clone.token_to_id("<new>") is not None


def test_pickling_drops_encode_special_tokens_as_tokenizers_does():
    ours, theirs = _fresh(SMALL)
    for tok in (ours, theirs):
        tok.encode_special_tokens = True
    assert copy.deepcopy(ours).encode_special_tokens == \
        copy.deepcopy(theirs).encode_special_tokens


# ------------------------------------------------------------------ added tokens
@functools.lru_cache(maxsize=None)
def _configured(name: str) -> tuple:
    """A pair given the same added tokens, truncation and padding, with the
    counts ``add_tokens`` / ``add_special_tokens`` returned; tests only read it."""
    ours, theirs = _fresh(name)
    counts = _add_the_same_tokens(ours, theirs)
    for tok in (ours, theirs):
        tok.enable_truncation(24, stride=2, strategy="only_first", direction="left")
        tok.enable_padding(direction="left", pad_id=3, pad_type_id=1, pad_token="<p>",
                           length=30, pad_to_multiple_of=8)
    return ours, theirs, counts


def test_add_tokens_counts_as_tokenizers(name):
    _, _, counts = _configured(name)
    assert counts[0] == counts[1]


def test_added_tokens_get_tokenizers_ids_and_vocabulary_size(name):
    ours, theirs, _ = _configured(name)
    assert _decoders(ours) == _decoders(theirs)
    assert ours.get_vocab_size() == theirs.get_vocab_size()
    assert ours.get_vocab() == theirs.get_vocab()


def test_texts_with_added_tokens_encode_and_decode_as_in_tokenizers(name):
    ours, theirs, _ = _configured(name)
    for text in TEXTS:
        assert _fields(ours.encode(text)) == _fields(theirs.encode(text)), text
        ids = theirs.encode(text).ids
        for skip in (True, False):
            assert ours.decode(ids, skip) == theirs.decode(ids, skip), text


@pytest.mark.parametrize("flags", [{"single_word": True}, {"lstrip": True}, {"rstrip": True},
                                   {"normalized": False}, {"normalized": True},
                                   {"special": True}])
def test_each_added_token_flag_matches_as_in_tokenizers(flags):
    ours, theirs = _fresh(SMALL)
    ours.add_tokens([AddedToken("Tok", **flags)])
    theirs.add_tokens([tokenizers.AddedToken("Tok", **flags)])
    for text in ("Tok", "a Tok b", "aTok", "Tokb", " tok ", "x  Tok  y", "TOK"):
        assert _fields(ours.encode(text)) == _fields(theirs.encode(text)), text


def test_add_special_tokens_makes_the_callers_token_special():
    ours, theirs = _fresh(SMALL)
    mine, their = AddedToken("<z>"), tokenizers.AddedToken("<z>")
    ours.add_special_tokens([mine])
    theirs.add_special_tokens([their])
    assert repr(mine) == repr(their)
    assert mine.special and not mine.normalized


def test_added_token_repr_and_state_are_tokenizers():
    for flags in ({}, {"special": True}, {"lstrip": True, "normalized": False}):
        assert repr(AddedToken('a"\\', **flags)) == repr(tokenizers.AddedToken('a"\\', **flags))
        assert AddedToken("a", **flags).__getstate__() == \
            tokenizers.AddedToken("a", **flags).__getstate__()


@pytest.mark.parametrize("argument", [("a",), "abc", [3], [None]])
def test_add_tokens_refuses_what_tokenizers_refuses(argument):
    ours, theirs = _shared(SMALL)
    assert _outcome(lambda: ours.add_tokens(argument)) == \
        _outcome(lambda: theirs.add_tokens(argument))


@pytest.mark.parametrize("call", [
    lambda hf, tok: tok.encode("a b", add_special_tokens=None),
    lambda hf, tok: tok.encode("a b", is_pretokenized=1),
    lambda hf, tok: tok.encode_batch(["a"], add_special_tokens=1),
    lambda hf, tok: tok.encode_batch("ab"),
    lambda hf, tok: tok.encode_batch(iter(["a"])),
    lambda hf, tok: tok.encode_batch({"a"}),
    lambda hf, tok: tok.encode_batch_fast(np.int64(1)),
    lambda hf, tok: tok.token_to_id(1),
    lambda hf, tok: tok.id_to_token(-1),
    lambda hf, tok: tok.id_to_token("1"),
    lambda hf, tok: tok.get_vocab(None),
    lambda hf, tok: tok.get_vocab_size(1),
    lambda hf, tok: tok.decode_batch(None),
    lambda hf, tok: tok.decode_batch({1: [101]}),
    lambda hf, tok: tok.to_str(pretty=1),
    lambda hf, tok: tok.add_tokens(None),
    lambda hf, tok: hf.Encoding.merge([], growing_offsets=None).ids])
def test_tokenizer_methods_check_their_arguments_as_tokenizers(call):
    import fasttok.hf
    ours, theirs = _shared(SMALL)
    assert _outcome(lambda: call(fasttok.hf, ours)) == _outcome(lambda: call(tokenizers, theirs))


@pytest.mark.parametrize("kwargs", [{"ids": "ab"}, {"ids": {1: 2}}, {"ids": {1}}, {"ids": b"ab"},
                                    {"ids": range(3)}, {"skip_special_tokens": None},
                                    {"skip_special_tokens": 1}])
def test_decode_stream_reads_its_arguments_as_tokenizers(kwargs):
    ours, theirs = _shared(SMALL)
    assert _outcome(lambda: DecodeStream(**kwargs).step(ours, 101)) == \
        _outcome(lambda: TheirDecodeStream(**kwargs).step(theirs, 101))


@pytest.mark.parametrize("call", [
    lambda hf, tok: tok.decode([101], skip_special_tokens=1),
    lambda hf, tok: tok.num_special_tokens_to_add(1),
    lambda hf, tok: hf.AddedToken("x", lstrip=1),
    lambda hf, tok: hf.AddedToken(3),
    lambda hf, tok: setattr(tok, "encode_special_tokens", 1)])
def test_bool_and_str_arguments_refuse_other_types_as_tokenizers(call):
    import fasttok.hf
    ours, theirs = _shared(SMALL)
    assert _outcome(lambda: call(fasttok.hf, ours)) == _outcome(lambda: call(tokenizers, theirs))


# ------------------------------------------------------------------ to_str and save
def test_to_str_is_a_document_tokenizers_loads_as_the_same_tokenizer(name):
    ours, theirs, _ = _configured(name)
    document = ours.to_str()
    assert json.loads(document)["added_tokens"] == json.loads(theirs.to_str())["added_tokens"]
    # tokenizers' own round trip is the reference (it renumbers some added ids)
    loaded = tokenizers.Tokenizer.from_str(document)
    reference = tokenizers.Tokenizer.from_str(theirs.to_str())
    assert _decoders(loaded) == _decoders(reference)
    assert (loaded.truncation, loaded.padding) == (reference.truncation, reference.padding)
    for text in TEXTS:
        assert _fields(loaded.encode(text)) == _fields(reference.encode(text)), text


def test_to_str_reads_back_to_the_same_tokenizer():
    ours, theirs, _ = _configured(SMALL)
    again = Tokenizer.from_str(ours.to_str(pretty=True))
    reference = tokenizers.Tokenizer.from_str(theirs.to_str())
    assert _decoders(again) == _decoders(reference)
    assert (again.truncation, again.padding) == (reference.truncation, reference.padding)
    for text in TEXTS:
        assert _fields(again.encode(text)) == _fields(reference.encode(text)), text


def test_to_str_pretty_is_indented_as_tokenizers_writes_it():
    ours, theirs = _shared(SMALL)
    assert ours.to_str(pretty=True).split("\n")[:4] == theirs.to_str(pretty=True).split("\n")[:4]


def test_save_replaces_the_file_whole_and_leaves_no_temporary_file(tmp_path):
    ours, theirs = _fresh(SMALL)
    target = tmp_path / "tokenizer.json"
    target.write_text("old")
    ours.add_tokens(["<new>"])
    ours.save(str(target))
    assert os.listdir(tmp_path) == ["tokenizer.json"]
    assert tokenizers.Tokenizer.from_file(str(target)).token_to_id("<new>") == \
        ours.token_to_id("<new>")


# ------------------------------------------------------------------ the stages
def test_the_stages_answer_as_tokenizers_stages(name):
    ours, theirs = _shared(name)
    lines = _sample(20)
    for stage in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        assert (getattr(ours, stage) is None) == (getattr(theirs, stage) is None), stage
    for line in lines:
        if theirs.normalizer is not None:
            assert ours.normalizer.normalize_str(line) == theirs.normalizer.normalize_str(line)
        if theirs.pre_tokenizer is not None:
            assert ours.pre_tokenizer.pre_tokenize_str(line) == \
                theirs.pre_tokenizer.pre_tokenize_str(line)
    for i in range(0, theirs.get_vocab_size(False), 211):
        token = theirs.model.id_to_token(i)
        assert ours.model.id_to_token(i) == token
        assert ours.model.token_to_id(token) == theirs.model.token_to_id(token)
    assert ours.model.id_to_token(2 ** 31) is None
    if theirs.post_processor is not None:
        for pair in (False, True):
            assert ours.post_processor.num_special_tokens_to_add(pair) == \
                theirs.post_processor.num_special_tokens_to_add(pair)
    if theirs.decoder is not None:
        tokens = theirs.encode(lines[3]).tokens
        assert ours.decoder.decode(tokens) == theirs.decoder.decode(tokens)


def test_the_stages_are_read_only():
    ours, _ = _shared(SMALL)
    for stage in ("normalizer", "pre_tokenizer", "model", "post_processor", "decoder"):
        with pytest.raises(AttributeError):
            setattr(ours, stage, None)


# ------------------------------------------------------------------ encoding and decoding
def test_encode_batch_fast_equals_tokenizers(name):
    ours, theirs = _shared(name)
    batch = _sample(40) + [tuple(_sample(42)[40:42])]
    assert [_fields(e) for e in ours.encode_batch_fast(batch)] == \
        [_fields(e) for e in theirs.encode_batch_fast(batch)]


def test_encode_special_tokens_reads_special_tokens_as_text(name):
    ours, theirs = _shared(name)
    specials = [t.content for t in theirs.get_added_tokens_decoder().values() if t.special][:20]
    text = " x ".join(specials) + " " + _sample(6)[5]
    try:
        for tok in (ours, theirs):
            tok.encode_special_tokens = True
        assert _fields(ours.encode(text)) == _fields(theirs.encode(text))
        assert [_fields(e) for e in ours.encode_batch_fast([text])] == \
            [_fields(e) for e in theirs.encode_batch_fast([text])]
    finally:
        for tok in (ours, theirs):
            tok.encode_special_tokens = False
    assert _fields(ours.encode(text)) == _fields(theirs.encode(text))


@pytest.mark.parametrize("ids", [np.array([101, 7592, 2088, 102]), np.array([101, 7592], np.uint32),
                                 [np.int64(101), np.uint16(7592), True]])
def test_decode_takes_numpy_integers_and_arrays(ids):
    ours, theirs = _shared(SMALL)
    assert ours.decode(ids) == theirs.decode(ids)
    assert ours.decode_batch([ids, ids]) == theirs.decode_batch([ids, ids])


@pytest.mark.parametrize("ids", [[-1], [2 ** 32], [2 ** 63], [1.0], ["a"], "ab", 5, None,
                                 {101: 1}, {101}, iter([101]), [np.float64(3)],
                                 np.array([[1, 2]]), [10 ** 9]])
def test_decode_refuses_ids_as_tokenizers(ids):
    ours, theirs = _shared(SMALL)
    assert _outcome(lambda: ours.decode(ids)) == _outcome(lambda: theirs.decode(ids))


# ------------------------------------------------------------------ DecodeStream
def _stream(tok, stream_type, ids: list, skip: bool) -> list:
    stream = stream_type(skip_special_tokens=skip)
    return [_outcome(lambda: stream.step(tok, i)) for i in ids]


@pytest.mark.parametrize("skip", [False, True])
def test_decode_stream_equals_tokenizers_on_corpus_ids(name, skip):
    ours, theirs = _shared(name)
    for line in _sample(12):
        ids = theirs.encode(line).ids
        assert _stream(ours, DecodeStream, ids, skip) == \
            _stream(theirs, TheirDecodeStream, ids, skip), line


def test_decode_stream_equals_tokenizers_on_ids_ending_mid_character(name):
    ours, theirs = _shared(name)
    ids = theirs.encode("x 😀é日本 🇯🇵", add_special_tokens=False).ids
    for end in range(1, len(ids) + 1):
        assert _stream(ours, DecodeStream, ids[:end], False) == \
            _stream(theirs, TheirDecodeStream, ids[:end], False)


@pytest.mark.parametrize("step", [-1, 2 ** 32, 1.0, "a", 10 ** 9, np.int64(5), np.array(5), True,
                                  [1, 2], [1, -1]])
def test_decode_stream_reads_ids_as_tokenizers(step):
    ours, theirs = _shared(SMALL)
    assert _outcome(lambda: DecodeStream().step(ours, step)) == \
        _outcome(lambda: TheirDecodeStream().step(theirs, step))


def test_a_copied_decode_stream_continues_on_its_own():
    ours, theirs = _shared(SMALL)
    ids = theirs.encode("hello there world", add_special_tokens=False).ids
    stream = DecodeStream()
    stream.step(ours, ids[0])
    clone = copy.copy(stream)
    assert [clone.step(ours, i) for i in ids[1:]] == [stream.step(ours, i) for i in ids[1:]]


# ------------------------------------------------------------------ truncation and padding
@pytest.mark.parametrize("kwargs", [
    {"pad_id": -1}, {"pad_id": 2 ** 32}, {"pad_id": 2 ** 32 - 1}, {"pad_id": 2 ** 63},
    {"pad_type_id": -1}, {"length": -1}, {"length": 2 ** 64}, {"length": 0},
    {"pad_to_multiple_of": -1}, {"pad_to_multiple_of": 0}, {"direction": "up"},
    {"direction": "Left"}, {"direction": None}, {"pad_token": 3}, {"pad_id": 1.5},
    {"pad_id": True}, {"pad_id": np.int64(3)}, {"pad_id": np.int64(-1)}, {"pad_id": "3"},
    # each keyword read in the caller's order: the first bad one met is refused
    {"direction": "up", "pad_id": -1}, {"pad_id": -1, "direction": "up"},
    {"length": -1, "pad_token": 3}, {"pad_token": 3, "length": -1}])
def test_enable_padding_checks_its_arguments_as_tokenizers(kwargs):
    ours, theirs = _shared(SMALL)
    for tok in (ours, theirs):
        tok.no_padding()
    assert _outcome(lambda: ours.enable_padding(**kwargs)) == \
        _outcome(lambda: theirs.enable_padding(**kwargs))
    assert ours.padding == theirs.padding


@pytest.mark.parametrize("kwargs", [
    {"max_length": -1}, {"max_length": 2 ** 64}, {"max_length": 2 ** 63}, {"max_length": 0},
    {"max_length": 1.5}, {"max_length": None}, {"max_length": np.int64(5)},
    {"max_length": 5, "stride": -1}, {"max_length": 5, "stride": 2 ** 64},
    {"max_length": 5, "stride": "a"}, {"max_length": 5, "strategy": "LongestFirst"},
    {"max_length": 5, "strategy": None}, {"max_length": 5, "direction": "Left"},
    {"max_length": 5, "strategy": "x", "direction": "y"}, {"max_length": -1, "strategy": "x"},
    {"max_length": 5, "direction": "y", "strategy": "x"},
    {"max_length": 5, "direction": "y", "stride": -1},
    {"max_length": 5, "stride": -1, "direction": "y"}])
def test_enable_truncation_checks_its_arguments_as_tokenizers(kwargs):
    ours, theirs = _shared(SMALL)
    for tok in (ours, theirs):
        tok.no_truncation()
    assert _outcome(lambda: ours.enable_truncation(**kwargs)) == \
        _outcome(lambda: theirs.enable_truncation(**kwargs))
    assert ours.truncation == theirs.truncation


def test_an_unknown_padding_or_truncation_keyword_is_ignored_as_in_tokenizers():
    ours, theirs = _fresh(SMALL)
    theirs.enable_padding(length=9, foo=1)
    theirs.enable_truncation(7, bar=2)
    with pytest.warns(UserWarning, match="Ignored unknown kwarg option foo"):
        ours.enable_padding(length=9, foo=1)
    with pytest.warns(UserWarning, match="Ignored unknown kwarg option bar"):
        ours.enable_truncation(7, bar=2)
    assert (ours.padding, ours.truncation) == (theirs.padding, theirs.truncation)


def test_padding_with_the_largest_u32_id_equals_tokenizers():
    ours, theirs = _fresh(SMALL)
    for tok in (ours, theirs):
        tok.enable_padding(pad_id=2 ** 32 - 1, pad_token="[X]")
    batch = ["a", "a b c d", ("x", "y z")]
    assert [_fields(e) for e in ours.encode_batch(batch)] == \
        [_fields(e) for e in theirs.encode_batch(batch)]


# ------------------------------------------------------------------ sampling
def _with_dropout(name: str, dropout: float) -> tuple:
    document = json.loads(open(_path(name), encoding="utf-8").read())
    document["model"]["dropout"] = dropout
    text = json.dumps(document)
    return Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)


def test_a_bpe_dropout_of_1_in_the_file_leaves_every_merge_undone_as_tokenizers():
    ours, theirs = _with_dropout("llama2", 1.0)
    for line in _sample(20):
        assert _fields(ours.encode(line)) == _fields(theirs.encode(line)), line
        assert ours.encode_batch_fast([line])[0].ids == theirs.encode_batch_fast([line])[0].ids


def test_a_bpe_dropout_in_the_file_samples_segmentations_of_the_text():
    ours, theirs = _with_dropout("llama2", 0.5)
    line = max(_sample(20), key=len)
    draws = {tuple(ours.encode(line).ids) for _ in range(20)}
    assert len(draws) > 1
    assert {theirs.decode(list(d)) for d in draws} == {theirs.decode(theirs.encode(line).ids)}


def test_a_unigram_file_encodes_without_sampling_as_tokenizers():
    ours, theirs = _shared("unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json")
    line = max(_sample(20), key=len)
    assert {tuple(ours.encode(line).ids) for _ in range(5)} == {tuple(theirs.encode(line).ids)}


# ------------------------------------------------------------------ Encoding and post_process
def _both(call) -> tuple:
    """``call(module, tokenizer, encoding)`` on ours and on tokenizers' (a fresh
    pair encoding each, so a call that changes it changes only its own), with
    an Encoding answer compared field by field."""
    import fasttok.hf
    outcomes = []
    for module, tok in zip((fasttok.hf, tokenizers), _shared(SMALL)):
        encoding = tok.encode("hello there, world", "a pair")

        def run(module=module, tok=tok, encoding=encoding):
            out = call(module, tok, encoding)
            return _fields(out) if hasattr(out, "overflowing") else out
        outcomes.append((_outcome(run), _fields(encoding)))
    return tuple(outcomes)


@pytest.mark.parametrize("method", ["char_to_token", "char_to_word", "token_to_chars",
                                    "token_to_word", "token_to_sequence", "word_to_tokens",
                                    "word_to_chars", "set_sequence_id"])
def test_encoding_lookups_read_their_indices_as_tokenizers(method):
    # a usize (a u32 for a word index): -1 is an OverflowError, not a miss
    for index in (0, 1, 5, 10, 127, 128, 129, -1, 2 ** 32, 2 ** 64, -2 ** 63, None, 1.5, "1",
                  True, np.int64(3), np.int64(-1)):
        ours, theirs = _both(lambda hf, tok, enc: getattr(enc, method)(index))
        assert ours == theirs, (method, index)
        if method in ("char_to_token", "char_to_word", "word_to_tokens", "word_to_chars"):
            for sequence in (1, 2, -1, 2 ** 64, None):
                ours, theirs = _both(lambda hf, tok, enc: getattr(enc, method)(index, sequence))
                assert ours == theirs, (method, index, sequence)


@pytest.mark.parametrize("kwargs", [
    {"length": 130, "pad_id": -1}, {"length": 130, "pad_id": 2 ** 32},
    {"length": 130, "pad_type_id": -1}, {"length": 2, "pad_id": -1}, {"length": -1},
    {"length": None}, {"length": 1.5}, {"length": 130, "direction": "Left"},
    {"length": 130, "direction": None}, {"length": 130, "direction": "up", "pad_id": -1},
    {"length": 130, "pad_token": 3}, {"length": 130, "pad_id": np.int64(7)},
    {"length": 130, "direction": "left", "pad_id": 2 ** 32 - 1, "pad_token": "<p>"}])
def test_encoding_pad_checks_its_arguments_as_tokenizers(kwargs):
    ours, theirs = _both(lambda hf, tok, enc: enc.pad(**kwargs))
    assert ours == theirs


@pytest.mark.parametrize("kwargs", [
    {"max_length": -1}, {"max_length": None}, {"max_length": 2 ** 64}, {"max_length": "5"},
    {"max_length": 5, "stride": -1}, {"max_length": 5, "stride": 1.5},
    {"max_length": 5, "direction": "Left"}, {"max_length": 5, "direction": None},
    {"max_length": 5, "direction": "middle"}, {"max_length": 5, "stride": 2, "direction": "left"},
    {"max_length": np.int64(4)}])
def test_encoding_truncate_checks_its_arguments_as_tokenizers(kwargs):
    ours, theirs = _both(lambda hf, tok, enc: enc.truncate(**kwargs))
    assert ours == theirs


@pytest.mark.parametrize("call", [
    lambda hf, tok, enc: hf.Encoding.merge([enc, None]),
    lambda hf, tok, enc: hf.Encoding.merge([enc, "text"]),
    lambda hf, tok, enc: hf.Encoding.merge([[enc]]),
    lambda hf, tok, enc: hf.Encoding.merge(enc),
    lambda hf, tok, enc: hf.Encoding.merge(None),
    lambda hf, tok, enc: hf.Encoding.merge("ab"),
    lambda hf, tok, enc: hf.Encoding.merge({1: enc}),
    lambda hf, tok, enc: hf.Encoding.merge(iter([enc])),
    lambda hf, tok, enc: hf.Encoding.merge([enc], growing_offsets=None),
    lambda hf, tok, enc: hf.Encoding.merge([enc, enc], growing_offsets=1),
    lambda hf, tok, enc: hf.Encoding.merge((enc, enc), growing_offsets=False)])
def test_encoding_merge_checks_its_arguments_as_tokenizers(call):
    ours, theirs = _both(call)
    assert ours == theirs


@pytest.mark.parametrize("call", [
    lambda hf, tok, enc: tok.post_process(5),
    lambda hf, tok, enc: tok.post_process("text"),
    lambda hf, tok, enc: tok.post_process(None),
    lambda hf, tok, enc: tok.post_process([enc]),
    lambda hf, tok, enc: tok.post_process(enc, "text"),
    lambda hf, tok, enc: tok.post_process(enc, 5),
    lambda hf, tok, enc: tok.post_process(5, "text"),
    lambda hf, tok, enc: tok.post_process(enc, None, add_special_tokens=1),
    lambda hf, tok, enc: tok.post_process(enc, None, add_special_tokens=1)])
def test_post_process_checks_its_arguments_as_tokenizers(call):
    ours, theirs = _both(call)
    assert ours == theirs


def test_post_process_leaves_the_encodings_it_is_given_as_they_were():
    # the file truncates to 128: the pair of an encoding with itself is cut
    ours, theirs = _both(lambda hf, tok, enc: tok.post_process(enc, enc, False))
    assert ours == theirs


@pytest.mark.parametrize("text", ["a\ud800b", "\u4e2d\u6587" * 2 + "\u4e2d\udc00\u6587\u5b57",
                                  "\U0001F600 \udfff", "\ud83d\ude00"],
                         ids=["two-byte", "two-byte-past-four-units", "four-byte", "a-pair"])
@pytest.mark.parametrize("call", [
    lambda tok, text: tok.encode(text),
    lambda tok, text: tok.encode("ok", text),
    lambda tok, text: tok.encode(["ok", text], is_pretokenized=True),
    lambda tok, text: tok.encode(["ok"], ["ok", text], is_pretokenized=True),
    lambda tok, text: tok.encode_batch(["ok", text]),
    lambda tok, text: tok.encode_batch(["ok", ("ok", text)]),
    lambda tok, text: tok.encode_batch([["ok", text]], is_pretokenized=True)],
    ids=["one", "pair", "words", "word-pair", "batch", "batch-pair", "batch-words"])
def test_text_with_a_surrogate_code_point_is_refused_as_tokenizers_refuses_it(call, text):
    # in a str of any width, paired or not (a str's pair is two code points),
    # with tokenizers' message for where it stands
    ours, theirs = _both(lambda hf, tok, enc: call(tok, text))
    assert ours == theirs and ours[0][0] == "TypeError"


def _holding_itself() -> list:
    inner: list = []
    inner.append(inner)
    return inner


@pytest.mark.parametrize("call", [
    lambda tok, value: tok.encode(value),
    lambda tok, value: tok.encode(value, is_pretokenized=True),
    lambda tok, value: tok.encode_batch([value]),
    lambda tok, value: tok.encode_batch([(["ok"], value)], is_pretokenized=True)],
    ids=["one", "words", "batch", "batch-words"])
def test_a_list_holding_itself_is_refused_with_a_type_error_not_a_crash(call):
    # as tokenizers refuses it (its words differ); the surrogate check looks
    # no deeper than an input's words lie, where it recursed until the C
    # stack overflowed
    ours, theirs = _both(lambda hf, tok, enc: call(tok, _holding_itself()))
    assert ours[0][0] == theirs[0][0] == "TypeError"


def test_a_lone_surrogate_in_a_str_argument_is_refused_as_tokenizers_refuses_it():
    # tokenizers raises UnicodeEncodeError; fasttok's contract keeps that type
    # for its own bugs and refuses such text with a TypeError, as encode does
    ours, theirs = _both(lambda hf, tok, enc: enc.pad(130, pad_token="\ud800"))
    assert ours[0][0] == "TypeError" and theirs[0][0] == "ValueError"
    assert ours[1] == theirs[1]
