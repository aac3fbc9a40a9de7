"""Special tokens, single-token calls, decoding errors, properties, pickling and
batches: tiktoken's semantics, as written down in docs/FORMATS.md (tiktoken).

Every test compares with the reference tiktoken except where noted:
``test_overlapping_specials_longest_match_wins`` pins a fasttok-specific choice
(tiktoken's winner between overlapping special tokens depends on hash-map order).
"""

from __future__ import annotations

import itertools
import pickle

import pytest

import fasttok

from conftest import (
    ALL_ENCODINGS,
    Mismatches,
    Raised,
    assert_same_ids,
    outcome,
    outcome_mismatch,
    read_text,
)

MULTI_SPECIAL_ENCODINGS = ("p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony")


def _specials(pair) -> list[str]:
    return sorted(pair.theirs.special_tokens_set)


def _sample(seq, at_most: int):
    seq = list(seq)
    step = max(1, len(seq) // at_most)
    return seq[::step]


# --------------------------------------------------------------------------
# disallowed / allowed special tokens
# --------------------------------------------------------------------------


def test_disallowed_special_raises_by_default(enc_pair):
    ours, _ = enc_pair
    quiet = []
    for special in _specials(enc_pair):
        got = outcome(ours.encode, f"hello {special} world")
        if not (isinstance(got, Raised) and isinstance(got.exc, ValueError)):
            quiet.append((special, got))
    assert not quiet, f"{enc_pair.name}: encode() did not raise ValueError for {quiet[:5]}"


def test_disallowed_special_error_names_token_and_how_to_allow_it(enc_pair):
    ours, _ = enc_pair
    for special in _sample(_specials(enc_pair), 50):
        with pytest.raises(ValueError) as info:
            ours.encode(f"x {special} y")
        message = str(info.value)
        assert special in message, f"message does not name {special!r}: {message!r}"
        assert "allowed_special" in message, f"message does not say how to allow it: {message!r}"


def test_allowed_special_all_encodes_every_special(enc_pair):
    ours, theirs = enc_pair
    specials = _specials(enc_pair)
    found = Mismatches(f"{enc_pair.name} encode(allowed_special='all')")
    for special in specials:
        text = f"a{special} b{special}{special}\n"
        found.check(outcome_mismatch(outcome(ours.encode, text, allowed_special="all"),
                                     theirs.encode(text, allowed_special="all"), text, enc=theirs),
                    special)
    found.assert_none()
    text = "".join(specials)
    assert_same_ids(ours.encode(text, allowed_special="all"),
                    theirs.encode(text, allowed_special="all"), text, enc=theirs,
                    what="all specials back to back")


def test_allowed_special_all_gives_the_special_id(enc_pair):
    ours, theirs = enc_pair
    wrong = [(s, ours.encode(s, allowed_special="all"), theirs.encode(s, allowed_special="all"))
             for s in _specials(enc_pair)
             if ours.encode(s, allowed_special="all") != theirs.encode(s, allowed_special="all")]
    assert not wrong, f"{enc_pair.name}: (special, fasttok, tiktoken) {wrong[:5]}"


def test_allowed_special_set_encodes_only_those(enc_pair):
    ours, theirs = enc_pair
    specials = _specials(enc_pair)
    everything = " ".join(specials[:40])
    found = Mismatches(f"{enc_pair.name} allowed_special={{one}}, disallowed_special=()")
    for special in _sample(specials, 40):
        text = f"{everything} {special}!"
        found.check(outcome_mismatch(
            outcome(ours.encode, text, allowed_special={special}, disallowed_special=()),
            theirs.encode(text, allowed_special={special}, disallowed_special=()), text, enc=theirs),
            special)
    found.assert_none()


def test_allowed_special_set_encodes_the_allowed_token_without_raising(enc_pair):
    ours, theirs = enc_pair
    # each distinct allowed set makes tiktoken compile a regex of all the others: keep it small
    for special in _sample(_specials(enc_pair), 12):
        text = f"before {special} after"
        assert_same_ids(ours.encode(text, allowed_special={special}),
                        theirs.encode(text, allowed_special={special}), text, enc=theirs,
                        what=f"allowed_special={{{special!r}}}")


@pytest.mark.parametrize("name", MULTI_SPECIAL_ENCODINGS)
def test_allowed_special_set_still_rejects_the_others(name, encoding_pair):
    ours, theirs = encoding_pair(name)
    allowed, other = _specials(encoding_pair(name))[:2]
    text = f"{allowed} then {other}"
    assert isinstance(outcome(theirs.encode, text, allowed_special={allowed}), Raised)
    with pytest.raises(ValueError) as info:
        ours.encode(text, allowed_special={allowed})
    assert other in str(info.value)


@pytest.mark.parametrize("name", MULTI_SPECIAL_ENCODINGS)
def test_disallowed_special_subset_leaves_the_rest_as_text(name, encoding_pair):
    ours, theirs = encoding_pair(name)
    checked, passed = _specials(encoding_pair(name))[:2]
    text = f"x{passed}y"
    assert_same_ids(ours.encode(text, disallowed_special={checked}),
                    theirs.encode(text, disallowed_special={checked}), text, enc=theirs,
                    what=f"disallowed_special={{{checked!r}}}")
    with pytest.raises(ValueError):
        ours.encode(f"x{checked}y", disallowed_special={checked})


def test_gpt2_endoftext_not_disallowed_is_plain_text(encoding_pair):
    ours, _ = encoding_pair("gpt2")
    assert ours.encode("<|endoftext|>", disallowed_special=()) == [27, 91, 437, 1659, 5239, 91, 29]


def test_specials_neither_allowed_nor_disallowed_are_plain_text(enc_pair):
    ours, theirs = enc_pair
    found = Mismatches(f"{enc_pair.name} encode(disallowed_special=())")
    for special in _specials(enc_pair):
        text = f"a{special}b {special}"
        found.check(outcome_mismatch(outcome(ours.encode, text, disallowed_special=()),
                                     theirs.encode(text, disallowed_special=()), text, enc=theirs),
                    special)
    found.assert_none()


def test_encode_ordinary_equals_encode_with_nothing_disallowed(enc_pair, test_strings):
    ours, theirs = enc_pair
    texts = [c["text"] for c in test_strings] + [f"q{s}q" for s in _sample(_specials(enc_pair), 60)]
    found = Mismatches(f"{enc_pair.name} encode_ordinary vs encode(disallowed_special=())")
    for text in texts:
        found.check(outcome_mismatch(outcome(ours.encode_ordinary, text),
                                     outcome(ours.encode, text, disallowed_special=()), text,
                                     enc=theirs), text[:30])
    found.assert_none()


# --------------------------------------------------------------------------
# single tokens
# --------------------------------------------------------------------------


def test_encode_single_token_accepts_bytes(enc_pair):
    ours, theirs = enc_pair
    found = Mismatches(f"{enc_pair.name} encode_single_token(bytes)")
    for token in _sample(theirs.token_byte_values(), 3000):
        got, want = outcome(ours.encode_single_token, token), theirs.encode_single_token(token)
        found.check(None if got == want else f"{token!r}: fasttok {got!r}, tiktoken {want}", repr(token))
    found.assert_none()


def test_encode_single_token_accepts_str(enc_pair):
    ours, theirs = enc_pair
    found = Mismatches(f"{enc_pair.name} encode_single_token(str)")
    for token in _sample(theirs.token_byte_values(), 3000):
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            continue
        got, want = outcome(ours.encode_single_token, text), theirs.encode_single_token(text)
        found.check(None if got == want else f"{text!r}: fasttok {got!r}, tiktoken {want}", repr(text))
    found.assert_none()


def test_encode_single_token_accepts_specials(enc_pair):
    ours, theirs = enc_pair
    for special in _sample(_specials(enc_pair), 100):
        assert ours.encode_single_token(special) == theirs.encode_single_token(special), special
        assert ours.encode_single_token(special.encode()) == theirs.encode_single_token(special.encode())


@pytest.mark.parametrize("unknown", [b"qqqqqqqqqqqqqqqqqqqqqq", "not one single token, surely", b"",
                                     "<|not_a_special|>", b"\xff\xfe\xfd\xfc"], ids=repr)
def test_encode_single_token_unknown_raises_keyerror(enc_pair, unknown):
    ours, theirs = enc_pair
    with pytest.raises(KeyError):
        theirs.encode_single_token(unknown)  # the reference agrees it is unknown
    with pytest.raises(KeyError):
        ours.encode_single_token(unknown)


_INVALID_IDS: dict[str, list[int]] = {}


def _invalid_ids(pair) -> list[int]:
    """Holes below n_vocab (e.g. cl100k 100256, 100261-100275) and ids above it."""
    if pair.name not in _INVALID_IDS:
        _, theirs = pair
        valid = {theirs.encode_single_token(t) for t in theirs.token_byte_values()}
        valid |= {theirs.encode_single_token(s) for s in theirs.special_tokens_set}
        holes = [i for i in range(theirs.n_vocab) if i not in valid]
        _INVALID_IDS[pair.name] = holes + [theirs.n_vocab, theirs.n_vocab + 1,
                                           theirs.n_vocab + 12345, 2**31 - 1]
    return _INVALID_IDS[pair.name]


def test_decode_single_token_bytes_matches_tiktoken_for_every_id(enc_pair):
    ours, theirs = enc_pair
    found = Mismatches(f"{enc_pair.name} decode_single_token_bytes")
    for token in range(theirs.n_vocab + 3):
        got, want = outcome(ours.decode_single_token_bytes, token), outcome(theirs.decode_single_token_bytes, token)
        if isinstance(want, Raised):
            ok = isinstance(got, Raised) and isinstance(got.exc, KeyError)
        else:
            ok = got == want
        found.check(None if ok else f"id {token}: fasttok {got!r}, tiktoken {want!r}", str(token))
    found.assert_none()


def test_decode_single_token_bytes_unknown_raises_keyerror(enc_pair):
    ours, _ = enc_pair
    for token in _invalid_ids(enc_pair):
        with pytest.raises(KeyError):
            ours.decode_single_token_bytes(token)


# --------------------------------------------------------------------------
# decoding
# --------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["decode", "decode_bytes", "decode_tokens_bytes",
                                    "decode_with_offsets"])
