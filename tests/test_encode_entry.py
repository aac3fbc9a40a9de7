"""``Encoding.encode``'s compiled entry (``fasttok._encode_entry``): its two
common calls -- everything allowed, and the defaults -- go to the model's
compiled entry bound once (``Model.encoder``); every other call takes the
general path. Both must give the same ids and raise the same errors.

The general path is reached through the public API by spelling a call the
entry does not take: ``allowed_special`` as the set of every special
instead of ``"all"``, and as a new empty set instead of the default.
"""

from __future__ import annotations

import functools
import gc
import pickle
import weakref

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

HF = DATA / "vocab" / "hf"
UNIGRAM = HF / "unigram"
# one file of each configuration the entry binds differently: a tiktoken
# core, the byte-level core (with and without a normalizer), each compiled
# walk of tokenizer.json (Unigram with and without a lead normalizer), a
# SentencePiece model
FILES = {
    "tiktoken": DATA / "vocab" / "tiktoken" / "r50k_base.tiktoken",
    "llama3": HF / "llama3" / "tokenizer.json",
    "qwen3": HF / "qwen3" / "tokenizer.json",
    "llama2": HF / "llama2" / "tokenizer.json",
    "minilm": HF / "all-MiniLM-L6-v2" / "tokenizer.json",
    "u5000-spm": UNIGRAM / "botchan_unigram_5000.v5.24.0.from_spm_proto.json",
    "u5000-albert": UNIGRAM / "botchan_unigram_5000.v4.57.6.AlbertTokenizer.json",
    "spm": DATA / "vocab" / "sentencepiece" / "botchan_en_unigram_1000.model",
}

_LOADED: dict = {}


def _enc(kind: str):
    if kind not in _LOADED:
        _LOADED[kind] = fasttok.load(str(FILES[kind]))
    return _LOADED[kind]


def _texts(enc) -> st.SearchStrategy:
    # ordinary text with the vocabulary's specials (a few) spliced in
    specials = sorted(enc.special_tokens_set)[:8]
    parts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
    if specials:
        parts = st.one_of(parts, st.sampled_from(specials))
    return st.lists(parts, max_size=6).map("".join)


def _outcome(call):
    try:
        return call()
    except fasttok.FasttokError as exc:
        return ("raised", str(exc))


@pytest.mark.parametrize("kind", sorted(FILES))
def test_all_allowed_through_the_entry_is_the_general_path(kind):
    enc = _enc(kind)
    every = set(enc.special_tokens_set)

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_texts(enc))
    def check(text):
        assert enc.encode(text, allowed_special="all") == \
            enc.encode(text, allowed_special=every)

    check()


@pytest.mark.parametrize("kind", sorted(FILES))
def test_the_default_call_through_the_entry_is_the_general_path(kind):
    enc = _enc(kind)

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_texts(enc))
    def check(text):
        assert _outcome(lambda: enc.encode(text)) == \
            _outcome(lambda: enc.encode(text, allowed_special=set()))

    check()


# u5000-spm and spm have no specials
@pytest.mark.parametrize("kind", ["tiktoken", "llama3", "qwen3", "llama2", "minilm", "u5000-albert"])
def test_the_default_call_raises_naming_the_disallowed_special(kind):
    enc = _enc(kind)
    special = sorted(enc.special_tokens_set)[0]
    with pytest.raises(fasttok.FasttokError, match="disallowed special token") as raised:
        enc.encode(f"a {special} b")
    assert repr(special) in str(raised.value)


@pytest.mark.parametrize("kind", ["llama3", "u5000-spm", "minilm"])
def test_a_text_the_walk_declines_takes_the_general_path(kind):
    # a lone surrogate: every walk declines it, the stages repair it
    enc = _enc(kind)
    text = "a\ud800b c"
    every = set(enc.special_tokens_set)
    assert enc.encode(text, allowed_special="all") == enc.encode(text, allowed_special=every)
    assert enc.encode(text) == enc.encode(text, allowed_special=set())


def test_the_entry_of_a_compiled_walk_is_the_walk_itself():
    # no Python method between encode and the compiled walk of a Unigram file
    enc = _enc("u5000-spm")
    enc.encode("x", allowed_special="all")
    assert enc._bind_entries()[0] == enc._core.pipeline.walk.ids


def test_the_other_arguments_still_take_the_general_path():
    enc = _enc("minilm")
    text = "Hello [SEP] world"
    plain = enc.encode(text, allowed_special="all")
    assert enc.encode(text, allowed_special="all", add_special_tokens=True) == \
        enc._core.post_processor(plain) != plain
    assert enc.encode(text, disallowed_special=()) == enc.encode_ordinary(text) != plain


