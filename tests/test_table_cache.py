"""The table cache: a second load reads the compiled tables from disk, and the
encoding it gives is the one the rank file gives; a cache that is off, cannot
be written, is stale, corrupt, truncated, of another version or hostile is
never used (and never crashes), and is rebuilt.

Every test points ``FASTTOK_CACHE_DIR`` at its own temporary folder, so the
real user cache is never written. The real encodings (cl100k_base,
o200k_base) are built and cached once for the module; the tests that rebuild
again and again use a tiny rank file of their own.
"""

from __future__ import annotations

import base64
import doctest
import hashlib
import os
import random
import struct
import zlib

import pytest

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, assert_same_ids, read_text
from fasttok import table_cache
from fasttok.formats._byte_bpe import CoreBPE
from fasttok.shared._tables import TokenTables, _payload_layout
from fasttok.errors import VocabularyFileError
from fasttok.pre_tokenizers.patterns import GPT2
from fasttok.registry import ENCODINGS, EncodingSpec

REAL = ("cl100k_base", "o200k_base")
HEADER = table_cache._HEADER
TABLES_AT = HEADER.size + table_cache._IDS.size  # where a dense encoding's tables start
FIELDS = ("magic", "format", "byte order", "fasttok version", "build", "rank file sha256", "spec")


# every test runs on a cache folder of its own (conftest's cache_dir)
pytestmark = pytest.mark.usefixtures("cache_dir")


# ---------------------------------------------------------------- a tiny vocabulary

def _rank_file(swap: bool = False) -> bytes:
    # 256 single bytes ranked in reverse byte order, then merges with ASCII
    # and 2- and 3-byte characters (atomic character search), special after.
    tokens = [bytes([b]) for b in reversed(range(256))]
    tokens += [b"th", b"he", b"the", b" t", b" the", b"ab", b"abc", "é".encode(), "中".encode()[:2],
               "中".encode(), "文".encode()[:2], "文".encode(), " é".encode()]
    if swap:  # same size, two ranks exchanged
        tokens[256], tokens[257] = tokens[257], tokens[256]
    return b"".join(base64.b64encode(t) + b" %d\n" % r for r, t in enumerate(tokens))


TINY_TEXT = "the abc thé 中文 the the é文 <|end|> ab"


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """``load(**options)`` of the encoding "tiny" from a rank file in a
    temporary vocabulary folder; ``write(data)`` replaces that file (and
    the pinned sha256 with it)."""
    vocab = tmp_path / "vocab"
    vocab.mkdir()
    monkeypatch.setenv("FASTTOK_VOCAB_DIR", str(vocab))
    state = {}

    def write(data: bytes) -> None:
        (vocab / "tiny.tiktoken").write_bytes(data)
        state["spec"] = EncodingSpec("tiny.tiktoken", hashlib.sha256(data).hexdigest(), GPT2,
                                     {"<|end|>": 269})

    def load(**options):
        return table_cache.load_named_encoding("tiny", state["spec"], **options)

    write(_rank_file())
    load.write = write
    load.spec = lambda: state["spec"]
    return load


def _cache(folder, name="tiny"):
    return folder / f"{name}.tables"


def _refuse_rank_file_parse(monkeypatch):
    import fasttok.loaders.tiktoken_file as tiktoken_file

    def refuse(*args, **kwargs):
        raise AssertionError("the rank file was parsed although the cache holds the tables")
    monkeypatch.setattr(tiktoken_file, "load_tiktoken", refuse)


def _count_rank_file_parses(monkeypatch) -> list:
    import fasttok.loaders.tiktoken_file as tiktoken_file

    calls = []
    parse = tiktoken_file.load_tiktoken

    def counted(*args, **kwargs):
        calls.append(args)
        return parse(*args, **kwargs)
    monkeypatch.setattr(tiktoken_file, "load_tiktoken", counted)
    return calls


def _vocab(tiny) -> str:
    return fasttok.registry.find_vocab_file(tiny.spec().file)


def _read_cached(tiny):
    return table_cache._read_tables(*table_cache._slot("tiny", tiny.spec(), _vocab(tiny)))


def _rewrite(path, change) -> None:
    data = bytearray(path.read_bytes())
    change(data)
    path.write_bytes(bytes(data))


