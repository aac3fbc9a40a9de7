"""WordPiece as llama.cpp runs it (GGUF ``bert``): BERT normalisation and greedy longest match.

What is computed (llama.cpp's ``llm_tokenizer_wpm_session``):

* **Normalisation**, per code point, with llama.cpp's Unicode 15.1 tables
  (:mod:`fasttok.shared.llama_unicode`): the code point becomes the first code point
  of its canonical decomposition ("NFD" as llama.cpp does it); whitespace
  ends a word; NUL, U+FFFD, controls and (when accents are stripped) marks
  vanish; punctuation, ASCII symbols and CJK ideographs become words of their
  own; anything else is lowercased (simple map) and appended to the word.
  :class:`BertNormalizer` computes that rule once for every code point into a
  two-stage table (an action and a code point delta per entry), so the text
  is read once with one table load a character, straight from the ``str``'s
  own buffer. There is no limit on a word's length: llama.cpp has none.
* **Matching**: each word, as the UTF-8 bytes of ``"▁" + word``, is cut by
  greedy longest match from the left over every token text (one trie for
  word-initial and continuation pieces: llama.cpp's continuation pieces are
  bare, and a word may hold ``▁``); if some position has no token, the whole
  word becomes one ``[UNK]``. Bytes, as llama.cpp compares them.

Why linear: greedy longest match needs, at each position ``p`` where a
token starts, the longest token that is a prefix of ``word[p:]``. An
Aho-Corasick automaton over the *reversed* token texts, run over the word
from its last byte to its first, gives that for every position at once: after
reading ``word[p:]`` backwards its state is the longest suffix of the text
read that is a path of the trie, and the longest token prefix of
``word[p:]`` is the longest reversed token ending there, precomputed per
state (the "output" of the state). Every step either goes one byte deeper or
follows a failure link to a strictly shallower state, so a word of ``n``
bytes costs at most ``2n`` steps whatever the tokens' lengths; the cut is
then a walk along those answers. Building is linear in the total length of
the token texts: the failure links by the classic argument (per token path),
the layout with at most 256 bases tried per state (64 at once). It is built when a word
first needs it, not with the model (building took ~40 of all-MiniLM-L6-v2's
~80 ms load; ~24 now): until then a word that is no token and of at most
PROBE_MAX bytes is cut by probes of the token index, without a budget (at
most n * n / 2 probes), and so is a longer ASCII one, when no token text
is longer than PROBE_MAX bytes, while the model's allowance of probes
lasts (``WordPieceModel.probes_left``: about what building costs, so text
that needs the automaton little never pays for it; a place takes at most
as many probes as the longest token has bytes).
The word that would overdraw it, or a longer word of other characters, builds
it: all-MiniLM-L6-v2 walking all of en.txt spends ~25k of the 524k probes
and never builds it, multi.txt builds it at its first long Cyrillic word.

Rejected: the greedy longest match llama.cpp writes (try every length from
the longest token's down at each position) and its trie form (walk forward
from each token start) cost ``O(n * L)`` for tokens up to ``L`` bytes: with a
100,000-``a`` token in the vocabulary, ``'a' * n`` takes quadratic time
(a Python loop of that kind: 17.6 s for n = 3000; this module: 2 steps a
byte, 0.3 ms). LinMaxMatch (Song et al., *Fast WordPiece Tokenization*,
EMNLP 2021) is linear too, but its precomputed failure pops
are lists whose total size is quadratic in a long token's length when the
remainders are not trie paths (tokens ``a``, ``b`` and ``a`` + ``b`` * L).

Layout and performance notes (2-core VM shared with other jobs, CPU time,
best of 7; whole corpus files, en / code / multi / zh):

* The automaton is a double array of 16-byte units (child by byte ``c`` at
  ``base + c`` when its ``check`` is the parent; the failure link and the
  output token in the same unit), laid out breadth first so the states near
  the root, which every word visits, share cache lines. Rejected: an
  open-addressing table keyed by (state, byte) beside a node array, which
  takes up to a fifth longer (multi, zh) and 10 MB instead of 4.6 MB for
  bert-bge. A step
  that misses the cache is most of what is left: 720k steps take ~40% of
  en.txt's time.
* A word cut in pieces (no token whole) keeps its ids in the thread's
  pre-token cache (``fasttok/shared/ft_piece_cache.h``: one table a thread
  for every compiled core, 2-way, 64-byte entries, 16k by default), keyed
  by the model's owner identity and the normalized word's UTF-8 (a word's
  ids depend on the automaton alone), so a word met in an earlier call hits
  too. A word that is a token is found first by one probe of the token
  index, compact and mostly in the CPU's caches: asking the 1 MiB cache
  first for every word made en.txt's half 19.7 ms against 17.6 with the
  cache off (its probe a cache miss most of the time); token first, on and
  off are even (16.9-17.5 ms, A/B in one process, load ~6). The cache
  replaced a direct-mapped table of this module made afresh for each long
  text (its calloc faulted its pages in every call) and kept by the model
  for short ones. Rejected: keying whole chunks (the raw code units between
  whitespace, the lookup before normalizing): 16% of en.txt's second
  half's chunks are not in its first half, and at 16k entries the chunks
  crowded the words out (en whole 30.7 ms against 20.8 for words alone,
  load ~5); at 128k entries chunks took 20.6 ms, no better than words at
  16k, a probe of a table past the L2 cache being most of a hit's cost.
  Also rejected: putting a word's lookup off until the next word ends,
  its set prefetched meanwhile (even, A/B).
  Rejected again (2026-12-04, commit 823fe75, reverted): a per-thread
  table of whitespace chunks of its own (an ``ft_piece_cache.h`` table in
  an ``ft_thread_cache.h`` slot, 4x the pre-token cache's entries: 4 MiB;
  key: the chunk's code units narrowed, an owner per model, rules and
  width; 16 chunks cut and their sets prefetched before lookup), as
  nanotoken keeps. 78% of en.txt's second half's 224k chunks hit after its
  first half, yet its walk took 141.6M instructions against 140.8M with
  words alone and 146.8M with no cache (callgrind), code.txt 98.2M either
  way: the chunk path (scan, narrow, hash, probe, copy, the batch's
  bookkeeping) cost ~320 instructions a chunk, about what walking the
  chunk costs; timed A/B at load 5-10 it was 0-10% slower than words alone.
  A chunk path that wins needs ~30 instructions a chunk (one masked load
  as the key of a chunk of up to 8 bytes, as nanotoken's packed keys).
* Long ASCII words probed before the automaton is built (the allowance
  above) instead of building it for the first one: the second half of a
  corpus file on a model just loaded, its core made before the clock
  starts, CPU best of 5, load 5-6 (2026-12-04): en whole 41.1 -> 18.4 ms,
  lines 68.3 -> 46.2; code whole 34.5 -> 12.5, lines 60.0 -> 34.9; multi
  and zh even. Drawing long words of other scripts on the allowance too
  made multi whole 44 -> 54 ms (the probes spent, then the build).
* Rejected again (2026-12-04): the whitespace-chunk table above, leaner
  (no batching or narrowing: the chunk's code units as the key, an owner
  per width, one probe before the chunk is walked): en whole 131.9M ->
  105.4M instructions, code 118.3M -> 97.7M, yet slower timed at every
  size (load ~4, second half after the first, ms, entries 0 / 4k / 16k /
  64k / 256k: en 20.0 / 25.1 / 25.4 / 25.7 / 33.8, code 12.9 / 13.0 /
  13.7 / 16.8 / 15.9): a probe of a table past the L2 cache costs what
  walking the chunk does. Also rejected: copying runs of ASCII letters
  and digits 8 code units at a time (SWAR class test and lowercasing)
  into the word: en whole 131.9M -> 149.4M instructions (4 units a step
  of a str of kind 2, words of ~5 letters), code even.
* Kept (2026-12-04): a walk of ids only (a ``str`` of any kind since) goes
  through the model's chunk cache (``_run_chunked``): chunks of up to 31
  ASCII units, keyed by their units as they are, their ids (up to 7) in
  the same 64-byte slot; CHUNK_AHEAD chunks cut and their slots prefetched
  before the first is looked up; a full cache evicts one of a chunk's two
  slots. The text is read a block of 1,024 units at a time into bytes and
  two bitmaps (SSE2, 16 units a step: where ASCII stops, where a SPACE
  is), so a chunk's end is a count of trailing zeros, a run of spaces one
  step, its key two masked loads. all-MiniLM-L6-v2, callgrind, the second
  half after both halves (``fasttok.load(...).encode(text,
  allowed_special="all")``): en whole 84.2M -> 72.1M instructions (the
  cut and lookup 41.0M -> 34M with the slots' compare in SSE2 and the
  bitmaps read by unaligned loads; the rules' cover 4.0M -> 2.4M, 32
  units a step; the list 9.8M -> 5.9M, shared/_id_lists.pxd), code 77.4M
  -> 69.5M, multi 134.8M -> 129.2M. One call a line of the second half
  (5,000 lines) goes through the cache too now (cutting a chunk costs less
  than walking it): en 15.1M -> 15.2M, code 23.0M -> 19.3M, multi 26.3M
  -> 25.5M, zh 64.8M -> 67.5M (its lines are stretches with no SPACE).
  GGUF ``bert`` (``encode``, ``count``, the batches; llama.cpp's rule,
  the normaliser's owner the tag) goes through it too: bert-bge en whole
  104.0M -> 61.5M instructions (callgrind, second half after both halves).
  Before the bitmaps (units packed 16 at a time, each chunk's key masked
  word by word) a chunk cost ~190 instructions and a line a call lost
  with the cache. Entries, en whole (callgrind): 64k 71.8M, 128k 67.1M,
  1M 63.1M (conflict misses: ~14k of 216k chunks); timed, 1M was slower;
  128k (kept) against 64k, CPU best of 5, 4 processes each alternating,
  load 5-7, ms: en 9.0-9.4 / 8.2-8.5, code 7.4-7.7 / 7.4-7.6, multi
  16.8-17.4 / 17.3-17.6. The table is calloc'd (its pages touched as
  chunks reach them), not zeroed at once (after a long first walk, in 2
  MiB pages: below).
  Earlier figures (a chunk packed 16 units a step), CPU best of 7, load
  10-13, ms: en 18.4 -> 13.9, code 14.3 -> 12.2, multi 19.3 -> 19.4, zh
  7.3 -> 8.0. What the two tables above lacked: the prefetch, one line a
  probe, eviction (a cache that stopped taking chunks when full, as
  nanotoken's does at 1M, kept en.txt's and made code whole after it 15
  -> 17 ms). 16-byte keys of up to 3 ids (32-byte slots): en 98.4M, code
  107.0M (code's chunks are longer). A batch's lines (``encode_many_with``;
  one model with the cache off beside one with it on, encode_ordinary_batch
  flat, 1 thread, CPU best of 7, load ~6, ms): en 33.0 -> 29.6, code 27.5
  -> 26.7, multi 33.5 -> 34.5, zh 12.1 -> 12.6. Entries (one model over
  en, code, multi in turn, ms): 16k en 15.0 / code 11.4 / multi 23.6, 64k
  11.1 / 10.4 / 19.4, 256k 10.1 / 10.0 / 20.3. CHUNK_AHEAD 64 against 32:
  even. A table of the key masks by length instead of four shifts: 1M
  more.
* Kept: a chunk's slot from its hash's top bits (the low bits of the
  product, used before, hung on the key's first five bytes and length:
  'people,' and 'people.' shared two slots; en.txt's steady half missed
  12.7k of 216.6k chunks, now ~4.5k), and its ids as uint16, 14 a slot, in
  a model of at most 0xFFFF texts (code.txt's 'self._nframeswritten' is
  8 to 14 ids: 11.8k of its 140k chunks were never kept). Callgrind, the
  second half after both halves: en whole 66.05M -> 63.42M instructions,
  code 66.85M -> 46.42M. Then chunks of other units kept too (a str of
  kind 1 by its bytes, up to 31; of kind 2 by its uint16s, up to 15): en
  whole 57.74M -> 54.85M (its curly quotes and box drawing), code 46.42M
  -> 46.71M; 5,000 lines a call: multi 25.39M -> 20.31M, zh 67.62M ->
  64.84M. And a str of kind 4 (multi.txt whole: it holds emoji) goes
  through the cache too, its chunks past ASCII keyed as uint16s unless
  they hold a unit past U+FFFF: multi whole 129.60M -> 80.76M.
  (With the one-first-character search of the added tokens, LiteralCut,
  for 2- and 4-byte strs: en 63.42M -> 57.74M, multi 80.76M -> 72.04M.)
* Kept: a text is covered (CodePointRules.cover: every code point past
  Latin-1 it holds computed) only when the walk meets one not computed
  yet (WALK_UNCOVERED: cover, then walk again), not before every walk.
  Callgrind as above: multi whole 69.63M -> 60.30M, en 54.25M -> 52.23M.
  Then (2026-12-05) the batch's lookups with the ids' room made once and
  the hits counted in a local, the hash made from the key's registers,
  the first slot kept from the cut, one test a chunk for the block's and
  the text's end, four slots a chunk instead of two (en.txt's steady half
  missed 5.5k of its 224k chunks with two, 1.7k with four, each miss a
  walk of ~1,000 instructions), a chunk's end from its key: en whole
  49.9M -> 41.2M, code 43.8M -> 38.5M; a slot of up to 7 ids keeping
  them as uint32 (copied in two moves, not widened): en 39.7M, code 37.4M
  (code.txt finds 8% of its chunks in a slot of uint16s). What is left of
  en whole, per chunk of its 224k (an ASCII one found in the cache): the
  cut ~55 (the two bitmaps' reads and tests ~15, the key ~16, the hash
  ~10, the slot and its prefetches ~8, the stores ~6), the view ~20 (a
  2-byte str narrowed ~8, the bitmaps ~11), the slot compare ~15, the
  copy ~12: ~28M; the walk of misses and of stretches past CHUNK_WIDE_MAX
  (its box drawing lines, one [UNK] word each) ~4M; the list and its
  freeing ~6M.
  A run of over CHUNK_MAX ASCII units cut into chunks after the last
  punctuation (ALONE) of its first CHUNK_MAX, where it was walked each
  time (code.txt's 2.3k such runs, 90k units, took 11M of its 37.4M in the
  walk and the probes of their words): code whole 37.44M -> 30.69M, en
  39.69M -> 39.40M.
  Tried and not kept: slots paired in their 128 bytes (the second
  ``at ^ 1``, one line's neighbour): more conflict misses, en 47.10M ->
  48.45M.
* A word no token starts (its first code point begins none: ``'├──...┤'``,
  219 bytes, took 438 automaton steps each time) is [UNK] at once
  (``Automaton.starts``).
* A word that is a token (most words) is found by one probe of a hash
  index of the token texts before any walk: en / code.txt through
  all-MiniLM-L6-v2 35 / 18 -> 28 / 14 ms (before the cache above).
* The normaliser reads the ``str``'s own code units (no UTF-8 conversion of
  the input) with one table load a character; building its table takes
  ~60 ms, once per process and setting.
* Batches release the GIL once for all their texts and build the lists with
  the cycle collector paused; lists take references to a tuple of the ids'
  ints instead of allocating one per token. A flat batch
  (``TextEntry.ids_many_flat``) makes no list: making lists and copying
  them into the array was 60% of en.txt's 1.5 MB of lines a call
  (callgrind, all-MiniLM-L6-v2, the second call: 187.0M -> 56.3M).
* Where a fresh process's first flat batch goes (en.txt's first 1.5 MB of
  lines, CPU ms, quiet machine, 2026-12-05; ~90 ms against ~7 the second
  time): the walk made on first use (the model's tables, ``_core``) ~15,
  with 3.2k page faults; the rule's first code points ~16 (the stages'
  Unicode classes compiled by ``re``, imports: 167M of the call's 389M
  instructions; zh.txt's thousands of code points, 607M of 986M); the
  automaton ~28, with 8.9k page faults (its ~900k units, 14 MB, touched
  as placed); the rest of the call ~22 against 7, with 5.8k faults (the
  8 MiB chunk table filling, misses walked). Callgrind, the bench's cold
  whole text (a second model loaded in a process whose first encoded
  the first half; the second half, /tmp/b2s11/cold.py, 2026-12-05): code
  132.4M instructions, of which the model made on first use ~68M
  (``wordpiece_texts`` 30M, :class:`TokenTables` 25M, the rest of
  ``__init__`` 11M) and the walk 63M; a ``str`` per token and the
  texts' indices as ints made only when asked for: 117.9M (en 178.9M ->
  164.3M); never's ids looked up only within their range: 110.1M; a
  place past a word's start probed from the longest text without the
  word-start bytes (Automaton.max_rest_len, 10 bytes against 21): 108.8M
  (en 155.5M), and code's steady half 27.20M -> 26.26M (the words of
  its walked stretches are probed each time: the automaton is never
  built). CPU, medians of 6 alternating fresh processes (load ~14): code
  32.5 -> 27.6 ms, en 42.1 -> 37.1.
* Rejected (2026-12-05): short chunks (up to 8 ASCII units, up to 3
  ids) in 16-byte slots, four to a cache line (a 1 MiB table beside the
  4 MiB of ChunkSlots for the rest), so that en.txt's ~24k distinct short
  chunks fit the L2 cache. Callgrind, en whole steady: 36.6M -> 34.4M
  instructions, L2-sized (1 MiB) last-level misses 250k -> 233k, but
  branch mispredicts 178k -> 323k (the way of a bucket's key, the short
  or long path a chunk takes: 14% of en.txt's are longer); with the
  bucket compared without a branch, 220k mispredicts and 36.5M
  instructions. CPU, medians of 8 alternating processes beside
  nanotoken (load 7-8): 6.28 -> 6.68 ms. Also even then (kept after the
  short slots below): skipping the SPACE run after a chunk in one count
  of trailing zeros (en mispredicts 178k -> 153k, instructions 36.6M ->
  37.3M; CPU 6.23 -> 6.14 ms, within the noise).
* Kept (2026-12-05): chunks of up to 15 units as bytes (7 as uint16) in
  32-byte short slots, two a cache line (a bucket, both keys compared
  without a branch on which; a chunk's window its bucket and the next),
  their ids as uint16 (7) or uint32 (3), twice as many slots as entries
  (8 MiB); longer chunks, or with more ids, in the ChunkSlots (half the
  entries, 4 MiB). Callgrind (--LL=1048576,16,64 --branch-sim),
  en whole steady: 36.35M -> 35.68M instructions, branch mispredicts
  171k -> 108k, L2-sized misses 249k -> 217k; code after en's halves
  whole and by lines (the bench's order): 27.39M -> 26.94M, 239k ->
  176k; code alone 26.24M -> 26.60M (ChunkSlots a quarter of the
  entries: 27.31M), multi 49.19M -> 50.03M (its chunks of 8-15 uint16s
  in a ChunkSlot table half the size); 5,000 lines a call:
  en 16.70M -> 16.33M, code 18.61M -> 18.34M. CPU, medians of the
  minima of 6 alternating processes (load ~7-10): en 5.05 -> 4.14 ms
  (as many slots as entries; twice: 3.93 -> 3.56), code alone even.
  What the 16-byte slots above lacked: the bucket compared without a
  branch, and a split (15 units) that 99% of en.txt's chunks fall on one
  side of. Then the SPACE run after a chunk skipped with it: en 35.68M
  -> 36.85M instructions, mispredicts 107.6k -> 77.2k, CPU 3.50 -> 3.41
  ms; code 3.08 -> 2.98.
* Kept (2026-12-05): ``TextEntry.ids_array`` (``encode_to_array``, and
  ``encode_to_numpy`` over it) gives the walk's ids as an ``array('I')``
  (each text index's id, from ``text_ids``), where the ids went through a
  list and ``array("I", list)``: callgrind, all-MiniLM-L6-v2, the second
  half after both halves, the result freed (/tmp/w/cgs.sh): en whole
  66.9M -> 35.7M instructions (``encode``'s list: 39.3M), code 24.8M
  (list 30.2M). The list's cost is more than its instructions: a
  reference to an int object a token, 30k of them over ~1 MB, written
  and freed again (CPU, one process taking turns with nanotoken, load ~3:
  en list 5.2 ms, array 3.9, nanotoken 6.7).
* Kept (2026-12-05): a chunk cache whose first walk has CHUNK_HUGE_TEXT
  (65,536) units or more gets its two tables (8 + 4 MiB) mapped at 2 MiB
  boundaries and advised to come in 2 MiB pages (``MADV_HUGEPAGE``,
  Linux; this machine's THP setting is "madvise"), not calloc'd in 4 KiB
  pages: a probe at a random place of 12 MiB missed the TLB most times,
  and a first walk faulted ~3k pages in. Instructions are the same
  (callgrind sees neither); CPU, medians of 5-7 alternating fresh
  processes with and without (/tmp/w/abe.sh, load 4-5), ms: steady whole
  (the second half after the first) en 3.90 -> 3.57, code 3.13 -> 2.97,
  multi 8.09 -> 7.90, zh 4.98 -> 4.88; cold (a second model's first call,
  the bench's cold cell, /tmp/w/abc.py) en 35.1 -> 25.1, code 27.5 ->
  17.7. A shorter first walk keeps 4 KiB pages touched as chunks reach
  them: a line's first call would zero up to 12 MiB; the first longer
  walk after such starts the cache afresh in 2 MiB pages. In the bench's
  protocol (one process, nanotoken's call and a gc.collect between two of
  fasttok's; /tmp/w/ab3.py, 3 processes each, load ~5), en steady whole:
  2 MiB pages 5.2-5.4 ms, 4 KiB pages 5.9-6.1 (a model whose first call
  was a line kept them then).
  Not redone: the tables halved (session 12, for the cold cells: the
  faults the 2 MiB pages spare now were their gain): 64k entries in
  2 MiB pages 6.6-7.2 ms, 32k 13.4-14.8 (chunks walked again).
* Kept (2026-12-05): the index of the texts (``whole``) built as
  ``TokenTables(texts, lookup_only=True)``: find_token's index and filter
  alone, none of the merge loop's tables (byte pairs, windows, atomic
  characters). Callgrind, the bench's cold cell (a second model's first
  call on the second half, /tmp/w/cgc.sh): TokenTables 24.6M -> 12.2M
  instructions; with the 2 MiB pages above (calloc's zeroing gone) code
  119.1M -> 102.2M, en 167.8M -> 143.3M.
* Kept (2026-12-05): a list of COUNTED_IDS (16k) ids or more takes its
  ints' references by count (``_ids_list``: each text index counted in a
  zeroed array of the model's, then each int's count added in the ints'
  order), not an int's reference count written an id at random over ~1
  MB of ints. Callgrind (the result freed, /tmp/w/cgs.sh): en whole
  39.30M -> 39.56M instructions, code 30.16M -> 30.39M, LL-sized (1 MiB)
  misses even (code 279k -> 286k); CPU in the bench's protocol
  (/tmp/w/ab3.py, 4 processes each alternating, load ~4), ms: en 5.35-5.54
  -> 5.07-5.21, code 4.29-4.57 -> 4.25-4.33; alone in a process (ab.py)
  en even (3.93-4.15 / 3.80-4.01). What a list costs over the array is
  mostly its ints' misses: en steady whole in the bench, list 5.28 ms,
  array 4.20.
* Kept (2026-12-05): a chunk no ChunkSlot keeps (more ids than it
  holds, more units, a unit past U+FFFF) is kept in a WideSlot (256
  bytes: the chunk's units as the str holds them and its ids, up to 240
  bytes; two a set, a set for every WIDE_PER_SET entries: 1 MiB at the
  default, allocated when the first is kept), where it was walked each
  time: code.txt's 660 chunks of 15 to 30 ids and 260 runs of over 31
  ASCII units with no punctuation (``brotliencoderprepareddictionary``:
  no word of them kept by the pre-token cache either, their ids past an
  entry's 48 bytes), en.txt's 410 stretches of box drawing. Callgrind,
  the second half after both halves (``encode``'s list, /tmp/w14/cg.sh):
  en whole 39.56M -> 36.64M instructions, code 30.39M -> 26.92M, zh
  50.72M -> 46.30M, multi 54.56M -> 54.90M; cold (a second model's first
  call, /tmp/w14/cgc.sh) code 102.5M -> 104.0M, en 120.3M -> 121.2M (a
  miss of a long chunk probes the wide table too).
* Kept (2026-12-05): a short chunk of 8 to 14 ids (code.txt's
  ``self._foo(x)``, 2.8k of its 128k short chunks) in a pair of short
  slots (one bucket: its marked key and first 7 ids, then 7 more),
  where it was in a ChunkSlot whose line the cut never prefetched: each
  lookup missed the cache there (perf put ~7% of code's steady list
  call on that load). A pair's key is marked (PAIR_MARK) so that the
  hot lookup stays as it was (a chunk not in its window asks for a pair
  in the lines read already). Callgrind as above: code whole 26.90M ->
  26.99M instructions, LL-sized (512 KiB) misses 298.9k -> 296.4k; en
  36.64M -> 36.49M; CPU, 5 alternating processes each, best of 20 calls
  (/tmp/w14/abc.sh, load ~5): code 3.00-3.23 -> 2.95-3.14 ms.
* Rejected (2026-12-05): a hot table in front of the short slots (4,096
  copies of short slots found lately, 128 KiB, direct mapped, probed at
  the cut, the big table prefetched only for a miss): LL-sized misses
  en 393.9k -> 405.0k, code 298.9k -> 305.9k (the cache's own LRU keeps
  the hot chunks' lines already); a pass of ``_ids_list`` with each
  int and its count side by side (one line an id, not two): +0.9M
  instructions, CPU even; CHUNK_AHEAD 16 and 8: even or slower.
* Rejected (2026-12-05): a bit per two bytes ending some token text (8
  KB), tested before each probe of _match_probing: the bench's cold code
  call 102.2M -> 105.1M instructions, steady code 30.39M -> 30.87M (the
  spans' last two bytes mostly end some token).
* ``encode_with`` (a ``tokenizer.json`` BERT file's rules, a
  :class:`CodePointRules`) is also the walk with offsets: the same loop, a
  flag on, notes the text index of the character each byte of a word is of
  (an int32 a byte) and gives each id its span once the word is matched,
  from the ids' texts' lengths, so a word served by the cache costs no
  more. all-MiniLM-L6-v2, a line of en.txt a call: ~1.4 us for the ids,
  ~1.9 with offsets and word indices (three arrays made in place).
* One call a line (``fasttok.load(...).encode(line, allowed_special="all")``)
  reaches ``_encode_with`` through :class:`TextEntry` with no Python frame:
  en.txt's second half after its first, CPU best of 5, load ~5: en 48.1 ->
  33.5 ms, code 31.5 -> 24.8 (2026-12-04). What is left, callgrind, a line
  of en.txt: ~2,670 instructions, the walk ~1,500 (``_run`` 750,
  ``_end_word`` 300, ``find_token`` 240, probes 130, ``ids_list`` 140) and
  ~850 a call (``_encode_with`` 175, ``EncodeEntry.encode`` 140, ``cover``
  120, ``TextEntry.ids`` 80, the first-character search 80, the vector call
  70). perf: ``ids_list``'s time is the int objects' reference counts and
  ``find_token``'s the filter's and the index's loads (cache misses).
  nanotoken 0.1.0 takes ~630 ns a call of ``"the\\n"`` (fasttok ~105):
  most of its lines figure; its whole-text figure is its chunk cache.
* Rejected (2026-12-04): a table of the word-start tokens of at most 8
  bytes after the word-start ones, keyed by those bytes as a number (16-byte
  slots, 32k of them: 512 KB), probed before the token index: one load and
  compare a word instead of hash, filter, probe. A/B in one process, load
  ~6, off / on, ms: en whole 17.8 / 17.9, lines 32.3 / 33.5, code whole 12.0
  / 12.8, lines 21.0 / 20.2: even; perf puts the time on its slot's load,
  a cache miss as the index's is. Also even: the token index probed without
  its filter for a whole word (most words are tokens, so the filter rarely
  saves the probe): en whole 15.4 / 15.4, lines 30.6 / 29.1, code 11.6 /
  11.8, 20.5 / 20.4.

>>> m = WordPieceModel([b"[UNK]", "\\u2581un".encode(), b"aff", b"able"], 0)
>>> m.encode("Unaffable!  xyz")
[1, 2, 3, 0, 0]
>>> m.words("Héllo, 世界")
['hello', ',', '世', '界']
"""

