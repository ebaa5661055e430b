/*
 * A record's fields exactly as the caller passed them, unvalidated: the key
 * under which the sink remembers which cell a record went to, when the
 * record's pointers alone do not find it (sink_cache.h). Writing one is
 * cheaper than building the canonical cell. A long token, and a candidates
 * list, are compared with their stored copy in place.
 *
 * Layout: fixed-size numbers, then each string as a 4-byte length, its bytes
 * and its terminator, then FDX_SAME_STR_SLACK zero bytes (so stored strings
 * can be compared a word at a time).
 */
#ifndef FDX_RAW_KEY_H
#define FDX_RAW_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "fdx.h"

/* The identifying fields of a miss or a dispatch; token is the wanted or the
 * structure key (NULL: unkeyed). nums packs the numbers as stored. */
typedef struct fdx_raw_record {
    const char *token;
    const fdx_impl *id;
    const fdx_hw *hw;
    uint64_t nums[3];
} fdx_raw_record;

/* No raw key has more fields than this. */
#define FDX_RAW_MAX_FIELDS 64

/* A dtype count as the numbers hold it: any count too large for a raw key is
 * one value, so that a count shifted into the numbers never aliases another. */
static inline uint64_t fdx_raw_dtype_count(size_t n)
{
    return n <= FDX_RAW_MAX_FIELDS ? n : FDX_RAW_MAX_FIELDS + 1;
}

static inline fdx_raw_record fdx_raw_record_of(int keyed, const char *token, const fdx_impl *id,
                                               const fdx_hw *hw)
{
    int cc = hw->has_compute_capability != 0;
    uint64_t major = cc ? hw->cc_major : UINT32_MAX;
    uint64_t minor = cc ? hw->cc_minor : UINT32_MAX;
    fdx_raw_record r = {
        token,
        id,
        hw,
        {id->kernel_revision_hash, major << 32 | minor,
         fdx_raw_dtype_count(id->n_dtypes) << 2 | (uint64_t)(keyed != 0) << 1 | (uint64_t)cc}};
    return r;
}

/* Writes r's raw key into b (replacing its contents); 0 when r cannot have
 * one (a NULL string where one is required, too many fields, no memory). */
int fdx_raw_key_write(fdx_buf *b, const fdx_raw_record *r);
/* The same without the token: the raw key of r's context (implementation
 * and device), which many cells share. */
int fdx_raw_context_write(fdx_buf *b, const fdx_raw_record *r);
/* Whether token is the token of the raw key at stored (a keyed one). */
int fdx_raw_token_matches(const char *stored, const char *token);

/* The same for a dispatch's candidates list (n > 0). */
int fdx_raw_cands_write(fdx_buf *b, const fdx_candidate *c, size_t n);
int fdx_raw_cands_match(const char *stored, size_t len, const fdx_candidate *c, size_t n);

#endif
