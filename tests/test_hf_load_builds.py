"""What loading a non-byte-level ``tokenizer.json`` builds, and that what it
now builds later, or faster, is what it built before.

A load reads and checks the stages the file names and builds none of them
(the first encode builds the normalizer and pre-tokenizer it walks, a decode
the decoder, ``add_special_tokens`` the post-processor), while a fault in any
of them is still refused at load; the Precompiled normalizer's plain-run
pattern waits for its first ``normalize_str`` (a compiled walk never needs it), a Unigram model's
``vocab`` list and piece map for their first use, a walk's module for the
first encode of a file of its model type, the record's tokens for the first
use of the Encoding's vocabulary. The charsmap's rule characters
come from a walk of its trie along UTF-8 (not of every code point), the
cluster classes from one sweep of the Unicode tables per class; each is
checked here against the definition it replaced.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import fasttok
import fasttok.hf
from conftest import DATA, missing_data_reason
from fuzzing import CHARSMAP_RULES, build_charsmap
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.models.hf_bpe import BPE
from fasttok.models.hf_fields import serde_f64
from fasttok.models._unigram import TokenizersUnigram
from fasttok.models.hf_unigram import Unigram, unigram_from_json
from fasttok.normalizers import precompiled
from fasttok.shared._charsmap import CharsmapRules, charsmap_from_base64
from fasttok.shared._unicode import code_point_ranges, code_points
from fasttok.tokenizer_json import read_tokenizer_json

T5 = DATA / "vocab" / "hf" / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json"


def _t5() -> dict:
    if not T5.is_file():
        pytest.skip(missing_data_reason(T5))
    return json.loads(T5.read_text(encoding="utf-8"))


def _first_rule_chars(rules: CharsmapRules) -> str:
    # rule_chars by its definition: every code point asked alone
    rule = rules.first_rule
    return "".join(c for c in map(chr, range(0x110000))
                   if not "\ud800" <= c <= "\udfff" and rule(c.encode("utf-8")) is not None)


# rules ending inside a character: after a lead byte (every character it
# starts), after two of three bytes, after a surrogate's and a beyond-U+10FFFF
# prefix (no character has those), beside whole characters of 1-4 bytes
_PARTIAL_RULES = {b"\xc3": "x", b"\xe3\x81": "y", b"\xf0\x9f": "z", b"\xed\xa0": "s",
                  b"\xf4\x90": "t", "A": "a", "\u00e9": "e", "\u3000": " ", "\U0001f600": ":)"}


@pytest.mark.parametrize("rules", [CHARSMAP_RULES, _PARTIAL_RULES], ids=["whole", "partial"])
def test_rule_chars_are_every_character_with_a_rule_alone(rules):
    charsmap = CharsmapRules(build_charsmap(rules))
    assert charsmap.rule_chars() == _first_rule_chars(charsmap)


def test_rule_chars_of_a_t5_charsmap_are_every_character_with_a_rule_alone():
    blob = base64.b64decode(_t5()["normalizer"]["precompiled_charsmap"])
    charsmap = CharsmapRules(blob)
    assert charsmap.rule_chars() == _first_rule_chars(charsmap)


@pytest.mark.parametrize("rules", [CHARSMAP_RULES, _PARTIAL_RULES], ids=["whole", "partial"])
def test_char_rules_are_first_rule_of_each_rule_char(rules):
    charsmap = CharsmapRules(build_charsmap(rules))
    assert charsmap.char_rules() == {c: charsmap.first_rule(c.encode("utf-8"))
                                     for c in charsmap.rule_chars()}


@pytest.mark.parametrize("bad", [b"\x80", b"\xc0\x80", b"\xc3(", b"\xe3\x81", b"\xed\xa0\x80",
                                 b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
                                 b"ok\xff"])
def test_a_replacement_that_is_no_utf8_is_refused_by_both_lookups(bad):
    # the compiled walk's rule of a character (char_rules) decodes the
    # replacement itself: it refuses what first_rule's decoder refuses
    blob = build_charsmap({"A": "x" * len(bad), "\U0001f600": "\u00e9\U0001f601"})
    at = blob.index(b"x" * len(bad) + b"\0")
    charsmap = CharsmapRules(blob[:at] + bad + blob[at + len(bad):])
    with pytest.raises(UnicodeDecodeError):
        charsmap.first_rule(b"A")
    with pytest.raises(UnicodeDecodeError):
        charsmap.char_rules()


def test_a_rule_on_a_lead_byte_covers_every_character_it_starts():
    found = CharsmapRules(build_charsmap({b"\xe3\x81": "y"})).rule_chars()
    assert found == "".join(map(chr, range(0x3040, 0x3080)))


@pytest.mark.parametrize("specs", [("M",), ("Cc", "Cf", "Zl", "Zp", "Cs"), ("Lu", "White_Space")])
def test_code_points_are_the_code_point_ranges_of_their_specs_together(specs):
    expected = sorted({cp for spec in specs for lo, hi in code_point_ranges(spec)
                       for cp in range(lo, hi + 1)})
    assert code_points(*specs) == "".join(map(chr, expected))


@given(specs=st.lists(st.sampled_from(["M", "Cc", "Cf", "Zl", "Zs", "Lu", "White_Space"]),
                      min_size=1, max_size=3),
       leave_out=st.text(st.sampled_from("\x00\t a\u00a0\u0301\u2028\u2029\U000e0001"
                                         "\U0001d165\u0600\uffff"), max_size=6))
def test_code_points_leave_out_the_characters_asked(specs, leave_out):
    whole = code_points(*specs)
    left = code_points(*specs, leave_out=leave_out)
    want = "".join(c for c in whole if c not in leave_out)
    # and as small a str as its characters let it be (one made wider than
    # they need would compare unequal to the same characters)
    assert left == want and sys.getsizeof(left) == sys.getsizeof(want)


def test_code_points_name_an_unknown_spec():
    with pytest.raises(ValueError, match="unknown Unicode property 'Xx'"):
        code_points("M", "Xx")


def test_cluster_classes_are_their_categories_less_and_plus_their_literal_members():
    def category(specs: tuple) -> set:
        return {chr(cp) for spec in specs for lo, hi in code_point_ranges(spec)
                for cp in range(lo, hi + 1)}
    members = precompiled._members
    control = category(precompiled._CONTROL_CATEGORIES) - members(precompiled._NOT_CONTROL)
    extend = ((category(precompiled._EXTEND_CATEGORIES) - members(precompiled._NOT_SPACING))
              | members(precompiled._EXTENDERS))
    prepend = members(precompiled._PREPEND[1:-1])
    assert precompiled.cluster_classes() == tuple("".join(sorted(chars))
                                                  for chars in (prepend, control, extend))


def test_precompiled_makes_its_plain_runs_at_its_first_normalize_str(monkeypatch):
    made = []
    real = precompiled._plain_runs
    monkeypatch.setattr(precompiled, "_plain_runs", lambda chars: made.append(chars) or real(chars))
    stage = precompiled.Precompiled(build_charsmap(CHARSMAP_RULES))
    assert made == []
    assert stage.normalize_str("Ａb…") == "Ab..."
    assert stage.normalize_str("ｌ") == "l"
    assert len(made) == 1


_BASE64ISH = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=!\u00e9 ",
                     max_size=14)


@given(st.one_of(st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()), _BASE64ISH))
def test_a_charsmap_is_decoded_as_b64decode_decodes_it_and_refused_where_it_refuses(text):
    try:
        expected = base64.b64decode(text, validate=True)
    except ValueError:
        expected = None
    try:
        found = charsmap_from_base64(text)
    except ValueError:
        found = None
    # the one text b64decode takes that no encoder writes: "=" past a whole group
    assume(not (expected is not None and found is None and text.endswith("=")
                and len(text.rstrip("=")) % 4 == 0))
    assert found == expected


def test_a_unigram_model_from_pieces_is_the_model_of_its_pairs():
    pairs = [("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -2.5), ("a", -3.0)]
    ours = Unigram.from_pieces([p for p, _ in pairs], [s for _, s in pairs], unk_id=0)
    theirs = Unigram(pairs, unk_id=0)
    assert ours.vocab == theirs.vocab == pairs
    assert ours.get_vocab() == theirs.get_vocab() == {"<unk>": 0, "a": 4, "b": 2, "ab": 3}
    assert ours.token_to_id("a") == 4 and ours.id_to_token(4) == "a"
    assert ours.get_vocab_size() == 5 and ours.id_to_token(5) is None
    assert ours.tokenize("abxab") == theirs.tokenize("abxab")


def test_a_unigram_tokenizer_json_model_keeps_its_entries_by_id():
    spec = _t5()["model"]
    model = unigram_from_json(spec, "$.model", ValueError)
    # the scores as tokenizers reads them (serde_f64), not as json does
    assert model.vocab == [(piece, serde_f64(score)) for piece, score in spec["vocab"]]
    assert model.get_vocab_size() == len(spec["vocab"])


def test_a_unigram_model_is_built_once_by_its_first_use_whichever_thread_comes_first(monkeypatch):
    # the build imports the compiled class when it runs
    from fasttok.models import _unigram

    spec = _t5()["model"]
    builds = []

    def counted(*args, **kwargs):
        builds.append(1)
        time.sleep(0.01)  # a slow build: every thread arrives while it runs
        return TokenizersUnigram(*args, **kwargs)

    monkeypatch.setattr(_unigram, "TokenizersUnigram", counted)
    model = unigram_from_json(spec, "$.model", ValueError)
    assert model.get_vocab_size() == len(spec["vocab"]) and not builds
    text = "\u2581The\u2581quick\u2581brown\u2581fox\u2581jumps\u2581over\u2581\u00e9t\u00e9"
    start = threading.Barrier(8)

    def first_use(_: int) -> list:
        start.wait()
        return model.tokenize_ids(text)

    with ThreadPoolExecutor(8) as pool:
        found = list(pool.map(first_use, range(8)))
    assert len(builds) == 1
    pieces = [piece for piece, _ in spec["vocab"]]
    eager = TokenizersUnigram(pieces, [serde_f64(score) for _, score in spec["vocab"]],
                              spec["unk_id"], spec.get("byte_fallback", False))
    assert found == [eager.ids(text)] * 8


def test_a_bpe_vocabulary_listed_out_of_id_order_is_the_model_listed_in_order():
    # ids 0..n-1 in the file's order take the build's short way; others are sorted first
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "bc": 5}
    merges = [("a", "b"), ("b", "c"), ("ab", "c")]
    shuffled = dict(sorted(vocab.items(), key=lambda item: -item[1]))
    ours, theirs = BPE(vocab, merges), BPE(shuffled, merges)
    for text in ("abc", "bca", "cab", "abcabc", "cc"):
        assert ours.tokenize(text) == theirs.tokenize(text)
    assert [ours.id_to_token(i) for i in range(7)] == [theirs.id_to_token(i) for i in range(7)]


def test_a_bpe_id_under_two_strings_is_named_by_the_first():
    bpe = BPE({"a": 0, "b": 1, "x": 1}, [])
    assert bpe.id_to_token(1) == "b"
    assert bpe.tokenize("ax") == [(0, "a", (0, 1)), (1, "b", (1, 2))]


@pytest.mark.parametrize("name", ["unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json",
                                  "all-MiniLM-L6-v2/tokenizer.json"])
def test_a_loads_record_lists_no_tokens_and_the_encodings_vocabulary_all_of_them(name):
    # the stages never read the tokens (one bytes object an entry and their
    # tuple were a sixth of a BERT file's load): the Encoding's record lays
    # them out when first asked for, the file's record as the loader reads it
    path = DATA / "vocab" / "hf" / name
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    parts = read_tokenizer_json(str(path), cache=False)
    enc = fasttok.load(path)
    assert parts.record.tokens == ()
    whole = tokenizer_json_record(path.read_bytes(), str(path), name=parts.record.name)
    assert (enc.vocabulary.tokens, enc.vocabulary.ids) == (whole.tokens, whole.ids)
    assert enc.n_vocab == whole.n_vocab == parts.max_token_value + 1


def _t5_file(tmp_path, **stages) -> str:
    # the T5 conversion with some of its stages replaced
    doc = _t5()
    doc.update(stages)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_a_load_and_its_first_encode_build_no_decoder_nor_post_processor():
    # both are read and checked at load, and built by the first call that
    # asks: a decode, add_special_tokens
    if not T5.is_file():
        pytest.skip(missing_data_reason(T5))
    enc = fasttok.load(T5)
    ids = enc.encode("Hello world")
    pipeline = enc._core.pipeline
    assert not {"decoder", "post_processor"} & set(vars(pipeline))
    assert enc.decode(ids) == "Hello world"
    assert "decoder" in vars(pipeline) and "post_processor" not in vars(pipeline)
    end = enc.encode("</s>", allowed_special="all")
    assert enc.encode("Hello world", add_special_tokens=True) == ids + end
    assert type(pipeline.post_processor).__name__ == "TemplateProcessing"


@pytest.mark.parametrize("load", [fasttok.load, fasttok.hf.Tokenizer.from_file])
@pytest.mark.parametrize("stage, spec, where", [
    ("decoder", {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"},
     r"\$\.decoder\.prepend_scheme"),
    ("decoder", {"type": "Sequence", "decoders": [{"type": "Strip", "content": "ab",
                                                   "start": 1, "stop": 0}]},
     r"\$\.decoder\.decoders\[0\]\.content"),
    ("post_processor", {"type": "TemplateProcessing", "single": [
        {"SpecialToken": {"id": "</s>", "type_id": 0}}], "pair": [], "special_tokens": {}},
     r"\$\.post_processor\.single\[0\]\.SpecialToken\.id"),
    ("post_processor", {"type": "BertProcessing", "sep": ["[SEP]"], "cls": ["[CLS]", 1]},
     r"\$\.post_processor\.sep"),
])
def test_a_faulty_decoder_or_post_processor_is_refused_at_load_naming_the_file_and_field(
        tmp_path, load, stage, spec, where):
    path = _t5_file(tmp_path, **{stage: spec})
    with pytest.raises(fasttok.VocabularyFileError, match=r"tokenizer\.json.*" + where):
        load(path)