from array import array

cimport cython

from cpython cimport array as carray
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.ref cimport PyObject
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport (INT64_MAX, INT64_MIN, SIZE_MAX, UINT32_MAX, UINT64_MAX, int32_t, int64_t,
                          uint8_t, uint16_t, uint32_t, uint64_t)
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from fasttok.shared._bits cimport ft_ctz64
from fasttok.shared._growth cimport grow_array
from fasttok.shared._literal_cut cimport LiteralCut
from fasttok.shared._json_reader cimport PackedVocab
from fasttok.shared._id_lists cimport (PyObject_GC_UnTrack, ft_list_items,
                                       ft_list_unset, ft_tuple_items, ids_list, ids_lists)
from fasttok.shared._piece_cache cimport (FT_PC_PAYLOAD, ft_pc_entry, ft_pc_find, ft_pc_hash,
                                          ft_pc_ids, ft_pc_put, ft_pc_table, piece_cache_owner,
                                          piece_cache_table)
from fasttok.shared._tables cimport ByteStrings, TokenTables, TokenTablesView, find_token, prefetch
from fasttok.shared._utf8 cimport utf8_put, utf8_size

cdef extern from *:
    """
    /* a table's pointer published after the table: a walk of another
     * thread, without the GIL, reads the pointer and then the table */
    #if defined(__GNUC__) || defined(__clang__)
    #define wp_publish(slot, value) __atomic_store_n((slot), (value), __ATOMIC_RELEASE)
    #else
    #define wp_publish(slot, value) (*(slot) = (value))
    #endif
    """
    void _publish "wp_publish"(const int32_t** slot, const int32_t* value) noexcept nogil

cdef extern from *:
    """
    #include "ft_bits.h"

    /* The chunk cache's view of a block of a str: its code
     * units as bytes (a unit past 0xFF becomes 0xFF, so every unit from 0x80
     * on stays a byte from 0x80 on and the ASCII ones are themselves), and
     * two bits a unit: stop, a byte below 0x21 or from 0x80 on (where a
     * chunk of ASCII units ends or stops being ASCII), and sep, a byte b
     * below 0x21 with bit b of the rules' SPACE set. A place past the text
     * has both bits set. */
    #if defined(__SSE2__)
    #include <emmintrin.h>
    static inline __m128i wp_to_byte(__m128i a) {
        /* each unit past 0xFF made 0xFF (packus saturates as signed: a unit
         * from 0x8000 on would become 0) */
        __m128i wide = _mm_cmpeq_epi16(_mm_srli_epi16(a, 8), _mm_setzero_si128());
        return _mm_and_si128(_mm_or_si128(a, _mm_xor_si128(wide, _mm_set1_epi16(-1))),
                             _mm_set1_epi16(0xFF));
    }
    #endif

    static inline void wp_narrow_u16(const uint16_t* s, size_t m, uint8_t* out) {
        size_t j = 0;
    #if defined(__SSE2__)
        for (; j + 16 <= m; j += 16) {
            __m128i a = _mm_loadu_si128((const __m128i*)(s + j));
            __m128i b = _mm_loadu_si128((const __m128i*)(s + j + 8));
            _mm_storeu_si128((__m128i*)(out + j), _mm_packus_epi16(wp_to_byte(a), wp_to_byte(b)));
        }
    #endif
        for (; j < m; j++)
            out[j] = s[j] > 0xFF ? 0xFF : (uint8_t)s[j];
    }

    /* stop and sep of out[0:len] (len a multiple of 64, out[m:len] zeros) */
    static inline void wp_block_bits(const uint8_t* out, size_t m, size_t len, uint64_t sepset,
                                     uint64_t* stop, uint64_t* sep) {
        size_t w, j;
        /* a space and a newline, most of the SPACE units met, tested at once */
        uint64_t both = ((sepset >> 32) & (sepset >> 10) & 1) ? ~(uint64_t)0 : 0;
        for (w = 0; w < len / 64; w++) {
            const uint8_t* b = out + 64 * w;
            uint64_t st = 0, ctl = 0, sp = 0, rest, past;
    #if defined(__SSE2__)
            int k;
            for (k = 0; k < 4; k++) {
                __m128i x = _mm_loadu_si128((const __m128i*)(b + 16 * k));
                /* signed: 0x80..0xFF are negative, so below 0x21 too */
                uint64_t s16 = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(x, _mm_set1_epi8(0x21)));
                st |= s16 << (16 * k);
                ctl |= (s16 & ~(unsigned)_mm_movemask_epi8(x)) << (16 * k);
                sp |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_or_si128(
                    _mm_cmpeq_epi8(x, _mm_set1_epi8(32)), _mm_cmpeq_epi8(x, _mm_set1_epi8(10))))
                    << (16 * k);
            }
    #else
            for (j = 0; j < 64; j++) {
                st |= (uint64_t)(b[j] < 0x21 || b[j] >= 0x80) << j;
                ctl |= (uint64_t)(b[j] < 0x21) << j;
                sp |= (uint64_t)(b[j] == 32 || b[j] == 10) << j;
            }
    #endif
            past = 64 * w + 64 <= m ? 0 : m <= 64 * w ? ~(uint64_t)0 : ~(uint64_t)0 << (m - 64 * w);
            sp &= both;
            for (rest = ctl & ~sp & ~past; rest; rest &= rest - 1) {
                j = ft_ctz64(rest);
                sp |= ((sepset >> b[j]) & 1) << j;
            }
            st |= past;
            sp |= past;
            stop[w] = st;
            sep[w] = sp;
        }
    }

    /* a chunk's hash from its key's words: 44 bits, whose top ones pick
     * its slot. Each key bit reaches them through the xor, the sum and the
     * product; a key of up to 8 bytes (its last word holds just the
     * length) is one multiply of its bytes. (The low bits of a product,
     * which the slot was once taken from, hang on the key's low bits
     * only: 'people,' and 'people.' shared two slots.) */
    static inline uint64_t wp_hash_words(uint64_t a, uint64_t b) {
        return ((a + ((b << 21) | (b >> 43))) * 0x9E3779B97F4A7C15ULL) >> 20;
    }
    #if defined(__SSE2__)
    static inline uint64_t wp_hash_halves(__m128i lo, __m128i hi) {
        /* (key[0] ^ key[3], key[1] ^ key[2]) */
        __m128i x = _mm_xor_si128(lo, _mm_shuffle_epi32(hi, 0x4E));
        return wp_hash_words((uint64_t)_mm_cvtsi128_si64(x),
                             (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)));
    }
    #endif

    /* the hash of the key key[0:4] */
    static inline uint64_t wp_key_hash(const uint64_t* key) {
    #if defined(__SSE2__)
        return wp_hash_halves(_mm_loadu_si128((const __m128i*)key),
                              _mm_loadu_si128((const __m128i*)(key + 2)));
    #else
        return wp_hash_words(key[0] ^ key[3], key[1] ^ key[2]);
    #endif
    }

    /* key[0:4] of the chunk of p (1..31) ASCII units at s: its bytes, zero
     * padded, and p in the last byte; returns its hash (wp_key_hash),
     * made from the key's registers */
    static inline uint64_t wp_chunk_key(const uint8_t* s, unsigned p, uint64_t* key) {
    #if defined(__SSE2__)
        static const uint8_t ones[64] = {
            255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
            255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};
        __m128i lo = _mm_and_si128(_mm_loadu_si128((const __m128i*)s),
                                   _mm_loadu_si128((const __m128i*)(ones + 32 - p)));
        __m128i hi = _mm_and_si128(_mm_loadu_si128((const __m128i*)(s + 16)),
                                   _mm_loadu_si128((const __m128i*)(ones + 48 - p)));
        hi = _mm_or_si128(hi, _mm_slli_si128(_mm_cvtsi32_si128((int)p), 15));
        _mm_storeu_si128((__m128i*)key, lo);
        _mm_storeu_si128((__m128i*)(key + 2), hi);
        return wp_hash_halves(lo, hi);
    #else
        unsigned j;
        key[0] = key[1] = key[2] = key[3] = 0;
        for (j = 0; j < p; j++)
            key[j >> 3] |= (uint64_t)s[j] << (8 * (j & 7));
        key[3] |= (uint64_t)p << 56;
        return wp_key_hash(key);
    #endif
    }

    /* key[0:2] of the chunk of p (1..15) ASCII units at s: its bytes, zero
     * padded, and p in the last byte; returns its hash (wp_key_hash's
     * rule over two words) */
    static inline uint64_t wp_short_key(const uint8_t* s, unsigned p, uint64_t* key) {
    #if defined(__SSE2__)
        static const uint8_t ones[48] = {
            255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};
        __m128i k = _mm_and_si128(_mm_loadu_si128((const __m128i*)s),
                                  _mm_loadu_si128((const __m128i*)(ones + 16 - p)));
        k = _mm_or_si128(k, _mm_slli_si128(_mm_cvtsi32_si128((int)p), 15));
        _mm_storeu_si128((__m128i*)key, k);
        return wp_hash_words((uint64_t)_mm_cvtsi128_si64(k),
                             (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(k, k)));
    #else
        unsigned j;
        key[0] = key[1] = 0;
        for (j = 0; j < p; j++)
            key[j >> 3] |= (uint64_t)s[j] << (8 * (j & 7));
        key[1] |= (uint64_t)p << 56;
        return wp_hash_words(key[0], key[1]);
    #endif
    }

    /* the hash of the short key key[0:2] (wp_short_key's) */
    static inline uint64_t wp_short_hash(const uint64_t* key) {
        return wp_hash_words(key[0], key[1]);
    }

    /* the slot of the two at bucket (32 bytes each, a 16-byte key first)
     * whose key is key[0:2], or NULL, without a branch on which (a chunk is
     * in one slot at most) */
    static inline const void* wp_short_find(const void* bucket, const uint64_t* key) {
        const uint8_t* b = (const uint8_t*)bucket;
    #if defined(__SSE2__)
        __m128i k = _mm_loadu_si128((const __m128i*)key);
        uintptr_t e0 = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_load_si128((const __m128i*)b), k)) == 0xFFFF;
        uintptr_t e1 = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_load_si128((const __m128i*)(b + 32)), k))
                       == 0xFFFF;
    #else
        const uint64_t* s0 = (const uint64_t*)b;
        const uint64_t* s1 = (const uint64_t*)(b + 32);
        uintptr_t e0 = ((s0[0] ^ key[0]) | (s0[1] ^ key[1])) == 0;
        uintptr_t e1 = ((s1[0] ^ key[0]) | (s1[1] ^ key[1])) == 0;
    #endif
        return (const void*)(((uintptr_t)b & (0 - e0)) | ((uintptr_t)(b + 32) & (0 - e1)));
    }

    /* out[0:8] = s[0:8], each uint16 made a uint32 */
    static inline void wp_widen8(const uint16_t* s, uint32_t* out) {
    #if defined(__SSE2__)
        __m128i v = _mm_loadu_si128((const __m128i*)s);
        _mm_storeu_si128((__m128i*)out, _mm_unpacklo_epi16(v, _mm_setzero_si128()));
        _mm_storeu_si128((__m128i*)(out + 4), _mm_unpackhi_epi16(v, _mm_setzero_si128()));
    #else
        int j;
        for (j = 0; j < 8; j++)
            out[j] = s[j];
    #endif
    }

    /* the first place from j on of s[0:n] holding a unit past 0xFF, or n */
    static inline size_t wp_next_wide(const uint16_t* s, size_t j, size_t n) {
    #if defined(__SSE2__)
        const __m128i zero = _mm_setzero_si128();
        for (; j + 32 <= n; j += 32) {
            __m128i x = _mm_or_si128(
                _mm_or_si128(_mm_loadu_si128((const __m128i*)(s + j)),
                             _mm_loadu_si128((const __m128i*)(s + j + 8))),
                _mm_or_si128(_mm_loadu_si128((const __m128i*)(s + j + 16)),
                             _mm_loadu_si128((const __m128i*)(s + j + 24))));
            if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_srli_epi16(x, 8), zero)) != 0xFFFF)
                break;
        }
    #endif
        for (; j < n; j++)
            if (s[j] > 0xFF)
                return j;
        return n;
    }

    /* whether the 32-byte keys a and b are equal */
    static inline int wp_same_key(const uint64_t* a, const uint64_t* b) {
    #if defined(__SSE2__)
        __m128i lo = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)a), _mm_loadu_si128((const __m128i*)b));
        __m128i hi = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)(a + 2)),
                                    _mm_loadu_si128((const __m128i*)(b + 2)));
        return _mm_movemask_epi8(_mm_and_si128(lo, hi)) == 0xFFFF;
    #else
        return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3])) == 0;
    #endif
    }

    /* key[0:4] of a chunk of p (1..15) units of a str of kind 2 holding
     * one past ASCII: its units, zero padded, and 0x80 | p in the last
     * byte (no chunk of bytes has that length byte) */
    static inline void wp_wide_key(const uint16_t* s, unsigned p, uint64_t* key) {
        key[0] = key[1] = key[2] = key[3] = 0;
        memcpy(key, s, 2 * (size_t)p);
        key[3] |= (uint64_t)(0x80 | p) << 56;
    }

    /* wp_wide_key of a chunk of a str of kind 4, or 0 when a unit is past
     * U+FFFF (the key is then not made whole) */
    static inline int wp_wide_key32(const uint32_t* s, unsigned p, uint64_t* key) {
        uint16_t k16[16] = {0};  /* (copied: key's words read through uint16s may not alias) */
        unsigned j;
        for (j = 0; j < p; j++) {
            if (s[j] > 0xFFFF)
                return 0;
            k16[j] = (uint16_t)s[j];
        }
        memcpy(key, k16, sizeof(k16));
        key[3] |= (uint64_t)(0x80 | p) << 56;
        return 1;
    }

    /* wp_narrow_u16 of a str of kind 4 */
    static inline void wp_narrow_u32(const uint32_t* s, size_t m, uint8_t* out) {
        size_t j = 0;
    #if defined(__SSE2__)
        const __m128i ff = _mm_set1_epi32(0xFF);
        for (; j + 16 <= m; j += 16) {
            __m128i v[4];
            int k;
            for (k = 0; k < 4; k++) {
                /* units are below 0x110000: a signed compare is right */
                __m128i x = _mm_loadu_si128((const __m128i*)(s + j + 4 * k));
                __m128i wide = _mm_cmpgt_epi32(x, ff);
                v[k] = _mm_or_si128(_mm_andnot_si128(wide, x), _mm_and_si128(wide, ff));
            }
            _mm_storeu_si128((__m128i*)(out + j),
                             _mm_packus_epi16(_mm_packs_epi32(v[0], v[1]), _mm_packs_epi32(v[2], v[3])));
        }
    #endif
        for (; j < m; j++)
            out[j] = s[j] > 0xFF ? 0xFF : (uint8_t)s[j];
    }

    /* out[0:14] = s[0:14], each uint16 made a uint32 */
    static inline void wp_widen14(const uint16_t* s, uint32_t* out) {
    #if defined(__SSE2__)
        __m128i lo = _mm_loadu_si128((const __m128i*)s);
        __m128i hi = _mm_loadu_si128((const __m128i*)(s + 6));
        __m128i zero = _mm_setzero_si128();
        _mm_storeu_si128((__m128i*)out, _mm_unpacklo_epi16(lo, zero));
        _mm_storeu_si128((__m128i*)(out + 4), _mm_unpackhi_epi16(lo, zero));
        _mm_storeu_si128((__m128i*)(out + 6), _mm_unpacklo_epi16(hi, zero));
        _mm_storeu_si128((__m128i*)(out + 10), _mm_unpackhi_epi16(hi, zero));
    #else
        int j;
        for (j = 0; j < 14; j++)
            out[j] = s[j];
    #endif
    }

    /* bits j.. of a bitmap, at least 57 of them (one unaligned load: the
     * bitmap has 8 bytes from byte j >> 3 on) */
    static inline uint64_t wp_bits_from(const uint64_t* bits, size_t j) {
        uint64_t x;
        memcpy(&x, (const uint8_t*)bits + (j >> 3), 8);
        return x >> (j & 7);
    }


    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    #define WP_HUGE ((size_t)2 << 20)

    /* size bytes of zeros, 64-byte aligned, for a chunk table, freed by
     * wp_table_free with the same size and huge. huge (Linux): in pages of
     * 2 MiB where the kernel gives them (a table of 4 KiB pages, probed at
     * random places, missed the TLB at most probes), zeroed as each is
     * first touched; else calloc'd, so that pages no chunk reaches are
     * never touched */
    static void* wp_table_alloc(size_t size, int huge) {
        char* p;
        char* a;
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (huge && size >= WP_HUGE) {
            size_t len = (size + WP_HUGE - 1) & ~(WP_HUGE - 1);
            p = (char*)mmap(NULL, len + WP_HUGE, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == (char*)MAP_FAILED)
                return NULL;
            /* the mapping cut to len bytes from a 2 MiB boundary */
            a = (char*)(((size_t)p + WP_HUGE - 1) & ~(WP_HUGE - 1));
            if (a > p)
                munmap(p, (size_t)(a - p));
            munmap(a + len, (size_t)(p + WP_HUGE - a));
            madvise(a, len, MADV_HUGEPAGE);
            return a;
        }
    #endif
        p = (char*)calloc(size + 64 + sizeof(void*), 1);
        if (p == NULL)
            return NULL;
        a = (char*)(((size_t)p + sizeof(void*) + 63) & ~(size_t)63);
        ((void**)a)[-1] = p;
        return a;
    }

    static void wp_table_free(void* table, size_t size, int huge) {
        if (table == NULL)
            return;
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (huge && size >= WP_HUGE) {
            munmap(table, (size + WP_HUGE - 1) & ~(WP_HUGE - 1));
            return;
        }
    #endif
        free(((void**)table)[-1]);
    }

    /* out[i] = ints[ids[i]] for i < n, the references taken by count: each
     * id's count in counts (n_ints zeros, left zeros), then each int's
     * added at once, in the order of the ints (an int's reference count
     * written an id, at random over ~1 MB of them, missed the cache).
     * Returns n, or the place of the first id not below n_ints (no
     * reference taken, counts left zeros). Each id is tested as it is
     * read: a pass of ft_ids_below before read the ids twice (the list of
     * code.txt's half, 437k ids: 4.28M instructions) */
    static inline size_t wp_ids_items_counted(PyObject** out, const uint32_t* ids, size_t n,
                                              PyObject* const* ints, uint32_t* counts,
                                              size_t n_ints) {
        size_t i, j;
        /* four ids a step, one test of the four (the loop's own count and
         * branch were a fifth of it) */
        for (i = 0; i + 4 <= n; i += 4) {
            uint32_t a = ids[i], b = ids[i + 1], c = ids[i + 2], d = ids[i + 3];
            if ((a >= n_ints) | (b >= n_ints) | (c >= n_ints) | (d >= n_ints))
                break;
            out[i] = ints[a];
            counts[a]++;
            out[i + 1] = ints[b];
            counts[b]++;
            out[i + 2] = ints[c];
            counts[c]++;
            out[i + 3] = ints[d];
            counts[d]++;
        }
        for (; i < n; i++) {
            uint32_t id = ids[i];
            if (id >= n_ints) {
                for (j = 0; j < i; j++)
                    counts[ids[j]] = 0;
                return i;
            }
            out[i] = ints[id];
            counts[id]++;
        }
        for (i = 0; i < n_ints; i++) {
            if (counts[i]) {
                Py_SET_REFCNT(ints[i], Py_REFCNT(ints[i]) + counts[i]);
                counts[i] = 0;
            }
        }
        return n;
    }
    /* a list of ft_list_unset's whose items were never set, made empty */
    #define wp_list_forget(list) Py_SET_SIZE((PyVarObject*)(list), 0)
    """
    size_t wp_ids_items_counted(PyObject** out, const uint32_t* ids, size_t n, PyObject** ints,
                                uint32_t* counts, size_t n_ints) noexcept
    void wp_list_forget(list items) noexcept
    void* wp_table_alloc(size_t size, bint huge) noexcept nogil
    void wp_table_free(void* table, size_t size, bint huge) noexcept nogil
    void wp_narrow_u16(const uint16_t* s, size_t m, uint8_t* out) noexcept nogil
    void wp_block_bits(const uint8_t* out, size_t m, size_t length, uint64_t sepset,
                       uint64_t* stop, uint64_t* sep) noexcept nogil
    uint64_t wp_chunk_key(const uint8_t* s, unsigned p, uint64_t* key) noexcept nogil
    uint64_t wp_key_hash(const uint64_t* key) noexcept nogil
    uint64_t wp_short_key(const uint8_t* s, unsigned p, uint64_t* key) noexcept nogil
    uint64_t wp_short_hash(const uint64_t* key) noexcept nogil
    const void* wp_short_find(const void* bucket, const uint64_t* key) noexcept nogil
    void wp_widen8(const uint16_t* s, uint32_t* out) noexcept nogil
    size_t wp_next_wide(const uint16_t* s, size_t j, size_t n) noexcept nogil
    bint wp_same_key(const uint64_t* a, const uint64_t* b) noexcept nogil
    uint64_t wp_bits_from(const uint64_t* bits, size_t j) noexcept nogil
    void wp_widen14(const uint16_t* s, uint32_t* out) noexcept nogil
    void wp_wide_key(const uint16_t* s, unsigned p, uint64_t* key) noexcept nogil
    bint wp_wide_key32(const uint32_t* s, unsigned p, uint64_t* key) noexcept nogil
    void wp_narrow_u32(const uint32_t* s, size_t m, uint8_t* out) noexcept nogil

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)


