"""llama.cpp's regex lists run in Python (``RegexListSplitter``): the pieces, and work per distinct piece."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fasttok.pre_tokenizers import gguf
from fasttok.pre_tokenizers.gguf import DEEPSEEK_CODER, DEEPSEEK_LLM, RegexListSplitter

TEXT = st.text(alphabet=st.sampled_from(list("ab Z9\n\r\t.,!'日本😀é\u0301\u3000１")), max_size=60)


def every_pattern_on_every_piece(patterns: tuple, text: str) -> list:
    """The splitting as llama.cpp describes it: each pattern over all pieces of the last."""
    pieces = [(0, len(text))] if text else []
    for pattern, space in (gguf.translate_pattern(p) for p in patterns):
        pieces = gguf._split_pieces(pattern, gguf._source(text, space), pieces)
    return [text[a:b] for a, b in pieces]


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from((DEEPSEEK_LLM, DEEPSEEK_CODER)))
def test_pieces_are_each_pattern_over_the_last_patterns_pieces(text, patterns):
    splitter = RegexListSplitter(patterns)
    expected = every_pattern_on_every_piece(patterns, text)
    assert splitter(text) == expected
    assert splitter(text) == expected


def test_later_patterns_run_once_per_distinct_short_piece(monkeypatch):
    splitter = RegexListSplitter(DEEPSEEK_LLM)
    calls = []
    split_later = splitter._split_later
    monkeypatch.setattr(splitter, "_split_later", lambda piece: calls.append(piece) or split_later(piece))
    assert splitter("\n" * 10_000 + "hello\nhello\n") == ["\n"] * 10_000 + ["hello", "\n"] * 2
    assert sorted(calls) == ["\n", "hello"]


def test_remembered_pieces_are_bounded():
    splitter = RegexListSplitter(DEEPSEEK_LLM)
    splitter("\n".join(str(i) for i in range(RegexListSplitter._REMEMBERED_PIECES + 10)))
    assert len(splitter._later) <= RegexListSplitter._REMEMBERED_PIECES


def test_long_pieces_are_not_remembered():
    splitter = RegexListSplitter(DEEPSEEK_LLM)
    long_word = "x" * (RegexListSplitter._REMEMBERED_LENGTH + 1)
    assert splitter(long_word) == [long_word]
    assert long_word not in splitter._later
