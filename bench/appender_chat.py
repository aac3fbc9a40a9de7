"""A 20-turn chat appended turn by turn: ``Encoding.appender`` against
re-encoding the growing prompt at every turn.

    python bench/appender_chat.py [VOCABS] [TOKENS] [ROUNDS]
    python bench/appender_chat.py cl100k_base,llama3 32000 5

The turns are consecutive lines of the corpus's en.txt, each after a
``"\\n\\nUser: "`` or ``"\\n\\nAssistant: "`` line, counted in tokens with
each vocabulary. Two chats:

* **equal**: 20 turns of about TOKENS / 20 tokens each (default 32,000 in
  all). Re-encoding encodes 1 + 2 + ... + 20 twentieths of the text, 10.5
  times the text, so no appender can be 10 times faster here;
* **long**: 20 turns of about 300 tokens each appended to a conversation
  that already holds about TOKENS tokens (pushed before the timing; the
  re-encoding side encodes it with each turn): the case of a serving stack
  at 32k tokens of context.

At each turn the appender pushes the turn (the ids it returns are appended
to the caller's list) and gives the pending text's ids (``pending_ids()``):
the prompt is the two; the other side encodes the whole prompt so far.
Both give the same ids at every turn (checked). Printed per vocabulary and
chat: CPU time of the 20 turns each way (median of ROUNDS, default 5,
alternating), their ratio (target: at least 10 at 32k tokens), the time of
encoding each turn once by itself and the bound it sets on the ratio (an
appender encodes every character at least once; re-encoding text seen
before is cheaper than new text where a vocabulary's caches hold its
pieces), and the characters the appender encoded against the turns' length.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import fasttok

DATA = Path(os.environ.get("FASTTOK_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
TURNS = 20
LONG_TURN_TOKENS = 300
VOCABS = {
    "cl100k_base": lambda: fasttok.get_encoding("cl100k_base"),
    "o200k_base": lambda: fasttok.get_encoding("o200k_base"),
    "llama3": lambda: fasttok.load(str(DATA / "vocab" / "hf" / "llama3" / "tokenizer.json")),
    "llama2": lambda: fasttok.load(str(DATA / "vocab" / "hf" / "llama2" / "tokenizer.json")),
    "all-MiniLM-L6-v2": lambda: fasttok.load(
        str(DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json")),
    "llama-spm.gguf": lambda: fasttok.load(
        str(DATA / "vocab" / "gguf" / "ggml-vocab-llama-spm.gguf")),
    "botchan_unigram_5000.T5.json": lambda: fasttok.load(
        str(DATA / "vocab" / "hf" / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json")),
    "kyoto_ja_unigram_8000.XLNet.json": lambda: fasttok.load(
        str(DATA / "vocab" / "hf" / "unigram" / "kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json")),
    "nomic-bert-moe.gguf (t5)": lambda: fasttok.load(
        str(DATA / "vocab" / "gguf" / "ggml-vocab-nomic-bert-moe.gguf")),
    "botchan_unigram_5000.model": lambda: fasttok.load(
        str(DATA / "vocab" / "sentencepiece" / "botchan_unigram_5000.model")),
    "kyoto_ja_unigram_8000.model": lambda: fasttok.load(
        str(DATA / "vocab" / "sentencepiece" / "kyoto_ja_unigram_8000.model")),
    "botchan_bpe_8000_bytefallback.model": lambda: fasttok.load(
        str(DATA / "vocab" / "sentencepiece" / "botchan_bpe_8000_bytefallback.model")),
}


def _turns(enc, lines, size: int, count: int, first: int = 0) -> list:
    # count turns of about size tokens from the line iterator, roles taking turns
    turns, turn, used = [], [], 0
    for line in lines:
        turn.append(line)
        used += enc.count(line, disallowed_special=()) + 1
        if used >= size:
            role = "User" if (first + len(turns)) % 2 == 0 else "Assistant"
            turns.append(f"\n\n{role}: " + "\n".join(turn))
            turn, used = [], 0
            if len(turns) == count:
                break
    return turns


def chat(enc, tokens: int, kind: str) -> tuple:
    """``(history, turns)``: the text already in the conversation ("" for the
    equal chat) and the TURNS turns appended to it (see the module doc)."""
    lines = iter((DATA / "corpus" / "en.txt").read_text(encoding="utf-8").split("\n"))
    if kind == "equal":
        return "", _turns(enc, lines, tokens // TURNS, TURNS)
    history = "".join(_turns(enc, lines, tokens // TURNS, TURNS))
    return history, _turns(enc, lines, LONG_TURN_TOKENS, TURNS, first=TURNS)


def appended(enc, history: str, turns: list) -> tuple:
    a = enc.appender(disallowed_special=())
    before = a.push(history)
    start = time.process_time()
    final, tails = list(before), []
    for turn in turns:
        final += a.push(turn)
        tails.append((len(final), a.pending_ids()))
    took = time.process_time() - start
    # the prompt at each turn: the final ids then (a server keeps them in its
    # own buffer, appending) and the pending text's
    return took, [final[:n] + tail for n, tail in tails], a.encoded_chars - len(history)


def each_once(enc, turns: list) -> float:
    start = time.process_time()
    for turn in turns:
        enc.encode(turn, disallowed_special=())
    return time.process_time() - start


def reencoded(enc, history: str, turns: list) -> tuple:
    start = time.process_time()
    prompts, text = [], history
    for turn in turns:
        text += turn
        prompts.append(enc.encode(text, disallowed_special=()))
    return time.process_time() - start, prompts


def main(argv: list) -> None:
    names = argv[0].split(",") if argv else ["cl100k_base", "llama3", "llama-spm.gguf",
                                              "all-MiniLM-L6-v2"]
    tokens = int(argv[1]) if len(argv) > 1 else 32_000
    rounds = int(argv[2]) if len(argv) > 2 else 5
    print(f"{'vocabulary':36} {'chat':6} {'ids':>7} {'appender ms':>12} {'re-encode ms':>13} "
          f"{'ratio':>6} {'turns once ms':>14} {'bound':>6} {'chars encoded / turns':>22}")
    for name in names:
        enc = VOCABS[name]()
        for kind in ("equal", "long"):
            history, turns = chat(enc, tokens, kind)
            ours, theirs, once, chars = [], [], [], 0
            for _ in range(rounds):
                once.append(each_once(enc, turns))
                took, prompts, chars = appended(enc, history, turns)
                ours.append(took)
                took, expected = reencoded(enc, history, turns)
                theirs.append(took)
                assert prompts == expected, f"{name}: the appender's prompt ids differ"
            a, b, c = statistics.median(ours), statistics.median(theirs), statistics.median(once)
            total = sum(map(len, turns))
            print(f"{name:36} {kind:6} {len(expected[-1]):>7} {a * 1e3:>12.2f} {b * 1e3:>13.2f} "
                  f"{b / a:>6.1f} {c * 1e3:>14.2f} {b / c:>6.1f} {chars / total:>22.2f}")

if __name__ == "__main__":
    main(sys.argv[1:])
