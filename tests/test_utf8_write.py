"""The UTF-8 the compiled encoders read from a str (``utf8_write`` in
fasttok/shared/_utf8.pxd), seen through a byte-level core whose tokens are
the 256 bytes, so that its ids are the bytes it read."""

import random

from fasttok.formats._byte_bpe import CoreBPE
from fasttok.shared._tables import TokenTables

BYTES = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")

# code points at the edges of UTF-8's lengths and around the surrogates
EDGES = [0x41, 0x7F, 0x80, 0x7FF, 0x800, 0x4E2D, 0xD7FF, 0xE000, 0xFF0C, 0xFFFF, 0x10000,
         0x1F600]


def utf8_read(text: str) -> bytes:
    return bytes(BYTES.encode_ordinary(text))


def test_texts_of_every_length_of_character_read_as_pythons_utf8():
    rng = random.Random(25)
    for _ in range(3000):
        text = "".join(chr(rng.choice(EDGES)) for _ in range(rng.randint(1, 40)))
        assert utf8_read(text) == text.encode("utf-8"), ascii(text)


def test_a_run_of_three_byte_characters_goes_on_past_four_of_them():
    text = "中文的编码方式" * 3 + "x"
    assert utf8_read(text) == text.encode("utf-8")


def test_a_lone_surrogate_ending_a_three_byte_run_reads_as_the_replacement_character():
    assert utf8_read("中文\ud800中文") == "中文\ufffd中文".encode("utf-8")


def test_a_surrogate_pair_after_a_three_byte_run_reads_as_its_code_point():
    assert utf8_read("中\ud83d\ude00") == "中\U0001f600".encode("utf-8")


def test_a_run_of_two_byte_characters_ends_at_any_other_character_or_the_end():
    for after in ("", "x", "中", "\ud800", "\ud83d\ude00", "\u0800", "\x7f"):
        for run in ("Ж", "Привет", "\u0080\u07ff" * 5):
            text = run + after + run
            repaired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
            assert utf8_read(text) == repaired.encode("utf-8"), ascii(text)
