"""``Encoding.heal``: llguidance 1.9.1's ``tokenize_partial`` on every
``tokenizer.json`` it reads, ids that no continuation changes on every
vocabulary kind, and ``tokens_extending`` as a scan of every token.

Where heal and llguidance differ, the difference is llguidance's rule and
is shown here: its back-off looks at the vocabulary only, so a
continuation can change ids it keeps (heal keeps fewer, and the test finds
the continuation: a probe of :data:`fasttok.inference.stability.PROBES`,
the text's last characters again, an ASCII letter or digit, or the rest of
a token extending the suffix). The whole comparison, every line of testcases/lines.jsonl
cut at every position, runs with ``-m slow``; the default run takes every
seventh position.
"""

from __future__ import annotations

import functools
import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
llguidance = pytest.importorskip("llguidance")

from fasttok.inference.stability import PROBES  # noqa: E402

if not DATA_MISSING:
    from inference_kinds import FILES, TEXTS, load, unspaced
else:
    FILES, TEXTS = {}, st.just("")

HF = DATA / "vocab" / "hf"
# the tokenizer.json files llguidance 1.9.1 reads and tokenizes as tokenizers does
SAME_TOKENIZATION = {
    "llama3": HF / "llama3" / "tokenizer.json",
    "qwen3": HF / "qwen3" / "tokenizer.json",
    "gpt4o": HF / "gpt4o" / "tokenizer.json",
    "gemma3": HF / "gemma3" / "tokenizer.json",
}
# ...and the ones it reads but tokenizes without their leading "▁" (it drops a
# Prepend normalizer; the Metaspace pre-tokenizer's prepend goes too)
WITHOUT_DUMMY_PREFIX = {
    "llama2": HF / "llama2" / "tokenizer.json",
    "unigram_4000_bytefallback": HF / "unigram"
    / "botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto.json",
}
# ...and the ones it refuses: it takes the byte rule from the decoder, and
# knows ByteLevel and a Sequence with ByteFallback only
REFUSED = {
    "all-MiniLM-L6-v2": HF / "all-MiniLM-L6-v2" / "tokenizer.json",
    **{p.stem: p for p in sorted((HF / "unigram").glob("*.json"))
       if "bytefallback" not in p.name},
}
_PAIRS: dict = {}


def _pair(name: str) -> tuple:
    if name not in _PAIRS:
        import fasttok

        path = SAME_TOKENIZATION[name]
        _PAIRS[name] = fasttok.load(str(path)), llguidance.LLTokenizer(path.read_text("utf-8"))
    return _PAIRS[name]


def _lines() -> list:
    with open(DATA / "testcases" / "lines.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f.read().split("\n") if line]


def _positions(every: int) -> list:
    found = []
    for text in _lines():
        data = text.encode("utf-8")
        ends = sorted({len(text[:i].encode("utf-8")) for i in range(1, len(text) + 1)})
        found += [data[:end] for end in ends[::every]]
    return found


def _changed_by_a_continuation(enc, data: bytes, ids: list, suffix: bytes) -> bool:
    # a continuation after which the encoding no longer begins with ids: a
    # probe, the text's last characters again, the rest of a token that
    # extends the suffix, or the rest of a special or added token the text
    # ends partway through (gemma3's "<body>" after "<b")
    text = data.decode("utf-8")
    tries = list(PROBES) + [text[-1:], text[-2:], text[-1:] * 2] + list(string.ascii_letters
                                                                       + string.digits)
    for token in enc.tokens_extending(suffix)[:8]:
        tries.append(enc.decode_single_token_bytes(token)[len(suffix):].decode("utf-8", "ignore"))
    tries += [special[n:] for special in enc.special_tokens_set
              for n in range(1, len(special)) if text.endswith(special[:n])]
    return any(enc.encode(text + more, allowed_special="all")[:len(ids)] != ids for more in tries)


@functools.lru_cache(maxsize=None)
def _added_not_special(name: str) -> frozenset:
    added = json.loads(SAME_TOKENIZATION[name].read_text("utf-8"))["added_tokens"]
    return frozenset(t["id"] for t in added if not t["special"])


# llguidance's own rules that show on these lines, each checked where it shows:
# an added token that is not special (gemma3's runs of "▁" and of newlines)
# is backed off by llguidance (its trie spells every added token after a 0xFF
# marker) and kept by heal (fasttok counts every added token as a special);
# gpt4o's <|endofprompt|> is given as ([], b"fprompt|>"), which does not
# spell the text.
def _llguidance_rule(name: str, data: bytes, theirs: tuple, ours: tuple) -> bool:
    enc, ll = _pair(name)
    ids, suffix = theirs
    if ours[0] == ids[:len(ours[0])] and _changed_by_a_continuation(enc, data, ids, suffix):
        return True
    if ll.decode_bytes(ids) + suffix != data:
        return True
    added = _added_not_special(name)
    return ours[0][:len(ids)] == ids and any(t in added for t in ours[0][len(ids):])


def _compare(name: str, every: int) -> None:
    enc, ll = _pair(name)
    differ = []
    for data in _positions(every):
        theirs = ll.tokenize_partial(data)
        theirs = (list(theirs[0]), bytes(theirs[1]))
        ours = enc.heal(data, allowed_special="all")
        if ours != theirs and not _llguidance_rule(name, data, theirs, ours):
            differ.append((data, theirs, ours))
    assert not differ, f"{len(differ)} differences, the first: {differ[0]}"


@pytest.mark.parametrize("name", sorted(SAME_TOKENIZATION))
def test_heal_is_llguidances_tokenize_partial_on_a_sample_of_cut_lines(name):
    _compare(name, 7)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SAME_TOKENIZATION))