def _field_start(field: int) -> int:
    # where header field number `field` (of FIELDS) starts
    return struct.calcsize("=" + "".join(("8s", "I", "I", "32s", "32s", "32s", "32s")[:field]))


def _sections(payload) -> dict:
    # where each array of TokenTables.to_bytes starts, and its header words
    words = struct.unpack_from("=5Q", payload)
    starts, _ = _payload_layout(words)
    return dict(zip(("offsets", "present", "data", "slots", "priority", "pair_keys", "pair_values"),
                    starts), n=words[0], n_buckets=words[2], pair_cap=words[3])


def _reseal(data: bytearray) -> None:
    # recompute the CRC after a change to the payload: what a hostile file would do
    crc_at = HEADER.size - 8
    data[crc_at:crc_at + 4] = struct.pack("=I", zlib.crc32(bytes(data[HEADER.size:])))


# ---------------------------------------------------------------- the cache is used

def test_first_load_writes_the_cache_file(tiny, cache_dir):
    tiny()
    assert _cache(cache_dir).stat().st_size > HEADER.size


def test_second_load_reads_tables_without_parsing_the_rank_file(tiny, cache_dir, monkeypatch):
    expected = tiny().encode(TINY_TEXT, allowed_special="all")
    _refuse_rank_file_parse(monkeypatch)
    assert tiny().encode(TINY_TEXT, allowed_special="all") == expected


def test_cached_vocabulary_equals_the_rank_file_vocabulary(tiny):
    built = tiny(cache=False).vocabulary
    tiny()
    assert tiny().vocabulary == built


def test_cached_encoding_pickles_by_name(tiny):
    tiny()
    assert tiny().__getstate__() == "tiny"


def test_cached_encoding_makes_its_vocabulary_only_when_asked(tiny):
    built = tiny(cache=False)
    tiny()
    enc = tiny()
    ids = enc.encode(TINY_TEXT, allowed_special="all")
    enc.decode(ids), enc.decode_single_token_bytes(269), enc.n_vocab, enc.__getstate__()
    assert "vocabulary" not in vars(enc)
    assert enc.vocabulary == built.vocabulary


def _facts(enc) -> tuple:
    return (enc.name, enc.n_vocab, enc.max_token_value, enc.special_tokens_set, enc._pat_str,
            enc.encode_single_token("<|end|>"), enc.encode_single_token("中"),
            enc.is_special_token(269), enc.token_byte_values())


def test_cached_encoding_answers_like_the_rank_file_build(tiny):
    built = tiny(cache=False)
    tiny()
    assert _facts(tiny()) == _facts(built)


def test_cache_keyword_false_writes_nothing(tiny, cache_dir):
    tiny(cache=False)
    assert not cache_dir.exists()


def test_cache_keyword_false_parses_the_rank_file_even_when_cached(tiny, monkeypatch):
    tiny()
    parses = _count_rank_file_parses(monkeypatch)
    tiny(cache=False)
    assert len(parses) == 1


def test_cache_env_zero_writes_nothing(tiny, cache_dir, monkeypatch):
    monkeypatch.setenv("FASTTOK_CACHE", "0")
    tiny()
    assert not cache_dir.exists()


def test_cache_env_zero_parses_the_rank_file_even_when_cached(tiny, monkeypatch):
    tiny()
    monkeypatch.setenv("FASTTOK_CACHE", "0")
    parses = _count_rank_file_parses(monkeypatch)
    tiny()
    assert len(parses) == 1


def test_cache_keyword_true_overrides_env_zero(tiny, cache_dir, monkeypatch):
    monkeypatch.setenv("FASTTOK_CACHE", "0")
    tiny(cache=True)
    assert _cache(cache_dir).exists()