# ------------------------------------------------------------------ normaliser

cdef enum:
    # What the normaliser does with a code point: the low two bits of its entry.
    ACT_APPEND = 0   # append its mapped code point to the word
    ACT_SPACE = 1    # end the word
    ACT_ALONE = 2    # a word by itself
    ACT_SKIP = 3     # drop it
    ENTRY_OTHER = 7  # ACT_SKIP with a delta no code point has: stop, the caller handles the text
    # entry >> 2 is mapped - cp + DELTA_BIAS (never negative), or, from
    # EXPAND_BASE on, an ACT_APPEND of several code points: EXPAND_BASE + the
    # index of their expansion (CodePointRules' rules only)
    DELTA_BIAS = 0x200000
    EXPAND_BASE = 0x400000
    EXPANSION_MAX = 3        # code points of an expansion (a Hangul syllable's jamo: 2 or 3)
    EXPAND_CHUNK_BITS = 10   # expansions of a chunk: 1 << this, each EXPANSION_MAX + 1 words
    EXPAND_CHUNKS = 0x800    # room for more expansions than there are code points
    N_CODE_POINTS = 0x110000
    N_BLOCKS = 0x1100        # N_CODE_POINTS >> 8
    # llama.cpp's category flags (fasttok.shared.llama_unicode), and White_Space
    F_ACCENT_MARK = 0x10
    F_PUNCTUATION = 0x20
    F_SYMBOL = 0x40
    F_CONTROL = 0x80
    F_WHITE_SPACE = 0x100


cdef inline bint _is_chinese(uint32_t cp) noexcept nogil:
    # llama.cpp's ranges, 0x2B920 included (BERT's; Unicode's block starts at 0x2B820)
    return ((0x4E00 <= cp <= 0x9FFF) or (0x3400 <= cp <= 0x4DBF) or (0x20000 <= cp <= 0x2A6DF)
            or (0x2A700 <= cp <= 0x2B73F) or (0x2B740 <= cp <= 0x2B81F)
            or (0x2B920 <= cp <= 0x2CEAF) or (0xF900 <= cp <= 0xFAFF)
            or (0x2F800 <= cp <= 0x2FA1F))


cdef inline uint32_t _action(uint16_t flags, uint32_t cp, bint strip_accents) noexcept nogil:
    # llama.cpp's preprocess for one code point already taken to its "NFD" one
    if flags & F_WHITE_SPACE:
        return ACT_SPACE
    if cp == 0 or cp == 0xFFFD or flags & F_CONTROL:
        return ACT_SKIP
    if strip_accents and flags & F_ACCENT_MARK:
        return ACT_SKIP
    if flags & F_PUNCTUATION or (cp < 0x7F and flags & F_SYMBOL) or _is_chinese(cp):
        return ACT_ALONE
    return ACT_APPEND


cdef struct NormTable:
    const uint16_t* stage1     # block of 256 code points -> its block in stage2
    const uint32_t* stage2     # entries: action | (mapped - cp + DELTA_BIAS) << 2
    const uint8_t* ascii       # by ASCII code point: the ASCII one an APPEND of
                               # one code point maps it to, or 0 (ask stage2)
    uint32_t** expand          # chunks of expansions: their length, then their code points


cdef inline uint32_t _entry(const NormTable* t, uint32_t cp) noexcept nogil:
    return t.stage2[(<uint32_t>t.stage1[cp >> 8] << 8) | (cp & 0xFF)]


cdef void _fill_ascii(const NormTable* t, uint8_t* ascii) noexcept:
    # NormTable.ascii of t's entries for the ASCII code points
    cdef uint32_t cp, e, mapped
    for cp in range(128):
        e = _entry(t, cp)
        mapped = cp + (e >> 2) - DELTA_BIAS
        ascii[cp] = <uint8_t>mapped if ((e & 3) == ACT_APPEND and (e >> 2) < EXPAND_BASE
                                        and 0 < mapped < 128) else 0


cdef inline const uint32_t* _expansion(const NormTable* t, uint32_t e) noexcept nogil:
    # the expansion of an entry e >= EXPAND_BASE << 2: its length, then its code points
    cdef uint32_t k = (e >> 2) - EXPAND_BASE
    return (t.expand[k >> EXPAND_CHUNK_BITS]
            + (k & ((1 << EXPAND_CHUNK_BITS) - 1)) * (EXPANSION_MAX + 1))


cdef class BertNormalizer:
    """llama.cpp's BERT normalisation rule, tabulated for every code point.

    ``lowercase`` applies the simple lowercase map; ``strip_accents`` takes each
    code point to the first one of its decomposition and drops marks (llama.cpp
    always does both). Building reads :mod:`fasttok.shared.llama_unicode` (~20 ms);
    :func:`normalizer` keeps one per setting.

    >>> BertNormalizer(True, True).map_code_point(ord("É"))
    (0, 101)
    """

    cdef uint16_t stage1[N_BLOCKS]
    cdef uint32_t* stage2
    cdef uint8_t ascii[128]
    cdef readonly bint lowercase
    cdef readonly bint strip_accents
    cdef uint64_t owner        # its identity in a model's chunk cache

    def __cinit__(self):
        self.stage2 = NULL
        self.owner = piece_cache_owner()

    def __dealloc__(self):
        free(self.stage2)

    def __init__(self, bint lowercase=True, bint strip_accents=True):
        from fasttok.shared import llama_unicode as lu

        cdef uint16_t* flags = <uint16_t*>calloc(N_CODE_POINTS, sizeof(uint16_t))
        cdef uint32_t* nfd = <uint32_t*>malloc(N_CODE_POINTS * sizeof(uint32_t))
        cdef uint32_t* lower = <uint32_t*>malloc(N_CODE_POINTS * sizeof(uint32_t))
        cdef uint32_t* entries = <uint32_t*>malloc(N_CODE_POINTS * sizeof(uint32_t))
        cdef uint32_t cp, c, first, last, target, mapped
        cdef uint16_t flag
        cdef Py_ssize_t b
        cdef dict blocks = {}
        cdef list order = []
        cdef bytes block
        cdef NormTable table
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        try:
            if flags == NULL or nfd == NULL or lower == NULL or entries == NULL:
                raise MemoryError()
            for flag in (lu.UNDEFINED, lu.NUMBER, lu.LETTER, lu.SEPARATOR, lu.ACCENT_MARK,
                         lu.PUNCTUATION, lu.SYMBOL, lu.CONTROL, F_WHITE_SPACE):
                for first, last in lu.class_ranges(flag):
                    for cp in range(first, last + 1):
                        flags[cp] |= flag
            for cp in range(N_CODE_POINTS):
                nfd[cp] = cp
                lower[cp] = cp
            for first, last, target in lu.nfd_first_ranges():
                for cp in range(first, last + 1):
                    nfd[cp] = target
            for cp, target in lu.lowercase_pairs():
                lower[cp] = target
            for cp in range(N_CODE_POINTS):
                c = nfd[cp] if strip_accents else cp
                mapped = lower[c] if lowercase else c
                entries[cp] = (_action(flags[c], c, strip_accents)
                               | ((mapped + DELTA_BIAS - cp) << 2))
            # blocks of 256 entries, each distinct one stored once
            for b in range(N_BLOCKS):
                block = PyBytes_FromStringAndSize(<char*>(entries + (b << 8)), 256 * sizeof(uint32_t))
                if block not in blocks:
                    blocks[block] = len(order)
                    order.append(block)
                self.stage1[b] = blocks[block]
            self.stage2 = <uint32_t*>malloc(len(order) * 256 * sizeof(uint32_t))
            if self.stage2 == NULL:
                raise MemoryError()
            for b in range(len(order)):
                memcpy(self.stage2 + (b << 8), PyBytes_AS_STRING(order[b]), 256 * sizeof(uint32_t))
            table = self.table()
            _fill_ascii(&table, self.ascii)
        finally:
            free(flags)
            free(nfd)
            free(lower)
            free(entries)

    cdef NormTable table(self) noexcept:
        cdef NormTable t
        t.stage1 = self.stage1
        t.stage2 = self.stage2
        t.ascii = self.ascii
        t.expand = NULL
        return t

    def map_code_point(self, uint32_t cp):
        """``(action, code point)``: 0 append, 1 end the word, 2 a word alone, 3 drop."""
        cdef NormTable t = self.table()
        cdef uint32_t e
        if cp >= N_CODE_POINTS:
            raise ValueError(f"{cp:#x} is not a code point")
        e = _entry(&t, cp)
        return e & 3, cp + (e >> 2) - DELTA_BIAS


def wordpiece_texts(vocab not None, str prefix not None, frozenset never not None,
                    bytes start not None):
    """``(texts, ids, entries, rests)`` of a ``tokenizer.json`` WordPiece
    vocabulary (a ``dict``, or the :class:`PackedVocab` of fasttok's reader)
    for :class:`WordPieceModel`: each token (ids in ``never`` left out) as
    ``start`` + its UTF-8, where it is not empty, and after it, if it starts
    with ``prefix`` and is longer, the UTF-8 of what follows ``prefix``;
    with each text's token id, the place of its token in the vocabulary (an
    ``array('I')``: a token's ``str`` is made when asked for, and an encode
    asks for none), and the indices of the texts of the second kind.
    (Compiled: the same loop in Python was ~8 ms of bert-base's load.)

    >>> wordpiece_texts({"[UNK]": 0, "a": 1, "##b": 2}, "##", frozenset({0}), b"\\xc0")
    ([b'\\xc0a', b'\\xc0##b', b'b'], [1, 2, 2], array('I', [1, 2, 2]), [2])
    """
    cdef list texts = [], ids = [], rests = []
    cdef carray.array entries
    cdef Py_ssize_t cut = len(prefix), e = 0, k = 0
    cdef str token
    cdef bint check = len(never) > 0
    if type(vocab) is PackedVocab:
        return _packed_texts(<PackedVocab>vocab, prefix.encode("utf-8"), never, start)
    if type(vocab) is not dict:
        raise TypeError(f"vocab must be a dict or a PackedVocab, not {type(vocab).__name__}")
    entries = carray.clone(_UINT32S, 2 * len(<dict>vocab), False)
    for key, i in (<dict>vocab).items():
        token = key
        if not (check and i in never):
            if token:
                texts.append(start + token.encode("utf-8"))
                ids.append(i)
                entries.data.as_uints[k] = <uint32_t>e
                k += 1
            if len(token) > cut and token.startswith(prefix):
                rests.append(len(texts))
                texts.append(token[cut:].encode("utf-8"))
                ids.append(i)
                entries.data.as_uints[k] = <uint32_t>e
                k += 1
        e += 1
    carray.resize(entries, k)
    return texts, ids, entries, rests


cdef tuple _packed_texts(PackedVocab vocab, bytes prefix, frozenset never, bytes start):
    # wordpiece_texts of a packed vocabulary, read from its UTF-8: no dict
    # of it made (all-MiniLM-L6-v2's took ~5 ms). A UTF-8 text starts with
    # the prefix's UTF-8 exactly when the token starts with the prefix, and
    # is then longer in bytes exactly when longer in characters
    cdef list texts = [], ids = [], rests = []
    cdef carray.array entries = carray.clone(_UINT32S, 2 * vocab.n, False)
    cdef size_t cut = len(prefix), n_start = len(start), size
    cdef const uint8_t* text
    cdef Py_ssize_t i, k = 0
    cdef bytes out
    # never's least and greatest ids (as int64: one past its range can be
    # no entry's): an entry outside them is not looked up (a set lookup an
    # entry was ~3M instructions of all-MiniLM-L6-v2's first encode)
    cdef int64_t least = min(max(min(never), INT64_MIN), INT64_MAX) if never else 0
    cdef int64_t most = min(max(max(never), INT64_MIN), INT64_MAX) if never else -1
    for i in range(vocab.n):
        if least <= vocab.entry_ids[i] <= most and vocab.entry_ids[i] in never:
            continue
        token_id = vocab.entry_ids[i]
        text = vocab.data + vocab.offsets[i]
        size = vocab.offsets[i + 1] - vocab.offsets[i]
        if size == 0:
            continue  # the empty token: neither a word's start nor after the prefix
        out = PyBytes_FromStringAndSize(NULL, n_start + size)
        memcpy(PyBytes_AS_STRING(out), PyBytes_AS_STRING(start), n_start)
        memcpy(PyBytes_AS_STRING(out) + n_start, text, size)
        texts.append(out)
        ids.append(token_id)
        entries.data.as_uints[k] = <uint32_t>i
        k += 1
        if size > cut and memcmp(text, PyBytes_AS_STRING(prefix), cut) == 0:
            rests.append(len(texts))
            texts.append(PyBytes_FromStringAndSize(<const char*>text + cut, size - cut))
            ids.append(token_id)
            entries.data.as_uints[k] = <uint32_t>i
            k += 1
    carray.resize(entries, k)
    return texts, ids, entries, rests


_normalizers = {}


def normalizer(bint lowercase=True, bint strip_accents=True):
    """The :class:`BertNormalizer` for these settings, built once per process."""
    key = (lowercase, strip_accents)
    found = _normalizers.get(key)
    if found is None:
        # building runs Python code: another thread may build one too, and
        # every caller must get the one that stays
        found = _normalizers.setdefault(key, BertNormalizer(lowercase, strip_accents))
    return found


# ------------------------------------------------------------------ automaton

cdef struct Unit:
    # One state of the automaton in a double array: the child of state s by
    # byte c is unit units[s].base + c, if that unit's check is s.
    int32_t base
    int32_t check      # the parent state; -1 a free unit, -2 the root
    int32_t fail       # the longest proper suffix of this state's text that is a state
    int32_t out        # the longest token that is a suffix of this state's text, or -1

cdef enum:
    ONE_NONE = -3              # Automaton.one: a word that gives no id
    BMP_ASK = -1               # Automaton.bmp: match the word
    BMP_UNK = -2               # Automaton.bmp: the word is [UNK]
    MAX_STATES = 1 << 30       # unit indices are int32, with room for base + c
    MAX_START = 8              # the longest word-start marker
    PLACE_BLOCKS = 4           # blocks of 64 bases tried for a state's children before the end

cdef struct Automaton:
    const Unit* units          # always more than every base + 255 of them
    const uint32_t* token_len  # each token's length in bytes
    size_t max_len             # the longest token text's bytes: the longest span a probe tries
    size_t max_rest_len        # the longest of a text not starting with the word-start bytes:
                               # a probe's longest span where the word has none (all-MiniLM-
                               # L6-v2: 10 bytes, against 21)
    int32_t unk                # the [UNK] id, or -1: a word that fails is then dropped
    uint8_t start[MAX_START]   # the bytes put before each word (its word-start texts have them)
    size_t start_len
    size_t max_chars           # a word of more code points is [UNK]; SIZE_MAX: no limit
    # the token texts by their bytes, or NULL: a word that is a token is
    # that token (the longest match at its start is the whole word) in one
    # probe, where the walk through the automaton takes a step, often a
    # cache miss, a byte (en.txt through all-MiniLM-L6-v2: a fifth faster)
    const TokenTablesView* whole
    # the ids of each one-byte (ASCII) word, made when the model is: a
    # quarter of en.txt's words and over half of code.txt's (punctuation,
    # a letter alone) are one byte, and a table of 128 stays in the L1
    # cache where a probe of the thread's pre-token cache often stalls
    int32_t one[128]           # its id, ONE_NONE: none (no [UNK] to give), or BMP_ASK
    # likewise a word of one other BMP code point (zh.txt's words are
    # nearly all one ideograph, three in four of them no token of
    # bert-base's), from a table of 256 KB by code point: its token,
    # BMP_UNK (no token is a prefix of the word: [UNK]), or BMP_ASK (the
    # word goes the common way); NULL until a str past Latin-1 is walked
    const int32_t* bmp
    # A bit per BMP code point, set when some token is the word-start bytes
    # and text starting with that code point: a word whose first code point
    # has no bit set has no token as a prefix (the word-start bytes alone
    # are none), so it is [UNK] without a walk; NULL: no such shortcut
    # (the word-start bytes are a token, or a token's text after them does
    # not start with a whole code point). A long word of characters no token
    # starts ('├──...──┤', 219 bytes) took a walk of 438 steps each time.
    const uint64_t* starts


cdef extern from *:
    void _publish_units "wp_publish"(const Unit** slot, Unit* value) noexcept nogil


cdef inline int32_t _goto(const Automaton* a, int32_t state, uint8_t c) noexcept nogil:
    cdef int32_t t = a.units[state].base + c
    return t if a.units[t].check == state else -1


cdef inline uint64_t _bits64(const uint64_t* bits, size_t at) noexcept nogil:
    # bits at..at + 63 of a bitmap (word at >> 6 + 1 must exist)
    cdef size_t w = at >> 6, o = at & 63
    if o == 0:
        return bits[w]
    return (bits[w] >> o) | (bits[w + 1] << (64 - o))


cdef struct Edge:
    # The build's trie before it is laid out: an open-addressing table
    uint64_t key       # parent << 8 | byte
    int32_t child      # -1: a free slot


cdef inline Edge* _edge_slot(Edge* edges, uint64_t mask, uint64_t key) noexcept nogil:
    # The slot holding key, or the free one where it would go
    cdef uint64_t h = (key * 0x9E3779B97F4A7C15ULL) >> 32
    while True:
        h &= mask
        if edges[h].child < 0 or edges[h].key == key:
            return &edges[h]
        h += 1


# ------------------------------------------------------------------ chunk cache

cdef enum:
    CHUNK_IDS = 7              # ids a slot holds as uint32 (a chunk of more: a WideSlot)
    CHUNK_IDS16 = 14           # ids a slot holds as uint16 (a model of at most 0xFFFF texts)
    CHUNK_MAX = 31             # code units of the longest chunk kept (the 32nd key byte: its length)
    CHUNK_WIDE_MAX = 15        # of one holding a unit past ASCII in a str of kind 2 (as uint16)
    CHUNK_WAYS = 4             # slots a key may be in: its own and the next three (a power of
                               # two; two ways missed 5.5k of en.txt's 224k chunks, four 1.7k)
    CHUNK_AHEAD = 32           # chunks cut (their slots prefetched) before the first is looked up
    CHUNK_ENTRIES = 1 << 17    # WordPieceModel.chunk_cache_entries of a new model (12 MiB)
    COUNTED_IDS = 1 << 14      # ids of a list whose references are taken by count
    CHUNK_HUGE_TEXT = 1 << 16  # code units of a walk that gets the chunk tables in 2 MiB pages
    SLOT_NARROW = 0x100        # ChunkSlot.n_ids: the ids are kept as uint16

    SHORT_MAX = 15             # ASCII units of a chunk kept in a short slot (its 16th key byte: the length)
    SHORT_WIDE_MAX = 7         # of one holding a unit past ASCII in a str of kind 2 or 4 (as uint16)
    SHORT_IDS16 = 7            # ids a short slot holds as uint16 (the 8th uint16: their count)
    SHORT_IDS = 3              # ids a short slot holds as uint32 (the 4th uint32: their count)
    KIND_STRETCH = 0           # a batch's entry: a stretch walked whole
    KIND_SHORT = 1             # a chunk of a short slot's key (homes: its bucket)
    KIND_LONG = 2              # a chunk of a ChunkSlot's key (homes: its first slot)
    KIND_WIDE = 3              # a chunk keyed by its units in a WideSlot (homes: its set)

    WIDE_PAYLOAD = 240         # a WideSlot's key bytes (rounded up to 8), then its ids
    WIDE_KEY_MAX = 232         # key bytes of a chunk a WideSlot may keep (room for an id)
    WIDE_PER_SET = 64          # chunk_cache_entries a set of two WideSlots (at least one set)