def test_heal_is_llguidances_tokenize_partial_on_every_cut_of_every_line(name):
    _compare(name, 1)


@pytest.mark.parametrize("name", sorted(SAME_TOKENIZATION))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS)
def test_heal_is_llguidances_tokenize_partial_on_hypothesis_text(name, text):
    enc, ll = _pair(name)
    data = text.encode("utf-8")
    theirs = ll.tokenize_partial(data)
    theirs = (list(theirs[0]), bytes(theirs[1]))
    ours = enc.heal(data, allowed_special="all")
    assert ours == theirs or _llguidance_rule(name, data, theirs, ours)


@pytest.mark.parametrize("name", ["llama3", "gemma3"])
def test_heal_of_a_long_prompt_is_llguidances_tokenize_partial(name):
    # a long prompt is probed from its last settled cut on, not whole
    text = (DATA / "corpus" / "en.txt").read_text(encoding="utf-8")[:20_000]
    enc, ll = _pair(name)
    for end in range(19_000, 20_000, 97):
        data = text[:end].encode("utf-8")
        theirs = ll.tokenize_partial(data)
        theirs = (list(theirs[0]), bytes(theirs[1]))
        ours = enc.heal(data, allowed_special="all")
        assert ours == theirs or _llguidance_rule(name, data, theirs, ours), end


@pytest.mark.parametrize("kind", ["hf_wordpiece", "spm_unigram", "gguf_llama"])
def test_heal_of_a_long_prompt_backs_off_within_its_last_word_on_a_normalizing_vocabulary(kind):
    enc = load(kind)
    text = (DATA / "corpus" / "en.txt").read_text(encoding="utf-8")[:20_000] + " Unbelievab"
    ids, suffix = enc.heal(text)
    assert suffix and b" Unbelievab".endswith(suffix)
    assert enc.encode(text + "le things")[:len(ids)] == ids


def _unspaced(name: str) -> str:
    # 200k CJK characters with and without punctuation, 100 KB of URLs, 1 MB of one letter
    return unspaced(name, {"zh": 200_000, "han": 200_000, "urls": 100_000, "letters": 1_000_000}[name])


@pytest.mark.parametrize("name", ["zh", "han", "urls", "letters"])
@pytest.mark.parametrize("kind", ["tiktoken", "hf_byte_bpe", "hf_wordpiece", "gguf_llama",
                                  "spm_unigram"])
def test_heal_of_a_long_text_without_whitespace_encodes_it_a_few_times(kind, name, monkeypatch):
    # the probes run on the text from a cut (an edge) or a short aligned end,
    # not on the whole text: heal encoded it some 87 times before
    enc = load(kind)
    text = _unspaced(name)
    encoded = [0]
    given = enc._encoder_with

    def counting(*special):
        encode = given(*special)

        def counted(part: str) -> list:
            encoded[0] += len(part)
            return encode(part)

        return counted

    monkeypatch.setattr(enc, "_encoder_with", counting)
    ids, suffix = enc.heal(text, disallowed_special=())
    assert encoded[0] <= 3 * len(text)
    monkeypatch.undo()
    for more in ("a", "1", "，", "中", " x", "/", "\u0301"):
        assert enc.encode(text + more, disallowed_special=())[:len(ids)] == ids
    whole = enc.encode(text, disallowed_special=())
    if enc.decode_bytes(whole) == text.encode("utf-8"):
        assert enc.decode_bytes(ids) + suffix == text.encode("utf-8")


