"""Mistral ``tekken.json`` against ``mistral_common``'s Tekkenizer itself.

The reference is the live ``mistral_common`` of the test extra, on the
``tekken_*.json`` files that package ships (found in the installed package,
never copied here):

* ``encode_ordinary(s)`` == ``Tekkenizer.encode(s, bos=False, eos=False)``;
  ``encode(s, disallowed_special=(), add_special_tokens=True)`` == ``bos=True``;
  EOS appended == ``eos=True``; on every line of ``testcases/lines.jsonl``,
  every corpus file whole and line by line, and hypothesis text with the
  special tokens' strings (``[INST]``, ``<s>`` ...) spliced in;
* :func:`fasttok.formats.tekken.decode` == ``Tekkenizer.decode`` under each
  special-token policy, on those ids with special ids spliced in;
* the ids the Tekkenizer names (``bos_id`` ... ``n_words``) are the record's.

Malformed and hostile files (written here, small) raise
``VocabularyFileError`` naming the file and the JSON path.
"""

from __future__ import annotations

import base64
import functools
import importlib.resources
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, Mismatches, describe_mismatch, \
    read_jsonl, read_text
from fasttok.errors import VocabularyFileError
from fasttok.formats.tekken import decode
from fasttok.loaders.tekken_json import DEFAULT_SPECIAL_TOKENS, looks_like_tekken_json

tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
SpecialTokenPolicy = pytest.importorskip("mistral_common.tokens.tokenizers.base").SpecialTokenPolicy

SHIPPED = sorted(p.name for p in (importlib.resources.files("mistral_common") / "data").iterdir()
                 if p.name.startswith("tekken_") and p.name.endswith(".json"))
CORPUS = sorted((DATA / "corpus").glob("*.txt")) if not DATA_MISSING else []


def _shipped(name: str) -> str:
    return str(importlib.resources.files("mistral_common") / "data" / name)


@functools.lru_cache(maxsize=None)
def _pair(name: str) -> tuple:
    path = _shipped(name)
    return fasttok.load(path), tekken.Tekkenizer.from_file(path)


@pytest.fixture(params=SHIPPED)
def pair(request):
    return _pair(request.param)


def test_mistral_common_ships_tekken_files():
    assert len(SHIPPED) >= 2, SHIPPED


def _compare(pair, texts: list, what: str) -> None:
    ours, theirs = pair
    found = Mismatches(f"{ours.name}: {what}")
    for i, (a, text) in enumerate(zip(ours.encode_ordinary_batch(texts), texts)):
        b = theirs.encode(text, bos=False, eos=False)
        found.check(None if a == b else describe_mismatch(a, b, text, enc=ours), str(i))
    found.assert_none()


# ---------------------------------------------------------------- ids

def test_lines_jsonl_with_every_bos_eos_choice(pair):
    if DATA_MISSING:
        pytest.skip(MISSING_DATA_REASON)
    ours, theirs = pair
    eos = ours.vocabulary.eos_id
    found = Mismatches(f"{ours.name}: testcases/lines.jsonl")
    for case in read_jsonl(DATA / "testcases" / "lines.jsonl"):
        text = case["text"]
        plain = ours.encode_ordinary(text)
        with_bos = ours.encode(text, disallowed_special=(), add_special_tokens=True)
        for bos, eos_too, mine in ((False, False, plain), (True, False, with_bos),
                                   (False, True, plain + [eos]), (True, True, with_bos + [eos])):
            want = theirs.encode(text, bos=bos, eos=eos_too)
            found.check(None if mine == want else describe_mismatch(mine, want, text, enc=ours),
                        f"id {case['id']} bos={bos} eos={eos_too}")
    found.assert_none()


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_file_whole(pair, path):
    _compare(pair, [read_text(path)], f"{path.name} whole")


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_file_line_by_line(pair, path):
    _compare(pair, read_text(path).split("\n"), f"{path.name} lines")