def test_decoding_an_unknown_id_raises_keyerror(enc_pair, method):
    ours, theirs = enc_pair
    good = theirs.encode("hello world")
    returned = []
    for bad in _invalid_ids(enc_pair):
        got = outcome(getattr(ours, method), good + [bad] + good)
        if not (isinstance(got, Raised) and isinstance(got.exc, KeyError)):
            returned.append((bad, got))
    assert not returned, f"{enc_pair.name}.{method}: (unknown id, result) {returned[:5]}"


@pytest.mark.parametrize("method", ["decode", "decode_bytes"])
def test_decoding_a_negative_id_raises_keyerror(enc_pair, method):
    # not tiktoken's: it raises OverflowError (no u32); fasttok treats a
    # negative id as any other id of no token, as for ids past the vocabulary
    ours, _ = enc_pair
    with pytest.raises(KeyError):
        getattr(ours, method)([15, -1, 15])


def _invalid_utf8_ids(theirs) -> list[int]:
    # "a", a lone 0xff byte, "b", then the first two bytes of "的" (e7 9a) and "c"
    lead = theirs.encode_single_token(b"\xe7")
    cont = theirs.encode_single_token(b"\x9a")
    return [theirs.encode_single_token(b"a"), theirs.encode_single_token(b"\xff"),
            theirs.encode_single_token(b"b"), lead, cont, theirs.encode_single_token(b"c")]