def test_sampling_still_takes_the_general_path():
    enc = _enc("u5000-spm")
    text = "Hello world, said the cat"
    plain = enc.encode(text, allowed_special="all")
    drawn = [enc.encode(text, allowed_special="all", sample=True, seed=s)
             for s in range(20)]
    assert any(ids != plain for ids in drawn)


def test_the_entry_of_a_normalizing_byte_level_file_normalizes_non_ascii_text():
    # Qwen 3's NFC: an ASCII line goes straight to the core, the rest is
    # normalized first
    enc = _enc("qwen3")
    assert enc.encode("Cafe\u0301 e\u0301", allowed_special="all") == \
        enc.encode("Caf\u00e9 \u00e9", allowed_special="all")
    assert enc.encode("Cafe\u0301") == enc.encode("Caf\u00e9")


def test_a_normalizing_file_asks_its_stages_quick_check_in_the_entry():
    # Qwen 3: a line in NFC (Chinese, accented Latin) goes to the core with
    # no Python frame; the quick check is the stage's own
    from fasttok.models._model_base import normal_first
    enc = _enc("qwen3")
    model = enc._core._core  # the NormalizedBPE under the tokenizer.json model
    call, (core_call, _, general, quick, ranges) = enc._bind_entries()[:2]
    assert call is normal_first and quick == model.stage.is_normalized
    assert ranges == model.stage.stable_ranges
    assert core_call == model.core.encode and general == model.encode
    assert enc.encode("你好, caf\u00e9", allowed_special="all") == \
        core_call("你好, caf\u00e9", enc._bind_entries()[1][1])


@pytest.mark.parametrize("kind", ["minilm", "u5000-spm", "llama2"])
@pytest.mark.parametrize("text", [b"ab", None, 5])
def test_a_text_that_is_not_a_str_is_refused_as_the_general_path_refuses_it(kind, text):
    enc = _enc(kind)
    every = set(enc.special_tokens_set)
    for entry, general in ((dict(allowed_special="all"), dict(allowed_special=every)),
                           ({}, dict(allowed_special=set()))):
        with pytest.raises(TypeError) as through_entry:
            enc.encode(text, **entry)
        with pytest.raises(TypeError) as through_general:
            enc.encode(text, **general)
        assert str(through_entry.value) == str(through_general.value)


# how encode is called: the entry takes a vector of arguments (a direct
# call), a keyword dict (a partial, **options: CPython unpacks it) and a
# tuple with a dict (tp_call); every spelling must reach the same ids

_CALLS = {
    "direct": lambda enc, text, kw: enc.encode(text, **kw),
    "partial": lambda enc, text, kw: functools.partial(enc.encode, **kw)(text),
    "tp_call": lambda enc, text, kw: enc.encode.__call__(text, **kw),
    "text by keyword": lambda enc, text, kw: enc.encode(text=text, **kw),
    "class function": lambda enc, text, kw: fasttok.Encoding.encode(enc, text, **kw),
}


@pytest.mark.parametrize("how", sorted(_CALLS))
@pytest.mark.parametrize("options", [{}, {"allowed_special": "all"}, {"disallowed_special": ()},
                                     {"allowed_special": "all", "disallowed_special": "all",
                                      "add_special_tokens": False, "sample": False, "alpha": 0.1,
                                      "nbest_size": -1, "seed": None}],
                         ids=["default", "all", "none disallowed", "every keyword"])
def test_every_way_of_calling_encode_gives_the_general_paths_ids(how, options):
    enc = _enc("llama3")
    text = "Hello <|begin_of_text|> world"
    general = dict(options)
    if general.get("allowed_special") == "all":
        general["allowed_special"] = set(enc.special_tokens_set)
    expected = _outcome(lambda: enc._encode_general(
        text, general.get("allowed_special", set()), general.get("disallowed_special", "all"),
        False, False, 0.1, -1, None))
    assert _outcome(lambda: _CALLS[how](enc, text, options)) == expected


@pytest.mark.parametrize("how", ["direct", "partial", "tp_call"])
def test_a_wrong_argument_is_refused_in_encodes_words(how):
    enc = _enc("tiktoken")
    with pytest.raises(TypeError, match=r"^encode\(\) got an unexpected keyword argument 'bogus'"):
        _CALLS[how](enc, "a", {"bogus": 1})
    with pytest.raises(TypeError, match=r"^encode\(\) takes exactly 2 positional arguments"):
        enc.encode("a", "b")


def test_an_encoding_unpickled_by_name_encodes_through_its_own_entry():
    enc = fasttok.get_encoding("r50k_base")
    copy = pickle.loads(pickle.dumps(enc))
    assert copy.encode.encoding is copy
    assert copy.encode("hello world") == enc.encode("hello world")