cdef union SlotIds:
    uint32_t wide[CHUNK_IDS]
    uint16_t narrow[CHUNK_IDS16]

cdef struct ChunkSlot:
    # A chunk's ids, in one cache line: its units as bytes, zero-padded, in
    # key (the last byte the chunk's length, so a slot in use never has
    # key[3] 0); up to CHUNK_IDS ids as uint32, more (up to CHUNK_IDS16,
    # in a ChunkCache.narrow) as uint16 (code.txt's names and calls,
    # 'self._nframeswritten', are 8 to 14 ids): most chunks are a few ids,
    # whose copy as uint32 is two moves, where widening is eight
    uint64_t key[4]
    uint32_t n_ids             # | SLOT_NARROW when kept as uint16
    SlotIds ids

cdef union ShortIds:
    uint16_t narrow[SHORT_IDS16 + 1]
    uint32_t wide[SHORT_IDS + 1]

cdef struct ShortSlot:
    # A chunk of up to SHORT_MAX units as bytes (most of them: en.txt's
    # 99%, code.txt's 90%), or SHORT_WIDE_MAX as uint16, and its ids, two
    # slots a cache line (a bucket): its units, zero-padded, in key (the
    # last byte the length byte of its ChunkSlot key: a slot in use never
    # has key[1] 0); its ids as uint16 in a ChunkCache.narrow, else as
    # uint32, their count in the last place
    uint64_t key[2]
    ShortIds ids

cdef struct WideSlot:
    # A chunk no ChunkSlot keeps (more units, or more ids), keyed by its
    # code units' bytes as the str holds them (code.txt's long names of
    # 8 to 30 ids, en.txt's box-drawing lines of 73 units: walked each
    # time, they were a tenth of a steady call); its ids as uint16 in a
    # ChunkCache.narrow, else as uint32, after the key (rounded up to 8)
    uint64_t check             # the key's hash, its low bit set (0: empty)
    uint16_t n_bytes
    uint16_t n_ids
    uint32_t kind              # the str's bytes a unit
    uint8_t payload[WIDE_PAYLOAD]

cdef struct ChunkCache:
    ChunkSlot* slots           # a power of two of them, or NULL: chunks of longer keys, or more ids
    WideSlot* wide_slots       # two a set, a power of two of sets; NULL until one is kept
    uint64_t wide_mask         # the sets, less one
    ShortSlot* short_slots     # two a bucket, a power of two of buckets: chunks of short keys
    bint huge                  # both tables were asked of wp_table_alloc as huge
    uint64_t short_mask        # the buckets, less one
    unsigned short_shift       # a short chunk's bucket: its hash >> short_shift
    uint64_t mask              # the slots, less one
    unsigned shift             # a chunk's slot: its hash >> shift (the hash's top bits)
    bint narrow                # 8 to 14 ids may be kept as uint16 (every text index fits)
    size_t used                # slots of both tables holding a chunk (at most limit)
    size_t limit               # WordPieceModel.chunk_cache_entries it was made for
    uint64_t tag               # the rules its ids were made by (0: none yet)
    unsigned victim            # turns at every eviction: its low bits pick a full window's slot
    uint64_t sep               # bit u: the ASCII unit u (< 0x21) ends a word (SPACE)
    uint64_t alone[2]          # bit u: the ASCII unit u is a word by itself (ACT_ALONE)


cdef void _free_chunk_tables(ChunkCache* c) noexcept:
    # both tables' memory (a cache with a NULL slots has none)
    wp_table_free(c.slots, (c.mask + 1) * sizeof(ChunkSlot), c.huge)
    wp_table_free(c.short_slots, (c.short_mask + 1) * 2 * sizeof(ShortSlot), c.huge)
    free(c.wide_slots)
    c.slots = NULL
    c.short_slots = NULL
    c.wide_slots = NULL


cdef inline const ChunkSlot* _chunk_home(const ChunkCache* c, uint64_t h) noexcept nogil:
    # the first of the CHUNK_WAYS slots of a chunk of hash h, it and the
    # next prefetched (a batch cuts its chunks before it looks the first
    # one up; en.txt's steady half finds 7% of its chunks in the last two)
    cdef const ChunkSlot* home = &c.slots[h >> c.shift]
    prefetch(home)
    prefetch(home + 1)  # (past the last slot: a prefetch never faults)
    return home


cdef inline const ChunkSlot* _chunk_find(const ChunkCache* c, const ChunkSlot* home,
                                         const uint64_t* key) noexcept nogil:
    # the slot holding key (its first slot home), or NULL
    cdef const ChunkSlot* s
    cdef size_t at = <size_t>(home - c.slots)
    cdef int k
    if wp_same_key(home.key, key):
        return home
    for k in range(1, CHUNK_WAYS):
        s = &c.slots[(at + k) & c.mask]
        if wp_same_key(s.key, key):
            return s
    return NULL


cdef inline bint _chunk_fits(const ChunkCache* c, size_t n) noexcept nogil:
    # whether a ChunkSlot holds n ids
    return n <= CHUNK_IDS or (c.narrow and n <= CHUNK_IDS16)


cdef inline void _chunk_put(ChunkCache* c, const uint64_t* key, const uint32_t* ids,
                            size_t n) noexcept nogil:
    # keeps ids as the chunk's in the first free slot of its CHUNK_WAYS
    # while the cache holds fewer chunks than its entries, else in place
    # of the next of them holding one by c.victim, which turns at every
    # eviction (or nowhere: none does): a cache that stopped taking
    # chunks when full kept the first text's and missed on every later
    # one of others, and a victim fixed by the key (two bits of its hash)
    # made two chunks of one home and victim evict each other at every
    # meeting while the window's others stayed
    cdef uint64_t h, at
    cdef ChunkSlot* s
    cdef size_t j
    cdef int k
    if not _chunk_fits(c, n):
        return
    h = wp_key_hash(key)
    at = h >> c.shift
    for k in range(CHUNK_WAYS):
        s = &c.slots[(at + k) & c.mask]
        if s.key[3] == 0:
            break
    if s.key[3] == 0 and c.used < c.limit:
        c.used += 1
    else:
        for k in range(CHUNK_WAYS):
            c.victim += 1
            s = &c.slots[(at + (c.victim & (CHUNK_WAYS - 1))) & c.mask]
            if s.key[3] != 0:
                break
        else:
            return
    memcpy(s.key, key, 4 * sizeof(uint64_t))
    if n <= CHUNK_IDS:
        s.n_ids = <uint32_t>n
        for j in range(n):
            s.ids.wide[j] = ids[j]
    else:
        s.n_ids = <uint32_t>n | SLOT_NARROW
        for j in range(n):
            s.ids.narrow[j] = <uint16_t>ids[j]


cdef inline const ShortSlot* _short_home(const ChunkCache* c, uint64_t h) noexcept nogil:
    # the bucket of a short chunk of hash h (its first slot), prefetched
    cdef const ShortSlot* home = &c.short_slots[2 * (h >> c.short_shift)]
    prefetch(home)
    return home


cdef inline const ShortSlot* _short_next(const ChunkCache* c, const ShortSlot* home,
                                         const uint64_t* key) noexcept nogil:
    # the slot holding key in the bucket after home, or NULL (a bucket's two
    # slots and the next bucket's two are a short chunk's window)
    cdef size_t b = <size_t>(home - c.short_slots) >> 1
    return <const ShortSlot*>wp_short_find(&c.short_slots[2 * ((b + 1) & c.short_mask)], key)


cdef inline size_t _short_copy(const ChunkCache* c, const ShortSlot* s, uint32_t* out) noexcept nogil:
    # writes the slot's ids at out (and past them, up to 8 places) and
    # returns their count
    if c.narrow:
        wp_widen8(s.ids.narrow, out)
        return s.ids.narrow[SHORT_IDS16]
    memcpy(out, s.ids.wide, (SHORT_IDS + 1) * sizeof(uint32_t))
    return s.ids.wide[SHORT_IDS]


cdef inline size_t _long_copy(const ChunkSlot* slot, uint32_t* out) noexcept nogil:
    # _short_copy of a ChunkSlot (up to CHUNK_IDS16 places)
    if slot.n_ids & SLOT_NARROW:
        wp_widen14(slot.ids.narrow, out)
    else:
        memcpy(out, slot.ids.wide, CHUNK_IDS * sizeof(uint32_t))
    return slot.n_ids & (SLOT_NARROW - 1)


cdef inline void _long_key(const uint64_t* key, uint64_t* out) noexcept nogil:
    # the ChunkSlot key (wp_chunk_key's) of the short key key[0:2]: a short
    # chunk whose ids a short slot cannot hold is kept in a ChunkSlot
    out[0] = key[0]
    out[1] = key[1] & ~((<uint64_t>0xFF) << 56)
    out[2] = 0
    out[3] = key[1] & ((<uint64_t>0xFF) << 56)


cdef extern from *:
    """
    /* a pair's key (_short_put_pair): its length byte's bit 6, which no
     * key's has (a length up to 31, 0x80 on for a key of uint16 units) */
    #define WP_PAIR_MARK (((uint64_t)0x40) << 56)
    """
    const uint64_t PAIR_MARK "WP_PAIR_MARK"


cdef inline bint _paired(const ShortSlot* s) noexcept nogil:
    # whether s, the first slot of its bucket, holds a pair (a chunk of
    # more ids than one slot holds, in both of the bucket's slots)
    return (s.key[1] & PAIR_MARK) != 0


cdef inline size_t _pair_copy(const ShortSlot* s, uint32_t* out) noexcept nogil:
    # _short_copy of a pair (at most CHUNK_IDS16 places written)
    cdef size_t n = s.ids.narrow[SHORT_IDS16], j
    wp_widen8(s.ids.narrow, out)
    for j in range(SHORT_IDS16, n):
        out[j] = s[1].ids.narrow[j - SHORT_IDS16]
    return n


cdef inline bint _short_put_pair(ChunkCache* c, uint64_t b, const uint64_t* key,
                                 const uint32_t* ids, size_t n) noexcept nogil:
    # keeps the n ids (more than a slot holds, at most CHUNK_IDS16) of a
    # short chunk of a ChunkCache.narrow as a pair: its key, marked
    # (PAIR_MARK: the walk's lookup of its key finds it only when it asks
    # for a pair, after the key's window missed), and first ids in the
    # first slot of one of its window's two buckets, the rest in the
    # second (its key zeros: no key is found there), in an empty bucket
    # while the cache holds fewer chunks than its entries, else in place
    # of the chunks of one by c.victim. A short
    # chunk of 8 to 14 ids (code.txt's 'self._foo(x)') was kept in a
    # ChunkSlot, a cache line its cut does not prefetch: its probe missed
    # the cache each time (2.8k of code.txt's 128k short chunks, ~7% of
    # its steady time)
    cdef ShortSlot* s = NULL
    cdef size_t j, held
    cdef unsigned k
    for k in range(2):
        s = &c.short_slots[2 * ((b + k) & c.short_mask)]
        if s[0].key[1] == 0 and s[1].key[1] == 0 and not _paired(s):
            break
        s = NULL
    if s != NULL and c.used < c.limit:
        c.used += 1
    else:
        c.victim += 1
        s = &c.short_slots[2 * ((b + (c.victim & 1)) & c.short_mask)]
        held = 1 if _paired(s) else (s[0].key[1] != 0) + (s[1].key[1] != 0)
        if held == 0 and c.used >= c.limit:
            return True
        c.used += 1 - held
    memset(s, 0, 2 * sizeof(ShortSlot))
    s[0].key[0] = key[0]
    s[0].key[1] = key[1] | PAIR_MARK
    for j in range(SHORT_IDS16):
        s[0].ids.narrow[j] = <uint16_t>ids[j]
    s[0].ids.narrow[SHORT_IDS16] = <uint16_t>n
    for j in range(SHORT_IDS16, n):
        s[1].ids.narrow[j - SHORT_IDS16] = <uint16_t>ids[j]
    return True