def test_decode_replaces_invalid_utf8_by_default(enc_pair):
    ours, theirs = enc_pair
    ids = _invalid_utf8_ids(theirs)
    assert ours.decode(ids) == theirs.decode(ids) == "a\ufffdb\ufffdc"


@pytest.mark.parametrize("errors", ["replace", "ignore", "backslashreplace", "surrogateescape"])
def test_decode_errors_argument_matches_tiktoken(enc_pair, errors):
    ours, theirs = enc_pair
    ids = _invalid_utf8_ids(theirs)
    assert ours.decode(ids, errors=errors) == theirs.decode(ids, errors=errors)


def test_decode_strict_raises_unicode_decode_error(enc_pair):
    ours, theirs = enc_pair
    with pytest.raises(UnicodeDecodeError):
        ours.decode(_invalid_utf8_ids(theirs), errors="strict")


def test_decode_with_offsets_raises_on_invalid_utf8(enc_pair):
    ours, theirs = enc_pair
    ids = _invalid_utf8_ids(theirs)
    assert isinstance(outcome(theirs.decode_with_offsets, ids), Raised)
    with pytest.raises(ValueError):
        ours.decode_with_offsets(ids)


def test_decode_tokens_bytes_matches_tiktoken(enc_pair, test_strings):
    ours, theirs = enc_pair
    for case in test_strings:
        ids = theirs.encode(case["text"], allowed_special="all")
        assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids), case


