"""Subword regularization over a Unigram lattice, as sentencepiece does it:
the n best segmentations (``Lattice::NBest``) and a segmentation drawn at
random (``Lattice::Sample``, or a draw among the n best).

One implementation for every Unigram source: a SentencePiece ``.model``
file or GGUF ``t5`` vocabulary (:mod:`fasttok.formats.sentencepiece`) and a
``tokenizer.json`` Unigram model (:class:`fasttok.models.hf_unigram.Unigram`,
one pre-tokenized piece at a time). What differs is data, held by
:class:`UnigramLattice`: the nodes, how a path's unknown nodes become ids,
the best segmentation, and the precision scores are added in (sentencepiece
adds float32s, tokenizers float64s).

>>> lattice = UnigramLattice(b"ab", [(0, 1, 1, -1.0), (0, 2, 3, -1.5), (1, 2, 2, -1.0)],
...                          lambda path: [token for _, _, token in path], lambda: [3])
>>> nbest(lattice, 3)
[([3], -1.5), ([1, 2], -2.0)]
>>> import random
>>> sorted({tuple(sample(lattice, 0.1, -1, random.Random(s))) for s in range(40)})
[(1, 2), (3,)]
"""

from __future__ import annotations

import heapq
import math
import random
import struct
from typing import Callable, Iterable, Optional

__all__ = ["UnigramLattice", "sample", "nbest", "f32"]

# sentencepiece's Lattice::NBest shrinks its agenda to the best
# min(_AGENDA_KEEP, 10 * nbest_size) hypotheses once it holds _AGENDA_MAX.
_AGENDA_MAX = 10000
_AGENDA_KEEP = 512
# NBestEncode's cap on nbest_size
_NBEST_MAX = 1024

_F32 = struct.Struct("<f")


def f32(x: float) -> float:
    """``x`` rounded to float32, as sentencepiece adds scores (one IEEE
    double sum of two float32s rounded to float32 is exactly the float32 sum).

    >>> f32(0.1) == 0.1, f32(0.5)
    (False, 0.5)
    """
    return _F32.unpack(_F32.pack(x))[0]


class UnigramLattice:
    """The lattice of one normalized text: ``normalized`` (its UTF-8
    bytes), ``nodes`` (``(start, end, id, score)`` byte ranges in
    sentencepiece's insertion order: by start, shorter first, the unknown
    node last), ``resolve`` (a path ``[(start, end, id)]`` -> its ids, the
    model's unknown rule applied), ``best`` (``() ->`` the ids of the
    model's own segmentation) and ``add`` (the precision of a score sum:
    :func:`f32` for sentencepiece, ``float`` for tokenizers).

    >>> UnigramLattice(b"a", [(0, 1, 1, -1.0)], list, list).ending
    {1: [(0, 1, -1.0)]}
    """

    __slots__ = ("normalized", "ending", "resolve", "best", "add")

    def __init__(self, normalized: bytes, nodes: Iterable[tuple], resolve: Callable,
                 best: Callable, add: Callable = f32) -> None:
        self.normalized = normalized
        self.resolve = resolve
        self.best = best
        self.add = add
        #: end -> [(start, id, score)] of the nodes ending there, in order
        self.ending: dict = {}
        for start, end, token, score in nodes:
            self.ending.setdefault(end, []).append((start, token, score))


def sample(lattice: UnigramLattice, alpha: float, nbest_size: int,
           rng: random.Random) -> list:
    """One segmentation's ids drawn as sentencepiece's ``SampleEncode``:
    ``nbest_size=-1`` (any negative) from every segmentation of the lattice
    with probability proportional to ``exp(alpha * score)`` (forward
    filtering, backward sampling); ``nbest_size > 1`` among the
    ``nbest_size`` best with the same weights; 0 or 1 the best one.

    >>> lattice = UnigramLattice(b"a", [(0, 1, 1, -1.0)], lambda p: [1], lambda: [1])
    >>> sample(lattice, 0.5, -1, random.Random(0))
    [1]
    """
    if nbest_size in (0, 1):
        return lattice.best()
    if nbest_size > 1:
        candidates = nbest(lattice, nbest_size)
        # exp(alpha * score) relative to the best: the same draw, and no
        # overflow for a large alpha
        scaled = [alpha * score for _, score in candidates]
        top = max(scaled)
        weights = [math.exp(x - top) for x in scaled]
        return rng.choices([ids for ids, _ in candidates], weights=weights)[0]
    ending = lattice.ending
    n = len(lattice.normalized)
    if n == 0:
        return []
    # forward: log of the summed weight of every path reaching each position
    forward = {0: 0.0}
    for end in sorted(ending):
        terms = [forward[start] + alpha * score for start, _, score in ending[end]
                 if start in forward]
        top = max(terms)
        forward[end] = top + math.log(sum(math.exp(t - top) for t in terms))
    path = []
    end = n
    while end > 0:
        options = [(start, token, score) for start, token, score in ending[end] if start in forward]
        weights = [math.exp(forward[start] + alpha * score - forward[end])
                   for start, _, score in options]
        start, token, _ = rng.choices(options, weights=weights)[0]
        path.append((start, end, token))
        end = start
    path.reverse()
    return lattice.resolve(path)


