"""Byte-level BPE training against the two reference trainers, and the trained result in three libraries.

* ``flavour="rustbpe"``: ``get_mergeable_ranks()`` of ``rustbpe`` 0.1.0, rank
  for rank, on corpus lines (a slice by default, whole files with ``-m slow``),
  hypothesis text (ties, runs like ``aaaa``, non-ASCII, empty input) and the
  classic cases;
* ``flavour="hf"``: the vocabulary and merges of ``tokenizers``' ``BpeTrainer``
  (ByteLevel alphabet, ``Split`` + ``ByteLevel(use_regex=false)``), with special
  tokens and ``min_frequency``, on the same; and with ``limit_alphabet`` (where
  the cut falls between different counts: tokenizers' order at a tie is its
  sort's), ``initial_alphabet`` and ``max_token_length``;
* one run == another, 1 thread == 2 threads;
* a trained vocabulary encodes the corpus lines identically in fasttok,
  tiktoken and tokenizers (from the written ``tokenizer.json``), and reads back
  from the written ``.tiktoken``.

The hf comparisons split with cl100k's older spelling (Llama 3's): tokenizers'
Oniguruma reads the current spelling's possessive ``\\p{N}{1,3}+`` as a
repeated group, so it cuts digit runs differently before training starts.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON
from fasttok.loaders.hf_tokenizer_json_writer import write_tokenizer_json
from fasttok.loaders.tiktoken_writer import write_tiktoken
from fasttok.pre_tokenizers.patterns import CL100K, CL100K_LEGACY, GPT2
from fasttok.shared._bytemap import encode_byte_level
from fasttok.trainers._bpe_trainer import BpeCore, PieceCounter
from fasttok.trainers.bpe import PretokenBound, count_pretokens, train_bpe

rustbpe = pytest.importorskip("rustbpe")
tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")
# the sizes are tokenizers' cases, many past what the texts can reach: the
# warning saying so is test_trainer_guard_rails' subject, not these files'
pytestmark = pytest.mark.filterwarnings("ignore:learned:UserWarning")

CORPUS = ("en", "code", "zh", "multi", "adversarial")
SLICE = 2000  # corpus lines per file in the default run


def corpus_lines(name: str, limit: int | None = SLICE) -> list:
    if DATA_MISSING:
        pytest.skip(MISSING_DATA_REASON)
    lines = (DATA / "corpus" / f"{name}.txt").read_text(encoding="utf-8").splitlines()
    return lines[:limit] if limit else lines


def rustbpe_ranks(texts, vocab_size, pattern=CL100K):
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(texts), vocab_size, pattern=pattern)
    return [(bytes(token), rank) for token, rank in tok.get_mergeable_ranks()]


def hf_trained(texts, vocab_size, pattern=CL100K_LEGACY, specials=(), min_frequency=0,
               **alphabet):
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    if alphabet.get("initial_alphabet") is None:
        alphabet["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    alphabet = {k: v for k, v in alphabet.items() if v is not None}
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=list(specials), show_progress=False, **alphabet)
    tok.train_from_iterator(texts, trainer=trainer)
    model = json.loads(tok.to_str())["model"]
    return model["vocab"], [tuple(m) for m in model["merges"]]


def ours_as_hf(texts, vocab_size, pattern=CL100K_LEGACY, specials=(), min_frequency=0,
               **alphabet):
    t = train_bpe(texts, vocab_size=vocab_size, pattern=pattern, special_tokens=specials,
                  min_frequency=min_frequency, flavour="hf", num_threads=1, **alphabet)
    vocab = {encode_byte_level(token): i for token, i in t.ranks}
    vocab.update(t.vocabulary.special_tokens)
    return vocab, [(encode_byte_level(a), encode_byte_level(b)) for a, b in t.merges]


def rank_differences(ours, theirs) -> tuple:
    """(number of ranks that differ, the first of them)."""
    diff = [(i, a, b) for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    diff += [(i, None, None) for i in range(min(len(ours), len(theirs)), max(len(ours), len(theirs)))]
    return len(diff), diff[:1]


def assert_same_as_rustbpe(texts, vocab_size, pattern=CL100K):
    ours = train_bpe(texts, vocab_size=vocab_size, pattern=pattern, num_threads=1).ranks
    n, first = rank_differences(ours, rustbpe_ranks(texts, vocab_size, pattern))
    assert n == 0, f"{n} ranks differ from rustbpe's; first (rank, ours, theirs): {first}"


def assert_same_as_hf(texts, vocab_size, specials=(), min_frequency=0, pattern=CL100K_LEGACY,
                      **alphabet):
    ours = ours_as_hf(texts, vocab_size, pattern, specials, min_frequency, **alphabet)
    theirs = hf_trained(texts, vocab_size, pattern, specials, min_frequency, **alphabet)
    assert ours[0] == theirs[0], (f"vocab: {len(set(ours[0].items()) ^ set(theirs[0].items()))} "
                                  "entries differ")
    n, first = rank_differences(ours[1], theirs[1])
    assert n == 0, f"{n} merges differ from tokenizers'; first (index, ours, theirs): {first}"


def test_the_classic_first_merge_is_ab():
    counter = PieceCounter()
    counter.add_counts({b"abab": 3, b"abac": 1})
    for flavour in ("rustbpe", "hf"):
        core = BpeCore(counter, flavour, 0)
        core.run(257, 1)
        a, b, _ = core.merge_list()[0]
        assert (core.tokens()[a], core.tokens()[b]) == (b"a", b"b")
    assert rustbpe_ranks(["abab"] * 3 + ["abac"], 257)[256] == (b"ab", 256)


@pytest.mark.parametrize("texts", [["aaaa"], ["aaaaa"], ["aaaa aaaaa"] * 3, ["aaa", "aaaaaaa", "ab"],
                                   [], [""], ["é中é中 中中中"]], ids=repr)
@pytest.mark.parametrize("vocab_size", [256, 257, 260, 300])
def test_runs_and_small_inputs_match_rustbpe(texts, vocab_size):
    assert_same_as_rustbpe(texts, vocab_size)


@pytest.mark.parametrize("texts", [["aaaa"], ["aaaaa"], ["aaaa aaaaa"] * 3, [], ["é中é中 中中中"]], ids=repr)
@pytest.mark.parametrize("vocab_size", [1, 256, 258, 259, 300])
def test_runs_and_small_inputs_match_tokenizers(texts, vocab_size):
    assert_same_as_hf(texts, vocab_size, specials=["<s>", "</s>"])


def test_vocab_size_counts_the_special_tokens():
    t = train_bpe(["ab ab ab"], vocab_size=258, special_tokens=["<|end|>", "<|pad|>"])
    assert len(t.ranks) == 256 and dict(t.vocabulary.special_tokens) == {"<|end|>": 256, "<|pad|>": 257}
    with pytest.raises(fasttok.FasttokError, match="too small"):
        train_bpe(["ab"], vocab_size=257, special_tokens=["<|end|>", "<|pad|>"])


TEXT = st.lists(st.text(alphabet="ab c\n'é中1", max_size=30), max_size=12)


@settings(max_examples=150, deadline=None)
@given(texts=TEXT, extra=st.integers(0, 40))
def test_hypothesis_text_matches_rustbpe(texts, extra):
    assert_same_as_rustbpe(texts, 256 + extra)


@settings(max_examples=150, deadline=None)
@given(texts=TEXT, extra=st.integers(0, 40), min_frequency=st.integers(0, 3),
       specials=st.lists(st.sampled_from(["<s>", "</s>", "<|x|>"]), max_size=3))
def test_hypothesis_text_matches_tokenizers(texts, extra, min_frequency, specials):
    assert_same_as_hf(texts, 256 + len(set(specials)) + extra, specials, min_frequency)


def byte_cut_ties(texts, limit_alphabet, initial_alphabet=(), pattern=CL100K_LEGACY) -> bool:
    """Whether tokenizers' ``limit_alphabet`` cut falls between bytes of one
    count (its choice there is left to its sort, see ``fasttok.trainers.hf_bpe``)."""
    from fasttok.trainers.bpe import count_pretokens

    counts = {encode_byte_level(bytes([b])): n
              for b, n in count_pretokens(texts, pattern, 1).unit_counts(False).items()}
    counts.update((c[0], float("inf")) for c in initial_alphabet)
    ranked = sorted(counts.values())
    cut = len(ranked) - limit_alphabet
    return 0 < cut < len(ranked) and ranked[cut - 1] == ranked[cut]


@pytest.mark.parametrize("limit,initial", [(None, []), (118, []), (142, ["a", "Ġ", "é"]),
                                           (None, ["x", "ÿ"]), (400, [])], ids=repr)
def test_limit_and_initial_alphabet_match_tokenizers(limit, initial):
    texts = corpus_lines("multi", 1500)
    if limit is not None:
        assert not byte_cut_ties(texts, limit, initial)
    assert_same_as_hf(texts, 1500, specials=["<s>"], limit_alphabet=limit,
                      initial_alphabet=initial)


def test_max_token_length_matches_tokenizers():
    assert_same_as_hf(corpus_lines("code", 1500), 1500, max_token_length=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(texts=TEXT, extra=st.integers(0, 40), limit=st.integers(0, 12),
       initial=st.lists(st.sampled_from(["a", "Ġ", "Ã", "z"]), max_size=3),
       max_len=st.none() | st.integers(1, 4))
def test_hypothesis_alphabets_match_tokenizers(texts, extra, limit, initial, max_len):
    assume(not byte_cut_ties(texts, limit, initial))
    assert_same_as_hf(texts, len(initial) + extra, limit_alphabet=limit,
                      initial_alphabet=initial, max_token_length=max_len)


def test_alphabet_options_are_tokenizers_and_byte_level_only():
    with pytest.raises(fasttok.FasttokError, match="flavour='hf'"):
        train_bpe(["ab"], vocab_size=300, limit_alphabet=10)
    with pytest.raises(fasttok.FasttokError, match="no byte-level character"):
        train_bpe(["ab"], vocab_size=300, flavour="hf", initial_alphabet=["中"])


def test_a_vocabulary_without_every_byte_encodes_its_bytes_as_tokenizers_does(tmp_path):
    # on a byte it has no token for tokenizers drops the byte; fasttok's
    # tokenizer.json reader refuses such text with a FasttokError instead
    from tokenizers import Tokenizer

    train = corpus_lines("en", 1000)
    t = train_bpe(train, vocab_size=600, pattern=CL100K_LEGACY, flavour="hf",
                  initial_alphabet=[], limit_alphabet=60)
    enc = fasttok.Encoding.from_vocabulary(t.vocabulary)
    path = tmp_path / "tokenizer.json"
    write_tokenizer_json(path, dict(t.ranks), t.merges, CL100K_LEGACY, {})
    hf = Tokenizer.from_file(str(path))
    known = {token for token, _ in t.ranks if len(token) == 1}
    lines = [line for name in CORPUS for line in corpus_lines(name, 200)
             if {bytes([b]) for b in line.encode("utf-8")} <= known]
    assert len(lines) > 300
    differ = [line for line in lines if enc.encode(line) != hf.encode(line).ids]
    assert not differ, f"{len(differ)} of {len(lines)} lines differ; first: {differ[0]!r}"


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_slice_matches_rustbpe(name):
    assert_same_as_rustbpe(corpus_lines(name), 2048)


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_slice_matches_tokenizers(name):
    assert_same_as_hf(corpus_lines(name), 2048, specials=["<|endoftext|>"], min_frequency=2)


def test_a_pattern_without_a_scanner_matches_rustbpe():
    assert_same_as_rustbpe(corpus_lines("en", 500), 600, pattern=r"\p{L}+|\p{N}|[^\p{L}\p{N}]+")


def test_rustbpes_default_pattern_is_cl100ks_older_spelling():
    # rustbpe's own default splits "\n " at the end of a text as the older
    # spelling does, not as tiktoken's current cl100k_base
    texts = corpus_lines("code", 1000) + ["x\n \n "] * 50
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(texts), 1000)
    theirs = [(bytes(token), rank) for token, rank in tok.get_mergeable_ranks()]
    assert train_bpe(texts, vocab_size=1000, pattern=CL100K_LEGACY).ranks == theirs


def test_the_gpt2_pattern_matches_rustbpe():
    assert_same_as_rustbpe(corpus_lines("multi", 1000), 1000, pattern=GPT2)


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS)
@pytest.mark.parametrize("vocab_size", [8192])
def test_whole_corpus_file_matches_rustbpe(name, vocab_size):
    assert_same_as_rustbpe(corpus_lines(name, None), vocab_size)


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS)
def test_whole_corpus_file_matches_tokenizers(name):
    assert_same_as_hf(corpus_lines(name, None), 8192, specials=["<|endoftext|>"])


@pytest.mark.parametrize("flavour,alphabet", [("rustbpe", {}), ("hf", {}),
                                              ("hf", {"limit_alphabet": 100,
                                                      "initial_alphabet": []})], ids=repr)
def test_training_is_deterministic_across_runs_and_threads(flavour, alphabet):
    texts = corpus_lines("multi", 1000) + corpus_lines("code", 1000)
    runs = [train_bpe(texts, vocab_size=1500, flavour=flavour, num_threads=n, **alphabet).ranks
            for n in (1, 2, 1, 2)]
    assert all(r == runs[0] for r in runs)


def test_texts_are_read_once_as_a_stream():
    def stream():
        yield from corpus_lines("en", 300)
    assert train_bpe(stream(), vocab_size=400).ranks == train_bpe(corpus_lines("en", 300),
                                                                  vocab_size=400).ranks


def test_non_str_text_is_a_type_error():
    with pytest.raises(TypeError, match="must be str"):
        train_bpe(["a", b"b"], vocab_size=300)
    with pytest.raises(TypeError, match="wrap a single text in a list"):
        train_bpe("one text", vocab_size=300)


@pytest.mark.parametrize("flavour,pattern", [("rustbpe", CL100K), ("hf", CL100K_LEGACY)])
def test_trained_vocabulary_encodes_alike_in_fasttok_tiktoken_and_tokenizers(tmp_path, flavour,
                                                                              pattern):
    from tokenizers import Tokenizer

    train = corpus_lines("en", 1500) + corpus_lines("zh", 500) + corpus_lines("code", 500)
    specials = ["<|endoftext|>", "<|pad|>"]
    enc = fasttok.train(train, vocab_size=1200, pattern=pattern, special_tokens=specials,
                        flavour=flavour)
    vocab = enc.vocabulary
    ranks = vocab.mergeable_ranks
    theirs = tiktoken.Encoding("trained", pat_str=pattern, mergeable_ranks=ranks,
                               special_tokens=dict(vocab.special_tokens))
    json_path = tmp_path / "tokenizer.json"
    write_tokenizer_json(json_path, ranks, vocab.merges, pattern, vocab.special_tokens)
    hf = Tokenizer.from_file(str(json_path))
    rank_path = tmp_path / "trained.tiktoken"
    write_tiktoken(rank_path, ranks)
    reloaded = fasttok.load(rank_path, pat_str=pattern, special_tokens=dict(vocab.special_tokens))
    from_json = fasttok.load(json_path)
    lines = [line for name in CORPUS for line in corpus_lines(name, 300)]
    lines.append("<|endoftext|> and <|pad|>")
    differ = []
    for line in lines:
        ids = enc.encode(line, allowed_special="all")
        others = (theirs.encode(line, allowed_special="all"),
                  hf.encode(line, add_special_tokens=False).ids,
                  reloaded.encode(line, allowed_special="all"),
                  from_json.encode(line, allowed_special="all"))
        if any(o != ids for o in others):
            differ.append(line)
        assert enc.decode(ids) == line
    assert not differ, f"{len(differ)} of {len(lines)} lines differ; first: {differ[0]!r}"


def test_cli_limit_alphabet_keeps_the_most_frequent_bytes_seen(tmp_path):
    from tokenizers import Tokenizer

    from fasttok.cli import main

    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(corpus_lines("en", 500)), encoding="utf-8")
    out = tmp_path / "tokenizer.json"
    assert main(["train", str(docs), "--flavour", "hf", "--limit-alphabet", "60",
                 "--vocab-size", "400", "--quiet", "--out", str(out)]) == 0
    t = train_bpe(corpus_lines("en", 500), vocab_size=400, flavour="hf", limit_alphabet=60,
                  initial_alphabet=[])
    assert Tokenizer.from_file(str(out)).get_vocab() == {encode_byte_level(k): i
                                                         for k, i in t.ranks}


# ---------------------------------------------------------------- bounded counting

def _slice() -> list:
    return corpus_lines("en", 1500) + corpus_lines("zh", 500)


def test_a_bound_above_the_distinct_pretokens_changes_nothing():
    texts = _slice()
    unbounded = train_bpe(texts, vocab_size=600, num_threads=1)
    bounded = train_bpe(texts, vocab_size=600, num_threads=1,
                        max_pretokens=unbounded.unique_pretokens)
    assert bounded.ranks == unbounded.ranks and bounded.dropped_pretokens == 0


@pytest.mark.parametrize("threads", [1, 2])
def test_a_bound_holds_the_count_within_it_and_keeps_the_frequent_pretokens(threads):
    texts = _slice()
    full = dict(count_pretokens(texts, num_threads=1).items())
    bound = PretokenBound(len(full) // 8)
    kept = dict(count_pretokens(texts, num_threads=threads, bound=bound).items())
    assert len(kept) <= bound.limit and bound.dropped > 0
    assert all(count <= full[piece] for piece, count in kept.items())
    top = sorted(full, key=full.get, reverse=True)[:50]
    assert all(piece in kept for piece in top)


def test_prune_drops_exactly_the_pretokens_below_the_threshold():
    counter = PieceCounter()
    counter.add_counts({b"a": 5, b"b": 1, b"c": 2, b"d": 1})
    assert counter.prune(2) == 2
    counter.add_pieces(["b", "e"])
    assert sorted(counter.items()) == [(b"a", 5), (b"b", 1), (b"c", 2), (b"e", 1)]


def test_a_bound_below_one_is_refused():
    with pytest.raises(fasttok.FasttokError, match="max_pretokens"):
        train_bpe(["a"], vocab_size=256, max_pretokens=0)


def test_cli_says_when_the_bound_dropped_pretokens(tmp_path, capsys):
    from fasttok.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(_slice()), encoding="utf-8")
    assert main(["train", str(corpus), "--vocab-size", "300", "--max-pretokens", "100",
                 "--quiet", "--out", str(tmp_path / "v.tiktoken")]) == 0
    assert "--max-pretokens dropped" in capsys.readouterr().err


@pytest.mark.parametrize("num_threads", [0, -1])
def test_train_refuses_fewer_than_one_thread(num_threads):
    with pytest.raises(fasttok.FasttokError, match="num_threads must be 1 or more"):
        fasttok.train(["a b c"], vocab_size=300, num_threads=num_threads)


def test_train_refuses_a_vocab_size_past_32_bit_ids_before_training():
    # (it overflowed a C integer deep inside the merge loop)
    with pytest.raises(fasttok.FasttokError, match="vocab_size .* is more than 32-bit ids"):
        fasttok.train(["a b c"], vocab_size=2**70)