def _with_specials(draw_text: str, names: list, rnd: random.Random) -> str:
    # special token strings at random places of the text
    cuts = sorted(rnd.randrange(len(draw_text) + 1) for _ in range(rnd.randrange(4)))
    out, at = [], 0
    for cut in cuts:
        out += [draw_text[at:cut], rnd.choice(names)]
        at = cut
    return "".join(out + [draw_text[at:]])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(st.characters(codec="utf-8"), max_size=80), seed=st.integers(0, 2**32))
def test_hypothesis_text_with_special_strings(text, seed):
    ours, theirs = _pair(SHIPPED[-1])
    names = ["[INST]", "[/INST]", "<s>", "</s>", "<unk>", "<pad>", "[IMG]", "<SPECIAL_999>",
             "[TOOL_CALLS]", "<|endoftext|>"]
    text = _with_specials(text, names, random.Random(seed))
    mine, want = ours.encode_ordinary(text), theirs.encode(text, bos=False, eos=False)
    assert mine == want, describe_mismatch(mine, want, text, enc=ours)


def test_special_strings_in_text_are_plain_text(pair):
    ours, theirs = pair
    text = "[INST] hi [/INST]<s></s><unk>"
    assert ours.encode_ordinary(text) == theirs.encode(text, bos=False, eos=False)
    assert ours.vocabulary.bos_id not in ours.encode_ordinary(text)
    assert ours.encode("[INST]", allowed_special="all") == [theirs.get_special_token("[INST]")]


# ---------------------------------------------------------------- the Tekkenizer's names

def test_special_ids_and_sizes_are_the_tekkenizers(pair):
    ours, theirs = pair
    v = ours.vocabulary
    assert (v.bos_id, v.eos_id, v.unk_id, v.pad_id) == (theirs.bos_id, theirs.eos_id,
                                                         theirs.unk_id, theirs.pad_id)
    assert ours.n_vocab == theirs.n_words
    assert len(ours.special_tokens_set) == theirs.num_special_tokens
    assert all(ours.encode_single_token(t["token_str"]) == t["rank"]
               for t in theirs._all_special_tokens)
    assert [ours.is_special_token(i) for i in range(0, 2000, 7)] == \
        [theirs.is_special(i) for i in range(0, 2000, 7)]
    assert ours.vocabulary.special_tokens.keys() >= set(DEFAULT_SPECIAL_TOKENS)


def test_every_token_decodes_to_the_tekkenizers_bytes(pair):
    ours, theirs = pair
    policy = SpecialTokenPolicy.KEEP
    for i in list(range(0, 1300)) + list(range(ours.n_vocab - 300, ours.n_vocab)):
        assert ours.decode_single_token_bytes(i) == theirs.id_to_byte_piece(i, policy), i


# ---------------------------------------------------------------- decode

def _decode_cases(pair) -> list:
    ours, _ = pair
    rnd = random.Random(13)
    texts = [c["text"] for c in read_jsonl(DATA / "testcases" / "lines.jsonl")] \
        if not DATA_MISSING else ["hello wörld 你好 🙂"]
    cases = []
    for text in texts:
        ids = ours.encode_ordinary(text)
        for _ in range(rnd.randrange(4)):  # specials anywhere, splitting characters too
            ids.insert(rnd.randrange(len(ids) + 1), rnd.randrange(1000))
        cases.append(ids)
    # "é" split by a special: the Tekkenizer decodes each side alone
    lead, tail = ours.encode_single_token(b"\xc3"), ours.encode_single_token(b"\xa9")
    cases += [[lead, 1, tail], [lead, 1, 2, tail, lead], [1, tail, lead, tail, 3]]
    return cases


@pytest.mark.parametrize("policy", ["ignore", "keep"])
def test_decode_matches_under_each_policy(pair, policy):
    ours, theirs = pair
    found = Mismatches(f"{ours.name}: decode {policy}")
    for ids in _decode_cases(pair):
        mine, want = decode(ours, ids, policy), theirs.decode(ids, SpecialTokenPolicy(policy))
        found.check(None if mine == want else f"{ids}: {mine!r} != {want!r}")
    found.assert_none()