def test_unwritable_cache_dir_falls_back_silently(tiny, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    monkeypatch.setenv("FASTTOK_CACHE_DIR", str(blocker / "cache"))  # a folder inside a file
    assert tiny().encode(TINY_TEXT, allowed_special="all") == tiny(cache=False).encode(
        TINY_TEXT, allowed_special="all")


def test_rank_files_are_also_looked_up_in_the_cache_dir(cache_dir):
    assert str(cache_dir) in fasttok.registry.vocab_search_path()


def test_writing_leaves_no_temporary_files(tiny, cache_dir):
    tiny()
    tiny.write(_rank_file(swap=True))
    tiny()
    assert sorted(p.name for p in cache_dir.iterdir()) == ["tiny.tables"]


# ---------------------------------------------------------------- never stale

def test_changed_rank_file_is_rebuilt_not_served_from_the_cache(tiny):
    before = tiny().encode_single_token("th")
    tiny.write(_rank_file(swap=True))  # same size, th and he exchange ranks
    assert (before, tiny().encode_single_token("th")) == (256, 257)


def test_rank_file_not_matching_the_pinned_sha256_is_an_error_even_when_cached(tiny, tmp_path):
    tiny()
    spec = tiny.spec()
    (tmp_path / "vocab" / "tiny.tiktoken").write_bytes(_rank_file(swap=True))
    with pytest.raises(VocabularyFileError, match="sha256 is"):
        table_cache.load_named_encoding("tiny", spec)


def test_special_tokens_of_another_spec_are_checked_not_taken_on_trust(tiny):
    # the cache file was written for other special tokens: this spec's own
    # (one collides with an ordinary token) must be checked as in a build
    tiny()
    spec = tiny.spec()
    clashing = EncodingSpec(spec.file, spec.sha256, spec.pat_str, {"<|clash|>": 5})
    with pytest.raises(VocabularyFileError, match="also the ordinary token"):
        table_cache.load_named_encoding("tiny", clashing)


@pytest.mark.parametrize("field", range(len(FIELDS)), ids=FIELDS)
def test_header_field_mismatch_is_not_read(tiny, cache_dir, field):
    tiny()
    start = _field_start(field)
    _rewrite(_cache(cache_dir), lambda d: d.__setitem__(start, d[start] ^ 0x01))
    assert _read_cached(tiny) is None


def test_cache_of_another_fasttok_version_is_not_read(tiny, monkeypatch):
    tiny()
    monkeypatch.setattr(fasttok.version, "__version__", "999.0")
    assert _read_cached(tiny) is None


def test_cache_of_a_rebuilt_tables_module_is_not_read(tiny, monkeypatch):
    tiny()
    monkeypatch.setattr(table_cache, "_build_digest", lambda: bytes(32))
    assert _read_cached(tiny) is None


def test_rebuilt_cache_file_is_valid_again(tiny, cache_dir, monkeypatch):
    tiny()
    path = _cache(cache_dir)
    path.write_bytes(path.read_bytes()[:-1])
    tiny()
    _refuse_rank_file_parse(monkeypatch)
    tiny()


# ---------------------------------------------------------------- corrupt, truncated, hostile

def test_truncated_cache_file_is_rebuilt(tiny, cache_dir):
    tiny()
    path = _cache(cache_dir)
    path.write_bytes(path.read_bytes()[:HEADER.size + 100])
    assert tiny().encode(TINY_TEXT, allowed_special="all") == tiny(cache=False).encode(
        TINY_TEXT, allowed_special="all")


def test_payload_byte_flip_fails_the_crc_and_is_rebuilt(tiny, cache_dir):
    tiny()
    _rewrite(_cache(cache_dir), lambda d: d.__setitem__(-3, d[-3] ^ 0x40))
    assert _read_cached(tiny) is None


def test_hostile_payload_with_a_valid_crc_is_rebuilt(tiny, cache_dir):
    tiny()

    def break_index(data):
        # every index slot names a token far past the end
        at = _sections(bytes(data[TABLES_AT:]))
        for slot in range(at["n_buckets"] * 4):
            struct.pack_into("=I", data, TABLES_AT + at["slots"] + 16 * slot + 8, 0xFFFFFFF0)
        _reseal(data)
    _rewrite(_cache(cache_dir), break_index)
    assert tiny().encode(TINY_TEXT, allowed_special="all") == tiny(cache=False).encode(
        TINY_TEXT, allowed_special="all")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_cache_file_that_is_a_fifo_is_ignored_without_blocking(tiny, cache_dir):
    cache_dir.mkdir()
    os.mkfifo(_cache(cache_dir))
    assert tiny().encode("the") == tiny(cache=False).encode("the")


def test_cache_file_far_larger_than_its_rank_file_is_not_read(tiny, cache_dir):
    cache_dir.mkdir()
    with open(_cache(cache_dir), "wb") as f:
        f.truncate(1 << 30)  # sparse: nothing is written, and nothing must be read
    assert _read_cached(tiny) is None


# ------------------------------------------------------------ only the user's own cache is trusted

OTHER_UID = 54321  # no user of this machine: a file of "someone else"
needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="giving a file to another user (os.chown) takes root")


