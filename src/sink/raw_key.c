/*
 * Raw keys: see raw_key.h. The numbers are compared first so that a stored
 * key is only walked when the record has the same fields in the same places.
 */
#include "sink/raw_key.h"

#include <string.h>

#include "cell/cell.h"
#include "common/same_str.h"

enum { RAW_MAX_FIELDS = FDX_RAW_MAX_FIELDS, RAW_NUMS = 3 };

/* Whether the record has a token (numbers' bit 1): a keyed record without
 * one has no raw key and never matches one. */
static int keyed(const fdx_raw_record *r)
{
    return (r->nums[2] >> 1 & 1) != 0;
}

/* ---- writing ---- */

typedef struct raw_fields {
    const char *s[RAW_MAX_FIELDS];
    uint32_t n[RAW_MAX_FIELDS];
    size_t count;
    size_t bytes;
} raw_fields;

static int field(raw_fields *f, const char *str)
{
    if (!str || f->count == RAW_MAX_FIELDS)
        return 0;
    size_t n = strlen(str);
    if (n > FDX_MAX_STRING)
        return 0;
    f->s[f->count] = str;
    f->n[f->count++] = (uint32_t)n;
    f->bytes += 4 + n + 1;
    return 1;
}

static int impl_fields(raw_fields *f, const fdx_impl *id)
{
    if (!field(f, id->backend) || !field(f, id->op) || !field(f, id->kernel_source) ||
        id->n_dtypes > RAW_MAX_FIELDS || (id->n_dtypes && !id->dtypes))
        return 0;
    for (size_t i = 0; i < id->n_dtypes; i++)
        if (!field(f, id->dtypes[i]))
            return 0;
    return 1;
}

/* Appends the numbers and the fields to b. */
static void put(fdx_buf *b, const uint64_t nums[RAW_NUMS], const raw_fields *f)
{
    if (fdx_buf_reserve(b, sizeof(uint64_t) * RAW_NUMS + f->bytes + FDX_SAME_STR_SLACK) != 0)
        return;
    char *p = b->data + b->len;
    memcpy(p, nums, sizeof(uint64_t) * RAW_NUMS);
    p += sizeof(uint64_t) * RAW_NUMS;
    for (size_t i = 0; i < f->count; i++) {
        memcpy(p, &f->n[i], 4);
        memcpy(p + 4, f->s[i], f->n[i] + 1);
        p += 4 + f->n[i] + 1;
    }
    b->len = (size_t)(p - b->data);
}

static void cand_nums(uint64_t nums[RAW_NUMS], const fdx_candidate *c)
{
    nums[0] = c->impl_id.kernel_revision_hash;
    nums[1] = fdx_raw_dtype_count(c->impl_id.n_dtypes) << 1 | (uint64_t)(c->has_latency != 0);
    nums[2] = c->has_latency ? c->latency_ns : 0;
}

static void pad(fdx_buf *b)
{
    static const char zeros[FDX_SAME_STR_SLACK];
    fdx_buf_append(b, zeros, sizeof zeros);
}

/* Writes r's numbers and fields into b, with its token or without. */
static int write_key(fdx_buf *b, const fdx_raw_record *r, int with_token)
{
    raw_fields f;
    f.count = f.bytes = 0;
    if ((with_token && keyed(r) && !field(&f, r->token)) || !impl_fields(&f, r->id) ||
        !field(&f, r->hw->hardware_sku) || !field(&f, r->hw->driver_version))
        return 0;
    fdx_buf_clear(b);
    put(b, r->nums, &f);
    pad(b);
    return !b->oom;
}

int fdx_raw_key_write(fdx_buf *b, const fdx_raw_record *r)
{
    return write_key(b, r, 1);
}

int fdx_raw_context_write(fdx_buf *b, const fdx_raw_record *r)
{
    return write_key(b, r, 0);
}

int fdx_raw_cands_write(fdx_buf *b, const fdx_candidate *c, size_t n)
{
    fdx_buf_clear(b);
    if (!c || n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        raw_fields f;
        f.count = f.bytes = 0;
        if (!impl_fields(&f, &c[i].impl_id))
            return 0;
        uint64_t nums[RAW_NUMS];
        cand_nums(nums, &c[i]);
        put(b, nums, &f);
    }
    pad(b);
    return !b->oom;
}

/* ---- comparing in place ---- */

static int same_nums(const char **p, const uint64_t nums[RAW_NUMS])
{
    uint64_t stored[RAW_NUMS];
    memcpy(stored, *p, sizeof stored);
    *p += sizeof stored;
    return ((stored[0] ^ nums[0]) | (stored[1] ^ nums[1]) | (stored[2] ^ nums[2])) == 0;
}

/* Whether str is exactly the stored field at *p; advances *p past it. */
static inline int same_field(const char **p, const char *str)
{
    uint32_t n;
    memcpy(&n, *p, 4);
    const char *stored = *p + 4;
    *p = stored + n + 1;
    return str && fdx_same_str(str, stored, n);
}

/* The numbers (compared by the caller) say how many dtypes there are. */
static int same_impl(const char **p, const fdx_impl *id)
{
    if (!same_field(p, id->backend) || !same_field(p, id->op) || !same_field(p, id->kernel_source))
        return 0;
    for (size_t i = 0; i < id->n_dtypes; i++)
        if (!same_field(p, id->dtypes[i]))
            return 0;
    return 1;
}

int fdx_raw_token_matches(const char *stored, const char *token)
{
    const char *p = stored + sizeof(uint64_t) * RAW_NUMS;
    return same_field(&p, token);
}

int fdx_raw_cands_match(const char *stored, size_t len, const fdx_candidate *c, size_t n)
{
    const char *p = stored;
    const char *end = stored + len;
    if (!c)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const fdx_impl *id = &c[i].impl_id;
        uint64_t nums[RAW_NUMS];
        cand_nums(nums, &c[i]);
        if ((size_t)(end - p) < sizeof nums + FDX_SAME_STR_SLACK || !same_nums(&p, nums) ||
            (id->n_dtypes && !id->dtypes) || !same_impl(&p, id))
            return 0;
    }
    return p + FDX_SAME_STR_SLACK == end;
}
