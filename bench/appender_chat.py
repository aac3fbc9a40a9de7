"""A 20-turn chat appended turn by turn: ``Encoding.appender`` against
re-encoding the growing prompt at every turn.

    python bench/appender_chat.py [VOCABS] [TOKENS] [ROUNDS]
    python bench/appender_chat.py cl100k_base,llama3 32000 5

The turns are consecutive lines of the corpus's en.txt, cut into 20
turns of about TOKENS / 20 tokens each (default 32,000 in all, counted with
each vocabulary), each after a ``"\\n\\nUser: "`` or ``"\\n\\nAssistant: "``
line. At each turn the appender pushes the turn (the ids it returns are
appended to the caller's list) and gives the pending text's ids
(``pending_ids()``): the prompt is the two; the other side encodes the
whole prompt so far.
Both give the same ids at every turn (checked). Printed per vocabulary: CPU
time of the 20 turns each way (median of ROUNDS, default 5, alternating),
their ratio (target: at least 10 at 32k tokens), the time of encoding each
turn once by itself and the bound it sets on the ratio (an appender encodes
every character at least once; re-encoding text seen before is cheaper
than new text where a vocabulary's caches hold its pieces), and the
characters the appender encoded against the text's length.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import fasttok

DATA = Path(os.environ.get("FASTTOK_DATA", Path(__file__).resolve().parent.parent / "data"))
TURNS = 20
VOCABS = {
    "cl100k_base": lambda: fasttok.get_encoding("cl100k_base"),
    "o200k_base": lambda: fasttok.get_encoding("o200k_base"),
    "llama3": lambda: fasttok.load(str(DATA / "vocab" / "hf" / "llama3" / "tokenizer.json")),
    "llama2": lambda: fasttok.load(str(DATA / "vocab" / "hf" / "llama2" / "tokenizer.json")),
    "all-MiniLM-L6-v2": lambda: fasttok.load(
        str(DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json")),
    "llama-spm.gguf": lambda: fasttok.load(
        str(DATA / "vocab" / "gguf" / "ggml-vocab-llama-spm.gguf")),
    "botchan_unigram_5000.model": lambda: fasttok.load(
        str(DATA / "vocab" / "sentencepiece" / "botchan_unigram_5000.model")),
}


def chat(enc, tokens: int) -> list:
    """TURNS turns of the corpus's lines, about ``tokens`` ids in all."""
    lines = (DATA / "corpus" / "en.txt").read_text(encoding="utf-8").split("\n")
    turns, turn, size = [], [], 0
    for line in lines:
        turn.append(line)
        size += enc.count(line, disallowed_special=()) + 1
        if size >= tokens // TURNS:
            role = "User" if len(turns) % 2 == 0 else "Assistant"
            turns.append(f"\n\n{role}: " + "\n".join(turn))
            turn, size = [], 0
            if len(turns) == TURNS:
                break
    return turns


def appended(enc, turns: list) -> tuple:
    a = enc.appender(disallowed_special=())
    start = time.process_time()
    final, tails = [], []
    for turn in turns:
        final += a.push(turn)
        tails.append((len(final), a.pending_ids()))
    took = time.process_time() - start
    # the prompt at each turn: the final ids then (a server keeps them in its
    # own buffer, appending) and the pending text's
    return took, [final[:n] + tail for n, tail in tails], a.encoded_chars


def each_once(enc, turns: list) -> float:
    start = time.process_time()
    for turn in turns:
        enc.encode(turn, disallowed_special=())
    return time.process_time() - start


def reencoded(enc, turns: list) -> tuple:
    start = time.process_time()
    prompts, text = [], ""
    for turn in turns:
        text += turn
        prompts.append(enc.encode(text, disallowed_special=()))
    return time.process_time() - start, prompts


def main(argv: list) -> None:
    names = argv[0].split(",") if argv else ["cl100k_base", "llama3", "llama-spm.gguf",
                                              "all-MiniLM-L6-v2"]
    tokens = int(argv[1]) if len(argv) > 1 else 32_000
    rounds = int(argv[2]) if len(argv) > 2 else 5
    print(f"{'vocabulary':28} {'ids':>7} {'appender ms':>12} {'re-encode ms':>13} "
          f"{'ratio':>6} {'turns once ms':>14} {'bound':>6} {'chars encoded / text':>21}")
    for name in names:
        enc = VOCABS[name]()
        turns = chat(enc, tokens)
        ours, theirs, once, chars = [], [], [], 0
        for _ in range(rounds):
            once.append(each_once(enc, turns))
            took, prompts, chars = appended(enc, turns)
            ours.append(took)
            took, expected = reencoded(enc, turns)
            theirs.append(took)
            assert prompts == expected, f"{name}: the appender's prompt ids differ"
        a, b, c = statistics.median(ours), statistics.median(theirs), statistics.median(once)
        total = sum(map(len, turns))
        print(f"{name:28} {len(expected[-1]):>7} {a * 1e3:>12.2f} {b * 1e3:>13.2f} "
              f"{b / a:>6.1f} {c * 1e3:>14.2f} {b / c:>6.1f} {chars / total:>21.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