cdef inline bint _short_put(ChunkCache* c, const uint64_t* key, const uint32_t* ids,
                            size_t n) noexcept nogil:
    # keeps ids as the short chunk key's in the first free slot of its
    # window (its bucket and the next) while the cache holds fewer chunks
    # than its entries, else in place of one of the window's by c.victim
    # (_chunk_put's rule), or nowhere (none there); more ids than a slot
    # holds as a pair (_short_put_pair); False when a pair cannot hold
    # them either. The second slot of a pair is neither free nor a victim
    # (its key is zeros); a pair's first slot taken as a victim leaves the
    # second free.
    cdef uint64_t b
    cdef ShortSlot* s
    cdef size_t j
    cdef unsigned k
    b = wp_short_hash(key) >> c.short_shift
    if n > (SHORT_IDS16 if c.narrow else SHORT_IDS):
        if c.narrow and n <= CHUNK_IDS16:
            return _short_put_pair(c, b, key, ids, n)
        return False
    for k in range(4):
        s = &c.short_slots[2 * ((b + (k >> 1)) & c.short_mask) + (k & 1)]
        if s.key[1] == 0 and not (k & 1 and _paired(s - 1)):
            break
    if s.key[1] == 0 and not (k & 1 and _paired(s - 1)) and c.used < c.limit:
        c.used += 1
    else:
        for k in range(4):
            c.victim += 1
            s = &c.short_slots[2 * ((b + (c.victim & 2) // 2) & c.short_mask) + (c.victim & 1)]
            if s.key[1] != 0:
                break
        else:
            return True
    s.key[0] = key[0]
    s.key[1] = key[1]
    memset(&s.ids, 0, sizeof(ShortIds))
    if c.narrow:
        for j in range(n):
            s.ids.narrow[j] = <uint16_t>ids[j]
        s.ids.narrow[SHORT_IDS16] = <uint16_t>n
    else:
        for j in range(n):
            s.ids.wide[j] = ids[j]
        s.ids.wide[SHORT_IDS] = <uint32_t>n
    return True


cdef inline uint64_t _wide_hash(const uint8_t* key, size_t n) noexcept nogil:
    return ft_pc_hash(key, n) | 1


cdef inline const WideSlot* _wide_home(const ChunkCache* c, uint64_t h) noexcept nogil:
    # the set of a wide chunk of hash h (its first slot's header
    # prefetched), or NULL: none kept yet
    cdef const WideSlot* home
    if c.wide_slots == NULL:
        return NULL
    home = &c.wide_slots[2 * ((h >> 20) & c.wide_mask)]
    prefetch(home)
    return home


cdef inline const WideSlot* _wide_find(const WideSlot* home, uint64_t h, const uint8_t* key,
                                       size_t n, uint32_t kind) noexcept nogil:
    # the slot of home's set holding the key key[0:n] of a str of kind, or NULL
    cdef const WideSlot* s
    cdef int k
    if home == NULL:
        return NULL
    for k in range(2):
        s = home + k
        if s.check == h and s.n_bytes == n and s.kind == kind and memcmp(s.payload, key, n) == 0:
            return s
    return NULL


cdef inline int _wide_copy(const ChunkCache* c, const WideSlot* s, Work* w) except -1 nogil:
    # appends the slot's ids to w.ids
    cdef size_t n = s.n_ids, j, at = (s.n_bytes + 7) & ~(<size_t>7)
    cdef uint32_t* out
    grow_array(<void**>&w.ids, &w.ids_cap, w.n_ids + n, sizeof(uint32_t), 1024)
    out = w.ids + w.n_ids
    if c.narrow:
        for j in range(n):
            out[j] = (<const uint16_t*>(s.payload + at))[j]
    else:
        memcpy(out, s.payload + at, n * sizeof(uint32_t))
    w.n_ids += n
    return 0


cdef inline void _wide_put(ChunkCache* c, uint64_t h, const uint8_t* key, size_t n, uint32_t kind,
                           const uint32_t* ids, size_t n_ids) noexcept nogil:
    # keeps ids as the key's in the first slot of its set, the one there
    # moved to the second (a set keeps its two latest chunks), while the
    # cache holds fewer chunks than its entries, else in place of the
    # first; nowhere when they do not fit a slot, or the set is empty and
    # the cache full
    cdef size_t at = (n + 7) & ~(<size_t>7), j, sets
    cdef WideSlot* home
    if at + n_ids * (2 if c.narrow else 4) > WIDE_PAYLOAD:
        return
    if c.wide_slots == NULL:
        sets = 1
        while 2 * sets * WIDE_PER_SET <= c.limit:
            sets *= 2
        c.wide_slots = <WideSlot*>calloc(2 * sets, sizeof(WideSlot))
        if c.wide_slots == NULL:
            return
        c.wide_mask = sets - 1
    home = &c.wide_slots[2 * ((h >> 20) & c.wide_mask)]
    if home[0].check == 0:
        if c.used >= c.limit:
            return
        c.used += 1
    elif home[1].check != 0:
        home[1] = home[0]
    elif c.used < c.limit:
        c.used += 1
        home[1] = home[0]
    home.check = h
    home.n_bytes = <uint16_t>n
    home.n_ids = <uint16_t>n_ids
    home.kind = kind
    memcpy(home.payload, key, n)
    if c.narrow:
        for j in range(n_ids):
            (<uint16_t*>(home.payload + at))[j] = <uint16_t>ids[j]
    else:
        memcpy(home.payload + at, ids, n_ids * sizeof(uint32_t))


# ------------------------------------------------------------------ one call's buffers

cdef struct Work:
    uint8_t* word              # "▁" + the word being built, as UTF-8
    size_t word_cap
    int32_t* best              # the longest token that is a prefix of word[p:], by p, or -1
    size_t best_cap
    uint32_t* ids              # the ids so far (texts' indices; UINT32_MAX: an added token's place)
    size_t n_ids
    size_t ids_cap
    uint8_t* text              # collect: the words, back to back
    size_t text_len
    size_t text_cap
    uint64_t* ends             # collect: the end of each word in text
    size_t n_ends
    size_t ends_cap
    uint64_t steps             # automaton steps taken (the cost the tests bound)
    uint64_t probes            # probes of the token index cutting words over PROBE_MAX bytes
    uint64_t probes_allowed    # how many such probes the walk may take before the automaton is
                               # built (WordPieceModel.probes_left when it starts; once built, 0)
    bint collect               # gather the words instead of matching them
    ft_pc_table* cache         # the thread's pre-token cache, or NULL (off)
    uint64_t owner             # the model's identity in the cache
    bint offsets               # note where each id comes from (the arrays below)
    int32_t* at                # offsets: the text index of the character each byte of word is of
    size_t at_cap
    int32_t* spans             # offsets: each id's start and end in the text, in characters
    size_t spans_cap
    int32_t* words             # offsets: each id's word index
    size_t words_cap
    int32_t n_words            # offsets: the words and added tokens so far
    bint keep_words            # also gather the words' UTF-8 in text (no ends)
    ChunkCache* chunks         # the model's chunk cache for this walk, or NULL (ids only)


cdef enum:
    # what a walk returns when it stops short (0: done)
    WALK_OTHER = 1             # at a code point whose entry is ENTRY_OTHER: the caller's
    WALK_NEED_AUTOMATON = 2    # at a word only the automaton matches, before it is built:
                               # build it (WordPieceModel._need_automaton) and walk again
    WALK_UNCOVERED = 3         # at a code point whose entry is not computed (0): cover the
                               # text (CodePointRules.cover) and walk again
    PROBE_MAX = 24             # bytes: a longer word is matched through the automaton once built
    PROBE_ALLOWANCE = 1 << 19  # WordPieceModel.probes_left of a new model (~10 ms of probes,
                               # building all-MiniLM-L6-v2's automaton ~24 ms)
    NOGIL_MIN_TEXT = 256       # code units: a shorter text is done before the GIL would change hands
    MAX_OFFSET = 0x7FFFFFFF    # offsets are int32: a longer text is not walked with them

cdef void _work_free(Work* w) noexcept nogil:
    free(w.word)
    free(w.best)
    free(w.ids)
    free(w.text)
    free(w.ends)
    free(w.at)
    free(w.spans)
    free(w.words)


cdef inline void _work_reset(Work* w) noexcept:
    # w as memset to 0 would make it, its buffers kept
    w.n_ids = w.text_len = w.n_ends = w.steps = w.probes = w.probes_allowed = 0
    w.collect = w.offsets = w.keep_words = False
    w.n_words = 0
    w.chunks = NULL


cdef inline void _restart(Work* w) noexcept:
    # w as it was before a walk that stopped short began (its settings kept)
    w.n_ids = w.text_len = w.n_ends = w.steps = w.probes = 0
    w.n_words = 0


cdef inline void _use_cache(Work* w, uint64_t owner, uint64_t probes_allowed) noexcept:
    # the calling thread's pre-token cache, for the words of the model
    # owner, and the probes the walk may spend before the automaton is built
    w.cache = piece_cache_table()
    w.owner = owner
    w.probes = 0
    w.probes_allowed = probes_allowed


cdef inline int _id_room(Work* w) except -1 nogil:
    # room for one more id, the check inline (a call of grow_array a word
    # was ~5% of en.txt's walk)
    if w.n_ids >= w.ids_cap:
        grow_array(<void**>&w.ids, &w.ids_cap, w.n_ids + 1, sizeof(uint32_t), 1024)
    return 0


cdef int _match(const Automaton* a, const uint8_t* s, size_t n, Work* w) except -1 nogil:
    # Appends the greedy longest-match ids of s[0:n] to w.ids, or [UNK] when a
    # position has no token. First the automaton over s backwards gives each
    # position its longest token prefix, then the cut follows them from 0.
    cdef size_t p = n, start = w.n_ids, k
    cdef int32_t state = 0, child, token
    cdef uint64_t steps = 0
    cdef int32_t* best
    cdef const Unit* units = a.units
    if units == NULL:
        return WALK_NEED_AUTOMATON
    grow_array(<void**>&w.best, &w.best_cap, n, sizeof(int32_t), 64)
    grow_array(<void**>&w.ids, &w.ids_cap, w.n_ids + n + 1, sizeof(uint32_t), 1024)
    best = w.best
    while p > 0:
        p -= 1
        while True:
            steps += 1
            child = units[state].base + s[p]
            if units[child].check == state:
                state = child
                break
            if state == 0:
                break
            state = units[state].fail
        best[p] = units[state].out
    w.steps += steps
    k = start
    while p < n:
        token = best[p]
        if token < 0:
            k = start
            if a.unk >= 0:
                w.ids[k] = <uint32_t>a.unk
                k += 1
            break
        w.ids[k] = <uint32_t>token
        k += 1
        p += a.token_len[token]
    w.n_ids = k
    return 0


cdef int _match_probing(const Automaton* a, const uint8_t* s, size_t n, Work* w) except -1 nogil:
    # _match of a word that is no token, by probes of the token index from
    # the longest span a token may have down at each place: the same
    # longest token prefix the automaton gives, where a probe of a span no
    # token is mostly settled by the index's filter and a step through the
    # automaton is a cache miss (the word a byte at a time, backwards).
    # Budgets: with the automaton built, 2n probes, then the automaton
    # cuts the word (short pieces, a script cut a character or two at a
    # time: its two steps a byte cost less). Before it is built, a word of
    # up to PROBE_MAX bytes has no budget (at most n * n / 2 probes), and a
    # longer one draws on the walk's allowance (w.probes_allowed, what
    # building costs): once that is spent, _match asks for the automaton.
    # Either way a place takes at most a.max_len probes, and one past the
    # word's start, unless the word-start bytes are there, a.max_rest_len.
    cdef size_t p = 0, k, start = w.n_ids, budget = 2 * n, allowed = 0
    cdef int64_t token
    if a.units == NULL:
        if n <= PROBE_MAX:
            budget = SIZE_MAX
        else:
            allowed = budget = (w.probes_allowed - w.probes if w.probes_allowed > w.probes
                                else 0)
    grow_array(<void**>&w.ids, &w.ids_cap, w.n_ids + n + 1, sizeof(uint32_t), 1024)
    while p < n:
        k = n - p if p else n - 1  # the whole word is no token
        if k > a.max_rest_len and (p == 0 or (n - p >= a.start_len
                                               and memcmp(s + p, a.start, a.start_len) == 0)):
            if k > a.max_len:
                k = a.max_len
        elif k > a.max_rest_len:
            k = a.max_rest_len
        token = -1
        while k > 0:
            token = find_token(a.whole, s + p, k)
            if token >= 0:
                break
            if budget == 0:
                w.probes += allowed
                w.n_ids = start
                return _match(a, s, n, w)
            budget -= 1
            k -= 1
        if token < 0:
            w.n_ids = start
            if a.unk >= 0:
                w.ids[w.n_ids] = <uint32_t>a.unk
                w.n_ids += 1
            break
        w.ids[w.n_ids] = <uint32_t>token
        w.n_ids += 1
        p += k
    w.probes += allowed - budget if allowed else 0
    return 0


cdef inline bint _whole_token(const Automaton* a, const uint8_t* s, size_t n,
                              Work* w) except -1 nogil:
    # whether the word s[:n] is a token (then appended)
    cdef int64_t token = find_token(a.whole, s, n) if a.whole != NULL else -1
    if token < 0:
        return False
    _id_room(w)
    w.ids[w.n_ids] = <uint32_t>token
    w.n_ids += 1
    return True


cdef inline uint32_t _first_code_point(const uint8_t* s, size_t n) noexcept nogil:
    # the BMP code point s starts with, or 0x10000 (another, or too few bytes)
    if n >= 1 and s[0] < 0x80:
        return s[0]
    if n >= 2 and 0xC2 <= s[0] < 0xE0:
        return ((s[0] & 0x1F) << 6) | (s[1] & 0x3F)
    if n >= 3 and 0xE0 <= s[0] < 0xF0:
        return ((s[0] & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
    return 0x10000


cdef int _match_pieces(const Automaton* a, const uint8_t* s, size_t n, Work* w) except -1 nogil:
    # _match of a word that is no token
    cdef uint32_t cp
    if a.starts != NULL:
        cp = _first_code_point(s + a.start_len, n - a.start_len)
        if cp < 0x10000 and not (a.starts[cp >> 6] >> (cp & 63)) & 1:
            if a.unk >= 0:
                _id_room(w)
                w.ids[w.n_ids] = <uint32_t>a.unk
                w.n_ids += 1
            return 0
    if a.whole != NULL:
        if n <= PROBE_MAX and a.units == NULL:
            return _match_probing(a, s, n, w)
        # a longer word before the automaton is built: ASCII ones of a
        # vocabulary of short texts only (a probe hashes up to a.max_len
        # bytes: with a token of 100,000 bytes, probing 'a' * n costs far
        # more than building)
        if ((n <= PROBE_MAX or (a.units == NULL and a.max_len <= PROBE_MAX))
                and _ascii(s + a.start_len, n - a.start_len)):
            return _match_probing(a, s, n, w)
    return _match(a, s, n, w)


cdef int _match_word(const Automaton* a, const uint8_t* s, size_t n, Work* w) except -1 nogil:
    # _match of one word (s starts with the word-start bytes)
    if _whole_token(a, s, n, w):
        return 0
    return _match_pieces(a, s, n, w)


cdef inline bint _ascii(const uint8_t* s, size_t n) noexcept nogil:
    # whether s[:n] is ASCII: such words' pieces are long (English, code);
    # other scripts' are a character or two in bert-base, where probing
    # from the longest span down costs more than the automaton
    cdef uint8_t seen = 0
    cdef size_t i
    for i in range(n):
        seen |= s[i]
    return seen < 0x80


cdef inline int _append_cached(const ft_pc_entry* e, Work* w) except -1 nogil:
    # the ids the cache holds in e, appended (a few: a loop, not a call)
    cdef size_t n = e.n_ids, k
    cdef const uint32_t* ids = ft_pc_ids(e)
    cdef uint32_t* out
    if w.n_ids + n > w.ids_cap:
        grow_array(<void**>&w.ids, &w.ids_cap, w.n_ids + n, sizeof(uint32_t), 1024)
    out = w.ids + w.n_ids
    for k in range(n):
        out[k] = ids[k]
    w.n_ids += n
    return 0


cdef int _flush(const Automaton* a, Work* w, size_t wlen) except -1 nogil:
    # The word w.word[a.start_len:wlen] is complete.
    cdef size_t n = wlen - a.start_len, k
    cdef const uint8_t* key = w.word + a.start_len
    cdef uint64_t h
    cdef int32_t token
    cdef const ft_pc_entry* e
    if not w.collect:
        if n == 1 and key[0] < 128 and a.one[key[0]] != BMP_ASK:
            if a.one[key[0]] != ONE_NONE:
                _id_room(w)
                w.ids[w.n_ids] = <uint32_t>a.one[key[0]]
                w.n_ids += 1
            return 0
        if a.bmp != NULL and ((n == 2 and key[0] >= 0xC0) or (n == 3 and key[0] >= 0xE0)):
            # one code point (the walk makes UTF-8: a lead byte starts it)
            k = (((key[0] & 0x1F) << 6) | (key[1] & 0x3F) if n == 2 else
                 ((key[0] & 0x0F) << 12) | ((key[1] & 0x3F) << 6) | (key[2] & 0x3F))
            token = a.bmp[k]
            if token == BMP_UNK:
                token = a.unk
                if token < 0:
                    return 0
            if token >= 0:
                _id_room(w)
                w.ids[w.n_ids] = <uint32_t>token
                w.n_ids += 1
                return 0
        # a word that is a token first: one probe of the token index, which
        # is compact and mostly in the CPU's caches; the thread's cache
        # keeps the words cut in pieces (fewer, each a match saved)
        if _whole_token(a, w.word, wlen, w):
            return 0
        if w.cache == NULL or n > FT_PC_PAYLOAD:
            return _match_pieces(a, w.word, wlen, w)
        h = ft_pc_hash(key, n)
        e = ft_pc_find(w.cache, w.owner, key, n, h)
        if e != NULL:
            return _append_cached(e, w)
        k = w.n_ids
        if _match_pieces(a, w.word, wlen, w):
            return WALK_NEED_AUTOMATON
        ft_pc_put(w.cache, w.owner, key, n, h, w.ids + k, w.n_ids - k)
        return 0
    grow_array(<void**>&w.text, &w.text_cap, w.text_len + n, 1, 256)
    memcpy(w.text + w.text_len, w.word + a.start_len, n)
    w.text_len += n
    grow_array(<void**>&w.ends, &w.ends_cap, w.n_ends + 1, sizeof(uint64_t), 64)
    w.ends[w.n_ends] = w.text_len
    w.n_ends += 1
    return 0


ctypedef fused unit_t:
    # the code units of a str (PEP 393 kinds 1, 2 and 4)
    uint8_t
    uint16_t
    uint32_t


cdef int _note_word(const Automaton* a, Work* w, size_t first, size_t wlen) except -1 nogil:
    # Where the ids from first on, the word w.word[0:wlen]'s, come from: a
    # token covers the characters its bytes are of (the first token's text
    # starts with the word-start bytes, which are of none); each normalized
    # character is of one character of the text. The last id ends where the
    # word does: [UNK] is always its word's only id, most words are one
    # token, and reading that token's length (a cache miss, often) was a
    # sixth of this.
    cdef size_t k, p = 0, s, last = w.n_ids - 1
    cdef uint32_t t
    grow_array(<void**>&w.spans, &w.spans_cap, 2 * w.n_ids, sizeof(int32_t), 256)
    grow_array(<void**>&w.words, &w.words_cap, w.n_ids, sizeof(int32_t), 128)
    for k in range(first, w.n_ids):
        t = w.ids[k]
        s = p if p > a.start_len else a.start_len
        p = wlen if k == last else p + a.token_len[t]
        w.spans[2 * k] = w.at[s]
        w.spans[2 * k + 1] = w.at[p - 1] + 1
        w.words[k] = w.n_words
    w.n_words += 1
    return 0


cdef inline int _end_word(const Automaton* a, Work* w, size_t wlen, size_t chars) except -1 nogil:
    # A word over the automaton's length limit is [UNK] whatever its text.
    cdef size_t first = w.n_ids
    if chars <= a.max_chars or w.collect:
        if _flush(a, w, wlen):
            return WALK_NEED_AUTOMATON
    elif a.unk >= 0:
        grow_array(<void**>&w.ids, &w.ids_cap, w.n_ids + 1, sizeof(uint32_t), 64)
        w.ids[w.n_ids] = <uint32_t>a.unk
        w.n_ids += 1
    if w.offsets:
        _note_word(a, w, first, wlen)
    if w.keep_words:
        grow_array(<void**>&w.text, &w.text_cap, w.text_len + wlen - a.start_len, 1, 256)
        memcpy(w.text + w.text_len, w.word + a.start_len, wlen - a.start_len)
        w.text_len += wlen - a.start_len
    return 0


cdef inline int _grow_word(Work* w, size_t need) except -1 nogil:
    # room for need bytes of a word, and with offsets a text index for each
    # byte the word buffer holds (kept buffers may have grown the word's in
    # a call without offsets: the walk grows both only past the word's)
    grow_array(<void**>&w.word, &w.word_cap, need, 1, 64)
    if w.offsets:
        grow_array(<void**>&w.at, &w.at_cap, w.word_cap, sizeof(int32_t), 64)
    return 0


cdef int _run(const unit_t* text, size_t n, size_t base, const NormTable* norm,
              const Automaton* a, Work* w) except -1 nogil:
    # Normalises text[0:n] into words and flushes each one as it ends;
    # returns WALK_OTHER or WALK_NEED_AUTOMATON when it stops short. A str
    # may hold surrogates (it has no UTF-8 then): a high one right before a
    # low one is the code point they encode, any other is dropped, as
    # U+FFFD is, which is what tiktoken's repair would have made of it.
    # With w.offsets, each byte of the word notes the text index (base + its
    # index in text) of the character it is of.
    cdef size_t i = 0, start = a.start_len, wlen = a.start_len, chars = 0, size, j
    cdef uint32_t cp, e, act
    cdef const uint32_t* x
    cdef int32_t here
    cdef uint8_t b
    cdef uint8_t* word
    cdef size_t cap
    cdef const uint8_t* ascii = norm.ascii
    _grow_word(w, 64)
    memcpy(w.word, a.start, start)
    while i < n:
        cp = text[i]
        if cp < 128:
            b = norm.ascii[cp]
            if b and not w.offsets:
                # a run of ASCII characters appended as ASCII ones (most of
                # English and code), a table of 128 read a character, the
                # buffer in locals (a store through a uint8_t pointer may
                # alias w: its fields were loaded again every character)
                word = w.word
                cap = w.word_cap
                while True:
                    if wlen >= cap:
                        _grow_word(w, wlen + 1)
                        word = w.word
                        cap = w.word_cap
                    word[wlen] = b
                    wlen += 1
                    chars += 1
                    i += 1
                    if i >= n:
                        break
                    cp = text[i]
                    if cp >= 128:
                        break
                    b = ascii[cp]
                    if not b:
                        break
                continue
            if b:
                # with offsets, one character at a time
                if wlen >= w.word_cap:
                    _grow_word(w, wlen + 1)
                w.word[wlen] = b
                if w.offsets:
                    w.at[wlen] = <int32_t>(base + i)
                wlen += 1
                chars += 1
                i += 1
                continue
        here = <int32_t>(base + i)
        i += 1
        e = _entry(norm, cp)
        act = e & 3
        if act == ACT_SKIP:
            if e == ENTRY_OTHER:
                return WALK_OTHER
            if (unit_t is not uint8_t and 0xD800 <= cp <= 0xDBFF and i < n
                    and 0xDC00 <= text[i] <= 0xDFFF):
                cp = 0x10000 + ((cp - 0xD800) << 10) + (text[i] - 0xDC00)
                i += 1
                e = _entry(norm, cp)
                act = e & 3
        if e == 0:
            return WALK_UNCOVERED
        if act == ACT_APPEND or act == ACT_ALONE:
            if act == ACT_ALONE and wlen > start:
                if _end_word(a, w, wlen, chars):
                    return WALK_NEED_AUTOMATON
                wlen = start
                chars = 0
            if wlen + 4 * EXPANSION_MAX > w.word_cap:
                _grow_word(w, wlen + 4 * EXPANSION_MAX)
            if (e >> 2) < EXPAND_BASE:
                size = utf8_put(w.word + wlen, cp + (e >> 2) - DELTA_BIAS)
                chars += 1
            else:
                x = _expansion(norm, e)
                size = 0
                for j in range(1, x[0] + 1):
                    size += utf8_put(w.word + wlen + size, x[j])
                chars += x[0]
            if w.offsets:
                for j in range(size):
                    w.at[wlen + j] = here
            wlen += size
            if act == ACT_ALONE:
                if _end_word(a, w, wlen, chars):
                    return WALK_NEED_AUTOMATON
                wlen = start
                chars = 0
        elif act == ACT_SPACE and wlen > start:
            if _end_word(a, w, wlen, chars):
                return WALK_NEED_AUTOMATON
            wlen = start
            chars = 0
    if wlen > start:
        return _end_word(a, w, wlen, chars)
    return 0


cdef enum:
    CHUNK_BLOCK = 1024         # code units a block of _run_chunked starts chunks in
    CHUNK_VIEW = CHUNK_BLOCK + 64   # its view's units: a chunk starting in it ends in it
    CHUNK_WORDS = CHUNK_VIEW >> 6   # the view's bitmaps' words


cdef inline void _view(const unit_t* text, size_t m, uint64_t sepset, uint8_t* units,
                       uint64_t* stop, uint64_t* sep) noexcept nogil:
    # the block view (wp_block_bits) of text[0:m], m at most CHUNK_VIEW: its
    # bitmaps' words up to the one after m's (all a place reads: a place
    # before m reads 64 bits from it on, and the bits past m are set), and
    # the 32 units from m on zeros (a key loads 32 from its chunk's start)
    cdef size_t length = ((m >> 6) + 2) << 6
    if length > CHUNK_VIEW:
        length = CHUNK_VIEW
    if unit_t is uint8_t:
        memcpy(units, text, m)
    elif unit_t is uint16_t:
        wp_narrow_u16(text, m, units)
    else:
        wp_narrow_u32(text, m, units)
    memset(units + m, 0, length + 32 - m)
    wp_block_bits(units, m, length, sepset, stop, sep)


cdef int _run_chunked(const unit_t* text, size_t n, size_t base, const NormTable* norm,
                      const Automaton* a, Work* w) except -1 nogil:
    # _run of text[0:n], each chunk (the units between ASCII SPACE units)
    # of at most CHUNK_MAX ASCII units looked up in w.chunks first, by its
    # units: a chunk's ids are those of its words, and its words those of
    # its units alone (a SPACE ends a word), so a chunk met before needs no
    # normalizing, no word cut and no token lookup. A longer ASCII run is
    # cut after a unit that is a word by itself; any other chunk of up to
    # WIDE_KEY_MAX bytes is looked up in the WideSlots by its units' bytes,
    # and longer stretches go to _run whole (joined when they follow one
    # another). The text is read a block at a time as bytes and two
    # bitmaps (_view), where a chunk is a count of trailing zeros and its
    # key two masked loads; CHUNK_AHEAD chunks are cut and their slots
    # prefetched before the first is looked up, so the loads of rare
    # chunks' slots (past the L2 cache) overlap.
    cdef ChunkCache* c = w.chunks
    cdef size_t j = 0, start, end, count, k, p, blk = 0, lim = 0, m
    cdef size_t starts[CHUNK_AHEAD]
    cdef size_t ends[CHUNK_AHEAD]     # a walked stretch's (kinds[k] KIND_STRETCH)
    cdef uint64_t keys[CHUNK_AHEAD][4]
    cdef const void* homes[CHUNK_AHEAD]
    cdef uint8_t kinds[CHUNK_AHEAD]
    cdef uint64_t lkey[4]
    cdef uint8_t units[CHUNK_VIEW + 32]
    cdef uint64_t stop[CHUNK_WORDS]
    cdef uint64_t sep[CHUNK_WORDS]
    cdef uint64_t seps, stops
    cdef const ChunkSlot* slot
    cdef const ShortSlot* sslot
    cdef const WideSlot* wslot
    cdef uint64_t h = 0
    cdef bint wide
    cdef int done
    cdef bint keyed
    cdef uint32_t* out
    cdef size_t n_ids
    cdef size_t longest = CHUNK_WIDE_MAX  # units of a chunk of other units kept
    cdef size_t shortest = SHORT_WIDE_MAX  # of one kept in a short slot
    if unit_t is uint8_t:
        longest = CHUNK_MAX
        shortest = SHORT_MAX
    # room for the ids of most texts at once (en / code / multi.txt give
    # 0.23 / 0.34 / 0.67 ids a unit): growing it from small cost ~2M
    # instructions of en.txt's half in copies
    grow_array(<void**>&w.ids, &w.ids_cap, w.n_ids + n // 2 + CHUNK_IDS16, sizeof(uint32_t), 1024)
    # the place is blk + j: j in the block's view, one test a chunk for
    # both the block's end and the text's (lim: the block's units, fewer
    # at the text's end)
    while blk + j < n:
        count = 0
        while count < CHUNK_AHEAD:
            if j >= lim:
                blk += j
                j = 0
                if blk >= n:
                    break
                lim = n - blk if n - blk < CHUNK_BLOCK else CHUNK_BLOCK
                m = n - blk if n - blk < CHUNK_VIEW else CHUNK_VIEW
                _view(text + blk, m, c.sep, units, stop, sep)
            seps = wp_bits_from(sep, j)
            if seps & 1:
                # a run of SPACE units, up to 57 of them at once
                j += ft_ctz64(~seps) if ~seps else 64
                continue
            stops = wp_bits_from(stop, j)
            p = ft_ctz64(stops) if stops else 64
            if p <= SHORT_MAX and (seps >> p) & 1:
                # a chunk of p ASCII units, ended by a SPACE or the text's end
                homes[count] = _short_home(c, wp_short_key(units + j, <unsigned>p, keys[count]))
                kinds[count] = KIND_SHORT
                starts[count] = blk + j
                count += 1
                # past the SPACE units after it (or the end), as many of
                # them as seps holds: a run's test at the top was 28k of
                # en.txt's 108k branch mispredicts (the bits read stay in
                # the view: j is below CHUNK_BLOCK)
                j += p + ft_ctz64(~(seps >> p))
                continue
            if p <= CHUNK_MAX and (seps >> p) & 1:
                homes[count] = _chunk_home(c, wp_chunk_key(units + j, <unsigned>p, keys[count]))
                kinds[count] = KIND_LONG
                starts[count] = blk + j
                count += 1
                j += p + ft_ctz64(~(seps >> p))
                continue
            if p > CHUNK_MAX:
                # a longer run of ASCII units (code.txt's 'https://...',
                # 'FindMatchLengthWithLimit(&data[prev_ix],') is a chunk up
                # to and with the last of its first CHUNK_MAX units that is
                # a word by itself (a word ends on either side of it, so
                # the ids of the units before and after are their own)
                p = _last_alone(units + j, c.alone)
                if p:
                    if p <= SHORT_MAX:
                        homes[count] = _short_home(c, wp_short_key(units + j, <unsigned>p, keys[count]))
                        kinds[count] = KIND_SHORT
                    else:
                        homes[count] = _chunk_home(c, wp_chunk_key(units + j, <unsigned>p, keys[count]))
                        kinds[count] = KIND_LONG
                    starts[count] = blk + j
                    count += 1
                    j += p
                    continue
            # anything else runs to the next SPACE unit; past CHUNK_MAX
            # units (CHUNK_WIDE_MAX of a str of kind 2 or 4) it is walked,
            # joined to a stretch of such before it (kinds[k] KIND_STRETCH marks one)
            start = blk + j
            end = _next_sep(sep, j + 1)
            if end < CHUNK_VIEW:
                end += blk
            else:
                end = blk + CHUNK_VIEW
                while end < n and not (text[end] < 0x21 and (c.sep >> text[end]) & 1):
                    end += 1
            if end > n:
                end = n
            keyed = end - start <= longest
            if keyed:
                # a chunk of other units (en.txt's curly quotes and box
                # drawing, multi.txt's words) keyed by its units as they
                # are: a str of kind 1 by its bytes (its view), of kind 2
                # or 4 by its units as uint16s (wp_wide_key; a unit past
                # U+FFFF of a str of kind 4 leaves the chunk to the walk)
                if unit_t is uint8_t:
                    wp_chunk_key(units + j, <unsigned>(end - start), keys[count])
                elif unit_t is uint16_t:
                    wp_wide_key(text + start, <unsigned>(end - start), keys[count])
                else:
                    keyed = wp_wide_key32(text + start, <unsigned>(end - start), keys[count])
            if keyed:
                if end - start <= shortest:
                    # its key fits a short slot's (bytes 14 and 15 zero):
                    # the length byte moved to byte 15 (_long_key's inverse)
                    keys[count][1] |= keys[count][3] & ((<uint64_t>0xFF) << 56)
                    homes[count] = _short_home(c, wp_short_hash(keys[count]))
                    kinds[count] = KIND_SHORT
                else:
                    homes[count] = _chunk_home(c, wp_key_hash(keys[count]))
                    kinds[count] = KIND_LONG
                starts[count] = start
                count += 1
                j = end - blk
                continue
            if (end - start) * sizeof(unit_t) <= WIDE_KEY_MAX:
                # (its hash read from keys[count][0] by the lookup)
                keys[count][0] = _wide_hash(<const uint8_t*>(text + start),
                                            (end - start) * sizeof(unit_t))
                homes[count] = _wide_home(c, keys[count][0])
                kinds[count] = KIND_WIDE
                starts[count] = start
                ends[count] = end
                count += 1
                j = end - blk
                continue
            if count and kinds[count - 1] == KIND_STRETCH:
                ends[count - 1] = end
            else:
                starts[count] = start
                ends[count] = end
                kinds[count] = KIND_STRETCH
                count += 1
            j = end - blk
        # room for a slot's whole ids (a copy writes them all) of every
        # chunk left in the batch, made once a batch and again after a
        # walk (which grows w.ids as it needs); the hits' count in a local
        k = 0
        while k < count:
            if w.n_ids + (count - k) * CHUNK_IDS16 > w.ids_cap:
                grow_array(<void**>&w.ids, &w.ids_cap, w.n_ids + (count - k) * CHUNK_IDS16,
                           sizeof(uint32_t), 1024)
            out = w.ids
            n_ids = w.n_ids
            while k < count:
                if kinds[k] == KIND_SHORT:
                    sslot = <const ShortSlot*>wp_short_find(homes[k], keys[k])
                    if sslot != NULL:
                        n_ids += _short_copy(c, sslot, out + n_ids)
                        k += 1
                        continue
                elif kinds[k] == KIND_LONG:
                    slot = _chunk_find(c, <const ChunkSlot*>homes[k], keys[k])
                    if slot != NULL:
                        n_ids += _long_copy(slot, out + n_ids)
                        k += 1
                        continue
                break
            w.n_ids = n_ids
            if k == count:
                break
            start = starts[k]
            # a chunk's end from its key's length byte, a stretch's kept; a
            # short chunk not in its bucket may be in the next, or (more ids
            # than a short slot holds) in a ChunkSlot
            if kinds[k] == KIND_SHORT:
                sslot = _short_next(c, <const ShortSlot*>homes[k], keys[k])
                if sslot != NULL:
                    w.n_ids += _short_copy(c, sslot, w.ids + n_ids)
                    k += 1
                    continue
                if c.narrow:
                    # a pair (_short_put_pair), in the window's lines read already
                    lkey[0] = keys[k][0]
                    lkey[1] = keys[k][1] | PAIR_MARK
                    sslot = <const ShortSlot*>wp_short_find(homes[k], lkey)
                    if sslot == NULL:
                        sslot = _short_next(c, <const ShortSlot*>homes[k], lkey)
                    if sslot != NULL:
                        w.n_ids += _pair_copy(sslot, w.ids + n_ids)
                        k += 1
                        continue
                _long_key(keys[k], lkey)
                slot = _chunk_find(c, _chunk_home(c, wp_key_hash(lkey)), lkey)
                if slot != NULL:
                    w.n_ids += _long_copy(slot, w.ids + n_ids)
                    k += 1
                    continue
                end = start + ((keys[k][1] >> 56) & 0x7F)
                # (an ASCII unit is at most one id: a chunk of no more
                # units than a ChunkSlot holds ids was looked for above)
                wide = not _chunk_fits(c, end - start)
            elif kinds[k] == KIND_LONG:
                end = start + ((keys[k][3] >> 56) & 0x7F)
                wide = True
            else:
                end = ends[k]
                wide = kinds[k] == KIND_WIDE
            if wide:
                # a chunk of more ids than a ChunkSlot holds, or more units
                if kinds[k] == KIND_WIDE:
                    # (its set, unless the table was made after the cut)
                    h = keys[k][0]
                    wslot = <const WideSlot*>homes[k]
                    if wslot == NULL:
                        wslot = _wide_home(c, h)
                else:
                    h = _wide_hash(<const uint8_t*>(text + start), (end - start) * sizeof(unit_t))
                    wslot = _wide_home(c, h)
                wslot = _wide_find(wslot, h, <const uint8_t*>(text + start),
                                   (end - start) * sizeof(unit_t), sizeof(unit_t))
                if wslot != NULL:
                    _wide_copy(c, wslot, w)
                    k += 1
                    continue
            done = _run(text + start, end - start, base + start, norm, a, w)
            if done:
                return done
            if kinds[k] == KIND_SHORT and _short_put(c, keys[k], w.ids + n_ids, w.n_ids - n_ids):
                pass
            elif kinds[k] == KIND_SHORT and _chunk_fits(c, w.n_ids - n_ids):
                _chunk_put(c, lkey, w.ids + n_ids, w.n_ids - n_ids)
            elif kinds[k] == KIND_LONG and _chunk_fits(c, w.n_ids - n_ids):
                _chunk_put(c, keys[k], w.ids + n_ids, w.n_ids - n_ids)
            elif wide:
                _wide_put(c, h, <const uint8_t*>(text + start), (end - start) * sizeof(unit_t),
                          sizeof(unit_t), w.ids + n_ids, w.n_ids - n_ids)
            k += 1
    return 0


cdef inline size_t _last_alone(const uint8_t* s, const uint64_t* alone) noexcept nogil:
    # 1 + the place of the last of s[0:CHUNK_MAX] (ASCII units) that is a
    # word by itself, or 0: none is
    cdef size_t q = CHUNK_MAX
    while q:
        if (alone[s[q - 1] >> 6] >> (s[q - 1] & 63)) & 1:
            return q
        q -= 1
    return 0


cdef inline size_t _next_sep(const uint64_t* sep, size_t j) noexcept nogil:
    # the first place from j on with its sep bit set, or CHUNK_VIEW (a view
    # of fewer words holds a set bit: the places past its text)
    cdef size_t word = j >> 6
    cdef uint64_t bits
    if j >= CHUNK_VIEW:
        return CHUNK_VIEW
    bits = sep[word] >> (j & 63)
    if bits:
        return j + ft_ctz64(bits)
    word += 1
    while word < CHUNK_WORDS:
        if sep[word]:
            return (word << 6) + ft_ctz64(sep[word])
        word += 1
    return CHUNK_VIEW


cdef inline size_t _next_uncovered(const unit_t* s, size_t j, size_t n,
                                   const NormTable* t) noexcept nogil:
    # the first place from j on of s[0:n] holding a unit past Latin-1 whose
    # entry is not computed yet, or a surrogate (CodePointRules.cover's
    # cases), or n: Latin-1 units (computed first: most of a text's) are
    # skipped 32 at a time in a 2-byte str (one at a time this was an
    # eighth of en.txt's whole walk), covered ones in a tight loop (a
    # unit a step of cover's was ~16 instructions: multi.txt's)
    cdef uint32_t cp
    while j < n:
        cp = s[j]
        if cp < 256:
            if unit_t is uint16_t:
                j = wp_next_wide(s, j, n)
            else:
                j += 1
            continue
        if 0xD800 <= cp <= 0xDFFF or _entry(t, cp) == 0:
            return j
        j += 1
    return n


cdef struct TextRef:
    # A str's code units, read with the GIL held; the str must stay alive.
    const void* data
    size_t length
    int kind


cdef inline void _text_ref(str text, TextRef* ref) noexcept:
    ref.data = PyUnicode_DATA(text)
    ref.length = <size_t>PyUnicode_GET_LENGTH(text)
    ref.kind = PyUnicode_KIND(text)


cdef inline uint32_t _unit(const TextRef* t, size_t j) noexcept nogil:
    # code unit j of a str of kind 2 or 4
    return (<const uint16_t*>t.data)[j] if t.kind == 2 else (<const uint32_t*>t.data)[j]


cdef int _run_span(const TextRef* t, size_t start, size_t end, const NormTable* norm,
                   const Automaton* a, Work* w) except -1 nogil:
    # _run over the code units start..end of t (through w.chunks when it has one)
    if t.kind == 1:
        if w.chunks != NULL:
            return _run_chunked(<const uint8_t*>t.data + start, end - start, start, norm, a, w)
        return _run(<const uint8_t*>t.data + start, end - start, start, norm, a, w)
    if t.kind == 2:
        if w.chunks != NULL:
            return _run_chunked(<const uint16_t*>t.data + start, end - start, start, norm, a, w)
        return _run(<const uint16_t*>t.data + start, end - start, start, norm, a, w)
    if w.chunks != NULL:
        return _run_chunked(<const uint32_t*>t.data + start, end - start, start, norm, a, w)
    return _run(<const uint32_t*>t.data + start, end - start, start, norm, a, w)


cdef inline int _run_ref(const TextRef* t, const NormTable* norm, const Automaton* a,
                         Work* w) except -1 nogil:
    return _run_span(t, 0, t.length, norm, a, w)


cdef struct Cut:
    # A stretch of a walked text: code units start..end, an added token's
    # (its id) or text for the rules and the automaton (token < 0)
    size_t start
    size_t end
    int64_t token


cdef int _walk(const TextRef* t, const Cut* cuts, size_t n_cuts, const NormTable* norm,
               const Automaton* a, Work* w) except -1 nogil:
    # _run over each stretch of text, each added token one id of its own
    # (UINT32_MAX in w.ids, its id left to the caller: w.ids holds texts'
    # indices) and one word; returns what _run does when it stops short.
    cdef size_t k
    cdef int done
    for k in range(n_cuts):
        if cuts[k].token < 0:
            done = _run_span(t, cuts[k].start, cuts[k].end, norm, a, w)
            if done:
                return done
            continue
        grow_array(<void**>&w.ids, &w.ids_cap, w.n_ids + 1, sizeof(uint32_t), 64)
        w.ids[w.n_ids] = UINT32_MAX
        w.n_ids += 1
        if w.offsets:
            grow_array(<void**>&w.spans, &w.spans_cap, 2 * w.n_ids, sizeof(int32_t), 256)
            grow_array(<void**>&w.words, &w.words_cap, w.n_ids, sizeof(int32_t), 128)
            w.spans[2 * w.n_ids - 2] = <int32_t>cuts[k].start
            w.spans[2 * w.n_ids - 1] = <int32_t>cuts[k].end
            w.words[w.n_ids - 1] = w.n_words
            w.n_words += 1
    return 0


cdef Py_ssize_t _walk_texts(const TextRef* refs, Py_ssize_t i, Py_ssize_t n,
                            const NormTable* norm, const Automaton* a,
                            Work* w, uint64_t* ends) except -1 nogil:
    # Walks texts i..n-1 of refs, each whole, after the ids w holds; ends[k]
    # is where text k's ids end in w.ids (UINT64_MAX: left to the caller,
    # its ids dropped; with offsets, so is a text too long for them).
    # Returns n, or the text a walk stopped at for the automaton (its ids
    # dropped: the caller builds it and walks on from there).
    cdef size_t start = w.n_ids
    cdef Cut whole
    cdef int done
    whole.start = 0
    whole.token = -1
    while i < n:
        whole.end = refs[i].length
        w.n_words = 0
        done = (WALK_OTHER if w.offsets and refs[i].length > MAX_OFFSET else
                _walk(&refs[i], &whole, 1, norm, a, w))
        w.n_ids = start if done else w.n_ids
        if done == WALK_NEED_AUTOMATON:
            return i
        ends[i] = UINT64_MAX if done else w.n_ids
        start = w.n_ids
        i += 1
    return n


# empty arrays of encode_with's types, to clone
cdef carray.array _UINT32S = array("I")
cdef carray.array _INT32S = array("i")
cdef carray.array _UINT64S = array("Q")


cdef tuple _ids_flat(const uint32_t* ids, const uint64_t* ends, Py_ssize_t n,
                     const uint32_t* text_ids):
    # (ids, offsets, left): the n texts' ids (text_ids of the walk's token
    # texts) in one array('I'), text i's at
    # ids[offsets[i]:offsets[i + 1]] (offsets an array('Q')); left, the
    # indices of the texts with no ids to give (an end of UINT64_MAX), whose
    # stretch is empty
    cdef carray.array offsets = carray.clone(_UINT64S, n + 1, False)
    cdef carray.array out
    cdef list left = []
    cdef uint64_t a = 0
    cdef Py_ssize_t i
    offsets.data.as_ulonglongs[0] = 0
    for i in range(n):
        if ends[i] == UINT64_MAX:
            left.append(i)
        else:
            a = ends[i]
        offsets.data.as_ulonglongs[i + 1] = a
    out = carray.clone(_UINT32S, a, False)
    for i in range(<Py_ssize_t>a):
        out.data.as_uints[i] = text_ids[ids[i]]
    return out, offsets, left


#: the actions a :class:`CodePointRules` rule gives a code point (OTHER:
#: the text holding it is left to the caller)
APPEND, SPACE, ALONE, SKIP, OTHER = ACT_APPEND, ACT_SPACE, ACT_ALONE, ACT_SKIP, ENTRY_OTHER
#: the most code points an :data:`APPEND` of several gives
EXPAND_MAX = EXPANSION_MAX


cdef class CodePointRules:
    """A normalisation rule of one action and one code point a code point,
    as :class:`BertNormalizer` tabulates llama.cpp's, but asked of
    ``rule(cps) -> [(action, mapped code point), ...]`` only for the code
    points that the texts met so far hold, all those new to one call at once
    (a rule that runs Python stages can then batch them: the shared corpus
    holds 52k distinct code points in 4343 of the 4352 blocks, and the table
    of every code point through BERT's stages took 12 s to build). An
    :data:`APPEND` may give a tuple of 2 or 3 code points instead (a Hangul
    syllable's jamo), each of which counts as a character of the word.

    >>> rules = CodePointRules(lambda cps: [(ALONE, cp) if cp == 33 else (APPEND, cp + 1)
    ...                                     if cp < 0xAC00 else (APPEND, (cp, cp)) for cp in cps])
    >>> rules.map_code_point(ord("a")), rules.map_code_point(33), rules.map_code_point(0xAC00)
    ((0, 98), (2, 33), (0, (44032, 44032)))
    """

    cdef uint16_t stage1[N_BLOCKS]     # 0: no entry of the block computed yet
    cdef uint32_t* stage2              # room for every block: 0 unused, then each as first met;
                                       # an entry 0 (no code point's) is not computed yet
    cdef size_t n_blocks
    cdef uint32_t* expand[EXPAND_CHUNKS]   # chunks of expansions, allocated as needed, never moved
    cdef size_t n_expansions
    cdef bint latin1                   # every entry of block 0 computed
    cdef uint8_t ascii[128]            # NormTable.ascii, zeros until latin1
    cdef object rule
    cdef uint64_t owner                # its identity in a model's chunk cache

    def __cinit__(self):
        self.stage2 = NULL
        memset(self.expand, 0, sizeof(self.expand))
        self.owner = piece_cache_owner()

    def __dealloc__(self):
        cdef size_t k
        free(self.stage2)
        for k in range(EXPAND_CHUNKS):
            free(self.expand[k])

    def __init__(self, rule):
        self.rule = rule
        self.n_blocks = 1
        # 4.5 MB of address space; only the blocks met are ever touched
        self.stage2 = <uint32_t*>calloc((N_BLOCKS + 1) * 256, sizeof(uint32_t))
        if self.stage2 == NULL:
            raise MemoryError()

    cdef NormTable table(self) noexcept:
        cdef NormTable t
        t.stage1 = self.stage1
        t.stage2 = self.stage2
        t.ascii = self.ascii
        t.expand = self.expand
        return t

    cdef uint32_t _expand_entry(self, tuple cps) except 0:
        # a new expansion of cps (checked): its APPEND entry
        cdef size_t k = self.n_expansions, chunk = k >> EXPAND_CHUNK_BITS, j
        cdef uint32_t* x
        if chunk >= EXPAND_CHUNKS:
            raise ValueError("rule gave more expansions than there are code points")
        if self.expand[chunk] == NULL:
            self.expand[chunk] = <uint32_t*>malloc((EXPANSION_MAX + 1) * sizeof(uint32_t)
                                                   << EXPAND_CHUNK_BITS)
            if self.expand[chunk] == NULL:
                raise MemoryError()
        x = self.expand[chunk] + (k & ((1 << EXPAND_CHUNK_BITS) - 1)) * (EXPANSION_MAX + 1)
        x[0] = len(cps)
        for j in range(len(cps)):
            x[j + 1] = cps[j]
        self.n_expansions += 1
        return ACT_APPEND | ((EXPAND_BASE + <uint32_t>k) << 2)

    cdef int _compute(self, list cps) except -1:
        # The rule runs first, in Python, where another thread may take the
        # GIL and compute code points too; the table only changes after it,
        # with no Python code in between, and an entry is written once (an
        # expansion before its entry). stage2 and the expansions never move
        # and a text runs without the GIL only once every entry it reads is
        # written, so it never sees one change.
        cdef list found = list(self.rule(cps))
        cdef list entries = []
        cdef uint32_t cp, block, k, at
        if len(found) != len(cps):
            raise ValueError(f"rule gave {len(found)} rules for {len(cps)} code points")
        for cp, (action, mapped) in zip(cps, found):
            if action == OTHER:
                entries.append(ENTRY_OTHER)
            elif action == APPEND and type(mapped) is tuple:
                if not (2 <= len(mapped) <= EXPANSION_MAX
                        and all(type(c) is int and 0 <= c < N_CODE_POINTS for c in mapped)):
                    raise ValueError(f"rule gave {cp:#x} the code points {mapped!r} (2 to "
                                     f"{EXPANSION_MAX} are taken)")
                entries.append(mapped)
            elif action in (APPEND, ALONE, SPACE, SKIP):
                if not 0 <= mapped < N_CODE_POINTS:
                    raise ValueError(f"rule gave {cp:#x} the code point {mapped!r}")
                entries.append(<uint32_t>action | ((<uint32_t>mapped + DELTA_BIAS - cp) << 2))
            else:
                raise ValueError(f"rule gave {cp:#x} the action {action!r}")
        for k in range(len(cps)):
            cp = cps[k]
            block = cp >> 8
            if self.stage1[block] == 0:
                self.stage1[block] = <uint16_t>self.n_blocks
                self.n_blocks += 1
            at = (<uint32_t>self.stage1[block] << 8) | (cp & 0xFF)
            if self.stage2[at] == 0:
                entry = entries[k]
                self.stage2[at] = self._expand_entry(entry) if type(entry) is tuple else entry
        return 0

    cdef int cover(self, const TextRef* refs, Py_ssize_t n) except -1:
        # Computes every entry that the texts' code points need and is not
        # yet, a surrogate pair's code point too (_run may read it).
        cdef Py_ssize_t i
        cdef size_t j
        cdef uint32_t cp, pair
        cdef const TextRef* t
        cdef NormTable table = self.table()
        cdef set missing = None
        if not self.latin1:
            # the Latin-1 block whole, once: a str of kind 1 may hold any of
            # it, and NormTable.ascii is made of it
            self._compute(list(range(256)))
            self.latin1 = True
            _fill_ascii(&table, self.ascii)
        for i in range(n):
            t = &refs[i]
            if t.kind == 1:
                continue
            j = 0
            while j < t.length:
                j = (_next_uncovered(<const uint16_t*>t.data, j, t.length, &table) if t.kind == 2
                     else _next_uncovered(<const uint32_t*>t.data, j, t.length, &table))
                if j >= t.length:
                    break
                cp = _unit(t, j)
                j += 1
                if missing is None:
                    missing = set()
                if _entry(&table, cp) == 0:
                    missing.add(cp)
                if 0xD800 <= cp <= 0xDBFF and j < t.length and 0xDC00 <= _unit(t, j) <= 0xDFFF:
                    pair = 0x10000 + ((cp - 0xD800) << 10) + (_unit(t, j) - 0xDC00)
                    if _entry(&table, pair) == 0:
                        missing.add(pair)
        if missing:
            self._compute(sorted(missing))
        return 0

    def map_code_point(self, uint32_t cp):
        """``(action, code point or code points)`` of ``cp``, computing it if need be."""
        cdef NormTable t
        cdef uint32_t e, j
        cdef const uint32_t* x
        if cp >= N_CODE_POINTS:
            raise ValueError(f"{cp:#x} is not a code point")
        t = self.table()
        if _entry(&t, cp) == 0:
            self._compute([cp])
        e = _entry(&t, cp)
        if e == ENTRY_OTHER:
            return OTHER, cp
        if (e >> 2) >= EXPAND_BASE:
            x = _expansion(&t, e)
            return e & 3, tuple([x[j] for j in range(1, x[0] + 1)])
        return e & 3, cp + (e >> 2) - DELTA_BIAS

    def words(self, texts):
        """``(words, ends, left, size)``: the words these rules make of each
        str in ``texts``, their UTF-8 back to back in the bytes ``words``,
        word i ending at ``ends[i]`` (an ``array('Q')``); ``left``, the
        indices of the texts holding a code point left to the caller
        (:data:`OTHER`), whose words are not there; ``size``, the UTF-8 bytes
        of the other texts. The GIL is released once for all of them.

        >>> rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else OTHER if cp == 63
        ...                                      else APPEND, cp) for cp in cps])
        >>> rules.words(["ab c", "d?", "é"])
        (b'abc\\xc3\\xa9', array('Q', [2, 3, 5]), [1], 6)
        """
        cdef tuple items = tuple(texts)
        cdef Py_ssize_t n = len(items), i
        cdef TextRef* refs = <TextRef*>malloc((n + 1) * sizeof(TextRef))
        cdef uint8_t* left = <uint8_t*>calloc(n + 1, 1)
        cdef size_t size = 0, text_len, n_ends
        cdef NormTable table
        cdef Automaton bare  # words as they are: no word start, no length limit
        cdef Work w
        memset(&w, 0, sizeof(Work))
        w.collect = True
        memset(&bare, 0, sizeof(Automaton))
        bare.max_chars = SIZE_MAX
        try:
            if refs == NULL or left == NULL:
                raise MemoryError()
            for i in range(n):
                text = items[i]
                if not isinstance(text, str):
                    raise TypeError(f"texts must be str, not {type(text).__name__}")
                _text_ref(<str>text, &refs[i])
            self.cover(refs, n)
            table = self.table()
            with nogil:
                for i in range(n):
                    text_len, n_ends = w.text_len, w.n_ends
                    if _run_ref(&refs[i], &table, &bare, &w):
                        w.text_len, w.n_ends = text_len, n_ends
                        left[i] = 1
                    else:
                        size += utf8_size(refs[i].data, refs[i].length, refs[i].kind)
            ends = array("Q")
            if w.n_ends:
                ends.frombytes(PyBytes_FromStringAndSize(<char*>w.ends,
                                                         w.n_ends * sizeof(uint64_t)))
            return (PyBytes_FromStringAndSize(<char*>w.text, w.text_len), ends,
                    [i for i in range(n) if left[i]], size)
        finally:
            free(refs)
            free(left)
            _work_free(&w)


cdef class WordPieceModel:
    """llama.cpp's WordPiece over ``tokens`` (raw UTF-8 texts by id; ``None`` for none;
    ``ids``, if given, the token id of each text instead of its index).

    Word-initial pieces start with ``▁`` (U+2581), continuation pieces are bare;
    a word that some position of cannot be cut becomes ``unk_id`` (dropped when
    ``unk_id`` is ``None``). A ``str`` holding surrogates is read as tiktoken
    repairs it: a high one before a low one is the code point they encode,
    any other is U+FFFD, which the normaliser drops.

    >>> m = WordPieceModel([b"[UNK]", "\\u2581a".encode(), b"a" * 3], 0)
    >>> m.encode("aaaa a"), m.count("b")
    ([1, 2, 1], 1)
    """

    cdef Unit* units
    cdef uint32_t* token_len
    cdef uint32_t* text_ids        # each text's token id (ints, as C)
    cdef uint32_t* counts          # zeros, one a text: _ids_list's counts (the GIL held)
    cdef size_t n_counts
    cdef int32_t* bmp              # Automaton.bmp
    cdef uint64_t* starts          # Automaton.starts
    cdef uint64_t owner            # its words' identity in the pre-token cache
    # probes of the token index that walks may still spend cutting words of
    # over PROBE_MAX bytes before the automaton is built (then a word that
    # would take more builds it): what building costs, so a model whose
    # texts need the automaton little never pays for it (settable: 0 makes
    # every such word build it)
    cdef public uint64_t probes_left
    cdef Work kept                 # encode_with's buffers for short texts (GIL held)
    cdef bint kept_busy
    cdef ChunkCache chunks         # the ids of chunks met before (_run_chunked)
    cdef bint chunks_busy          # a walk has it (taken and given back with the GIL held)
    # the most chunks the cache keeps (settable; 0: no chunk cache), a slot
    # of 64 bytes each (a power of two of them: 1 << 16 take 4 MiB), made
    # on first use
    cdef public size_t chunk_cache_entries
    cdef Automaton auto
    cdef NormTable norm
    cdef readonly BertNormalizer normalizer   # None until _need_normalizer
    cdef bint lowercase
    cdef bint strip_accents
    cdef tuple ints
    cdef tuple _texts
    cdef TokenTables whole
    cdef readonly uint32_t n_states   # 0 until the automaton is built (_need_automaton)
    cdef readonly uint32_t n_units
    cdef readonly uint32_t n_tokens
    cdef size_t n_bytes               # the texts' bytes, plus 1: a bound on the states

    def __cinit__(self):
        self.units = NULL
        self.bmp = NULL
        self.starts = NULL
        memset(&self.kept, 0, sizeof(Work))
        memset(&self.chunks, 0, sizeof(ChunkCache))
        self.chunk_cache_entries = CHUNK_ENTRIES
        self.token_len = NULL
        self.text_ids = NULL
        self.counts = NULL
        self.n_counts = 0
        self.owner = piece_cache_owner()
        self.probes_left = PROBE_ALLOWANCE

    def __dealloc__(self):
        free(self.units)
        free(self.token_len)
        free(self.text_ids)
        free(self.counts)
        free(self.bmp)
        free(self.starts)
        _free_chunk_tables(&self.chunks)
        _work_free(&self.kept)

    def __init__(self, tokens, unk_id=None, *, bint lowercase=True, bint strip_accents=True,
                 ids=None, bytes word_start=b"\xe2\x96\x81", max_word_chars=None):
        cdef list texts = list(tokens)
        cdef Py_ssize_t n_tokens = len(texts), i
        cdef size_t total = 1
        cdef object raw
        if unk_id is not None and not 0 <= unk_id < n_tokens:
            raise ValueError(f"unk_id {unk_id} is not one of the {n_tokens} token ids")
        if word_start is None or len(word_start) > MAX_START:
            raise ValueError(f"word_start must be bytes of at most {MAX_START}")
        if max_word_chars is not None and max_word_chars < 0:
            raise ValueError("max_word_chars must be None or >= 0")
        if ids is not None:
            ids = tuple(ids)
            if len(ids) != n_tokens:
                raise ValueError(f"ids must give each of the {n_tokens} texts an id below 2**32")
        self.token_len = <uint32_t*>calloc(n_tokens + 1, sizeof(uint32_t))
        if self.token_len == NULL:
            raise MemoryError()
        for i in range(n_tokens):
            raw = texts[i]
            if raw is not None:
                self.token_len[i] = <uint32_t>len(<bytes?>raw)
                total += self.token_len[i]
                if self.token_len[i] > self.auto.max_len:
                    self.auto.max_len = self.token_len[i]
                if (self.token_len[i] > self.auto.max_rest_len
                        and not (<bytes>raw).startswith(word_start)):
                    self.auto.max_rest_len = self.token_len[i]
        if total >= MAX_STATES // 2:
            raise ValueError(f"the token texts hold {total - 1} bytes in all; WordPiece takes "
                             f"fewer than {MAX_STATES // 2}")
        self.n_tokens = <uint32_t>n_tokens
        self.n_bytes = total
        self.whole = TokenTables(texts, lookup_only=True)
        self.auto.whole = &self.whole.view
        self.auto.units = NULL  # _need_automaton
        self.auto.token_len = self.token_len
        self.auto.unk = -1 if unk_id is None else <int32_t>unk_id
        self.auto.start_len = len(word_start)
        memcpy(self.auto.start, PyBytes_AS_STRING(word_start), self.auto.start_len)
        self.auto.max_chars = SIZE_MAX if max_word_chars is None else <size_t>max_word_chars
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        # the id of each text, as the int object the lists take; the
        # texts' indices (match_word_texts', tokenize's) made when first
        # asked for where they are not the ids (an encode never asks)
        self.ints = tuple(range(n_tokens)) if ids is None else ids
        self._texts = self.ints if ids is None else None
        self.text_ids = <uint32_t*>malloc((n_tokens + 1) * sizeof(uint32_t))
        if self.text_ids == NULL:
            raise MemoryError()
        for i in range(n_tokens):
            # (checked here, in C: a generator over bert-base's ids took ~3 ms of its load)
            raw = self.ints[i]
            if type(raw) is not int or not 0 <= raw < 1 << 32:
                raise ValueError(f"ids must give each of the {n_tokens} texts an id below 2**32")
            self.text_ids[i] = raw
        self._word_starts()
        self._one_byte_words()

    cdef int _word_starts(self) except -1:
        # Automaton.starts, from the token texts (~0.3 ms for bert-base)
        cdef const ByteStrings* strings = self.whole.view.strings
        cdef size_t start = self.auto.start_len, size, i
        cdef const uint8_t* text
        cdef uint32_t cp
        cdef uint64_t* bits = <uint64_t*>calloc(0x10000 // 64, sizeof(uint64_t))
        if bits == NULL:
            raise MemoryError()
        for i in range(self.n_tokens):
            size = self.token_len[i]
            text = strings.data + strings.offsets[i]
            if size < start or memcmp(text, self.auto.start, start) != 0:
                continue
            if size == start:
                free(bits)  # the word-start bytes are a token: a prefix of every word
                return 0
            cp = _first_code_point(text + start, size - start)
            if cp == 0x10000:
                if text[start] >= 0xF0 and text[start] < 0xF8 and size - start >= 4:
                    continue  # past the BMP: a prefix of no word the bits rule on
                free(bits)  # a token cut inside a code point
                return 0
            bits[cp >> 6] |= (<uint64_t>1) << (cp & 63)
        self.starts = bits
        self.auto.starts = bits
        return 0

    cdef int _one_byte_words(self) except -1:
        # Automaton.one: each ASCII byte's word matched once (the word-start
        # bytes, then the byte)
        cdef Work w
        cdef uint8_t word[MAX_START + 1]
        cdef int c
        memset(&w, 0, sizeof(Work))
        memcpy(word, self.auto.start, self.auto.start_len)
        try:
            for c in range(128):
                word[self.auto.start_len] = <uint8_t>c
                w.n_ids = 0
                if _match_word(&self.auto, word, self.auto.start_len + 1, &w):
                    self._need_automaton()
                    w.n_ids = 0
                    _match_word(&self.auto, word, self.auto.start_len + 1, &w)
                # one token, or none (no [UNK]); two (the word start alone
                # a token) go the common way
                self.auto.one[c] = (<int32_t>w.ids[0] if w.n_ids == 1 else
                                    ONE_NONE if w.n_ids == 0 else BMP_ASK)
        finally:
            _work_free(&w)
        return 0

    cdef int _need_bmp(self) except -1:
        # Automaton.bmp, made when a str past Latin-1 is first walked (the
        # GIL held: no walk reads it before it is whole): a word of one code
        # point is its token when it is one, else [UNK] when no token is a
        # prefix of it (the word-start bytes alone, or with the first bytes
        # of the code point's UTF-8, looked up once for each), else matched
        # (~1 ms for bert-base: one probe of the token index a code point)
        cdef uint8_t word[MAX_START + 4]
        cdef uint32_t c
        cdef size_t size, start = self.auto.start_len
        cdef int64_t found
        cdef int32_t* bmp
        cdef bint alone, first = False, second = False
        cdef uint8_t lead = 0, next_byte = 0
        if self.bmp != NULL:
            return 0
        bmp = <int32_t*>malloc(0x10000 * sizeof(int32_t))
        if bmp == NULL:
            raise MemoryError()
        memcpy(word, self.auto.start, start)
        alone = start > 0 and find_token(&self.whole.view, word, start) >= 0
        for c in range(0x10000):
            bmp[c] = BMP_ASK
            if c < 128 or 0xD800 <= c <= 0xDFFF:
                continue
            size = utf8_put(word + start, c)
            if word[start] != lead:
                lead = word[start]
                first = find_token(&self.whole.view, word, start + 1) >= 0
                next_byte = 0
            if size == 3 and word[start + 1] != next_byte:
                next_byte = word[start + 1]
                second = find_token(&self.whole.view, word, start + 2) >= 0
            found = find_token(&self.whole.view, word, start + size)
            if found >= 0:
                bmp[c] = <int32_t>found
            elif not (alone or first or (size == 3 and second)):
                bmp[c] = BMP_UNK
        self.bmp = bmp
        _publish(&self.auto.bmp, bmp)
        return 0

    cdef int _grow_units(self, size_t need) except -1:
        # Room for need units, the new ones free
        cdef size_t old = self.n_units, cap = self.n_units, i
        if need <= cap:
            return 0
        grow_array(<void**>&self.units, &cap, need, sizeof(Unit), 1024)
        for i in range(old, cap):
            self.units[i].base = 0
            self.units[i].check = -1
            self.units[i].fail = 0
            self.units[i].out = -1
        self.n_units = <uint32_t>cap
        return 0

    cdef inline void _spend_probes(self, const Work* w) noexcept:
        # what a walk spent of probes_left (the GIL held)
        self.probes_left -= w.probes if w.probes < self.probes_left else self.probes_left

    cdef int _need_automaton(self) except -1:
        # The automaton, built on the first word that needs it (the GIL
        # held: a walk that meets such a word first returns
        # WALK_NEED_AUTOMATON, and its caller builds and walks again). Most
        # words are tokens or short ASCII words cut by probes of the token
        # index, and building took half of all-MiniLM-L6-v2's load (~40 ms).
        # It is published whole: a walk of another thread without the GIL
        # sees no units (and asks for them) or all of them.
        if self.auto.units == NULL:
            self._build()
            _publish_units(&self.auto.units, self.units)
        return 0

    cdef int _build(self) except -1:
        # 1. The trie of the reversed texts (the lowest id wins a text held
        #    twice; the texts are the token tables'), in a hash table.
        # 2. Breadth first, each state's children placed in the double array
        #    at the first base where all their units are free, 64 bases
        #    tried at once against a bitmap of the used units, so the states
        #    near the root, which every word visits, sit together. (Trying
        #    64 bases one by one, then going past the last used unit, made
        #    bert-base's 114k states 920k units and took ~35 ms.)
        # 3. Failure links and outputs, breadth first again.
        cdef size_t cap = 1024, mask, k, total = self.n_bytes
        cdef const ByteStrings* strings = self.whole.view.strings
        cdef Edge* edges
        cdef int32_t* first_child = <int32_t*>malloc(total * sizeof(int32_t))
        cdef int32_t* next_sibling = <int32_t*>malloc(total * sizeof(int32_t))
        cdef int32_t* own = <int32_t*>malloc(total * sizeof(int32_t))
        cdef int32_t* unit_of = <int32_t*>malloc(total * sizeof(int32_t))
        cdef uint8_t* label = <uint8_t*>malloc(total)
        cdef int32_t* order = <int32_t*>malloc(total * sizeof(int32_t))
        cdef uint32_t n_nodes = 1, head = 0, tail = 1
        cdef int32_t node, child, v, u, f, base, lowest, sv, su
        cdef size_t free_unit = 1, high = 1
        cdef uint64_t* used = NULL  # a bit per unit, set when its check is set
        cdef uint64_t fit
        cdef size_t used_words = 0
        cdef int blocks
        cdef Py_ssize_t i, size
        cdef const uint8_t* s
        cdef Edge* e
        cdef Unit* shrunk
        cdef Automaton here      # the automaton being built, for _goto
        while cap < 2 * total:
            cap *= 2
        mask = cap - 1
        edges = <Edge*>malloc(cap * sizeof(Edge))
        try:
            if (edges == NULL or first_child == NULL or next_sibling == NULL or own == NULL
                    or unit_of == NULL or label == NULL or order == NULL):
                raise MemoryError()
            for k in range(cap):
                edges[k].child = -1
            first_child[0] = -1
            own[0] = -1
            for i in range(self.n_tokens):
                size = self.token_len[i]
                if size == 0:
                    continue
                s = strings.data + strings.offsets[i]
                node = 0
                for k in range(<size_t>size, 0, -1):
                    e = _edge_slot(edges, mask, (<uint64_t>node << 8) | s[k - 1])
                    if e.child < 0:
                        e.key = (<uint64_t>node << 8) | s[k - 1]
                        e.child = <int32_t>n_nodes
                        own[n_nodes] = -1
                        first_child[n_nodes] = -1
                        label[n_nodes] = s[k - 1]
                        next_sibling[n_nodes] = first_child[node]
                        first_child[node] = <int32_t>n_nodes
                        n_nodes += 1
                    node = e.child
                if own[node] < 0:
                    own[node] = <int32_t>i
            free(edges)
            edges = NULL
            self.n_states = n_nodes

            self._grow_units(n_nodes + 512)
            self.units[0].check = -2
            unit_of[0] = 0
            order[0] = 0
            while head < tail:
                v = order[head]
                head += 1
                sv = unit_of[v]
                self.units[sv].out = own[v]
                if first_child[v] < 0:
                    continue
                lowest = 255
                u = first_child[v]
                while u >= 0:
                    lowest = min(lowest, label[u])
                    order[tail] = u
                    tail += 1
                    u = next_sibling[u]
                base = max(1, <int32_t>free_unit - lowest)
                blocks = 0
                while True:
                    if <size_t>base + 64 + 256 > self.n_units:
                        self._grow_units(<size_t>base + 64 + 512)
                    if used_words < (self.n_units >> 6) + 2:
                        k = used_words
                        grow_array(<void**>&used, &used_words, (self.n_units >> 6) + 2,
                                   sizeof(uint64_t), 1024)
                        memset(used + k, 0, (used_words - k) * sizeof(uint64_t))
                        used[0] |= 1  # the root
                    # bit j of fit: base + j fits every child
                    fit = ~(<uint64_t>0)
                    u = first_child[v]
                    while u >= 0 and fit:
                        fit &= ~_bits64(used, <size_t>base + label[u])
                        u = next_sibling[u]
                    if fit:
                        base += ft_ctz64(fit)
                        break
                    base += 64
                    blocks += 1
                    if blocks == PLACE_BLOCKS:  # past the last used unit: all fit there
                        base = max(base, <int32_t>high - lowest)
                self.units[sv].base = base
                u = first_child[v]
                while u >= 0:
                    su = base + label[u]
                    used[su >> 6] |= (<uint64_t>1) << (su & 63)
                    self.units[su].check = sv
                    unit_of[u] = su
                    high = max(high, <size_t>su + 1)
                    u = next_sibling[u]
                while self.units[free_unit].check != -1:
                    free_unit += 1
            self._grow_units(high + 256)
            if self.n_units > high + 256:  # give back what doubling overshot
                shrunk = <Unit*>realloc(self.units, (high + 256) * sizeof(Unit))
                if shrunk != NULL:
                    self.units = shrunk
                    self.n_units = <uint32_t>(high + 256)

            here.units = self.units
            for head in range(n_nodes):
                v = order[head]
                sv = unit_of[v]
                if self.units[sv].out < 0 and v != 0:
                    self.units[sv].out = self.units[self.units[sv].fail].out
                u = first_child[v]
                while u >= 0:
                    su = unit_of[u]
                    child = -1
                    if v != 0:
                        f = self.units[sv].fail
                        while True:
                            child = _goto(&here, f, label[u])
                            if child >= 0 or f == 0:
                                break
                            f = self.units[f].fail
                    self.units[su].fail = child if child >= 0 else 0
                    u = next_sibling[u]
        finally:
            free(used)
            free(edges)
            free(first_child)
            free(next_sibling)
            free(own)
            free(unit_of)
            free(label)
            free(order)
        return 0

    cdef int _need_normalizer(self) except -1:
        # built on first use: a tokenizer.json model normalizes through its
        # CodePointRules and never needs it, and building it (with the
        # Unicode tables it reads) was a third of all-MiniLM-L6-v2's load
        cdef BertNormalizer found
        if self.normalizer is None:
            found = normalizer(self.lowercase, self.strip_accents)
            # asked again: building ran Python code, where another thread
            # may have set it, and a table a running encode reads must stay
            if self.normalizer is None:
                self.norm = found.table()
                self.normalizer = found
        return 0

    cdef int _take_chunks(self, Work* w, uint64_t tag, const NormTable* norm,
                          size_t units) except -1:
        # w.chunks: the chunk cache, for a walk of ids by the rules tag
        # names (norm) over texts of units code units, unless another walk
        # has it or it is off; made, or emptied for other rules, here (the
        # GIL held)
        cdef ChunkCache* c = &self.chunks
        cdef size_t slots = 2, buckets
        cdef uint32_t u
        w.chunks = NULL
        if self.chunks_busy or self.chunk_cache_entries == 0:
            return 0
        if (c.slots == NULL or c.limit != self.chunk_cache_entries
                or (units >= CHUNK_HUGE_TEXT and not c.huge)):
            # (a long walk after short ones starts the cache afresh in 2
            # MiB pages: what short texts kept is a few chunks walked again)
            _free_chunk_tables(c)
            # short slots: twice the entries (a power of two), 32 bytes
            # each, so that most chunks are in their bucket (at as many
            # slots as entries, en.txt's steady half missed its bucket 17k
            # times of 224k, each a branch mispredicted); ChunkSlots: half
            # the entries, a cache line each (a quarter of code.txt's
            # distinct chunks are long ones: at a quarter of the entries,
            # code whole took 27.31M instructions against 26.60M); c.used
            # keeps both tables' chunks within the entries. A walk of
            # fewer than CHUNK_HUGE_TEXT units gets tables of 4 KiB pages
            # touched as chunks reach them (12 MiB zeroed at once would be
            # a short first text's cost); a longer one's chunks reach most
            # pages anyway, and 2 MiB pages spare it their faults and every
            # later probe its TLB miss
            while 2 * slots <= self.chunk_cache_entries:
                slots *= 2
            buckets = slots
            c.short_mask = buckets - 1
            c.huge = units >= CHUNK_HUGE_TEXT
            c.short_slots = <ShortSlot*>wp_table_alloc(buckets * 2 * sizeof(ShortSlot), c.huge)
            if c.short_slots == NULL:
                raise MemoryError()
            c.short_shift = 44
            while (<uint64_t>1) << (44 - c.short_shift) < buckets:
                c.short_shift -= 1
            slots = slots // 2
            c.mask = slots - 1
            c.slots = <ChunkSlot*>wp_table_alloc(slots * sizeof(ChunkSlot), c.huge)
            if c.slots == NULL:
                raise MemoryError()
            c.shift = 44
            while (<uint64_t>1) << (44 - c.shift) < slots:
                c.shift -= 1
            c.limit = self.chunk_cache_entries
            c.used = 0
            c.tag = 0
            c.narrow = self.n_tokens <= 0xFFFF
        if c.tag != tag:
            if c.used:
                memset(c.slots, 0, (c.mask + 1) * sizeof(ChunkSlot))
                memset(c.short_slots, 0, (c.short_mask + 1) * 2 * sizeof(ShortSlot))
            free(c.wide_slots)
            c.wide_slots = NULL
            c.used = 0
            c.tag = tag
            c.sep = 0
            c.alone[0] = c.alone[1] = 0
            for u in range(0x80):
                if u < 0x21 and _entry(norm, u) & 3 == ACT_SPACE:
                    c.sep |= (<uint64_t>1) << u
                if _entry(norm, u) & 3 == ACT_ALONE:
                    c.alone[u >> 6] |= (<uint64_t>1) << (u & 63)
        self.chunks_busy = True
        w.chunks = c
        return 0

    cdef inline void _give_chunks(self, Work* w) noexcept:
        if w.chunks != NULL:
            w.chunks = NULL
            self.chunks_busy = False

    @property
    def chunk_cache_size(self):
        """The chunks the chunk cache holds (at most :attr:`chunk_cache_entries`).

        >>> m = WordPieceModel([b"[UNK]", b"\\xc0a"], 0, word_start=b"\\xc0")
        >>> rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])
        >>> m.chunk_cache_entries = 2
        >>> m.encode_with("a aa aaa aaaa " * 20, rules) == [1, 0, 0, 0] * 20, m.chunk_cache_size
        (True, 2)
        """
        return self.chunks.used

    cdef int _encode(self, str text, Work* w, bint chunks=False) except -1:
        # chunks: ids only, through the chunk cache
        cdef TextRef ref
        cdef int done
        self._need_normalizer()
        _text_ref(text, &ref)
        if ref.kind != 1:
            self._need_bmp()
        _use_cache(w, self.owner, self.probes_left)
        if chunks:
            self._take_chunks(w, self.normalizer.owner, &self.norm, ref.length)
        try:
            while True:
                if ref.length < NOGIL_MIN_TEXT:
                    done = _run_ref(&ref, &self.norm, &self.auto, w)
                else:
                    with nogil:
                        done = _run_ref(&ref, &self.norm, &self.auto, w)
                self._spend_probes(w)
                if done != WALK_NEED_AUTOMATON:
                    return 0
                self._need_automaton()
                _restart(w)
        finally:
            self._give_chunks(w)

    cdef int _encode_many(self, tuple texts, Work* w, uint64_t* ends) except -1:
        # ends[i]: where text i's ids end in w.ids. The tuple keeps the strs
        # alive while the GIL is released.
        cdef Py_ssize_t n = len(texts), i
        cdef TextRef* refs = <TextRef*>malloc((n + 1) * sizeof(TextRef))
        cdef object text
        cdef size_t units = 0
        if refs == NULL:
            raise MemoryError()
        try:
            self._need_normalizer()
            for i in range(n):
                text = texts[i]
                if type(text) is not str:
                    raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
                _text_ref(<str>text, &refs[i])
                units += refs[i].length
                if refs[i].kind != 1:
                    self._need_bmp()
            _use_cache(w, self.owner, self.probes_left)
            self._take_chunks(w, self.normalizer.owner, &self.norm, units)
            i = 0
            while True:
                with nogil:
                    i = _walk_texts(refs, i, n, &self.norm, &self.auto, w, ends)
                self._spend_probes(w)
                if i == n:
                    break
                self._need_automaton()
        finally:
            self._give_chunks(w)
            free(refs)
        return 0

    def encode_many(self, texts):
        """``[self.encode(t) for t in texts]``, with the GIL released once for all of them.

        >>> WordPieceModel([b"[UNK]", "\\u2581a".encode()], 0).encode_many(["a a", "", "b"])
        [[1, 1], [], [0]]
        """
        cdef tuple items = tuple(texts)
        cdef Py_ssize_t n = len(items)
        cdef uint64_t* ends = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
        cdef Work w
        memset(&w, 0, sizeof(Work))
        try:
            if ends == NULL:
                raise MemoryError()
            self._encode_many(items, &w, ends)
            return ids_lists(w.ids, ends, n, self.ints)
        finally:
            free(ends)
            _work_free(&w)

    def encode_many_flat(self, texts):
        """``(ids, offsets)``: every text's ids in one ``array('I')``, text i's at
        ``ids[offsets[i]:offsets[i + 1]]`` (``offsets`` an ``array('Q')``).

        >>> WordPieceModel([b"[UNK]", "\\u2581a".encode()], 0).encode_many_flat(["a a", "b"])
        (array('I', [1, 1, 0]), array('Q', [0, 2, 3]))
        """
        cdef tuple items = tuple(texts)
        cdef Py_ssize_t n = len(items)
        cdef uint64_t* ends = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
        cdef Work w
        memset(&w, 0, sizeof(Work))
        try:
            if ends == NULL:
                raise MemoryError()
            self._encode_many(items, &w, ends)
            return _ids_flat(w.ids, ends, n, self.text_ids)[:2]
        finally:
            free(ends)
            _work_free(&w)

    def encode_with(self, str text not None, CodePointRules rules not None, cuts=None,
                    bint offsets=False, bint words=False):
        """The ids of ``text`` normalised and split by ``rules`` instead of
        llama.cpp's rule, or ``None`` when it holds a code point ``rules``
        leaves to the caller (:data:`OTHER`).

        ``cuts``: ``[(id or None, start, end), ...]`` covering ``text`` in
        order, an added token's id for the characters ``start:end`` (one id
        and one word) or ``None`` for a stretch of text (by default the
        whole text is one). With ``offsets``, the same walk gives ``(ids,
        spans, words)``: ``array('I')``, ``array('i')`` of each id's start and
        end (characters of ``text``: each normalized character is of one
        character; ``[UNK]`` spans its word) in turn, ``array('i')`` of each
        id's word index (added tokens are words); ``None`` for a text of
        ``2**31`` characters or more too. With ``words``, ``(that, the words'
        UTF-8 back to back)`` (a normalized text with no whitespace).

        >>> m = WordPieceModel([b"[UNK]", b"\\xc0ab", b"c"], 0, word_start=b"\\xc0")
        >>> rules = CodePointRules(lambda cps: [(OTHER if cp == 0x3f else SPACE if cp == 32
        ...                                      else APPEND, cp) for cp in cps])
        >>> m.encode_with("abc", rules), m.encode_with("ab?", rules)
        ([1, 2], None)
        >>> m.encode_with("x abc", rules, [(None, 0, 1), (7, 1, 2), (None, 2, 5)], True)
        (array('I', [0, 7, 1, 2]), array('i', [0, 1, 1, 2, 2, 4, 4, 5]), array('i', [0, 1, 2, 2]))
        >>> m.encode_with("ab c", rules, words=True)
        ([1, 0], b'abc')
        """
        return self._encode_with(text, rules, cuts, offsets, words, False)

    cdef object _encode_with(self, str text, CodePointRules rules, object cuts, bint offsets,
                             bint words, bint as_array):
        # encode_with, which TextEntry calls without a Python call's arguments;
        # as_array: the ids as an array('I') (no offsets, words or cuts)
        cdef TextRef ref
        cdef NormTable table
        cdef Work fresh
        cdef Work* w = &fresh
        cdef int done
        cdef Cut* parts = NULL
        cdef Cut whole
        cdef size_t n_parts = 1, k, j
        cdef list added = None  # the added tokens' ids, when cuts are given
        _text_ref(text, &ref)
        if offsets and ref.length > MAX_OFFSET:
            return None
        whole.start = 0
        whole.end = ref.length
        whole.token = -1
        if ref.length < NOGIL_MIN_TEXT and not self.kept_busy:
            # a short text (a line, a query) walks in the model's buffers,
            # kept from call to call: the GIL, held throughout, is their lock
            # (busy: something the list's making ran encodes with this model)
            w = &self.kept
            self.kept_busy = True
            _work_reset(w)
        else:
            memset(w, 0, sizeof(Work))
        w.offsets = offsets
        w.keep_words = words
        try:
            if cuts is not None:
                added = []
                parts = self._cuts(<list?>cuts, ref.length, added)
                n_parts = len(cuts)
            if not rules.latin1:
                rules.cover(&ref, 1)
            # past Latin-1, the walk stops at a code point whose entry is
            # not computed yet and the text is covered then: a text of
            # code points met before is not searched for them (cover was
            # ~14 instructions a unit of a 4-byte str, a tenth of
            # multi.txt's whole walk, and ~120 a call a line)
            if ref.kind != 1:
                self._need_bmp()
            table = rules.table()
            _use_cache(w, self.owner, self.probes_left)
            if not offsets and not words:
                self._take_chunks(w, rules.owner, &table, ref.length)
            while True:
                if ref.length < NOGIL_MIN_TEXT:
                    done = _walk(&ref, &whole if parts == NULL else parts, n_parts, &table,
                                 &self.auto, w)
                else:
                    with nogil:
                        done = _walk(&ref, &whole if parts == NULL else parts, n_parts,
                                     &table, &self.auto, w)
                self._spend_probes(w)
                if done == WALK_UNCOVERED:
                    rules.cover(&ref, 1)
                    table = rules.table()
                elif done == WALK_NEED_AUTOMATON:
                    self._need_automaton()
                else:
                    break
                _restart(w)
            if done:
                return None
            if offsets:
                out = self._arrays(w, parts, 0, w.n_ids)
            elif as_array:
                # no int object a token: their references and the list's
                # slots were ~4M instructions of en.txt's half whole
                out = carray.clone(_UINT32S, w.n_ids, False)
                for k in range(w.n_ids):
                    (<carray.array>out).data.as_uints[k] = self.text_ids[w.ids[k]]
            elif not added:
                out = self._ids_list(w)
            else:
                out = []
                j = 0
                for k in range(w.n_ids):
                    if w.ids[k] == UINT32_MAX:
                        out.append(added[j])
                        j += 1
                    else:
                        out.append(<object>PyTuple_GET_ITEM(self.ints, w.ids[k]))
            if words:
                return out, PyBytes_FromStringAndSize(<char*>w.text, w.text_len)
            return out
        finally:
            self._give_chunks(w)
            free(parts)
            if w == &self.kept:
                self.kept_busy = False
            else:
                _work_free(w)

    cdef list _ids_list(self, const Work* w):
        # ids_list of the walk's ids; a long one with the references taken by count
        cdef list out
        cdef size_t n_ints = len(self.ints)
        cdef size_t bad
        if w.n_ids < COUNTED_IDS:
            return ids_list(w.ids, w.n_ids, self.ints)
        if self.n_counts < n_ints:
            free(self.counts)
            self.n_counts = 0
            self.counts = <uint32_t*>calloc(n_ints, sizeof(uint32_t))
            if self.counts == NULL:
                raise MemoryError()
            self.n_counts = n_ints
        out = ft_list_unset(w.n_ids)
        bad = wp_ids_items_counted(ft_list_items(out), w.ids, w.n_ids, ft_tuple_items(self.ints),
                                   self.counts, n_ints)
        if bad < w.n_ids:
            wp_list_forget(out)
            raise ValueError(f"internal error: token id {w.ids[bad]} out of range")
        PyObject_GC_UnTrack(out)
        return out

    cdef Cut* _cuts(self, list cuts, size_t length, list added) except NULL:
        # cuts as C structs, checked (the walk reads the text by them);
        # added gets the added tokens' ids in order
        cdef Py_ssize_t n = len(cuts), k
        cdef size_t at = 0
        cdef Cut* out = <Cut*>malloc((n + 1) * sizeof(Cut))
        if out == NULL:
            raise MemoryError()
        try:
            for k, (token, start, end) in enumerate(cuts):
                if not at <= start <= end <= length:
                    raise ValueError(f"cut {k} ({start}, {end}) is not the next of a text of "
                                     f"{length} characters")
                if token is not None and not 0 <= token < UINT32_MAX:
                    raise ValueError(f"cut {k}'s id {token!r} is not a token id below 2**32 - 1")
                out[k].start = start
                out[k].end = end
                out[k].token = -1 if token is None else token
                at = end
                if token is not None:
                    added.append(token)
            return out
        except BaseException:
            free(out)
            raise

    cdef tuple _arrays(self, Work* w, const Cut* parts, size_t a, size_t b):
        # encode_with's three arrays of w's ids a..b-1 (each UINT32_MAX: the
        # next added token of parts)
        cdef size_t n = b - a
        cdef carray.array ids = carray.clone(_UINT32S, n, False)
        cdef carray.array spans = carray.clone(_INT32S, 2 * n, False)
        cdef carray.array words = carray.clone(_INT32S, n, False)
        cdef uint32_t* out = ids.data.as_uints
        cdef size_t k, j = 0
        for k in range(n):
            if w.ids[a + k] == UINT32_MAX:
                while parts[j].token < 0:
                    j += 1
                out[k] = <uint32_t>parts[j].token
                j += 1
            else:
                out[k] = self.text_ids[w.ids[a + k]]
        if n:
            memcpy(spans.data.as_ints, w.spans + 2 * a, 2 * n * sizeof(int32_t))
            memcpy(words.data.as_ints, w.words + a, n * sizeof(int32_t))
        return ids, spans, words

    def encode_offsets_many_with(self, list texts not None, CodePointRules rules not None):
        """:meth:`encode_with` of each text with ``offsets`` (no cuts), with
        the GIL released once for all of them.

        >>> m = WordPieceModel([b"[UNK]", b"\\xc0a"], 0, word_start=b"\\xc0")
        >>> found = m.encode_offsets_many_with(["a a", "?"], CodePointRules(
        ...     lambda cps: [(SPACE if cp == 32 else OTHER if cp == 63 else APPEND, cp)
        ...                  for cp in cps]))
        >>> [list(a) for a in found[0]], found[1]
        ([[1, 1], [0, 1, 2, 3], [0, 1]], None)
        """
        cdef Py_ssize_t n = len(texts), i
        cdef TextRef* refs = <TextRef*>malloc((n + 1) * sizeof(TextRef))
        cdef uint64_t* ends = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
        cdef size_t a = 0
        cdef NormTable table
        cdef Work w
        cdef list out = []
        memset(&w, 0, sizeof(Work))
        w.offsets = True
        try:
            if refs == NULL or ends == NULL:
                raise MemoryError()
            for i in range(n):
                _text_ref(<str?>texts[i], &refs[i])
                if refs[i].kind != 1:
                    self._need_bmp()
            rules.cover(refs, n)
            table = rules.table()
            _use_cache(&w, self.owner, self.probes_left)
            i = 0
            while True:
                with nogil:
                    i = _walk_texts(refs, i, n, &table, &self.auto, &w, ends)
                self._spend_probes(&w)
                if i == n:
                    break
                self._need_automaton()
            for i in range(n):
                if ends[i] == UINT64_MAX:
                    out.append(None)
                else:
                    out.append(self._arrays(&w, NULL, a, ends[i]))
                    a = ends[i]
            return out
        finally:
            free(refs)
            free(ends)
            _work_free(&w)

    def encode_many_with(self, texts, CodePointRules rules not None, bint flat=False):
        """:meth:`encode_with` of each text, with the GIL released once for all of them.
        With ``flat``, ``(ids, offsets, left)``: the ids in one ``array('I')``,
        text i's at ``ids[offsets[i]:offsets[i + 1]]`` (an ``array('Q')``),
        and the indices of the texts given ``None`` (their stretch empty).

        >>> m = WordPieceModel([b"[UNK]", b"\\xc0a"], 0, word_start=b"\\xc0")
        >>> rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else OTHER if cp == 63
        ...                                      else APPEND, cp) for cp in cps])
        >>> m.encode_many_with(["a a", "b", "?"], rules)
        [[1, 1], [0], None]
        >>> m.encode_many_with(["a a", "?", "b"], rules, flat=True)
        (array('I', [1, 1, 0]), array('Q', [0, 2, 2, 3]), [1])
        """
        cdef tuple items = tuple(texts)
        cdef Py_ssize_t n = len(items), i
        cdef TextRef* refs = <TextRef*>malloc((n + 1) * sizeof(TextRef))
        cdef uint64_t* ends = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
        cdef NormTable table
        cdef object text
        cdef Work w
        cdef size_t units = 0
        memset(&w, 0, sizeof(Work))
        try:
            if refs == NULL or ends == NULL:
                raise MemoryError()
            for i in range(n):
                text = items[i]
                if type(text) is not str:
                    raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
                _text_ref(<str>text, &refs[i])
                units += refs[i].length
                if refs[i].kind != 1:
                    self._need_bmp()
            rules.cover(refs, n)
            table = rules.table()
            _use_cache(&w, self.owner, self.probes_left)
            self._take_chunks(&w, rules.owner, &table, units)
            i = 0
            while True:
                with nogil:
                    i = _walk_texts(refs, i, n, &table, &self.auto, &w, ends)
                self._spend_probes(&w)
                if i == n:
                    break
                self._need_automaton()
            self._give_chunks(&w)
            if flat:
                return _ids_flat(w.ids, ends, n, self.text_ids)
            return ids_lists(w.ids, ends, n, self.ints)
        finally:
            self._give_chunks(&w)
            free(refs)
            free(ends)
            _work_free(&w)

    def count_many(self, texts):
        """``[self.count(t) for t in texts]``."""
        _, offsets = self.encode_many_flat(texts)
        return [offsets[i + 1] - offsets[i] for i in range(len(offsets) - 1)]

    def encode(self, str text not None):
        """The ids of ``text``: normalised, split into words, each cut by longest match."""
        cdef Work w
        memset(&w, 0, sizeof(Work))
        try:
            self._encode(text, &w, True)
            return ids_list(w.ids, w.n_ids, self.ints)
        finally:
            _work_free(&w)

    def count(self, str text not None):
        """``len(self.encode(text))`` without building the list."""
        cdef Work w
        memset(&w, 0, sizeof(Work))
        try:
            self._encode(text, &w, True)
            return w.n_ids
        finally:
            _work_free(&w)

    def trie_steps(self, str text not None):
        """The automaton steps encoding ``text`` takes: at most twice its normalised bytes.

        A deterministic measure of the matching cost, for tests that bound it
        (a word of at most 24 bytes that is no token is matched by probes of
        the token index instead, which this does not count: a few hundred at
        most, whatever the vocabulary).
        """
        cdef Work w
        memset(&w, 0, sizeof(Work))
        try:
            self._encode(text, &w)
            return w.steps
        finally:
            _work_free(&w)

    def words(self, str text not None):
        """The normalised words of ``text`` (llama.cpp's ``preprocess``).

        >>> WordPieceModel([b"a"]).words("Héllo, 世界! 한국어")
        ['hello', ',', '世', '界', '!', 'ᄒᄀᄋ']
        """
        cdef Work w
        cdef size_t i, a = 0
        cdef list out = []
        memset(&w, 0, sizeof(Work))
        w.collect = True
        try:
            self._encode(text, &w)
            for i in range(w.n_ends):
                out.append((<char*>w.text)[a:w.ends[i]].decode("utf-8"))
                a = w.ends[i]
            return out
        finally:
            _work_free(&w)

    def match_word(self, bytes piece not None):
        """The ids of ``piece`` (bytes, no ``▁`` added) by greedy longest match,
        or ``[unk_id]`` when some position has no token.

        >>> m = WordPieceModel([b"?", b"ab", b"abc", b"d"], 0)
        >>> m.match_word(b"abcd"), m.match_word(b"abx")
        ([2, 3], [0])
        """
        return self._match_word(piece, self.ints)

    def match_word_texts(self, bytes piece not None):
        """:meth:`match_word` as the indices of the texts matched (ids only
        differ from them when ``ids`` was given).

        >>> m = WordPieceModel([b"?", b"ab", b"abc", b"d"], 0, ids=[7, 8, 9, 9])
        >>> m.match_word(b"abcd"), m.match_word_texts(b"abcd")
        ([9, 9], [2, 3])
        """
        if self._texts is None:
            self._texts = tuple(range(self.n_tokens))
        return self._match_word(piece, self._texts)

    cdef list _match_word(self, bytes piece, tuple ints):
        cdef Work w
        cdef const uint8_t* s = <const uint8_t*>PyBytes_AS_STRING(piece)
        cdef size_t n = len(piece)
        memset(&w, 0, sizeof(Work))
        self._need_automaton()
        try:
            if n < NOGIL_MIN_TEXT:
                _match(&self.auto, s, n, &w)
            else:
                with nogil:
                    _match(&self.auto, s, n, &w)
            return ids_list(w.ids, w.n_ids, ints)
        finally:
            _work_free(&w)

    def find_token(self, bytes data not None):
        """The id of the token whose text is ``data``, or -1.

        >>> WordPieceModel([b"ab", b"b"]).find_token(b"b")
        1
        """
        cdef const uint8_t* s = <const uint8_t*>PyBytes_AS_STRING(data)
        cdef Py_ssize_t k
        cdef int32_t state = 0, token
        if not data:
            return -1
        self._need_automaton()
        for k in range(len(data) - 1, -1, -1):
            state = _goto(&self.auto, state, s[k])
            if state < 0:
                return -1
        # the longest token ending here is the state's own text only if as long
        token = self.units[state].out
        if token < 0 or self.token_len[token] != <uint32_t>len(data):
            return -1
        return token


@cython.final
cdef class TextEntry:
    """``ids(text, allowed)`` of a compiled walk with no Python frame on the
    way: a ``str`` in which ``texts`` (the added tokens' texts'
    :class:`~fasttok.shared._literal_cut.LiteralCut`, the one their matcher
    searches with) finds none is walked at once by ``model``'s
    :meth:`WordPieceModel.encode_with` with ``rules`` and no cuts; any other
    call is ``other(text, allowed)``, which cuts at the added tokens. A
    short line's walk is ~1 us; the Python method this replaces (its frame,
    the first-character test's, encode_with's argument parsing) cost a third
    of that again.

    >>> m = WordPieceModel([b"[UNK]", b"\\xc0a"], 0, word_start=b"\\xc0")
    >>> rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])
    >>> from fasttok.shared._literal_cut import LiteralCut
    >>> ids = TextEntry(m, rules, LiteralCut(["[X]"]), lambda text, allowed: "other").ids
    >>> ids("a a", None), ids("a [a]", None), ids("a [X]", None)
    ([1, 1], [1, 0], 'other')
    """

    cdef WordPieceModel model
    cdef CodePointRules rules
    cdef object other
    cdef LiteralCut texts      # the search for the added tokens' texts

    def __init__(self, WordPieceModel model not None, CodePointRules rules not None,
                 LiteralCut texts not None, other not None):
        self.model = model
        self.rules = rules
        self.other = other
        self.texts = texts

    cdef bint _may_occur(self, str text) except -1:
        # whether an added token's text is in text
        return self.texts.occurs_in(text, False)

    def ids(self, text, allowed):
        """The ids of ``text``, or ``None`` (a text the walk declines)."""
        if type(text) is str and not self._may_occur(<str>text):
            return self.model._encode_with(<str>text, self.rules, None, False, False, False)
        return self.other(text, allowed)

    def ids_array(self, text, allowed):
        """:meth:`ids` as an ``array('I')`` (a buffer numpy wraps without a
        copy), made from the walk's ids with no list; ``None`` where
        :meth:`ids` gives ``None``.

        >>> m = WordPieceModel([b"[UNK]", b"\\xc0a"], 0, word_start=b"\\xc0")
        >>> rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])
        >>> from fasttok.shared._literal_cut import LiteralCut
        >>> ids_array = TextEntry(m, rules, LiteralCut(["[X]"]), lambda text, allowed: [5]).ids_array
        >>> ids_array("a a b", None), ids_array("a [X]", None)
        (array('I', [1, 1, 0]), array('I', [5]))
        """
        if type(text) is str and not self._may_occur(<str>text):
            return self.model._encode_with(<str>text, self.rules, None, False, False, True)
        found = self.other(text, allowed)
        return None if found is None else array("I", found)

    def ids_many(self, list texts not None, allowed):
        """:meth:`ids` of each ``str`` of ``texts`` (``None`` for any other):
        those no added token occurs in walked together, the GIL released
        once (:meth:`WordPieceModel.encode_many_with`), the others by ``other``.

        >>> m = WordPieceModel([b"[UNK]", b"\\xc0a"], 0, word_start=b"\\xc0")
        >>> rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])
        >>> from fasttok.shared._literal_cut import LiteralCut
        >>> TextEntry(m, rules, LiteralCut(["[X]"]), lambda text, allowed: "other").ids_many(
        ...     ["a a", "[X]", b"a", "b"], None)
        [[1, 1], 'other', None, [0]]
        """
        cdef Py_ssize_t n = len(texts), i
        cdef list out = [None] * n, plain = [], at = []
        cdef object text
        for i in range(n):
            text = texts[i]
            if type(text) is not str:
                continue
            if self._may_occur(<str>text):
                out[i] = self.other(text, allowed)
            else:
                plain.append(text)
                at.append(i)
        for i, found in zip(at, self.model.encode_many_with(plain, self.rules)):
            out[i] = found
        return out

    def ids_many_flat(self, list texts not None, allowed, fill not None):
        """:meth:`ids_many` as ``(ids, offsets)``: every text's ids in one
        ``array('I')``, text i's at ``ids[offsets[i]:offsets[i + 1]]`` (an
        ``array('Q')``), with no list made for a walked text; a text
        :meth:`ids_many` gives ``None`` for has ``fill(text)``'s ids.

        >>> m = WordPieceModel([b"[UNK]", b"\\xc0a"], 0, word_start=b"\\xc0")
        >>> rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else OTHER if cp == 63
        ...                                      else APPEND, cp) for cp in cps])
        >>> from fasttok.shared._literal_cut import LiteralCut
        >>> TextEntry(m, rules, LiteralCut(["[X]"]), lambda text, allowed: [7, 7]).ids_many_flat(
        ...     ["a a", "[X]", "?", "b"], None, lambda text: [9])
        (array('I', [1, 1, 7, 7, 9, 0]), array('Q', [0, 2, 4, 5, 6]))
        """
        cdef Py_ssize_t n = len(texts), i, k = 0, n_plain, total, pos = 0
        cdef list given = [None] * n, plain = [], at = []
        cdef object text, found
        cdef carray.array ids, offsets, out, out_offsets
        cdef uint64_t a, b
        cdef uint32_t v
        for i in range(n):
            text = texts[i]
            if type(text) is str and not self._may_occur(<str>text):
                plain.append(text)
                at.append(i)
                continue
            found = self.other(text, allowed)
            given[i] = fill(text) if found is None else found
        ids, offsets, left = self.model.encode_many_with(plain, self.rules, True)
        n_plain = len(plain)
        if n_plain == n and not left:
            return ids, offsets
        for i in left:
            given[at[i]] = fill(plain[i])
        total = len(ids)
        for found in given:
            if found is not None:
                total += len(found)
        out = carray.clone(_UINT32S, total, False)
        out_offsets = carray.clone(_UINT64S, n + 1, False)
        out_offsets.data.as_ulonglongs[0] = 0
        for i in range(n):
            found = given[i]
            if k < n_plain and at[k] == i:
                if found is None:
                    a = offsets.data.as_ulonglongs[k]
                    b = offsets.data.as_ulonglongs[k + 1]
                    memcpy(out.data.as_uints + pos, ids.data.as_uints + a,
                           (b - a) * sizeof(uint32_t))
                    pos += b - a
                k += 1
            if found is not None:
                for v in found:
                    out.data.as_uints[pos] = v
                    pos += 1
            out_offsets.data.as_ulonglongs[i + 1] = pos
        return out, out_offsets