def test_keep_is_fasttoks_decode_and_raise_refuses_specials(pair):
    ours, theirs = pair
    for ids in _decode_cases(pair):
        assert ours.decode(ids) == decode(ours, ids, "keep")
    with pytest.raises(ValueError):
        theirs.decode([1, 2000], SpecialTokenPolicy.RAISE)
    with pytest.raises(fasttok.FasttokError, match="special tokens"):
        decode(ours, [1, 2000], "raise")
    assert decode(ours, [2000, 2001], "raise") == theirs.decode([2000, 2001],
                                                                 SpecialTokenPolicy.RAISE)


def test_decode_accepts_the_tekkenizers_policy_enum_and_rejects_others(pair):
    ours, _ = pair
    assert decode(ours, [1, 2000], SpecialTokenPolicy.IGNORE) == decode(ours, [2000])
    with pytest.raises(fasttok.FasttokError, match="one of ignore, keep, raise"):
        decode(ours, [1], "drop")


# ---------------------------------------------------------------- dispatch

def test_loaded_by_content_under_any_name_and_by_format(tmp_path):
    doc = _doc()
    path = tmp_path / "vocab.bin"
    path.write_text(json.dumps(doc))
    assert fasttok.load(path).encode_ordinary("hi") == [257]
    assert fasttok.load(path, format="tekken").n_vocab == 258


def test_tokenizer_json_is_not_claimed():
    head = b'{\n  "version": "1.0",\n  "truncation": null,\n  "padding": null,'
    assert not looks_like_tekken_json(head)
    path = DATA / "vocab" / "hf" / "llama3" / "tokenizer.json"
    if path.is_file():
        assert fasttok.registry.find_loader(str(path)).name == "hf_tokenizer_json"
    for name in SHIPPED:
        assert fasttok.registry.find_loader(_shipped(name)).name == "tekken"


# ---------------------------------------------------------------- malformed files

def _doc(**config) -> dict:
    vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None}
             for i in range(256)]
    vocab.append({"rank": 256, "token_bytes": base64.b64encode(b"hi").decode(), "token_str": "hi"})
    return {"config": {"pattern": r"\p{L}+|[^\p{L}]+", "default_vocab_size": 258,
                       "default_num_special_tokens": 1, "version": "v7"} | config,
            "special_tokens": [{"rank": 0, "token_str": "<s>", "is_control": True}],
            "vocab": vocab}


def _raises(tmp_path, doc_or_bytes, field: "str | None", match: str) -> None:
    path = tmp_path / "tekken.json"
    data = doc_or_bytes if isinstance(doc_or_bytes, bytes) else json.dumps(doc_or_bytes).encode()
    path.write_bytes(data)
    with pytest.raises(VocabularyFileError, match=match) as info:
        fasttok.load(path)
    assert info.value.path == str(path)
    assert info.value.field == field, str(info.value)


def test_the_small_document_is_valid(tmp_path):
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(_doc()))
    enc = fasttok.load(path)
    assert enc.encode_ordinary("hi!") == [257, 34] and enc.vocabulary.bos_id == 0


def test_truncated_json(tmp_path):
    data = json.dumps(_doc()).encode()[:1000]
    path = tmp_path / "tekken.json"
    path.write_bytes(data)
    # content sniffing still picks the tekken reader, which names where the JSON stops
    with pytest.raises(VocabularyFileError, match="not JSON") as info:
        fasttok.load(path)
    assert info.value.path == str(path) and info.value.offset is not None


