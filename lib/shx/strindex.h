/*
 * strindex.h - hashing names and indexing lists of strings, shared by the
 * environment's override lists (env.c) and glob lists (glob.c). Every
 * lookup on the way from a variable to a command's environment is a hash
 * lookup, so the cost is linear in what a model-written tool call names.
 */
#ifndef SHX_STRINDEX_H
#define SHX_STRINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SHX_FNV_OFFSET 2166136261u
#define SHX_FNV_PRIME 16777619u

/* The table index uses the low bits: fold the high ones in. */
static inline uint32_t shx_fnv_fold(uint32_t h)
{
    return h ^ (h >> 15);
}

/* FNV-1a of n bytes, folded. */
static inline uint32_t shx_name_hash(const char *s, size_t n)
{
    uint32_t h = SHX_FNV_OFFSET;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= SHX_FNV_PRIME;
    }
    return shx_fnv_fold(h);
}

/*
 * The index of a list of strings (override names, globs): open addressing,
 * at most half full, slot value i + 1 for strs[i], 0 for empty. Returns the
 * slot holding key or the empty one where it belongs.
 */
static inline uint32_t *shx_index_slot(uint32_t *index, size_t mask, char *const *strs, const char *key,
                            uint32_t h)
{
    size_t i = h & mask;
    while (index[i] != 0 && strcmp(strs[index[i] - 1], key) != 0)
        i = (i + 1) & mask;
    return &index[i];
}

/* Enter strs[0 .. n) into an index of mask + 1 slots, all empty before. */
static inline void shx_index_fill(uint32_t *index, size_t mask, char *const *strs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t *slot = shx_index_slot(index, mask, strs, strs[i], shx_name_hash(strs[i], strlen(strs[i])));
        *slot = (uint32_t)(i + 1);
    }
}

/* A new index for cap entries (2 * cap slots or more), holding strs[0 .. n).
 * NULL on ENOMEM. */
static inline uint32_t *shx_index_new(size_t cap, char *const *strs, size_t n, size_t *mask)
{
    size_t slots = 16;
    while (slots < 2 * cap) {
        if (slots > SIZE_MAX / 2 / sizeof(uint32_t))
            return NULL;
        slots *= 2;
    }
    uint32_t *index = calloc(slots, sizeof *index);
    if (!index)
        return NULL;
    *mask = slots - 1;
    shx_index_fill(index, *mask, strs, n);
    return index;
}

/* Entries are stored as uint32_t index + 1: lists stop well short of that. */
#define SHX_LIST_MAX_ENTRIES ((size_t)1 << 30)

#endif
