"""The compiled making of walked encodings (:class:`EncodingMaker`, the
fields as :class:`WalkedField` descriptors): what the drop-in's common calls
go through gives what the stages give, follows the settings changed after it
was made, and declines to the stages text by text."""

from __future__ import annotations

import gc
from array import array

import pytest

import fasttok.hf
from fasttok.post_processors.encoding import Encoding
from conftest import DATA

TEXT = "Hello world, this is a line of text."
STRINGS = ["t%d" % i for i in range(10)]


def _path(name: str) -> str:
    path = DATA / "vocab" / "hf" / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return str(path)


def _tokenizer(name: str) -> fasttok.hf.Tokenizer:
    return fasttok.hf.Tokenizer.from_file(_path(name))


@pytest.mark.parametrize("name", ["llama2", "all-MiniLM-L6-v2"])
def test_truncation_and_padding_set_after_an_encode_apply_to_the_next(name):
    tokenizers = pytest.importorskip("tokenizers")
    ours, theirs = _tokenizer(name), tokenizers.Tokenizer.from_file(_path(name))
    steps = [lambda t: (t.no_truncation(), t.no_padding()), lambda t: t.enable_truncation(4),
             lambda t: (t.no_truncation(), t.enable_padding(length=40)),
             lambda t: t.no_padding()]
    for step in steps:
        step(ours)
        step(theirs)
        assert ours.encode(TEXT).ids == theirs.encode(TEXT).ids
        assert [e.ids for e in ours.encode_batch([TEXT, "a"])] == \
            [e.ids for e in theirs.encode_batch([TEXT, "a"])]


def test_a_batch_of_texts_equals_each_text_encoded_alone():
    tok = _tokenizer("gemma3")
    texts = [TEXT, "", "  two  spaces\n\nand lines", "日本語 😀", "<start_of_turn>user"]
    for alone, batched in zip([tok.encode(t) for t in texts], tok.encode_batch(texts)):
        assert (alone.ids, alone.tokens, alone.offsets, alone.word_ids, alone.type_ids,
                alone.special_tokens_mask, alone.attention_mask, alone.sequence_ids) == \
            (batched.ids, batched.tokens, batched.offsets, batched.word_ids, batched.type_ids,
             batched.special_tokens_mask, batched.attention_mask, batched.sequence_ids)


def test_a_text_the_walk_declines_in_a_batch_is_encoded_by_the_stages():
    tok = _tokenizer("llama2")
    pipeline = tok._pipeline
    walk, declined, asked = pipeline.walk, "this one", []

    class Declining:
        ids, encode, encoder = walk.ids, walk.encode, walk.encoder

        @staticmethod
        def encode_many(texts, allowed, num_threads=None):
            asked.append(len(texts))
            return [None if t == declined else walk.encode(t, allowed) for t in texts]

    pipeline.walk = Declining()
    pipeline.__dict__.pop("_makers", None)  # made for the walk before
    got = tok.encode_batch([TEXT, declined])
    staged = pipeline._encode_staged(declined, 0, None)
    assert asked == [2]
    assert (got[1].ids, got[1].offsets) == ([1] + staged.ids, [(0, 0)] + staged.offsets)
    assert got[0].ids == tok.encode(TEXT).ids


@pytest.mark.parametrize("spans", [[(0, 1), (2, 33)], [(511, 512), (512, 513)],
                                   [(600, 700), (0, 0)], [(5, 36), (36, 37)],
                                   [(600, 604), (604, 607), (604, 607), (607, 900), (1, 2),
                                    (900, 901), (901, 901), (901, 901), (0, 1000)]])
def test_offsets_read_equal_the_walks_whether_shared_or_made(spans):
    # the last: made pairs that start where the one before ends, repeat
    # the one before, follow a shared one
    flat = array("i", [x for span in spans for x in span])
    e = Encoding.walked(array("I", [1] * len(spans)), flat, array("i", [0] * len(spans)),
                        STRINGS)
    assert e.offsets == spans
    assert e.offsets == spans  # read again, the shared pairs unchanged


@pytest.mark.parametrize("enabled", [True, False])
def test_reading_offsets_leaves_the_collector_as_it_found_it(enabled):
    n = 5_000  # made pairs enough to set off collections
    flat = array("i", [x for i in range(n) for x in (1000 + 2 * i, 1001 + 2 * i)])
    e = Encoding.walked(array("I", [1] * n), flat, array("i", [0] * n), STRINGS)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        offsets = e.offsets
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert offsets[-1] == (1000 + 2 * (n - 1), 1001 + 2 * (n - 1))


def test_a_walked_field_set_is_kept_and_read_back():
    e = Encoding.walked(array("I", [3, 4]), array("i", [0, 1, 1, 2]), array("i", [0, 1]),
                        STRINGS)
    e.tokens = ["x", "y"]
    assert e.tokens == ["x", "y"] and e.ids == [3, 4]


def test_ids_read_equal_the_walks_whether_shared_or_made():
    ids = [0, 7, 262_143, 262_144, 2 ** 32 - 1]
    e = Encoding.walked(array("I", ids), array("i", [0, 1] * len(ids)), array("i", [0] * len(ids)),
                        STRINGS)
    assert e.ids == ids and e.ids == ids


def test_the_maker_binds_the_walks_entry_again_for_another_allowed():
    from fasttok.post_processors._encoding_lists import EncodingMaker
    from fasttok.post_processors.encoding import WalkedEncoding
    bound = []

    def encoder(allowed):
        bound.append(allowed)
        return (lambda text, argument: (array("I", [len(argument)]), array("i", [0, len(text)]),
                                        array("i", [0]))), allowed

    maker = EncodingMaker(WalkedEncoding, STRINGS, None, encoder)
    one, two = frozenset([1]), frozenset([1, 2])
    ids = [maker.encode("ab", allowed).ids for allowed in (one, one, two, one)]
    assert ids == [[1], [1], [2], [1]] and bound == [one, two, one]


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_a_byte_level_walk_without_a_normalizer_gives_its_core_to_the_maker(name):
    # Llama 3: the maker calls the core's encode_offsets with no Python
    # frame; Qwen 3's NFC keeps the walk's encode
    tokenizers = pytest.importorskip("tokenizers")
    tok = _tokenizer(name)
    walk = tok._pipeline.walk
    call, argument = walk.encoder(None)
    if name == "llama3":
        assert call == walk._core.encode_offsets and argument == walk._all
    else:
        assert call == walk.encode and argument is None
    theirs = tokenizers.Tokenizer.from_file(_path(name))
    text = "Hello <|begin_of_text|> 世界, café"
    assert (tok.encode(text).ids, tok.encode(text).offsets) == \
        (theirs.encode(text).ids, theirs.encode(text).offsets)