def test_truncated_shipped_file(tmp_path):
    data = open(_shipped(SHIPPED[0]), "rb").read()
    path = tmp_path / "tekken.json"
    path.write_bytes(data[:len(data) // 3])
    with pytest.raises(VocabularyFileError, match="not JSON"):
        fasttok.load(path)


def test_bad_base64(tmp_path):
    doc = _doc()
    doc["vocab"][256]["token_bytes"] = "a!b="
    _raises(tmp_path, doc, "$.vocab[256].token_bytes", "not base64")


def test_duplicate_rank(tmp_path):
    doc = _doc()
    doc["vocab"][256]["rank"] = 12
    _raises(tmp_path, doc, "$.vocab[256].rank", r"rank 12 is \$.vocab\[12\] already")


def test_duplicate_token_bytes(tmp_path):
    doc = _doc()
    doc["vocab"][256]["token_bytes"] = base64.b64encode(b"a").decode()
    _raises(tmp_path, doc, "$.vocab[256].token_bytes", r"is \$.vocab\[97\] already")


def test_rank_beyond_the_vocab(tmp_path):
    doc = _doc()
    doc["vocab"][256]["rank"] = 10**12
    _raises(tmp_path, doc, "$.vocab[256].rank", "ranks are the entries' positions")


def test_huge_declared_vocab_size_with_few_entries(tmp_path):
    _raises(tmp_path, _doc(default_vocab_size=2**40), "$.config.default_vocab_size",
            "the file lists 257")


def test_single_bytes_out_of_order(tmp_path):
    doc = _doc()
    doc["vocab"][3]["token_bytes"] = base64.b64encode(b"\x04").decode()
    _raises(tmp_path, doc, "$.vocab[3].token_bytes", "single bytes in order")


def test_entry_with_wrong_keys(tmp_path):
    doc = _doc()
    doc["vocab"][7]["extra"] = 1
    _raises(tmp_path, doc, "$.vocab[7]", "exactly")


def test_special_tokens_rules(tmp_path):
    doc = _doc()
    doc["special_tokens"][0]["rank"] = 5
    _raises(tmp_path, doc, "$.special_tokens[0].rank", "must be equal")
    doc = _doc(default_num_special_tokens=2, default_vocab_size=259)
    doc["special_tokens"].append({"rank": 1, "token_str": "<s>", "is_control": True})
    _raises(tmp_path, doc, "$.special_tokens[1]", "is also id 0")
    doc = _doc(default_num_special_tokens=0, default_vocab_size=257)
    _raises(tmp_path, doc, "$.special_tokens", "more than")
    doc = _doc(version="v11")
    del doc["special_tokens"]
    _raises(tmp_path, doc, "$.special_tokens", "must list")
    _raises(tmp_path, _doc(version="v4"), "$.config.version", "unknown version")
    _raises(tmp_path, _doc(default_num_special_tokens="1"), "$.config.default_num_special_tokens",
            "expected int")


def test_old_file_without_special_tokens_gets_the_defaults_and_fillers(tmp_path):
    doc = _doc(default_num_special_tokens=30, default_vocab_size=287, version="v3")
    del doc["special_tokens"]
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(doc))
    ours, theirs = fasttok.load(path), tekken.Tekkenizer.from_file(path)
    assert dict(ours.vocabulary.special_tokens) == {t["token_str"]: t["rank"]
                                                    for t in theirs._all_special_tokens}
    assert ours.encode_ordinary("hi") == theirs.encode("hi", bos=False, eos=False) == [286]
    assert decode(ours, [1, 29, 286], "keep") == theirs.decode([1, 29, 286], "keep")


def test_vocabulary_is_cut_as_the_tekkenizer_cuts_it(tmp_path):
    doc = _doc(default_vocab_size=257)  # drops "hi"; the entry is not even read
    doc["vocab"][256] = "not an entry"
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(doc))
    assert fasttok.load(path).encode_ordinary("hi") == [105, 106]


def test_deeply_nested_json(tmp_path):
    _raises(tmp_path, b'{"config": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", None, "nested")


@pytest.mark.parametrize("pattern", ["(", "\\p{NoSuchScript}", "a**"])
def test_a_pattern_that_does_not_compile_names_its_field(tmp_path, pattern):
    _raises(tmp_path, _doc(pattern=pattern), "$.config.pattern", "pattern")


def test_an_empty_special_token_is_refused(tmp_path):
    # it would match at every position: encoding would never end
    doc = _doc()
    doc["special_tokens"][0]["token_str"] = ""
    _raises(tmp_path, doc, None, "empty string")
