"""The model base class: six required methods and two attributes, the rest
derived once (``fasttok.models.interface``).

A model derived from ``ModelBase`` that leaves a required method to the
base is refused when an ``Encoding`` is made, naming what it lacks, and the
base's stand-in names the class when called; every default follows from the
required methods; the refusals keep each model's words. Every format's model
derives from the base (the conformance test holds each one to the whole
interface through ``Encoding``).
"""

from __future__ import annotations

import random
from array import array

import pytest

import fasttok
from fasttok.formats._byte_bpe import CoreBPE
from fasttok.formats._sentencepiece import SentencePieceCore
from fasttok.formats.gguf import GGUFModel
from fasttok.formats.hf import HFModel
from fasttok.formats.hf_byte_level import NormalizedBPE
from fasttok.models.interface import (MEMBERS, REQUIRED_ATTRIBUTES, REQUIRED_METHODS, ModelBase,
                                      missing_members)
from fasttok.shared._tables import TokenTables
from fasttok.vocab import Vocabulary


class Letters(ModelBase):
    """a..z as ids 1..26: the required members only."""

    special_order = ()
    post_processor = list

    def encode(self, text, allowed):
        return [ord(c) - 96 for c in text]

    def token_bytes(self, token):
        if not 1 <= token <= 26:
            raise KeyError(token)
        return bytes([token + 96])

    def find_special(self, text, mask):
        return -1

    def find_token(self, data):
        return data[0] - 96 if len(data) == 1 and 97 <= data[0] <= 122 else -1

    def encode_bytes_piece(self, piece):
        return self.encode(piece.decode("ascii"), None)

    def token_byte_values(self):
        return [bytes([b]) for b in range(97, 123)]


def _without(name: str) -> type:
    return type(f"No_{name}", (Letters,), {name: getattr(ModelBase, name)})


def test_the_required_and_the_defaults_make_the_whole_interface():
    defaults = [m for m in MEMBERS if m not in REQUIRED_METHODS + REQUIRED_ATTRIBUTES]
    assert all(hasattr(ModelBase, m) for m in defaults)
    assert len(REQUIRED_METHODS) + len(REQUIRED_ATTRIBUTES) + len(defaults) == len(MEMBERS)


@pytest.mark.parametrize("cls", [CoreBPE, SentencePieceCore, GGUFModel, HFModel, NormalizedBPE])
def test_every_format_model_derives_from_the_base(cls):
    assert issubclass(cls, ModelBase)


def test_a_model_with_the_required_members_lacks_nothing():
    assert missing_members(Letters()) == []


@pytest.mark.parametrize("name", REQUIRED_METHODS)
def test_a_required_method_left_to_the_base_is_missing(name):
    assert missing_members(_without(name)()) == [name]


def test_a_required_method_set_on_the_instance_counts():
    model = _without("find_token")()
    model.find_token = lambda data: -1
    assert missing_members(model) == []


def test_a_required_attribute_not_set_is_missing():
    members = {k: v for k, v in vars(Letters).items()
               if k != "special_order" and not k.startswith("__")}
    assert missing_members(type("NoOrder", (ModelBase,), members)()) == ["special_order"]


@pytest.mark.parametrize("name", ["encode", "token_bytes"])
def test_the_base_stand_in_raises_naming_the_class_and_the_method(name):
    model = _without(name)()
    with pytest.raises(NotImplementedError, match=f"No_{name} does not define {name}"):
        model.decode_bytes([1]) if name == "token_bytes" else model.count("ab")


def test_an_encoding_refuses_a_model_lacking_a_required_method_naming_it():
    v = Vocabulary(name="letters", model="letters", tokens=(b"a",))
    with pytest.raises(fasttok.FasttokError, match=r"No_find_token\).*lacks find_token"):
        fasttok.Encoding.from_vocabulary(v, model=_without("find_token")())


def test_encoding_defaults_follow_encode():
    m = Letters()
    assert m.encode_ordinary("ab") == [1, 2]
    assert m.count("abc", None) == 3
    assert m.encode_many(["ab", "c"], None) == [[1, 2], [3]]
    assert m.count_many(["ab", "", "c"], None) == [2, 0, 1]
    assert m.encode_many_flat(["ab", "", "c"], None) == (array("I", [1, 2, 3]),
                                                        array("Q", [0, 2, 2, 3]))
    assert m.encode_to_array("cab", None) == array("I", [3, 1, 2])


def test_encode_many_flat_takes_each_texts_ids_as_a_list_or_any_other_sequence():
    class Mixed(Letters):
        def encode_many(self, texts, allowed=None):
            return [[1, 2], array("I", [3]), (4, 5), [], range(6, 8)]

    assert Mixed().encode_many_flat(["x"] * 5, None) == (array("I", [1, 2, 3, 4, 5, 6, 7]),
                                                       array("Q", [0, 2, 3, 5, 5, 7]))


@pytest.mark.parametrize("how", ["encode_many", "encode_many_flat", "count_many"])
def test_the_default_batch_job_gives_the_batch_call(how):
    m = Letters()
    texts = ["abc", "z", ""] * 50
    job = m.batch_job(texts, None, how, 2)
    job.run()
    job.work()
    assert job.finish() == getattr(m, how)(texts, None)


def test_decoding_defaults_concatenate_token_bytes():
    m = Letters()
    assert m.decode_bytes([3, 1, 2]) == b"cab"
    assert m.decode_with_offsets(iter([3, 1, 2])) == (b"cab", [0, 1, 2])
    stream = m.stream_decoder()
    assert [stream.push(t) for t in (3, 1)] + [stream.flush()] == [b"c", b"a", b""]
    with pytest.raises(KeyError):
        m.decode_with_offsets([1, 27])


def test_a_compiled_model_takes_the_default_offsets_of_its_own_tokens():
    core = CoreBPE(TokenTables([b"a", b"bc"]), {b"<e>": 2}, scanner="gpt2")
    assert core.decode_with_offsets([1, 2, 0]) == (b"bc<e>a", [0, 2, 5])


def test_refusals_name_the_class_when_the_model_names_no_kind():
    with pytest.raises(fasttok.FasttokError, match="^a Letters vocabulary has one segmentation"):
        Letters().sample("ab", None, 0.5, -1, random.Random(0))
    with pytest.raises(fasttok.FasttokError, match="^pieces are given .* for Letters use"):
        Letters().encode_as_pieces("ab")


def test_refusals_start_with_the_label_and_name_the_kind():
    m = Letters()
    m.label, m.kind = "vocab-x", "wordpiece"
    with pytest.raises(fasttok.FasttokError) as err:
        m.sample("ab", None, 0.5, -1, random.Random(0))
    assert str(err.value) == ("vocab-x: a wordpiece vocabulary has one segmentation per word, so "
                              "it cannot sample; sample=True is for BPE (dropout) and Unigram "
                              "models")


def test_byte_level_bpe_refuses_pieces_in_its_own_words():
    core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")
    with pytest.raises(fasttok.FasttokError) as err:
        core.encode_as_pieces("ab")
    assert str(err.value) == ("pieces are given for SentencePiece models only; for byte-level BPE "
                              "use decode_tokens_bytes(encode(text))")