# --------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------


@pytest.mark.parametrize("prop", ["n_vocab", "max_token_value", "eot_token", "special_tokens_set"])
def test_property_matches_tiktoken(enc_pair, prop):
    ours, theirs = enc_pair
    assert getattr(ours, prop) == getattr(theirs, prop)


def test_special_tokens_set_is_a_set(enc_pair):
    assert isinstance(enc_pair.ours.special_tokens_set, (set, frozenset))


def test_name_is_the_requested_name(enc_pair):
    assert enc_pair.ours.name == enc_pair.name


def test_token_byte_values_match_tiktoken(enc_pair):
    ours, theirs = enc_pair
    got, want = list(ours.token_byte_values()), list(theirs.token_byte_values())
    if got != want:
        same_set = sorted(got) == sorted(want)
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        pytest.fail(f"{enc_pair.name}: token_byte_values differ ({len(got)} vs {len(want)} values; "
                    f"{'same values, different order' if same_set else 'different values'}); "
                    f"first difference at {first}: fasttok {got[first:first + 3]}, "
                    f"tiktoken {want[first:first + 3]}", pytrace=False)


def test_list_encoding_names_includes_all(data_dir):
    import fasttok

    assert set(ALL_ENCODINGS) <= set(fasttok.list_encoding_names())


# --------------------------------------------------------------------------
# pickling and batches
# --------------------------------------------------------------------------


def test_pickle_round_trip(enc_pair, test_strings):
    ours, _ = enc_pair
    clone = pickle.loads(pickle.dumps(ours))
    assert clone.name == ours.name
    assert clone.n_vocab == ours.n_vocab
    assert clone.special_tokens_set == ours.special_tokens_set
    for case in test_strings[::7]:
        text = case["text"]
        assert clone.encode(text, allowed_special="all") == ours.encode(text, allowed_special="all"), case


def test_encode_batch_matches_per_item(enc_pair, test_strings):
    ours, _ = enc_pair
    texts = [c["text"] for c in test_strings]
    batch = ours.encode_batch(texts, num_threads=2, allowed_special="all")
    assert batch == [ours.encode(t, allowed_special="all") for t in texts]


def test_encode_batch_with_default_threads_matches_per_item(enc_pair, test_strings):
    ours, _ = enc_pair
    texts = [c["text"] for c in test_strings if not any(s in c["text"] for s in ours.special_tokens_set)]
    assert ours.encode_batch(texts) == [ours.encode(t) for t in texts]


def test_batches_of_a_generator_are_the_batches_of_its_list(enc_pair, test_strings):
    # the texts are searched for disallowed specials before they are encoded:
    # a generator read by the search must not reach the encoder empty
    ours, _ = enc_pair
    texts = [c["text"] for c in test_strings if not any(s in c["text"] for s in ours.special_tokens_set)]
    assert ours.encode_batch(t for t in texts) == ours.encode_batch(texts)
    assert ours.count_batch(t for t in texts) == ours.count_batch(texts)
    assert len(ours.count_batch(iter(texts))) == len(texts)


def test_encode_ordinary_batch_matches_per_item(enc_pair, test_strings):
    ours, _ = enc_pair
    texts = [c["text"] for c in test_strings]
    assert ours.encode_ordinary_batch(texts, num_threads=2) == [ours.encode_ordinary(t) for t in texts]