class _Hypothesis:
    """One hypothesis on sentencepiece's A* agenda, ordered by ``fx`` alone.

    The agenda is a ``std::priority_queue`` (largest ``fx`` on top); its
    order among equal ``fx`` is libstdc++'s ``push_heap``/``pop_heap``, and
    ``heapq`` runs the same two algorithms (a pop sinks the hole to a leaf
    along the smaller child, the right one on ties, then lets the last item
    rise), so a min-heap on ``-fx`` compared by that key only pops the same
    hypotheses in the same order.
    """

    __slots__ = ("key", "fx", "gx", "node", "next")

    def __init__(self, fx: float, gx: float, node: tuple, next_: Optional[_Hypothesis]) -> None:
        self.key = -fx
        self.fx = fx
        self.gx = gx
        self.node = node
        self.next = next_

    def __lt__(self, other: _Hypothesis) -> bool:
        return self.key < other.key


def nbest(lattice: UnigramLattice, nbest_size: int) -> list:
    """The ``nbest_size`` best segmentations, best first, as
    ``[(ids, score)]``: sentencepiece's ``Lattice::NBest``, A* from the end
    of the text with the exact Viterbi score as the heuristic, sums in
    ``lattice.add``'s precision, on a ``std::priority_queue`` whose order
    among equal scores is libstdc++'s heap order (the Linux wheels'),
    including the agenda's shrinking. ``nbest_size`` is capped at 1024;
    below 2 it gives the best one alone (score 0.0).

    >>> lattice = UnigramLattice(b"a", [(0, 1, 1, -1.0)], lambda p: [1], lambda: [1])
    >>> nbest(lattice, 2)
    [([1], -1.0)]
    """
    ending = lattice.ending
    add = lattice.add
    n = len(lattice.normalized)
    nbest_size = min(nbest_size, _NBEST_MAX)
    if n == 0 or nbest_size <= 1:
        return [(lattice.best() if n else [], 0.0)]
    # Viterbi: the best score of a path from the start through each node,
    # which is the exact A* heuristic. A node is (start, end, token, score,
    # best); the start node is BOS.
    bos = (0, 0, None, 0.0, 0.0)
    nodes_ending = {0: [bos]}
    for end in sorted(ending):
        nodes_ending[end] = [
            (start, end, token, score,
             max(add(left[4] + score) for left in nodes_ending[start]))
            for start, token, score in ending[end]]
    eos = (n, n, None, 0.0, max(add(left[4]) for left in nodes_ending[n]))
    agenda = [_Hypothesis(eos[4], 0.0, eos, None)]
    results = []
    while agenda:
        top = heapq.heappop(agenda)
        node = top.node
        if node is bos:
            path = []
            hyp = top.next
            while hyp.next is not None:
                start, end, token = hyp.node[:3]
                path.append((start, end, token))
                hyp = hyp.next
            results.append((path, top.fx))
            if len(results) == nbest_size:
                break
            continue
        gx = top.gx
        for left in nodes_ending[node[0]]:
            heapq.heappush(agenda, _Hypothesis(add(left[4] + gx), add(left[3] + gx), left, top))
        if len(agenda) >= _AGENDA_MAX:
            kept: list = []
            for _ in range(min(_AGENDA_KEEP, 10 * nbest_size)):
                heapq.heappush(kept, heapq.heappop(agenda))
            agenda = kept
    return [(lattice.resolve(path), score) for path, score in results]
