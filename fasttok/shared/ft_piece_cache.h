/* A bounded per-thread cache from a pre-tokenizer piece's bytes to its ids.
 *
 * Every compiled core whose pieces are encoded independently of their
 * neighbours (byte-level BPE, WordPiece words, Unigram pieces between fixed
 * cut points) asks it before running its model on a piece. Natural text is
 * Zipfian: after a few hundred kilobytes almost every English or code piece
 * has been seen, and a hit costs a hash and one or two cache lines instead
 * of merges and lookups in a token index of megabytes.
 *
 * Keys are (owner, piece bytes). An owner is a number a model takes once
 * (ft_pc_new_owner) and that no other model of the process ever gets, so
 * two models never share an answer, whatever their tables. Values are the
 * piece's ids (the model's own codes; up to 255).
 *
 * Bound: each thread has one table of a fixed number of 64-byte entries,
 * the same for every thread and every model (ft_pc_set_entries; 0 turns the
 * cache off). An entry holds its key and its ids inline: a piece whose bytes
 * (rounded up to 4) and ids (4 bytes each) do not fit in FT_PC_PAYLOAD bytes
 * is never cached there (ft_pc_fits). A longer piece (a ruled line of a
 * table, a run of indentation) is kept in one of the table's long entries
 * instead, a direct-mapped array of FT_PC_LONG_BYTES each (ft_pc_long_slots:
 * one per 256 entries, at least 1, at most FT_PC_LONG_MAX; allocated when
 * the first such piece is kept, so a model whose pieces never get that long
 * never has them) when its bytes and ids fit in one (ft_pc_long_fits);
 * each such piece merged again cost
 * ~15k instructions (en.txt's box-drawing rules of 220 bytes: 6.7% of its
 * steady half). A byte-level BPE piece of 2 to FT_PC_TOKEN_MAX bytes that
 * is one token of its model is kept in the table's token entries
 * (ft_pc_token_find; direct mapped, 32 bytes each, as many as the entries
 * up to FT_PC_TOKENS: 256 KiB at the default, which stay in the core's
 * L2; allocated when the first is kept): such pieces are most of English
 * and code, and a hit there is two compares instead of a hash, a filter
 * bit and a probe of a token index of megabytes. Nothing else is
 * allocated, so a thread's cache is at most entries * 64 bytes plus its
 * long and token entries, whatever it sees. A caller running
 * one long job on its threads may give each a bounded table of its own for
 * the job instead (ft_pc_table_init; encode_files does, sized by the files).
 *
 * Eviction: the table is 2-way set associative (direct mapped at 1 entry).
 * A piece goes to the set its hash names; an insertion moves the set's
 * first entry to its second place and writes the new one first, so a set
 * keeps its two most recently inserted pieces. A hit moves nothing.
 *
 * Part 1 (always): the entry layout and the inline lookup and insertion.
 * Part 2 (only where FT_PIECE_CACHE_STATE is defined, i.e. in
 * fasttok/shared/_piece_cache.pyx): the process-wide setting and the
 * per-thread tables. Other modules reach part 2 through that module's
 * cimported functions, so there is one setting and one table per thread.
 */
#ifndef FT_PIECE_CACHE_H
#define FT_PIECE_CACHE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FT_PC_ENTRY_BYTES 64
#define FT_PC_PAYLOAD 48  /* key bytes (rounded up to 4), then the ids */
#define FT_PC_LONG_BYTES 1024
#define FT_PC_LONG_PAYLOAD (FT_PC_LONG_BYTES - 16)
#define FT_PC_LONG_MAX 64
#define FT_PC_TOKEN_MAX 15  /* longest piece a token entry holds */
#define FT_PC_TOKENS 8192   /* token entries at most (256 KiB) */
#define FT_PC_TOKEN_BYTES 32

typedef struct {
    uint64_t owner;  /* 0: empty */
    uint32_t check;  /* the high half of the key's hash */
    uint8_t length;  /* key bytes */
    uint8_t n_ids;
    uint16_t unused;
    uint8_t payload[FT_PC_PAYLOAD];
} ft_pc_entry;