@pytest.mark.parametrize("threads", [2, 3])
def test_batch_on_threads_gives_lists_flat_ids_and_counts_of_each_text(threads, encoding_pair, data_dir):
    ours, _ = encoding_pair("cl100k_base")
    # enough lines for many chunks, the last ones smaller than the first
    texts = read_text(data_dir / "corpus" / "multi.txt").split("\n")[:5000]
    serial = [ours.encode_ordinary(t) for t in texts]
    assert ours.encode_ordinary_batch(texts, num_threads=threads) == serial
    ids, offsets = ours.encode_ordinary_batch(texts, num_threads=threads, flat=True)
    assert list(offsets) == [0] + list(itertools.accumulate(len(x) for x in serial))
    assert list(ids) == [t for x in serial for t in x]
    assert ours.count_batch(texts, num_threads=threads, disallowed_special=()) == [len(x) for x in serial]


def test_batch_on_threads_with_a_text_that_is_not_a_str_raises_type_error(encoding_pair):
    ours, _ = encoding_pair("cl100k_base")
    texts = ["some text"] * 3000 + [b"bytes"] + ["more"] * 100
    with pytest.raises(TypeError):
        ours.encode_ordinary_batch(texts, num_threads=2)


def test_encode_batch_raises_on_disallowed_special(enc_pair):
    ours, _ = enc_pair
    with pytest.raises(ValueError):
        ours.encode_batch(["fine", "also fine", "bad <|endoftext|> here"], num_threads=2)


# --------------------------------------------------------------------------
# custom encodings (fasttok.Encoding built from a ranks dict)
# --------------------------------------------------------------------------

# rank of single byte b: a fixed permutation, so that rank != byte value (as in cl100k)
BYTE_RANK = [(b * 167 + 89) % 256 for b in range(256)]
TINY_MERGES = [b"he", b"ll", b"hell", b"hello", b" w", b"or", b" wor", b"ld", b" world",
               b"aa", b"aaaa", b"ab", b"bc", b"abc", b"\xe7\x9a", b"\xe7\x9a\x84", b"  ",
               b"    ", b"\n\n", b"12", b"123", b"'s", b"'t"]
TINY_SPECIALS = {"<|endoftext|>": 1000, "<|pad|>": 1002}
TINY_TEXTS = ["hello world", "hello  world\n\nhello", "aaaaaaaaaaa", "abcabcab", "的的的", "123123 12",
              "it's what't", "\x00\xff\u0100 \U0001F600", "a<|endoftext|>b<|pad|>c", "", " " * 13]


def tiny_ranks() -> dict[bytes, int]:
    ranks = {bytes([b]): BYTE_RANK[b] for b in range(256)}
    assert sorted(ranks.values()) == list(range(256))
    for token in TINY_MERGES:
        assert any(token[:k] in ranks and token[k:] in ranks for k in range(1, len(token))), token
        ranks[token] = len(ranks)
    return ranks


@pytest.fixture(scope="module")
def pattern(data_dir) -> str:
    import json

    table = json.loads((data_dir / "vocab" / "tiktoken" / "encodings.json").read_text("utf-8"))
    return table["cl100k_base"]["pat_str"]


@pytest.fixture(scope="module")
def tiny_pair(pattern):
    import fasttok
    import tiktoken

    kwargs = dict(pat_str=pattern, mergeable_ranks=tiny_ranks(), special_tokens=TINY_SPECIALS)
    return fasttok.Encoding("tiny", **kwargs), tiktoken.Encoding("tiny", **kwargs)


def test_custom_encoding_uses_ranks_not_byte_values(tiny_pair):
    ours, theirs = tiny_pair
    assert ours.encode_single_token(b"a") == BYTE_RANK[ord("a")] != ord("a")
    assert ours.encode_ordinary("a") == theirs.encode_ordinary("a")


def test_custom_encoding_with_permuted_byte_ranks_matches_tiktoken(tiny_pair, test_strings):
    ours, theirs = tiny_pair
    found = Mismatches("tiny custom encoding encode(allowed_special='all')")
    for text in TINY_TEXTS + [c["text"] for c in test_strings]:
        found.check(outcome_mismatch(outcome(ours.encode, text, allowed_special="all"),
                                     outcome(theirs.encode, text, allowed_special="all"), text,
                                     enc=theirs), text[:30])
    found.assert_none()