def _forge(tiny, cache_dir) -> None:
    """Write the attack's cache file for "tiny": a valid header and CRC over
    tables in which "th" and "he" exchange ids, the file the user's own
    (0600) in a folder of the user's own (0700)."""
    tiny()  # the folder and the real cache file, which the forgery replaces
    os.chmod(cache_dir, 0o700)
    tokens = [base64.b64decode(line.split()[0]) for line in _rank_file(swap=True).splitlines()]
    payload = table_cache._ids_bytes(None) + TokenTables(tokens).to_bytes()
    key = table_cache._slot("tiny", tiny.spec(), _vocab(tiny))[1]
    path = _cache(cache_dir)
    path.write_bytes(HEADER.pack(*key, len(payload), zlib.crc32(payload)) + payload)
    os.chmod(path, 0o600)


def test_forged_cache_file_of_the_users_own_is_what_the_other_tests_defeat(tiny, cache_dir):
    # the forgery works where the cache is trusted: the cases below mean something
    _forge(tiny, cache_dir)
    assert tiny().encode_single_token("th") == 257


@needs_root
def test_cache_file_owned_by_another_user_is_not_read(tiny, cache_dir):
    _forge(tiny, cache_dir)
    os.chown(_cache(cache_dir), OTHER_UID, -1)
    assert tiny().encode_single_token("th") == 256


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666], ids=["group", "others", "all"])
def test_cache_file_writable_by_others_is_not_read(tiny, cache_dir, mode):
    _forge(tiny, cache_dir)
    os.chmod(_cache(cache_dir), mode)
    assert tiny().encode_single_token("th") == 256


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o1777], ids=["group", "others", "sticky-tmp"])
def test_cache_folder_writable_by_others_is_not_read(tiny, cache_dir, mode):
    _forge(tiny, cache_dir)
    os.chmod(cache_dir, mode)
    assert tiny().encode_single_token("th") == 256


@needs_root
def test_cache_folder_owned_by_another_user_is_not_read(tiny, cache_dir):
    _forge(tiny, cache_dir)
    os.chown(cache_dir, OTHER_UID, -1)
    assert tiny().encode_single_token("th") == 256


def test_cache_file_that_is_a_symbolic_link_is_not_followed(tiny, cache_dir, tmp_path):
    _forge(tiny, cache_dir)
    elsewhere = tmp_path / "elsewhere.tables"
    _cache(cache_dir).rename(elsewhere)
    _cache(cache_dir).symlink_to(elsewhere)
    assert tiny().encode_single_token("th") == 256


def test_cache_folder_writable_by_others_is_not_written(tiny, cache_dir):
    cache_dir.mkdir(mode=0o700)
    os.chmod(cache_dir, 0o777)
    tiny()
    assert list(cache_dir.iterdir()) == []


@needs_root
def test_cache_folder_owned_by_another_user_is_not_written(tiny, cache_dir):
    cache_dir.mkdir(mode=0o700)
    os.chown(cache_dir, OTHER_UID, -1)
    tiny()
    assert list(cache_dir.iterdir()) == []


def test_cache_folder_is_made_0700_and_its_file_0600(tiny, cache_dir):
    old = os.umask(0o022)
    try:
        tiny()
    finally:
        os.umask(old)
    assert (oct(cache_dir.stat().st_mode & 0o777), oct(_cache(cache_dir).stat().st_mode & 0o777)) == (
        "0o700", "0o600")


def test_untrusted_cache_still_gives_the_rank_file_encoding(tiny, cache_dir):
    _forge(tiny, cache_dir)
    os.chmod(cache_dir, 0o777)
    assert tiny().encode(TINY_TEXT, allowed_special="all") == tiny(cache=False).encode(
        TINY_TEXT, allowed_special="all")