typedef struct {
    uint64_t owner;  /* 0: empty */
    uint32_t check;  /* the low half of the key's hash (its slot: the high half) */
    uint16_t length;
    uint16_t n_ids;
    uint8_t payload[FT_PC_LONG_PAYLOAD];  /* as an entry's */
} ft_pc_long;

/* A piece of 2 to FT_PC_TOKEN_MAX bytes that is one token of its owner:
 * its first 8 bytes, the rest with its length in the top byte, and the
 * token's code. */
typedef struct {
    uint64_t owner;  /* 0: empty */
    uint64_t head;
    uint64_t tail;
    uint64_t code;
} ft_pc_token;

typedef struct {
    ft_pc_entry* entries;  /* NULL when off */
    size_t n_entries;      /* a power of two */
    size_t set_mask;       /* sets - 1 */
    size_t ways;           /* 2, or 1 for a table of 1 entry */
    unsigned long long epoch;  /* of the setting it was made for */
    void* block;           /* what was allocated (entries is aligned in it) */
    ft_pc_long* longs;     /* NULL until the first long piece is kept */
    size_t long_mask;      /* long entries - 1 */
    /* ft_pc_no_token (never matches) until the first token is kept, then
     * the token entries, aligned in token_block */
    const ft_pc_token* tokens;
    size_t token_mask;     /* token entries - 1 (0 until they are made) */
    void* token_block;     /* NULL until the first token is kept */
    /* the gate (ft_pc_open): its sample's probes and hits in the current
     * window, and whether the last window closed it */
    uint32_t probes, hits, closed;
} ft_pc_table;

/* The gate. A fixed sample of the pieces, those whose hash has the low
 * FT_PC_SAMPLE_BITS bits of its check zero (one piece in 8, whatever the
 * text), is asked of the table and kept there whether the gate is open or
 * not, and only their probes are counted: at the end of each window of
 * FT_PC_WINDOW of them, the gate opens if at least one in
 * FT_PC_MIN_HIT_RATE hit, else it closes to every other piece. The sample
 * is kept whatever the gate says, so its hit rate is the one the whole
 * table would have: text that starts to repeat (the same lines again, a
 * model's second pass) reopens the gate a window later, about a thousand
 * pieces. (A gate that kept nothing while closed would find its table
 * stale on reopening, and its own misses would close it again.) A probe
 * that misses is a cache miss of its own (a random line of the table): on
 * Chinese text seen once, where the pieces that repeat are short ones that
 * merge in a step or two, a fifth of the probes hit and the cache cost a
 * tenth of the time; closed, it costs an eighth of that. */
#define FT_PC_SAMPLE_BITS 3
#define FT_PC_WINDOW 128
#define FT_PC_MIN_HIT_RATE 3

/* The first min(n, 8) bytes of p as a little-endian word, zero padded
 * (0 when n is 0), from fixed-size loads only: a copy of n bytes is a call, or a
 * store-forwarding stall when read back as a word. */
static inline uint64_t ft_pc_head(const uint8_t* p, size_t n) {
    uint64_t w8;
    uint32_t lo4, hi4;
    uint16_t lo2, hi2;
    if (n >= 8) { memcpy(&w8, p, 8); return w8; }
    if (n >= 4) {
        memcpy(&lo4, p, 4);
        memcpy(&hi4, p + n - 4, 4);
        return (uint64_t)lo4 | ((uint64_t)hi4 << (8 * (n - 4)));
    }
    if (n >= 2) {
        memcpy(&lo2, p, 2);
        memcpy(&hi2, p + n - 2, 2);
        return (uint64_t)lo2 | ((uint64_t)hi2 << (8 * (n - 2)));
    }
    return n ? p[0] : 0;
}

