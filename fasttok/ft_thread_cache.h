/* Per-thread scratch memory kept between calls, freed when the thread ends.
 *
 * Two slots: the pair memo (FT_SLOT_MEMO) and the long-piece merge arrays
 * (FT_SLOT_MERGE). Allocating these afresh on every call cost more than the
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
#define FT_SLOTS 2

typedef struct {
    void* mem;
    size_t size;
    unsigned long long tag;
} ft_slot;

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

#endif
