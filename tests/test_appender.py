"""``Encoding.appender``: text pushed in any pieces gives ``encode`` of the
whole, on every vocabulary kind, and a push re-encodes the new text and the
unstable tail, not the text before it; ``encode_with_unstable`` on every
kind by the same rule."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

if not DATA_MISSING:
    from inference_kinds import FILES, TEXTS, check_split, load, pushed, unspaced
else:
    FILES, TEXTS = {}, st.just("")

KINDS = sorted(FILES)


# text with no whitespace, where the appender cuts at edges (see
# fasttok.inference.stability): CJK with and without punctuation, URLs,
# mixed scripts, combining marks, digits, base64, special tokens, and what
# NFKC changes (fullwidth, halfwidth kana and their marks, ligatures, ①)
WIDE_PIECES = st.sampled_from([
    "，", "。", "、", "「", "」", "（", "）", "中文", "日本語です", "カタカナ", "한국어",
    "你好世界", "https://", "example.com", "/path", "?q=1&x=2", "#top", ":", "/", "=", "%20",
    "aGVsbG8", "+", "d29ybGQ", "abc123", "x9", "Ωμέγα", "Привет", "e\u0301", "\u0301", "12",
    "2024", "x", "_", "'s", "'", "-", ".", "🎉", "<|endoftext|>", "<|endof", "<", "|>", "①",
    "²", "ｶﾞ", "ﾞ", "ﬁ", "１２", "ａｂ", "\u200b",
])
# long runs of one class (Han, kana, Hangul, letters, digits, punctuation),
# which are cut inside: one to three characters repeated in any order
RUN_CHARS = st.lists(st.sampled_from("中文日本のカタア한글abZ10=，"), min_size=1, max_size=3)
RUNS = st.builds(lambda chars, n, rng: "".join(rng.choice(chars) for _ in range(n)),
                 RUN_CHARS, st.integers(100, 1_200), st.randoms(use_true_random=False))
# long enough that edges are looked for (a few hundred characters pending)
WIDE_TEXTS = st.lists(WIDE_PIECES, min_size=120, max_size=260).map("".join)
# ...or runs between a few pieces
RUN_TEXTS = st.lists(RUNS | st.lists(WIDE_PIECES, max_size=20).map("".join),
                     min_size=2, max_size=6).map("".join)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, data=st.data())
def test_flush_is_encode_of_the_whole_text_however_it_was_split(kind, text, data):
    enc = load(kind)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=6))
    a, stable = pushed(enc, text, cuts, allowed_special="all")
    whole = enc.encode(text, allowed_special="all")
    assert a.flush() == whole
    assert a.count() == len(whole)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, data=st.data())
def test_the_ids_pushes_return_are_the_final_ids_and_begin_the_encoding(kind, text, data):
    enc = load(kind)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=6))
    more = data.draw(TEXTS)
    a, stable = pushed(enc, text, cuts, allowed_special="all")
    assert a.ids == stable
    assert enc.encode(text + more, allowed_special="all")[:len(stable)] == stable


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=WIDE_TEXTS | RUN_TEXTS, tail=TEXTS, data=st.data())
def test_flush_is_encode_of_long_text_without_whitespace_however_it_was_split(kind, text,
                                                                              tail, data):
    enc = load(kind)
    text += tail
    step = data.draw(st.sampled_from([1, 7, 50, 300]))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8)) + list(
        range(0, len(text), step))
    more = data.draw(WIDE_TEXTS | TEXTS)
    a, stable = pushed(enc, text, cuts, allowed_special="all")
    whole = enc.encode(text, allowed_special="all")
    assert a.flush() == whole
    assert a.count() == len(whole)
    assert enc.encode(text + more, allowed_special="all")[:len(stable)] == stable


@pytest.mark.parametrize("kind", KINDS)
def test_special_token_arguments_are_encodes(kind):
    enc = load(kind)
    text = "say <|endoftext|> and more words after it"
    a, _ = pushed(enc, text, [5, 9, 14, 20], allowed_special="all")
    assert a.flush() == enc.encode(text, allowed_special="all")
    a, _ = pushed(enc, text, [5, 9, 14, 20], disallowed_special=())
    assert a.flush() == enc.encode(text, disallowed_special=())


@pytest.mark.parametrize("kind", ["tiktoken", "hf_byte_bpe"])
def test_a_disallowed_special_token_split_between_pushes_is_refused_as_encode_refuses_it(kind):
    a = load(kind).appender()
    a.push("text <|endof")
    with pytest.raises(fasttok.FasttokError, match="disallowed special token"):
        a.push("text|> more")
    assert a.pending == "text <|endof" and a.push("ten") == []
    assert a.flush() == load(kind).encode("text <|endoften")


def _chat(words: int) -> str:
    corpus = (DATA / "corpus" / "en.txt").read_text(encoding="utf-8")
    return " ".join(corpus.split(" ")[:words])


@pytest.mark.parametrize("kind", ["tiktoken", "spm_unigram", "gguf_bert", "hf_metaspace_bpe"])
def test_pushing_twice_the_text_costs_twice_the_characters(kind):
    enc = load(kind)
    costs = []
    for words in (2_000, 4_000):
        text = _chat(words)
        a, _ = pushed(enc, text, list(range(0, len(text), 80)))
        assert a.flush() == enc.encode(text)
        costs.append(a.encoded_chars / len(text))
    # re-encoding the whole text each push would make the second ratio twice the first
    assert costs[1] <= costs[0] * 1.25 and costs[1] < 40


def _unspaced(name: str) -> str:
    # 20k CJK characters with and without punctuation, 100 KB of URLs, 200 KB of one letter
    return unspaced(name, {"zh": 20_000, "han": 20_000, "urls": 100_000, "letters": 200_000}[name])


@pytest.mark.parametrize("name", ["zh", "han", "urls", "letters"])
@pytest.mark.parametrize("kind", ["tiktoken", "hf_byte_bpe", "hf_wordpiece", "gguf_llama",
                                  "spm_unigram", "hf_unigram", "gguf_t5"])
def test_pushing_long_text_without_whitespace_encodes_each_character_a_few_times(kind, name):
    # the old appender re-encoded the whole pending run at every push: 200 to
    # 2000 characters encoded a character here (a cut inside a run, every
    # few hundred characters, costs some thirty encodes of ~60 characters)
    enc = load(kind)
    text = _unspaced(name)
    a, _ = pushed(enc, text, list(range(0, len(text), 50)), disallowed_special=())
    assert a.encoded_chars <= (8 if name in ("han", "letters") else 6) * len(text)
    assert a.flush() == enc.encode(text, disallowed_special=())


@pytest.mark.parametrize("name", ["zh", "urls"])
@pytest.mark.parametrize("kind", ["tiktoken", "gguf_gpt2", "gguf_bert", "hf_byte_bpe",
                                  "hf_wordpiece", "gguf_llama", "spm_bpe", "hf_metaspace_bpe",
                                  "tekken", "gguf_t5"])
def test_long_text_without_whitespace_is_cut_at_edges(kind, name):
    # punctuation, digits and scripts meeting: the pending text stays a few
    # hundred characters (on SentencePiece kinds too, whose text from an
    # edge encodes with a dummy prefix: compared after its first ids)
    enc = load(kind)
    text = _unspaced(name)
    a = enc.appender(disallowed_special=())
    for start in range(0, len(text), 50):
        a.push(text[start:start + 50])
        assert len(a.pending) <= 1_024
    assert a.flush() == enc.encode(text, disallowed_special=())


@pytest.mark.parametrize("kind", ["tiktoken", "hf_wordpiece"])
def test_a_push_of_a_short_run_with_no_place_encodes_nothing_until_the_ids_are_asked(kind):
    enc = load(kind)
    a = enc.appender()
    a.push("a" * 300)
    for _ in range(20):
        assert a.push("a" * 10) == []
    assert a.encoded_chars == 0
    assert a.count() == len(enc.encode("a" * 500))
    assert a.pending_ids() == enc.encode("a" * 500) == a.flush()
    assert a.encoded_chars == 500


RUN_FILES = {
    "bpe_bytefallback.model": DATA / "vocab" / "sentencepiece"
    / "botchan_bpe_8000_bytefallback.model",
}


def _runs(name: str) -> str:
    # 20k Han, 20k kana (no edge in either), 100 KB of URLs
    if name == "kana":
        multi = (DATA / "corpus" / "multi.txt").read_text(encoding="utf-8")
        return "".join(ch for ch in multi if "\u3040" <= ch <= "\u30ff")[:20_000]
    return _unspaced(name)


@pytest.mark.parametrize("name", ["han", "kana", "urls"])
@pytest.mark.parametrize("kind", ["tiktoken", "hf_byte_bpe", "gguf_llama", "hf_metaspace_bpe",
                                  "bpe_bytefallback.model", "gguf_t5"])
def test_asking_the_pending_ids_after_every_push_of_unspaced_text_costs_a_few_encodes(kind,
                                                                                     name):
    # the pending text is cut inside runs and, on SentencePiece kinds, at
    # edges: before, each pending_ids() encoded all of it (200 characters
    # encoded a character pushed for Han and kana, 1,000 for the URLs on
    # SentencePiece kinds)
    enc = fasttok.load(str(RUN_FILES[kind])) if kind in RUN_FILES else load(kind)
    text = _runs(name)
    a = enc.appender(disallowed_special=())
    for start in range(0, len(text), 50):
        a.push(text[start:start + 50])
        a.pending_ids()
    assert a.encoded_chars <= 20 * len(text)
    assert a.flush() == enc.encode(text, disallowed_special=())


@pytest.mark.parametrize("kind", ["hf_unigram", "gguf_t5"])
@pytest.mark.parametrize("seed", range(6))
def test_a_unigram_run_of_two_letters_is_cut_inside_as_the_whole_text_splits(kind, seed):
    # its Viterbi sums scores from a pre-token's (GGUF t5: a fragment's)
    # start, and "f" + "ff" ties "ff" + "f" but for how the sum before them
    # rounds: a window starting inside a run of f and 6, encoded from 0,
    # split otherwise (so it was cut only where whitespace is; GGUF t5 gave
    # other ids for 104 random runs in 100 s); from the score there it
    # splits as the whole text
    enc = load(kind)
    rng = random.Random(seed)
    text = "".join(rng.choice("f6") for _ in range(3_000))
    a = enc.appender()
    start = 0
    while start < len(text):
        size = rng.randint(1, 12)
        a.push(text[start:start + size])
        a.pending_ids()
        start += size
        assert len(a.pending) < 600
    assert a.flush() == enc.encode(text)


def test_a_cut_after_a_surrogate_pair_on_a_sentencepiece_unigram_model_keeps_the_pairs_text():
    # the cut was counted in the characters of the repaired UTF-8, where a
    # pair is one character, not in the str's code points: the pending text
    # then began one code point early and its id came twice
    enc = fasttok.load(str(DATA / "vocab" / "sentencepiece" / "kyoto_ja_unigram_8000.model"))
    text = "word " * 40 + "\ud83d\ude00" + " more words" * 40
    a = enc.appender()
    a.push(text)
    a.push("x " * 100)
    assert a.flush() == enc.encode(text + "x " * 100)


def test_a_sentencepiece_unigram_model_encodes_windows_from_the_whole_texts_score():
    # its float32 path scores, summed from the start of the text, split
    # "go......" as "." + "......" 160,972 ids into 400 KB of English where
    # a window a few words long encoded from 0 split "......" + "."; from the
    # whole text's score at the window's start it splits as the whole text
    enc = fasttok.load(str(DATA / "vocab" / "sentencepiece" / "kyoto_ja_unigram_8000.model"))
    text = " ".join((DATA / "corpus" / "en.txt").read_text(encoding="utf-8").split())[:400_000]
    whole = enc.encode(text)
    a = enc.appender()
    for start in range(0, len(text), 50):
        a.push(text[start:start + 50])
        a.pending_ids()
        assert len(a.pending) < 400
        assert a.encoded_chars <= 4 * start + 1_000
    assert a.flush() == whole


def test_a_sentencepiece_unigram_model_is_cut_in_text_without_whitespace():
    # where no piece crosses, as at a ▁, its window starting without one
    enc = fasttok.load(str(DATA / "vocab" / "sentencepiece" / "kyoto_ja_unigram_8000.model"))
    zh = "".join((DATA / "corpus" / "zh.txt").read_text(encoding="utf-8").split())[:20_000]
    whole = enc.encode(zh)
    a = enc.appender()
    for start in range(0, len(zh), 50):
        a.push(zh[start:start + 50])
        a.pending_ids()
        assert a.encoded_chars <= 10 * start + 2_000
    assert len(a.pending) < 600
    assert a.flush() == whole


SPM_UNIGRAM = sorted(p.name for p in (DATA / "vocab" / "sentencepiece").glob("*.model")
                     if "unigram" in p.name) if not DATA_MISSING else []
# long enough that a window is cut (the longest piece and a margin before the end)
LONG_TEXTS = st.lists(st.sampled_from(["the", "quick", "unbelievable", " ", "  ", "\n", "\t",
                                       "I'm", "12", ".", "......", ",", "é", "e\u0301", "ß",
                                       "你好", "🎉", "\u00a0", "\u3000", "ｶﾞ", "①", "<unk>",
                                       "</s>", "\u2581", "x", "日本語です", "。", "カタカナ",
                                       "、", "example.com/", "中文", "ﬁ", "\u200b"]),
                      min_size=20, max_size=200).map("".join)


@pytest.mark.parametrize("name", SPM_UNIGRAM)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=LONG_TEXTS, more=LONG_TEXTS, data=st.data())
def test_a_sentencepiece_unigram_model_is_cut_exactly_however_the_text_was_split(name, text,
                                                                                  more, data):
    check_split(fasttok.load(str(DATA / "vocab" / "sentencepiece" / name)), text, more, data)


CONVERGING = {"XLNet.json": DATA / "vocab" / "hf" / "unigram"
              / "kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json",
              "gguf_t5": FILES.get("gguf_t5")}


@pytest.mark.parametrize("digits", ["68", "0123456789"])
@pytest.mark.parametrize("name", sorted(CONVERGING))
def test_a_unigram_run_of_digits_is_cut_where_its_best_paths_converge(name, digits):
    # two-digit pieces (XLNet's conversion, GGUF t5's nomic-bert-moe): the
    # best paths to neighbouring places pair the digits otherwise back to
    # where they last met, so a lattice node crosses every place; the cut is
    # where they converge before the margin, the window's Viterbi checked
    # to give theirs (each pending_ids() encoded the whole run before: 200
    # characters a character pushed)
    enc = fasttok.load(str(CONVERGING[name]))
    rng = random.Random(1)
    text = "".join(rng.choice(digits) for _ in range(20_000))
    a = enc.appender()
    for start in range(0, len(text), 50):
        a.push(text[start:start + 50])
        a.pending_ids()
    assert a.encoded_chars <= 30 * len(text)
    assert a.flush() == enc.encode(text)


HF_UNIGRAM = sorted(p.name for p in (DATA / "vocab" / "hf" / "unigram").glob("*.json")) \
    if not DATA_MISSING else []
# with the added tokens of these files, ALBERT's and XLNet's quotes (their
# first stages rewrite them), runs where ties go by the score before them,
# and a surrogate pair and a lone surrogate (repaired, counted in the str)
HF_LONG_TEXTS = st.lists(st.sampled_from(["the", "quick", "unbelievable", " ", "  ", "\n", "\t",
                                          "12", ".", "......", "é", "e\u0301", "你好", "🎉",
                                          "\u00a0", "ｶﾞ", "①", "<unk>", "</s>", "<s>", "<pad>",
                                          "<mask>", "[CLS]", "\u2581", "``", "''", "f", "ff", "6",
                                          "\ud83d\ude00", "\ud83d", "日本語です", "ﬁ", "\u200b"]),
                         min_size=20, max_size=200).map("".join)


@pytest.mark.parametrize("name", HF_UNIGRAM)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=HF_LONG_TEXTS, more=HF_LONG_TEXTS, data=st.data())
def test_a_unigram_tokenizer_json_is_cut_exactly_however_the_text_was_split(name, text, more,
                                                                            data):
    special = data.draw(st.sampled_from([{"allowed_special": "all"}, {"disallowed_special": ()}]))
    check_split(fasttok.load(str(DATA / "vocab" / "hf" / "unigram" / name)), text, more, data,
                **special)


def _tokenizer_json(tmp_path, doc: dict):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return fasttok.load(str(path))


def _unigram_file(name: str) -> dict:
    return json.loads((DATA / "vocab" / "hf" / "unigram" / name).read_text(encoding="utf-8"))


def test_a_cut_leaves_the_trailing_whitespace_an_lstrip_token_may_take(tmp_path):
    # an added token with lstrip takes the whitespace before it in: a cut
    # inside the tabs the normalizer keeps gave their ids as final
    doc = _unigram_file("kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json")
    doc["model"]["vocab"].append(["<mask>", 0.0])
    doc["added_tokens"].append({"id": len(doc["model"]["vocab"]) - 1, "content": "<mask>",
                                "single_word": False, "lstrip": True, "rstrip": False,
                                "normalized": False, "special": True})
    enc = _tokenizer_json(tmp_path, doc)
    text = "x" + "\t" * 100 + "<mask>"
    a, stable = pushed(enc, text, [101], allowed_special="all")
    assert a.flush() == enc.encode(text, allowed_special="all")
    assert enc.encode(text, allowed_special="all")[:len(stable)] == stable


def test_a_unigram_tokenizer_json_without_a_split_at_whitespace_is_not_cut_there(tmp_path):
    # Metaspace without split (the walk declines the file: a normalized
    # added token): the Viterbi sums scores across the spaces, so a window
    # from one split a tie of f and ff otherwise
    doc = _unigram_file("botchan_unigram_5000.v5.24.0.from_spm_proto.json")
    doc["model"]["vocab"].append(["<mask>", 0.0])
    doc["added_tokens"] = [{"id": len(doc["model"]["vocab"]) - 1, "content": "<mask>",
                            "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": True, "special": True}]
    enc = _tokenizer_json(tmp_path, doc)
    text = "8 ff668fff6f 88 6f f6666ff66666 666fffff"
    a, _ = pushed(enc, text, [17], disallowed_special=())
    assert a.flush() == enc.encode(text, disallowed_special=())


def test_a_window_is_cut_before_a_replace_pattern_the_text_ends_partway_through(tmp_path):
    # a Replace of 80 characters: a text ending with 79 of them is not
    # normalized there until the rest comes, further back than 64 bytes
    doc = {"normalizer": {"type": "Replace", "pattern": {"String": "ab" * 40}, "content": "c"},
           "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                             "prepend_scheme": "always", "split": False},
           "model": {"type": "Unigram", "unk_id": 0, "vocab": [
               ["<unk>", 0.0], ["a", -1.0], ["b", -1.0], ["ab", -1.5], ["c", -1.0],
               ["\u2581", -1.0]]}}
    enc = _tokenizer_json(tmp_path, doc)
    text = "c" * 600 + "ab" * 40
    a, stable = pushed(enc, text, [len(text) - 1])
    assert a.flush() == enc.encode(text)
    assert enc.encode(text)[:len(stable)] == stable


def test_a_disallowed_special_token_completed_where_a_push_encodes_nothing_is_refused():
    a = load("tiktoken").appender()
    a.push("a" * 600 + "<|endof")
    with pytest.raises(fasttok.FasttokError, match="disallowed special token"):
        a.push("text|>")
    assert a.pending.endswith("<|endof") and a.push("ten") == []
    assert a.flush() == load("tiktoken").encode("a" * 600 + "<|endoften")


def test_pending_keeps_the_last_word_and_the_one_before_it():
    enc = load("tiktoken")
    a = enc.appender()
    assert a.push("Hello wor") == []
    assert a.pending == "Hello wor"
    assert a.push("ld and then some") == enc.encode("Hello world and")
    assert a.pending == " then some"
    assert a.ids + a.pending_ids() == a.flush() == enc.encode("Hello world and then some")


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, more=TEXTS)
def test_encode_with_unstable_keeps_the_ids_no_continuation_changes(kind, text, more):
    enc = load(kind)
    stable, completions = enc.encode_with_unstable(text, allowed_special="all")
    ids = enc.encode(text, allowed_special="all")
    assert ids[:len(stable)] == stable
    assert enc.encode(text + more, allowed_special="all")[:len(stable)] == stable
    assert (ids[len(stable):] in completions) if completions else ids == stable
