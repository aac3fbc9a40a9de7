/* Per-thread scratch memory kept between calls, freed when the thread ends.
 *
 * Slots: the pair memo (FT_SLOT_MEMO) and the long-piece merge arrays
 * (FT_SLOT_MERGE) of the BPE loop; the Unigram Viterbi's best-path array and
 * spare span buffer (FT_SLOT_UNIGRAM_*); SentencePiece's normalized text and
 * id array (FT_SLOT_SPM_*). Each module that includes this header has its own
 * copy of the state (it is static), so a slot is only ever used by the
 * module it is named after. Allocating these afresh on every call cost more than the
 * work on large inputs (fresh pages are faulted in one by one); keeping
 * them per thread needs a destructor, since encode_batch's threads come and
 * go. Where POSIX threads are missing, nothing is kept: every call gets
 * new memory, which the caller then frees (ft_slot_owned says so).
 */
#ifndef FT_THREAD_CACHE_H
#define FT_THREAD_CACHE_H

#include <stdlib.h>
#include <string.h>

#define FT_SLOT_MEMO 0
#define FT_SLOT_MERGE 1
#define FT_SLOT_UNIGRAM_BEST 2
#define FT_SLOT_UNIGRAM_SPANS 3
#define FT_SLOT_SPM_NORM 4
#define FT_SLOT_SPM_IDS 5
#define FT_SLOTS 6

typedef struct {
    void* mem;
    size_t size;
    unsigned long long tag;
    /* the memo slot only: which tables' short calls found it holding
     * another's pairs, and how many times in a row (ft_memo_if_ready) */
    unsigned long long asker;
    unsigned streak;
} ft_slot;

/* Short calls of one tables in a row that take the memo over from another */
#define FT_MEMO_RECLAIM 64

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define FT_HAVE_THREAD_CACHE 1

static pthread_key_t ft_slots_key;
static pthread_once_t ft_slots_once = PTHREAD_ONCE_INIT;

static void ft_slots_free(void* p) {
    ft_slot* slots = (ft_slot*)p;
    int i;
    for (i = 0; i < FT_SLOTS; i++) free(slots[i].mem);
    free(slots);
}

static void ft_slots_make_key(void) { pthread_key_create(&ft_slots_key, ft_slots_free); }

static ft_slot* ft_thread_slot(int which) {
    ft_slot* slots;
    pthread_once(&ft_slots_once, ft_slots_make_key);
    slots = (ft_slot*)pthread_getspecific(ft_slots_key);
    if (slots == NULL) {
        slots = (ft_slot*)calloc(FT_SLOTS, sizeof(ft_slot));
        if (slots == NULL) return NULL;
        if (pthread_setspecific(ft_slots_key, slots) != 0) { free(slots); return NULL; }
    }
    return &slots[which];
}
#else
#define FT_HAVE_THREAD_CACHE 0
static ft_slot* ft_thread_slot(int which) { (void)which; return NULL; }
#endif

/* At least size bytes in the thread's slot (kept while no larger than
 * keep); *owned is set when the memory is the caller's to free. */
static void* ft_slot_take(int which, size_t size, size_t keep, int* owned) {
    ft_slot* slot = ft_thread_slot(which);
    void* p;
    *owned = 0;
    if (slot != NULL && size <= slot->size) return slot->mem;
    if (slot == NULL || size > keep) { *owned = 1; return malloc(size); }
    p = malloc(size);
    if (p == NULL) return NULL;
    free(slot->mem);
    slot->mem = p;
    slot->size = size;
    slot->tag = 0;
    return p;
}

/* The thread's zeroed-on-change memo of size bytes for tables tag; *owned
 * as above (the caller then frees it). */
static void* ft_memo_for(unsigned long long tag, size_t size, int* owned) {
    ft_slot* slot = ft_thread_slot(FT_SLOT_MEMO);
    *owned = 0;
    if (slot == NULL) { *owned = 1; return calloc(1, size); }
    if (slot->mem == NULL || slot->size != size) {
        free(slot->mem);
        slot->mem = calloc(1, size);
        slot->size = slot->mem ? size : 0;
        slot->tag = tag;
        return slot->mem;
    }
    if (slot->tag != tag) {
        memset(slot->mem, 0, size);
        slot->tag = tag;
    }
    return slot->mem;
}

/* The thread's memo for tables tag as ft_memo_for gives it, but only when
 * that costs no clearing, or when this tables' short calls have found it
 * holding another's pairs FT_MEMO_RECLAIM times in a row: one short call
 * pays more to clear 1 MB than the memo saves it, so calls alternating
 * between vocabularies never clear it, and a run of one vocabulary's short
 * calls takes it over once. NULL: go without. */
static void* ft_memo_if_ready(unsigned long long tag, size_t size) {
    ft_slot* slot = ft_thread_slot(FT_SLOT_MEMO);
    int owned;
    if (slot == NULL) return NULL;
    if (slot->mem != NULL && slot->size == size && slot->tag != tag) {
        if (slot->asker != tag) {
            slot->asker = tag;
            slot->streak = 0;
        }
        if (++slot->streak < FT_MEMO_RECLAIM) return NULL;
    }
    slot->streak = 0;
    return ft_memo_for(tag, size, &owned);
}

/* The thread's block in slot which, taken out of it (the slot is left
 * empty, so a nested call on the same thread gets its own) when it holds
 * at least need bytes; its size in *size. NULL when there is none that
 * large (the slot keeps what it has). */
static void* ft_slot_claim(int which, size_t need, size_t* size) {
    ft_slot* slot = ft_thread_slot(which);
    void* p;
    if (slot == NULL || slot->mem == NULL || slot->size < need) return NULL;
    p = slot->mem;
    *size = slot->size;
    slot->mem = NULL;
    slot->size = 0;
    return p;
}

/* Hands block p of size bytes (from malloc) to slot which for the thread's
 * next ft_slot_claim; 1 if kept, 0 if the caller must free it (more than
 * keep bytes, or the slot already holds one as large). A smaller block in
 * the slot is freed. */
static int ft_slot_give(int which, void* p, size_t size, size_t keep) {
    ft_slot* slot = ft_thread_slot(which);
    if (p == NULL || slot == NULL || size > keep || (slot->mem != NULL && slot->size >= size)) return 0;
    free(slot->mem);
    slot->mem = p;
    slot->size = size;
    slot->tag = 0;
    return 1;
}

#endif