def test_custom_encoding_decode_matches_tiktoken(tiny_pair):
    ours, theirs = tiny_pair
    for text in TINY_TEXTS:
        ids = theirs.encode(text, allowed_special="all")
        assert ours.decode(ids) == theirs.decode(ids) == text
    with pytest.raises(KeyError):
        ours.decode([1001])  # the hole between the two special ids
    with pytest.raises(KeyError):
        ours.decode_bytes([len(tiny_ranks())])  # the first id after the ordinary tokens


@pytest.mark.parametrize("prop", ["n_vocab", "max_token_value", "eot_token", "special_tokens_set", "name"])
def test_custom_encoding_property_matches_tiktoken(tiny_pair, prop):
    ours, theirs = tiny_pair
    assert getattr(ours, prop) == getattr(theirs, prop)


def test_custom_encoding_token_byte_values_match_tiktoken(tiny_pair):
    ours, theirs = tiny_pair
    assert list(ours.token_byte_values()) == list(theirs.token_byte_values())


def test_custom_encoding_explicit_n_vocab_accepted(pattern):
    import fasttok

    ranks = tiny_ranks()
    enc = fasttok.Encoding("tiny_n", pat_str=pattern, mergeable_ranks=ranks,
                           special_tokens={"<|endoftext|>": len(ranks)},
                           explicit_n_vocab=len(ranks) + 1)
    assert enc.n_vocab == len(ranks) + 1


def test_custom_encoding_pickle_round_trip(tiny_pair):
    ours, _ = tiny_pair
    clone = pickle.loads(pickle.dumps(ours))
    for text in TINY_TEXTS:
        assert clone.encode(text, allowed_special="all") == ours.encode(text, allowed_special="all")


def test_overlapping_specials_longest_match_wins(pattern):
    """fasttok-specific: when two special tokens match at the same position (one a
    prefix of the other), the longest one wins. tiktoken's choice depends on
    hash-map iteration order, so it is not compared here."""
    import fasttok
    import tiktoken

    specials = {"<|a|>": 1000, "<|a|>b": 1001, "<|a|>bc": 1002}
    ours = fasttok.Encoding("overlap", pat_str=pattern, mergeable_ranks=tiny_ranks(),
                            special_tokens=specials)
    plain = tiktoken.Encoding("plain", pat_str=pattern, mergeable_ranks=tiny_ranks(), special_tokens={})
    assert ours.encode("<|a|>", allowed_special="all") == [1000]
    assert ours.encode("<|a|>b", allowed_special="all") == [1001]
    assert ours.encode("<|a|>bc", allowed_special="all") == [1002]
    text = "x<|a|>by<|a|>z<|a|>bcd"
    want = (plain.encode_ordinary("x") + [1001] + plain.encode_ordinary("y") + [1000]
            + plain.encode_ordinary("z") + [1002] + plain.encode_ordinary("d"))
    assert_same_ids(ours.encode(text, allowed_special="all"), want, text, enc=plain,
                    what="overlapping specials, longest match")