static inline uint64_t ft_pc_word(const uint8_t* p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* The hash of a piece of n bytes (the set comes from its low bits,
 * the entry's check from its high half). Beyond 8 bytes it reads whole
 * words, the last one ending at the piece's end. The shift before the last
 * multiply brings the high bytes down: without it a set's bits came from
 * a short key's first 5.5 bytes alone, and keys that share a prefix (a
 * Metaspace piece's 3-byte mark, then "th") crowded a few sets. */
static inline uint64_t ft_pc_hash(const uint8_t* p, size_t n) {
    uint64_t h = ft_pc_head(p, n) ^ (n * 0x9E3779B97F4A7C15ULL);
    size_t i;
    if (n > 8) {
        for (i = 8; i + 8 < n; i += 8) h = (h ^ ft_pc_word(p + i)) * 0xC4CEB9FE1A85EC53ULL;
        h = (h ^ ft_pc_word(p + n - 8)) * 0xC4CEB9FE1A85EC53ULL;
    }
    h ^= h >> 32;
    h *= 0xFF51AFD7ED558CCDULL;
    return h ^ (h >> 31);
}

/* Whether the kept key k (its entry's payload) is p[:n], comparing words:
 * the first 8 bytes (masked: the key's padding and ids follow it), then 8
 * at a time, the last word ending at the key's end (1 <= n <= 48). */
static inline int ft_pc_same(const uint8_t* k, const uint8_t* p, size_t n) {
    size_t i;
    if (n < 8)
        return (ft_pc_word(k) & ((1ULL << (8 * n)) - 1)) == ft_pc_head(p, n);
    if (ft_pc_word(k) != ft_pc_word(p)) return 0;
    for (i = 8; i + 8 < n; i += 8)
        if (ft_pc_word(k + i) != ft_pc_word(p + i)) return 0;
    return n == 8 || ft_pc_word(k + n - 8) == ft_pc_word(p + n - 8);
}

/* Whether a piece of n bytes with n_ids ids can be kept. */
static inline int ft_pc_fits(size_t n, size_t n_ids) {
    return n > 0 && ((n + 3) & ~(size_t)3) + 4 * n_ids <= FT_PC_PAYLOAD;
}

/* Whether a piece of n bytes with n_ids ids can be kept in a long entry. */
static inline int ft_pc_long_fits(size_t n, size_t n_ids) {
    return ((n + 3) & ~(size_t)3) + 4 * n_ids <= FT_PC_LONG_PAYLOAD;
}

/* The long entries of a table of n entries. */
static inline size_t ft_pc_long_slots(size_t n) {
    if (n == 0) return 0;
    return n >= 256 * FT_PC_LONG_MAX ? FT_PC_LONG_MAX : (n >= 256 ? n / 256 : 1);
}

static inline const uint32_t* ft_pc_long_ids(const ft_pc_long* e) {
    return (const uint32_t*)(const void*)(e->payload + ((e->length + 3) & ~3));
}

/* The long entry of (owner, key[:n]) with hash h (n > FT_PC_PAYLOAD), or
 * NULL. t may be NULL (off). */
static inline const ft_pc_long* ft_pc_long_find(const ft_pc_table* t, uint64_t owner,
                                                const uint8_t* key, size_t n, uint64_t h) {
    const ft_pc_long* e;
    if (t == NULL || t->longs == NULL) return NULL;
    e = t->longs + ((h >> 32) & t->long_mask);
    if (e->owner == owner && e->check == (uint32_t)h && e->length == n
            && memcmp(e->payload, key, n) == 0)
        return e;
    return NULL;
}

/* Keeps ids[:n_ids] for (owner, key[:n]) with hash h in its long entry,
 * replacing what it held; nothing when t is NULL or they do not fit. */
static inline void ft_pc_long_put(ft_pc_table* t, uint64_t owner, const uint8_t* key, size_t n,
                                  uint64_t h, const uint32_t* ids, size_t n_ids) {
    ft_pc_long* e;
    if (t == NULL || t->entries == NULL || !ft_pc_long_fits(n, n_ids)) return;
    if (t->longs == NULL) {
        t->longs = (ft_pc_long*)calloc(t->long_mask + 1, sizeof(ft_pc_long));
        if (t->longs == NULL) return;
    }
    e = t->longs + ((h >> 32) & t->long_mask);
    e->owner = owner;
    e->check = (uint32_t)h;
    e->length = (uint16_t)n;
    e->n_ids = (uint16_t)n_ids;
    memcpy(e->payload, key, n);
    memcpy(e->payload + ((n + 3) & ~(size_t)3), ids, 4 * n_ids);
}

static inline const uint32_t* ft_pc_ids(const ft_pc_entry* e) {
    return (const uint32_t*)(const void*)(e->payload + ((e->length + 3) & ~3));
}

/* Whether a piece of hash h is in the gate's sample (see FT_PC_WINDOW). */
static inline int ft_pc_sampled(uint64_t h) {
    return ((uint32_t)(h >> 32) & ((1u << FT_PC_SAMPLE_BITS) - 1)) == 0;
}

/* Whether to ask t for a piece of hash h (see FT_PC_WINDOW); t may be NULL. */
static inline int ft_pc_open(const ft_pc_table* t, uint64_t h) {
    return t != NULL && (!t->closed || ft_pc_sampled(h));
}

/* Counts a probe of t for a piece of hash h, and whether it hit. */
static inline void ft_pc_count(ft_pc_table* t, uint64_t h, int hit) {
    if (!ft_pc_sampled(h)) return;
    t->hits += hit != 0;
    if (++t->probes < FT_PC_WINDOW) return;
    t->closed = t->hits * FT_PC_MIN_HIT_RATE < t->probes;
    t->probes = t->hits = 0;
}

/* Asks the memory for the set of hash h ahead of ft_pc_find (t may be
 * NULL): a probe of a table this size is a cache miss most of the time,
 * and a caller that hashes the next piece before encoding this one hides it.
 * Nothing for a piece the gate keeps out (no probe follows). */
static inline void ft_pc_prefetch(const ft_pc_table* t, uint64_t h) {
#if defined(__GNUC__) || defined(__clang__)
    if (ft_pc_open(t, h)) __builtin_prefetch(t->entries + (h & t->set_mask) * t->ways);
#else
    (void)t; (void)h;
#endif
}

/* The entry of (owner, key[:n]) with hash h, or NULL. t may be NULL (off). */
static inline const ft_pc_entry* ft_pc_find(const ft_pc_table* t, uint64_t owner,
                                            const uint8_t* key, size_t n, uint64_t h) {
    const ft_pc_entry* e;
    uint32_t check = (uint32_t)(h >> 32);
    size_t w;
    if (t == NULL || n == 0 || n > FT_PC_PAYLOAD) return NULL;
    e = t->entries + (h & t->set_mask) * t->ways;
    for (w = 0; w < t->ways; w++, e++) {
        if (e->check == check && e->owner == owner && e->length == n
                && ft_pc_same(e->payload, key, n))
            return e;
    }
    return NULL;
}

/* Keeps ids[:n_ids] for (owner, key[:n]) with hash h, evicting the older of
 * its set's two entries; does nothing when t is NULL or the piece does not
 * fit (ft_pc_fits). */
static inline void ft_pc_put(ft_pc_table* t, uint64_t owner, const uint8_t* key, size_t n,
                             uint64_t h, const uint32_t* ids, size_t n_ids) {
    ft_pc_entry* e;
    size_t key_room = (n + 3) & ~(size_t)3;
    if (t == NULL || !ft_pc_fits(n, n_ids)) return;
    e = t->entries + (h & t->set_mask) * t->ways;
    if (t->ways == 2) e[1] = e[0];
    e->owner = owner;
    e->check = (uint32_t)(h >> 32);
    e->length = (uint8_t)n;
    e->n_ids = (uint8_t)n_ids;
    memset(e->payload + n, 0, key_room - n);
    memcpy(e->payload, key, n);
    memcpy(e->payload + key_room, ids, 4 * n_ids);
}

/* What a table's token entries are until the first is kept: one empty
 * entry (owner 0, never a model's), so a lookup needs no test of its own. */
static const ft_pc_token ft_pc_no_token = {0, 0, 0, 0};

/* The token entries of a table of n entries. */
static inline size_t ft_pc_token_slots(size_t n) {
    return n < FT_PC_TOKENS ? n : FT_PC_TOKENS;
}

typedef char ft_pc_token_size[sizeof(ft_pc_token) == FT_PC_TOKEN_BYTES ? 1 : -1];

/* A piece's second key word for its token entry, its first being its
 * first 8 bytes (ft_pc_head; 2 <= n <= FT_PC_TOKEN_MAX). */
static inline uint64_t ft_pc_token_tail(const uint8_t* p, size_t n) {
    return (n > 8 ? ft_pc_head(p + 8, n - 8) : 0) | ((uint64_t)n << 56);
}

static inline size_t ft_pc_token_at(const ft_pc_table* t, uint64_t head, uint64_t tail) {
    uint64_t x = (head ^ (tail * 0xC4CEB9FE1A85EC53ULL)) * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 40) & t->token_mask;
}

/* The code of owner's token that the piece with key words head, tail was
 * found to be, or -1. t may be NULL (off). */
static inline int64_t ft_pc_token_find(const ft_pc_table* t, uint64_t owner, uint64_t head,
                                       uint64_t tail) {
    const ft_pc_token* e;
    if (t == NULL) return -1;
    e = t->tokens + ft_pc_token_at(t, head, tail);
    return e->head == head && e->tail == tail && e->owner == owner ? (int64_t)e->code : -1;
}

/* Keeps that the piece with key words head, tail is owner's token code,
 * replacing what its entry held; nothing when t is NULL or off. */
static inline void ft_pc_token_put(ft_pc_table* t, uint64_t owner, uint64_t head, uint64_t tail,
                                   uint64_t code) {
    ft_pc_token* e;
    size_t slots;
    if (t == NULL || t->entries == NULL) return;
    if (t->token_block == NULL) {
        slots = ft_pc_token_slots(t->n_entries);
        t->token_block = calloc(slots * sizeof(ft_pc_token) + FT_PC_ENTRY_BYTES, 1);
        if (t->token_block == NULL) return;
        /* whole cache lines: an entry is never split between two */
        t->tokens = (ft_pc_token*)(((uintptr_t)t->token_block + FT_PC_ENTRY_BYTES - 1)
                                   & ~(uintptr_t)(FT_PC_ENTRY_BYTES - 1));
        t->token_mask = slots - 1;
    }
    e = (ft_pc_token*)t->tokens + ft_pc_token_at(t, head, tail);
    e->owner = owner;
    e->head = head;
    e->tail = tail;
    e->code = code;
}

/* Lets t's memory go (t is then off). */
static inline void ft_pc_table_free(ft_pc_table* t) {
    free(t->block);
    free(t->longs);
    t->block = NULL;
    t->entries = NULL;
    t->n_entries = 0;
    t->longs = NULL;
    t->long_mask = 0;
    free(t->token_block);
    t->token_block = NULL;
    t->tokens = &ft_pc_no_token;
    t->token_mask = 0;
}

/* Makes t an empty table of n entries, a power of two (entries NULL when n
 * is 0 or memory ran out: the cache is then skipped, never an error). Its
 * pages are touched as entries are used. */
static inline void ft_pc_table_init(ft_pc_table* t, size_t n) {
    ft_pc_table_free(t);
    t->probes = t->hits = t->closed = 0;
    if (n == 0) return;
    t->block = calloc(n + 1, FT_PC_ENTRY_BYTES);
    if (t->block == NULL) return;
    /* whole cache lines: a probe of a set reads one or two lines */
    t->entries = (ft_pc_entry*)(((uintptr_t)t->block + FT_PC_ENTRY_BYTES - 1)
                                & ~(uintptr_t)(FT_PC_ENTRY_BYTES - 1));
    t->n_entries = n;
    t->ways = n >= 2 ? 2 : 1;
    t->set_mask = n / t->ways - 1;
    t->long_mask = ft_pc_long_slots(n) - 1;
}

/* How many of t's entries hold a piece. */
static inline size_t ft_pc_used(const ft_pc_table* t) {
    size_t i, used = 0;
    if (t == NULL) return 0;
    for (i = 0; i < t->n_entries; i++) used += t->entries[i].owner != 0;
    return used;
}

/* How many of t's token entries hold a token. */
static inline size_t ft_pc_token_used(const ft_pc_table* t) {
    size_t i, used = 0;
    if (t == NULL || t->token_block == NULL) return 0;
    for (i = 0; i <= t->token_mask; i++) used += t->tokens[i].owner != 0;
    return used;
}

/* How many of t's long entries hold a piece. */
static inline size_t ft_pc_long_used(const ft_pc_table* t) {
    size_t i, used = 0;
    if (t == NULL || t->longs == NULL) return 0;
    for (i = 0; i <= t->long_mask; i++) used += t->longs[i].owner != 0;
    return used;
}

#endif /* FT_PIECE_CACHE_H */


/* Part 2: the setting and the per-thread tables (one module only). */
#if defined(FT_PIECE_CACHE_STATE) && !defined(FT_PIECE_CACHE_STATE_DONE)
#define FT_PIECE_CACHE_STATE_DONE

#if defined(_MSC_VER)
#include <intrin.h>
#define FT_PC_ADD(p, v) ((unsigned long long)_InterlockedExchangeAdd64((volatile long long*)(p), (long long)(v)) + (v))
#define FT_PC_LOAD(p) ((unsigned long long)_InterlockedOr64((volatile long long*)(p), 0))
#define FT_PC_STORE(p, v) ((void)_InterlockedExchange64((volatile long long*)(p), (long long)(v)))
#else
#define FT_PC_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define FT_PC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define FT_PC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#endif

static unsigned long long ft_pc_owners = 0;
static unsigned long long ft_pc_entries_set = 16384;  /* 1 MiB a thread */
static unsigned long long ft_pc_epoch = 1;  /* bumped by every setting */

/* A number no other caller of the process gets: a model's owner identity. */
static uint64_t ft_pc_new_owner(void) { return FT_PC_ADD(&ft_pc_owners, 1); }

/* The entries a thread's table gets from now on: rounded down to a power
 * of two (0: off). Tables already made are remade at their thread's next
 * ft_pc_thread, emptied. */
static void ft_pc_set_entries(unsigned long long entries) {
    unsigned long long p = 0;
    if (entries) for (p = 1; p <= entries / 2; p <<= 1) {}
    FT_PC_STORE(&ft_pc_entries_set, p);
    FT_PC_ADD(&ft_pc_epoch, 1);
}

static unsigned long long ft_pc_entries(void) { return FT_PC_LOAD(&ft_pc_entries_set); }

/* Makes t an empty table of the current setting (entries NULL when off or
 * out of memory: the cache is then skipped, never an error). */
static void ft_pc_table_make(ft_pc_table* t) {
    unsigned long long epoch = FT_PC_LOAD(&ft_pc_epoch);
    ft_pc_table_init(t, (size_t)ft_pc_entries());
    t->epoch = epoch;
}

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>

static pthread_key_t ft_pc_key;
static pthread_once_t ft_pc_once = PTHREAD_ONCE_INIT;

static void ft_pc_thread_free(void* p) {
    ft_pc_table_free((ft_pc_table*)p);
    free(p);
}

static void ft_pc_make_key(void) { pthread_key_create(&ft_pc_key, ft_pc_thread_free); }

/* The calling thread's table of the current setting, or NULL (off, or no
 * memory). Valid until this thread calls it again. */
static ft_pc_table* ft_pc_thread(void) {
    ft_pc_table* t;
    pthread_once(&ft_pc_once, ft_pc_make_key);
    t = (ft_pc_table*)pthread_getspecific(ft_pc_key);
    if (t == NULL) {
        t = (ft_pc_table*)calloc(1, sizeof(ft_pc_table));
        if (t == NULL) return NULL;
        if (pthread_setspecific(ft_pc_key, t) != 0) { free(t); return NULL; }
        ft_pc_table_make(t);
    } else if (t->epoch != FT_PC_LOAD(&ft_pc_epoch)) {
        ft_pc_table_make(t);
    }
    return t->entries != NULL ? t : NULL;
}
#else
/* No thread-local tables without POSIX threads: the cache is off. */
static ft_pc_table* ft_pc_thread(void) { return NULL; }
#endif

#endif /* FT_PIECE_CACHE_STATE */