def test_llguidance_keeps_ids_a_continuation_changes_and_heal_does_not():
    enc, ll = _pair("llama3")
    ids, _ = ll.tokenize_partial(b"Hyphe")
    assert enc.encode("Hyphen")[:len(ids)] != ids
    healed, suffix = enc.heal("Hyphe")
    assert (healed, suffix) == ([], b"Hyphe")


@pytest.mark.parametrize("name", sorted(WITHOUT_DUMMY_PREFIX))
def test_llguidance_tokenizes_a_dummy_prefix_file_without_its_leading_space(name):
    import fasttok

    path = WITHOUT_DUMMY_PREFIX[name]
    ll = llguidance.LLTokenizer(path.read_text("utf-8"))
    enc = fasttok.load(str(path))
    # heal keeps encode's ids (its second invariant); llguidance's are another text's
    assert ll.tokenize_str("a b") != enc.encode("a b")
    assert ll.tokenize_str("a b")[1:] == enc.encode("a b")[1:]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_llguidance_refuses_a_file_whose_decoder_has_no_byte_rule(name):
    with pytest.raises(ValueError, match="can't determine decoder type"):
        llguidance.LLTokenizer(REFUSED[name].read_text("utf-8"))


KINDS = sorted(FILES)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, more=TEXTS)
def test_healed_ids_begin_the_encoding_of_any_continuation(kind, text, more):
    enc = load(kind)
    ids, suffix = enc.heal(text, allowed_special="all")
    assert enc.encode(text + more, allowed_special="all")[:len(ids)] == ids


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS)
def test_healed_ids_and_suffix_spell_the_text_where_the_vocabulary_spells_it(kind, text):
    enc = load(kind)
    ids = enc.encode(text, allowed_special="all")
    data = text.encode("utf-8")
    if enc.decode_bytes(ids) != data or not all(
            data.startswith(enc.decode_bytes(ids[:n])) for n in range(len(ids))):
        return  # a normalizer, a dummy prefix, a clean-up: the ids spell another text
    healed, suffix = enc.heal(text, allowed_special="all")
    assert enc.decode_bytes(healed) + suffix == text.encode("utf-8")


@pytest.mark.parametrize("kind", [k for k in KINDS if k in ("tiktoken", "gguf_gpt2", "gguf_bert",
                                                            "hf_byte_bpe", "hf_wordpiece")])
def test_healed_ids_begin_the_encoding_that_completes_the_special_token_the_text_ends_in(kind):
    enc = load(kind)
    for special in sorted(enc.special_tokens_set, key=len)[-3:]:
        text = "some words " + special[:len(special) // 2 + 1]
        ids, suffix = enc.heal(text, allowed_special="all")
        assert enc.encode(text + special[len(special) // 2 + 1:],
                          allowed_special="all")[:len(ids)] == ids
        assert text.encode("utf-8").endswith(suffix)


def test_heal_after_recent_ids_keeps_the_last_one_when_the_encoding_begins_with_it():
    enc, ll = _pair("llama3")
    recent = enc.encode("The")
    assert enc.heal(" qu", recent) == ([], b" qu")
    assert enc.heal(" quick brown", recent) == (
        list(ll.tokenize_partial(b" quick brown", recent)[0]), b" brown")


def test_bytes_that_are_not_utf8_go_to_the_suffix():
    enc = load("tiktoken")
    ids, suffix = enc.heal(b"hello world \xe2\x82")
    assert ids == enc.encode("hello world")[:len(ids)]
    assert enc.decode_bytes(ids) + suffix == b"hello world \xe2\x82"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("prefix", [b" qu", b"th", b"\xe4\xbd", b"1", b"", "▁".encode()])
def test_tokens_extending_are_the_ordinary_ids_whose_bytes_start_with_the_prefix(kind, prefix):
    enc = load(kind)
    every = {}
    for token in range(enc.max_token_value + 1):
        if not enc.is_special_token(token):
            try:
                every[token] = enc.decode_single_token_bytes(token)
            except KeyError:
                continue
    found = enc.tokens_extending(prefix)
    assert sorted(found) == sorted(t for t, raw in every.items() if raw and raw.startswith(prefix))
    shorter = enc.tokens_extending(prefix, prefixes_too=True)[:-len(found) or None]
    assert sorted(shorter) == sorted(t for t, raw in every.items()
                                     if raw and len(raw) < len(prefix) and prefix.startswith(raw))