def test_overlapping_specials_disallowed_by_default(pattern):
    import fasttok

    ours = fasttok.Encoding("overlap2", pat_str=pattern, mergeable_ranks=tiny_ranks(),
                            special_tokens={"<|a|>": 1000, "<|a|>b": 1001})
    for text in ["<|a|>", "<|a|>b", "q<|a|>bq"]:
        with pytest.raises(ValueError):
            ours.encode(text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_flat_batch_count_batch_and_array_agree_with_encode(name, encoding_pair):
    enc, _ = encoding_pair(name)
    texts = ["hello world", "", "的的 <|endoftext|>", "a" * 300] * 10
    lists = [enc.encode(t, disallowed_special=()) for t in texts]
    for threads in (1, 2):
        ids, offsets = enc.encode_batch(texts, num_threads=threads, disallowed_special=(), flat=True)
        assert [list(ids[offsets[i]:offsets[i + 1]]) for i in range(len(texts))] == lists
        assert enc.count_batch(texts, num_threads=threads, disallowed_special=()) == [len(x) for x in lists]
    assert list(enc.encode_to_array(texts[2], allowed_special="all")) == enc.encode(texts[2], allowed_special="all")


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_stream_decoder_adds_up_to_decode_and_holds_back_split_characters(name, encoding_pair):
    enc, _ = encoding_pair(name)
    text = "héllo 世界 😀👨‍👩‍👧 \\u2028 done"
    ids = enc.encode(text)
    stream = enc.decode_stream()
    pieces = [stream.push(t) for t in ids]
    assert "".join(pieces) + stream.flush() == enc.decode(ids) == text
    assert all("\ufffd" not in p for p in pieces)  # nothing emitted half-way through a character


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_stream_decoder_flushes_a_character_cut_short_as_u_fffd(name, encoding_pair):
    enc, theirs = encoding_pair(name)
    ids = enc.encode("🦭")  # three tokens in both encodings
    assert len(ids) == 3
    cut = enc.decode_stream()
    assert (cut.push(ids[0]), cut.push(ids[1]), cut.flush()) == ("", "", "\ufffd")
    assert theirs.decode(ids[:2]) == "\ufffd"  # what tiktoken makes of the same two


@pytest.mark.parametrize("vocab", ["gpt-2", "llama-bpe", "llama-spm", "bert-bge", "qwen2"])
def test_gguf_stream_decoder_adds_up_to_decode_on_every_test_string(vocab, data_dir):
    import json

    import fasttok

    enc = fasttok.load(data_dir / "vocab" / "gguf" / f"ggml-vocab-{vocab}.gguf")
    lines = (data_dir / "testcases" / "lines.jsonl").read_text(encoding="utf-8").split("\n")
    for text in (json.loads(line)["text"] for line in lines if line):
        for ids in (enc.encode(text, disallowed_special=()),
                    enc.encode(text, allowed_special="all", add_special_tokens=True)):
            stream = enc.decode_stream()
            assert "".join(stream.push(t) for t in ids) + stream.flush() == enc.decode(ids), text


def test_plugin_model_built_on_byte_bpe_streams_like_decode(monkeypatch):
    import fasttok
    from fasttok import registry
    from fasttok.vocab import Vocabulary

    monkeypatch.setitem(registry.MODELS, "plugin_bpe", registry.MODELS["byte_bpe"])
    enc = fasttok.Encoding.from_vocabulary(Vocabulary(
        name="plugin", model="plugin_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
    ids = enc.encode("héllo")
    stream = enc.decode_stream()
    assert "".join(stream.push(t) for t in ids) + stream.flush() == "héllo"


def test_plugin_model_without_the_model_interface_is_refused_naming_what_it_lacks(monkeypatch):
    import fasttok
    from fasttok import registry
    from fasttok.vocab import Vocabulary

    class Partial:
        special_order = ()

        def encode(self, text, allowed):
            return []

    monkeypatch.setitem(registry.MODELS, "partial", lambda vocab: Partial())
    with pytest.raises(fasttok.FasttokError, match="stream_decoder"):
        fasttok.Encoding.from_vocabulary(Vocabulary(name="p", model="partial", tokens=(b"a",)))


def test_an_empty_special_token_is_refused_when_the_encoding_is_made():
    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(fasttok.FasttokError, match="empty string"):
        fasttok.Encoding("e", pat_str=r"\w+|\s", mergeable_ranks=ranks, special_tokens={"": 256})


@pytest.mark.parametrize("call", ["encode", "count", "encode_to_array", "find_special",
                                  "last_piece"])
def test_compiled_core_refuses_a_mask_shorter_than_its_specials(call):
    from fasttok.formats._byte_bpe import CoreBPE
    from fasttok.shared._tables import TokenTables

    core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {b"<a>": 256, b"<b>": 257},
                   scanner="gpt2")
    with pytest.raises(ValueError, match="shorter than the list of special tokens"):
        getattr(core, call)("x<b>", b"\x01")


@pytest.mark.parametrize("call", ["encode_many", "encode_many_flat", "count_many"])
def test_compiled_batches_refuse_a_mask_shorter_than_its_specials(call):
    from fasttok.formats._byte_bpe import CoreBPE
    from fasttok.shared._tables import TokenTables

    core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {b"<a>": 256, b"<b>": 257},
                   scanner="gpt2")
    with pytest.raises(ValueError, match="shorter than the list of special tokens"):
        getattr(core, call)(["x<b>"], b"\x01")