def test_tokenizer_json_cache_key_changes_with_the_code_that_reads_it(tmp_path, monkeypatch):
    from fasttok.shared import _bytemap

    path = tmp_path / "tokenizer.json"
    path.write_bytes(b"{}")
    before = table_cache._hf_slot(str(path), b"{}")[1]
    copy = tmp_path / "_bytemap.so"
    copy.write_bytes(b"another build")
    monkeypatch.setattr(_bytemap, "__file__", str(copy))
    assert table_cache._hf_slot(str(path), b"{}")[1] != before


def test_cache_key_changes_with_the_code_that_parses_the_rank_file(tiny, tmp_path, monkeypatch):
    import fasttok.loaders.tiktoken_file as tiktoken_file

    before = table_cache._key("tiny", tiny.spec())
    copy = tmp_path / "tiktoken_file.py"
    copy.write_bytes(open(tiktoken_file.__file__, "rb").read() + b"# edited\n")
    monkeypatch.setattr(tiktoken_file, "__file__", str(copy))
    assert table_cache._key("tiny", tiny.spec()) != before


# ---------------------------------------------------------------- TokenTables.to_bytes / from_bytes

SMALL = [bytes([b]) for b in range(256)] + [b"ab", b"abc", None, "é".encode(), b"xyzzy-long-token"]


def _small_bytes() -> bytes:
    return TokenTables(SMALL).to_bytes()


def test_tables_read_back_find_every_token_and_pair_like_the_built_ones():
    built = TokenTables(SMALL)
    back = TokenTables.from_bytes(built.to_bytes())
    assert ([back.find(t) for t in SMALL if t] + [back.pair(97, 98), back.pair(256, 99)]
            == [built.find(t) for t in SMALL if t] + [built.pair(97, 98), built.pair(256, 99)])


def test_tables_read_back_give_the_constructor_tokens():
    assert TokenTables.from_bytes(_small_bytes()).tokens() == tuple(SMALL)


def test_same_tables_give_the_same_bytes():
    # nothing uninitialised (heap garbage) reaches the cache file
    assert TokenTables(SMALL).to_bytes() == _small_bytes()


def test_merge_list_tables_read_back_keep_their_pairs():
    tokens = [b"a", b"b", b"c", b"ab", b"abc"]
    built = TokenTables(tokens, merges=[(0, 1), (3, 2)])
    back = TokenTables.from_bytes(built.to_bytes())
    assert (back.n_pairs, back.pair(0, 1), back.pair(3, 2)) == (built.n_pairs, (3, 0), (4, 1))


