"""``Encoding.encode``, compiled: its two common calls reach the model's
compiled entry with no Python frame on the way.

A call of a ``str`` with ``disallowed_special="all"``, no ``sample`` and no
``add_special_tokens`` is common in one of two forms: everything allowed
(how ``tokenizers`` matches added tokens) or ``allowed_special`` left at its
default. Each goes to the pair the encoding bound once from its model
(:meth:`~fasttok.models.interface.Model.encoder`): ``call(text, argument)``,
a compiled walk or core with its allowed set or mask. The default form first
asks the model's ``find_special``, bound with the mask of every special,
whether one occurs (``None`` in its place: the encoding has none). What
either gives back as ``None`` (a text the walk declines), a special found,
and every other call (a text that is not a ``str`` among them, refused
there with its message) go to the encoding's ``_encode_general``, the Python
path that checks, raises and encodes exactly as it always has.

Why compiled: a Python method taking keyword arguments costs ~0.12 us a call
on CPython 3.11 before its first line, against ~0.05 us here (the frame
with its keyword binding, then the attribute reads of its body), and a
short line's whole walk is 0.7-1.5 us.

>>> from fasttok.core import Encoding
>>> from fasttok.vocab import Vocabulary
>>> enc = Encoding.from_vocabulary(Vocabulary(
...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256)),
...     special_tokens={"<e>": 256}))
>>> encode(enc, "a<e>", allowed_special="all"), encode(enc, "a<e>", disallowed_special=())
([97, 256], [97, 60, 101, 62])
"""

#: encode's default ``allowed_special``, known by identity: the default call
#: takes the bound entry without building or hashing a set
NONE_ALLOWED = frozenset()


def encode(self, text, *, allowed_special=NONE_ALLOWED, disallowed_special="all",
           add_special_tokens=False, sample=False, alpha=0.1, nbest_size=-1, seed=None):
    """Encode ``text`` to token ids, with tiktoken's special-token rules.

    Special token strings are errors unless allowed (``allowed_special``:
    a set, or ``"all"``) or explicitly not disallowed
    (``disallowed_special=()`` encodes them as plain text). When two
    allowed specials start at the same place, the longer one wins.
    ``add_special_tokens=True`` adds the BOS/EOS (or CLS/SEP) ids the
    vocabulary asks for (GGUF files); tiktoken encodings have none.
    ``sample=True`` draws one segmentation at random (subword
    regularization), ``seed`` for a repeatable draw: for Unigram models
    as sentencepiece samples (``alpha``, ``nbest_size``: -1 for the whole
    lattice; see :func:`fasttok.formats.sentencepiece.sample_encode`), for BPE models
    BPE-dropout, each merge skipped with probability ``alpha`` (byte-level
    BPE as Hugging Face tokenizers' ``dropout``, SentencePiece BPE as
    sentencepiece's). WordPiece cannot sample and says so.

    >>> import fasttok
    >>> enc = fasttok.get_encoding("gpt2")                  # doctest: +SKIP
    >>> enc.encode("hi<|endoftext|>", allowed_special="all")  # doctest: +SKIP
    [5303, 50256]
    """
    if type(text) is str and disallowed_special == "all" and not sample \
            and not add_special_tokens:
        # the default first: comparing a frozenset with "all" takes two
        # refused comparisons
        if allowed_special is NONE_ALLOWED:
            find = self._find_disallowed
            if find is None or find(text, self._disallowed_argument) < 0:
                ids = self._encode_none(text, self._none_argument)
                if ids is not None:
                    return ids
        elif allowed_special == "all":
            ids = self._encode_all(text, self._all_argument)
            if ids is not None:
                return ids
    return self._encode_general(text, allowed_special, disallowed_special, add_special_tokens,
                                sample, alpha, nbest_size, seed)
