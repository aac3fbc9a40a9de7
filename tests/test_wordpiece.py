"""The compiled WordPiece model (fasttok.models._wordpiece) on its own.

* The matcher against an obviously correct greedy longest match written here,
  on small random vocabularies: long tokens, tokens that are prefixes of one
  another, words with a position no token starts at (one ``[UNK]``).
* ``encode`` is the normaliser's words, each matched as ``"▁" + word``.
* The cost is linear whatever the tokens' lengths, counted in automaton steps
  (no clock): ``'a' * n`` with a 100,000-``a`` token in the vocabulary, which
  a longest match bounded by the longest token takes quadratic time on.

The llama.cpp goldens of the bert vocabulary are in tests/test_gguf_models.py.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from fasttok.models._wordpiece import WordPieceModel

PREFIX = "\u2581".encode("utf-8")
UNK = 0


def greedy_longest_match(tokens: list, word: bytes) -> list:
    """llama.cpp's loop, spelled out: at each position the longest token that
    starts there; a position without one makes the whole word ``[UNK]``."""
    ids = {}
    for i, tok in enumerate(tokens):
        if tok:
            ids.setdefault(tok, i)
    out, i = [], 0
    while i < len(word):
        for j in range(len(word), i, -1):
            if word[i:j] in ids:
                out.append(ids[word[i:j]])
                i = j
                break
        else:
            return [UNK]
    return out


# Few letters, so tokens overlap, nest and are prefixes of one another; some
# long ones (a run or a repeated unit), the odd duplicate text and empty text.
letters = st.sampled_from([b"a", b"b", b"c"])
short_tokens = st.lists(letters, min_size=1, max_size=4).map(b"".join)
long_tokens = st.builds(lambda unit, k: (unit * k)[:200], short_tokens, st.integers(5, 60))
vocabularies = st.lists(st.one_of(short_tokens, short_tokens, long_tokens, st.just(b"")),
                        min_size=1, max_size=30).map(lambda toks: [b"[UNK]"] + toks)
words = st.builds(lambda unit, k, tail: unit * k + tail, short_tokens, st.integers(1, 80),
                  st.lists(letters, max_size=8).map(b"".join)) | st.lists(
    st.sampled_from([b"a", b"b", b"c", b"d"]), min_size=1, max_size=60).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(vocabularies, words)
def test_matcher_equals_reference_greedy_longest_match(tokens, word):
    assert WordPieceModel(tokens, UNK).match_word(word) == greedy_longest_match(tokens, word)


@settings(max_examples=200, deadline=None)
@given(vocabularies, st.lists(words, min_size=1, max_size=6))
def test_encode_is_each_word_matched_with_the_word_prefix(tokens, some_words):
    tokens = tokens + [PREFIX + t for t in tokens[1:] if t]
    model = WordPieceModel(tokens, UNK)
    text = " ".join(w.decode("ascii") for w in some_words)
    expected = [i for w in some_words for i in greedy_longest_match(tokens, PREFIX + w)]
    assert model.encode(text) == expected


def test_word_without_a_match_is_dropped_when_there_is_no_unk():
    model = WordPieceModel([PREFIX + b"a", b"b"], None)
    assert model.encode("ab ax a") == [0, 1, 0]


def test_word_is_cut_at_bytes_as_llama_cpp_compares_them():
    # a token that ends inside a character matches only where the bytes do
    e_acute = "\u00e9".encode("utf-8")
    model = WordPieceModel([b"[UNK]", PREFIX + e_acute[:1], e_acute[1:] + b"x"], UNK,
                           lowercase=False, strip_accents=False)
    assert model.encode("\u00e9x") == [1, 2]


def test_find_token_finds_only_whole_texts():
    model = WordPieceModel([b"abc", b"bc", None, b""], None)
    assert [model.find_token(t) for t in (b"abc", b"bc", b"c", b"", b"xabc")] == [0, 1, -1, -1, -1]


def _long_token_model() -> WordPieceModel:
    # the case: ordinary pieces of 'a' and one of 100,000
    return WordPieceModel([b"[UNK]", PREFIX + b"a", b"a", b"aa", b"aaa", b"a" * 100_000], UNK)


@pytest.mark.parametrize("n", [500, 2_000, 8_000, 32_000, 99_999, 100_000, 100_001, 400_000])
def test_steps_are_at_most_two_per_byte_with_a_100k_token(n):
    model = _long_token_model()
    word_bytes = len(PREFIX) + n
    assert model.trie_steps("a" * n) <= 2 * word_bytes


def test_steps_grow_linearly_with_a_100k_token():
    model = _long_token_model()
    small, large = model.trie_steps("a" * 10_000), model.trie_steps("a" * 80_000)
    assert large <= 8 * small * 1.01


def test_long_token_is_matched_where_the_run_is_long_enough():
    model = _long_token_model()
    ids = model.encode("a" * 100_002)
    assert ids == [1, 5, 2]
    assert model.encode("a" * 7) == [1, 4, 4]


def test_steps_stay_linear_in_bert_bge_with_a_token_replaced_by_100k_a():
    from conftest import DATA, missing_data_reason
    from fasttok.loaders.gguf import load_gguf

    path = DATA / "vocab" / "gguf" / "ggml-vocab-bert-bge.gguf"
    if not path.exists():
        pytest.skip(missing_data_reason(path))
    vocab = load_gguf(str(path))
    tokens = list(vocab.tokens)
    tokens[-1] = b"a" * 100_000
    model = WordPieceModel(tokens, vocab.unk_id)
    for n in (500, 1_000, 2_000, 3_000, 1_000_000):
        assert model.trie_steps("a" * n) <= 2 * (len(PREFIX) + n)


def test_surrogate_pair_is_its_code_point_and_a_lone_surrogate_is_dropped():
    model = WordPieceModel([b"[UNK]", PREFIX + "a\U0001f600".encode("utf-8"), PREFIX + b"b"], UNK)
    assert model.encode("a\ud83d\ude00 \ud83db\ude00") == model.encode("a\U0001f600 b") == [1, 2]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="ab \u00e9\u4e2d!\ud83d", max_size=12), max_size=8))
def test_batch_calls_equal_one_call_per_text(texts):
    model = WordPieceModel([b"[UNK]", PREFIX + b"a", b"b", PREFIX + b"!", "\u2581\u4e2d".encode()], UNK)
    one_by_one = [model.encode(t) for t in texts]
    ids, offsets = model.encode_many_flat(texts)
    assert model.encode_many(texts) == one_by_one
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == one_by_one
    assert model.count_many(texts) == [len(one) for one in one_by_one]


def test_encode_many_flat_gives_the_ids_given_for_the_texts():
    model = WordPieceModel([b"[UNK]", PREFIX + b"a", b"b"], UNK, ids=[5, 9, 7])
    ids, offsets = model.encode_many_flat(["a ab", "c"])
    assert (ids.tolist(), offsets.tolist()) == ([9, 9, 7, 5], [0, 3, 4])
    assert model.encode_many(["a ab", "c"]) == [[9, 9, 7], [5]]


def test_bert_gguf_batches_on_threads_equal_serial_calls():
    from conftest import DATA, missing_data_reason
    import fasttok

    path = DATA / "vocab" / "gguf" / "ggml-vocab-bert-bge.gguf"
    if not path.exists():
        pytest.skip(missing_data_reason(path))
    enc = fasttok.load(path)
    texts = [f"Line {i}: Héllo, 世界! [CLS] unaffable" * (i % 5) for i in range(500)]
    serial = [enc.encode_ordinary(t) for t in texts]
    ids, offsets = enc.encode_ordinary_batch(texts, num_threads=3, flat=True)
    assert enc.encode_ordinary_batch(texts, num_threads=3) == serial
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == serial
    assert enc.count_batch(texts, num_threads=3, disallowed_special=()) == [len(s) for s in serial]
    special = enc.encode_batch(texts, num_threads=3, allowed_special="all")
    assert special == [enc.encode(t, allowed_special="all") for t in texts]
    assert special[1] != serial[1] and 101 in special[1]


def test_long_text_with_repeated_words_equals_its_words_one_by_one():
    # long enough for the word cache; words repeat, collide and exceed its width
    model = WordPieceModel([b"[UNK]", PREFIX + b"a", PREFIX + b"b", b"a", b"b", b"ab"], UNK)
    words = [("ab" * (i % 11) + "a" * (i % 3)) or "b" for i in range(3_000)]
    assert model.encode(" ".join(words)) == [i for w in words for i in model.encode(w)]