def _with(data: bytes, at: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into("=" + fmt, out, at, value)
    return bytes(out)


def _hostile_cases():
    data = _small_bytes()
    at = _sections(data)
    n = at["n"]
    full_index = bytearray(data)
    for slot in range(at["n_buckets"] * 4):
        struct.pack_into("=I", full_index, at["slots"] + 16 * slot + 8, 1)
    full_pairs = bytearray(data)
    for slot in range(at["pair_cap"]):
        struct.pack_into("=Q", full_pairs, at["pair_keys"] + 8 * slot, slot)
    return {
        "token count beyond 32 bits": _with(data, 0, "Q", 0xFFFFFFFF),
        "huge token count for the size": _with(data, 0, "Q", 1 << 40),
        "huge byte count for the size": _with(data, 8, "Q", 1 << 62),
        "no index buckets": _with(data, 16, "Q", 0),
        "pair slots not a power of two": _with(data, 24, "Q", 24),
        "unknown flag": _with(data, 32, "Q", 7),
        "first offset not zero": _with(data, at["offsets"], "Q", 1),
        "offsets going back": _with(data, at["offsets"] + 8 * 100, "Q", 10**6),
        "last offset past the bytes": _with(data, at["offsets"] + 8 * n, "Q", 10**9),
        "present flag not 0 or 1": _with(data, at["present"] + 3, "B", 7),
        "absent token with bytes": _with(data, at["present"] + 5, "B", 0),
        "index slot past the last token": _with(data, at["slots"] + 8, "I", n + 5),
        "index slot naming an absent token": _with(data, at["slots"] + 8, "I", 259),
        "index without an empty slot": bytes(full_index),
        "pair index without an empty slot": bytes(full_pairs),
        "short": data[:-8],
        "long": data + bytes(8),
        "header only": data[:40],
        "empty": b"",
    }


HOSTILE = _hostile_cases()


@pytest.mark.parametrize("case", HOSTILE, ids=list(HOSTILE))
def test_from_bytes_rejects_hostile_tables(case):
    with pytest.raises(ValueError, match="serialized tables"):
        TokenTables.from_bytes(HOSTILE[case])


def test_from_bytes_rejects_a_misaligned_start():
    with pytest.raises(ValueError, match="aligned"):
        TokenTables.from_bytes(b"\0" + _small_bytes(), 1)


def test_from_bytes_survives_random_damage_without_a_crc():
    # No CRC here: whatever from_bytes accepts must still be safe to use.
    data = _small_bytes()
    rng = random.Random(20261130)
    accepted = refused = 0
    for _ in range(3000):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            tables = TokenTables.from_bytes(bytes(damaged))
        except ValueError:
            refused += 1
            continue
        accepted += 1
        tables.tokens()
        for token in SMALL[250:]:
            tables.find(token or b"?")
        for left, right in ((97, 98), (256, 99), (0, 0)):
            tables.pair(left, right)
    assert accepted  # most damage lands in token bytes or padding: usable, not unsafe
    assert refused  # the rest reaches an offset or an id, which from_bytes checks


# ---------------------------------------------------------------- the model over shared tables

BYTES = [bytes([b]) for b in range(256)]


def _decoded(core, ids) -> list:
    out = []
    for i in ids:
        try:
            out.append(core.token_bytes(i))
        except KeyError:
            out.append(None)
    return out


def test_model_decodes_specials_in_holes_and_past_the_tables():
    # a special in a hole of the ordinary ids, one past them with a gap
    # before it, two names for one id (the first one decodes)
    tables = TokenTables(BYTES + [b"ab", None, b"abc"])
    core = CoreBPE(tables, {b"<hole>": 257, b"<far>": 262, b"<same>": 262}, scanner="gpt2")
    assert (_decoded(core, range(255, 264)) ==
            [b"\xff", b"ab", b"<hole>", b"abc", None, None, None, b"<far>", None])
    assert core.decode_bytes([258, 257, 262, 0, 258]) == b"abc<hole><far>\x00abc"


def test_model_decode_tokens_override_the_tables_and_the_specials():
    tables = TokenTables(BYTES + [b"ab"])
    core = CoreBPE(tables, {b"<e>": 257}, BYTES[:97] + [b"A", None] + [None] * 158 + [b"<E>"],
                   scanner="gpt2")
    assert _decoded(core, [97, 98, 256, 257]) == [b"A", b"b", b"ab", b"<E>"]
    assert core.decode_bytes([97, 257, 98, 97]) == b"A<E>bA"


def test_model_decodes_a_special_on_an_ordinary_id_as_the_special():
    # only a vocabulary never validated gives a special an ordinary token's id
    core = CoreBPE(TokenTables(BYTES), {b"<e>": 97}, scanner="gpt2")
    assert core.decode_bytes([96, 97, 98]) == b"`<e>b"


def test_model_decodes_tokens_at_the_end_of_the_byte_buffer():
    # decode copies short tokens 16 bytes at a time where the buffer allows
    tokens = BYTES + [b"x" * n for n in range(2, 40)]
    core = CoreBPE(TokenTables(tokens), {b"<e>": len(tokens)}, scanner="gpt2")
    spelled = tokens + [b"<e>"]
    ids = range(len(spelled))
    assert core.decode_bytes(ids[::-1]) == b"".join(spelled[::-1])
    assert _decoded(core, ids) == spelled


def test_models_return_right_ids_after_a_model_with_more_ids_is_built():
    # the ints are shared by every model and their table grows with the largest
    small = CoreBPE(TokenTables(BYTES + [b"ab"]), {b"<e>": 257}, scanner="gpt2")
    before = small.encode("ab<e>b", b"\x01")
    large = CoreBPE(TokenTables(BYTES + [b"ab"]), {b"<e>": 299_999}, scanner="gpt2")
    assert (before, small.encode("ab<e>b", b"\x01"), large.encode("<e>ab", b"\x01")) == (
        [256, 257, 98], [256, 257, 98], [299_999, 256])


# ---------------------------------------------------------------- the real encodings

@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """name -> (encoding built from the rank file, encoding read from the
    cache, the cache file, the cache slot)"""
    if DATA_MISSING:
        pytest.skip(MISSING_DATA_REASON)
    folder = tmp_path_factory.mktemp("real-cache")
    out = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FASTTOK_CACHE_DIR", str(folder))
        patch.delenv("FASTTOK_CACHE", raising=False)
        built = {name: table_cache.load_named_encoding(name, ENCODINGS[name]) for name in REAL}
        _refuse_rank_file_parse(patch)  # what follows comes from the cache or fails
        for name in REAL:
            spec = ENCODINGS[name]
            cached = table_cache.load_named_encoding(name, spec)
            slot = table_cache._slot(name, spec, fasttok.registry.find_vocab_file(spec.file))
            out[name] = (built[name], cached, folder / f"{name}.tables", slot)
    return out


CORPUS = sorted(p.name for p in (DATA / "corpus").glob("*.txt")) if not DATA_MISSING else []


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("filename", CORPUS)
def test_cached_encoding_encodes_corpus_like_the_rank_file_build(real, name, filename):
    built, cached, _, _ = real[name]
    text = read_text(DATA / "corpus" / filename)
    ids = built.encode(text, allowed_special="all")
    assert_same_ids(cached.encode(text, allowed_special="all"), ids, text,
                    what=f"{name} from the cache, {filename}")


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("filename", CORPUS)
def test_cached_encoding_decodes_corpus_like_the_rank_file_build(real, name, filename):
    built, cached, _, _ = real[name]
    ids = built.encode(read_text(DATA / "corpus" / filename), allowed_special="all")
    assert cached.decode_bytes(ids) == built.decode_bytes(ids)


@pytest.mark.parametrize("name", REAL)
def test_cached_real_vocabulary_equals_the_rank_file_vocabulary(real, name):
    built, cached, _, _ = real[name]
    assert cached.vocabulary == built.vocabulary


@pytest.mark.parametrize("name", REAL)
def test_cached_encoding_decodes_every_id_as_the_vocabulary_spells_it(real, name):
    built, cached, _, _ = real[name]
    vocab = built.vocabulary
    spelled = dict(enumerate(vocab.tokens))
    for text, sid in reversed(vocab.special_tokens.items()):
        spelled[sid] = text.encode()
    ids = range(vocab.n_vocab + 2)
    assert _decoded(cached._core, ids) == [spelled.get(i) for i in ids]
    present = [i for i in ids if spelled.get(i) is not None]
    assert cached.decode_bytes(present[::-1]) == b"".join(spelled[i] for i in present[::-1])


def _read_back(slot, data: bytes, tmp_path):
    path = tmp_path / "probe.tables"
    path.write_bytes(data)
    return table_cache._read_tables(str(path), slot[1], slot[2])


def test_fuzzed_truncations_of_a_real_cache_file_are_all_refused(real, tmp_path):
    _, _, path, slot = real["cl100k_base"]
    data = path.read_bytes()
    rng = random.Random(7)
    cuts = [0, 1, HEADER.size - 1, HEADER.size, HEADER.size + 40, len(data) - 1]
    cuts += [rng.randrange(len(data)) for _ in range(40)]
    accepted = [cut for cut in cuts if _read_back(slot, data[:cut], tmp_path) is not None]
    assert accepted == []


def test_fuzzed_byte_flips_of_a_real_cache_file_never_give_a_wrong_table(real, tmp_path):
    _, _, path, slot = real["cl100k_base"]
    data = path.read_bytes()
    payload = data[TABLES_AT:]
    rng = random.Random(11)
    wrong = []
    for _ in range(60):
        damaged = bytearray(data)
        at = rng.randrange(len(damaged)) if rng.random() < 0.7 else rng.randrange(HEADER.size)
        damaged[at] ^= 1 << rng.randrange(8)
        read = _read_back(slot, bytes(damaged), tmp_path)
        if read is not None and (read[0] is not None or read[1].to_bytes() != payload):
            wrong.append(at)
    assert wrong == []


# ---------------------------------------------------------------- documentation

def test_table_cache_docstring_examples_hold():
    result = doctest.testmod(table_cache, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