def test_enc_encode_pickles_as_a_bound_method_does():
    # what a process pool's map(enc.encode, texts) and a partial of it send
    enc = fasttok.get_encoding("r50k_base")
    again = pickle.loads(pickle.dumps(enc.encode))
    assert type(again).__name__ == "EncodeEntry"
    assert again("hello world") == enc.encode("hello world")
    every = pickle.loads(pickle.dumps(functools.partial(enc.encode, allowed_special="all")))
    assert every("a<|endoftext|>") == enc.encode("a<|endoftext|>", allowed_special="all")


def test_enc_encode_ordinary_pickles_as_a_bound_method_does():
    # the model's bound method behind it does not pickle; the encoding does
    enc = fasttok.get_encoding("r50k_base")
    again = pickle.loads(pickle.dumps(enc.encode_ordinary))
    assert again("a <|endoftext|>") == enc.encode_ordinary("a <|endoftext|>")
    copy = pickle.loads(pickle.dumps(enc))  # by name: its own, not the cached encoding's
    assert pickle.loads(pickle.dumps(copy.encode_ordinary))("hi") == enc.encode_ordinary("hi")


def test_a_subclass_defining_encode_keeps_its_own():
    class Shouting(fasttok.Encoding):
        def encode(self, text, **options):
            return super().encode(text.upper(), **options)

    enc = Shouting.from_vocabulary(fasttok.get_encoding("r50k_base").vocabulary)
    assert enc.encode("hi") == fasttok.get_encoding("r50k_base").encode("HI")


def test_encode_ordinary_is_the_models_own():
    enc = fasttok.get_encoding("r50k_base")
    assert enc.encode_ordinary.call == enc._core.encode_ordinary
    assert enc.encode_ordinary("a <|endoftext|>") == enc.encode("a <|endoftext|>",
                                                                disallowed_special=())


def test_a_subclass_defining_encode_ordinary_keeps_its_own():
    class Shouting(fasttok.Encoding):
        def encode_ordinary(self, text):
            return super().encode_ordinary(text.upper())

    enc = Shouting.from_vocabulary(fasttok.get_encoding("r50k_base").vocabulary)
    assert enc.encode_ordinary("hi") == fasttok.get_encoding("r50k_base").encode_ordinary("HI")


def test_encode_ordinary_of_a_str_goes_to_the_models_compiled_call():
    # the byte-level core gives BoundEntry its C call (text_call), taken
    # with no Python call between: the method's ids
    enc = fasttok.get_encoding("r50k_base")
    assert enc.encode_ordinary.compiled
    for text in ("", "hi", "a <|endoftext|>", "h\xe9llo w\xf6rld \u65e5\u672c \U0001f600", "\ud800x",
                 "x " * 3000):
        assert enc.encode_ordinary(text) == enc._core.encode_ordinary(text)


def test_encode_ordinary_by_keyword_or_of_a_non_str_takes_the_method():
    enc = fasttok.get_encoding("r50k_base")
    assert enc.encode_ordinary(text="hi") == enc.encode_ordinary("hi")
    with pytest.raises(TypeError, match="expected str, got bytes"):
        enc.encode_ordinary(b"hi")


def test_a_model_redefining_encode_ordinary_gives_no_compiled_call():
    from fasttok import _encode_entry
    from fasttok.formats._byte_bpe import CoreBPE
    from fasttok.shared._tables import TokenTables

    class Zeros(CoreBPE):
        def encode_ordinary(self, text):
            return [0] * len(text)

    core = Zeros(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")
    assert core.text_call("encode_ordinary") is None
    entry = _encode_entry.BoundEntry(core.encode_ordinary, fasttok.get_encoding("r50k_base"),
                                     "encode_ordinary")
    assert not entry.compiled and entry("hi") == [0, 0]


def test_an_encoding_that_encoded_is_freed_without_the_cycle_collector():
    # enc.encode is made at each read, as a bound method is: an entry kept
    # on the instance would hold the encoding in a cycle
    enc = fasttok.Encoding.from_vocabulary(fasttok.get_encoding("r50k_base").vocabulary)
    encode = functools.partial(enc.encode, allowed_special="all")
    assert encode("hi") == enc.encode("hi") and enc.encode_ordinary("hi") == enc.encode("hi")
    alive = weakref.ref(enc)
    gc.disable()
    try:
        del enc
        assert alive() is not None  # the partial holds it, as a bound method would
        del encode
        assert alive() is None
    finally:
        gc.enable()


def test_encode_read_on_the_class_is_the_documented_function():
    from fasttok import _encode_entry
    assert fasttok.Encoding.encode is _encode_entry.encode
    assert "special-token rules" in fasttok.Encoding.encode.__doc__
