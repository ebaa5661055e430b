/*
 * Record decoding on cJSON, the reference: a line goes to the one-pass fast
 * path first (decode_fast.c), and whatever that does not take comes here.
 * The lexer has already checked the bytes and kept each number's text; after
 * parsing, every number node's valueint is set to its index in that list
 * (cJSON's double is never used), so u64 fields are read back exactly from
 * their digits. cJSON reads a number through strtod in the thread's locale,
 * whose decimal point may be two bytes (ps_AF's U+066B), and then no
 * fraction reads: the tree is parsed in the C locale, whatever the
 * embedding program set.
 */
#include "codec/decode.h"

#include <cjson/cJSON.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/decode_fast.h"
#include "codec/lex.h"
#include "codec/wire.h"
#include "common/buf.h"
#include "common/json_arena.h"
#include "common/u64.h"

struct fdx_decoder {
    int max_depth;
    fdx_fast_decoder *fast;
    int fast_decoded; /* the last line went the fast path */
    fdx_lexed lx;
    cJSON *root;
    fdx_json_arena arena; /* where root lives, when the program opted in */
    locale_t c_locale;    /* what cJSON reads numbers in */
    const char *line;
    size_t line_len;
    const char **strs; /* dtypes arrays and duplicate-key checks */
    size_t cap_strs;
    size_t n_strs;
    fdx_candidate *cands;
    size_t cap_cands;
    size_t *latency_tok; /* per candidate: its latency's index in lx.nums, or SIZE_MAX */
    size_t cap_latency_tok;
};

typedef struct dctx {
    fdx_decoder *d;
    char *err;
    size_t errsz;
} dctx;

fdx_decoder *fdx_decoder_new(int max_depth)
{
    fdx_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->max_depth = max_depth > 0 ? max_depth : FDX_DEFAULT_MAX_DEPTH;
    d->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (d->c_locale == (locale_t)0 || !(d->fast = fdx_fast_decoder_new())) {
        fdx_decoder_free(d);
        return NULL;
    }
    return d;
}

void fdx_decoder_free(fdx_decoder *d)
{
    if (!d)
        return;
    fdx_json_arena_use(&d->arena);
    cJSON_Delete(d->root);
    fdx_json_arena_use(NULL);
    fdx_json_arena_free(&d->arena);
    fdx_lexed_free(&d->lx);
    fdx_fast_decoder_free(d->fast);
    free(d->strs);
    free(d->cands);
    free(d->latency_tok);
    if (d->c_locale != (locale_t)0)
        freelocale(d->c_locale);
    free(d);
}

/* ---- tree checks: number indexes and duplicate keys ---- */

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* strcmp(a, b) == 0, cheaply refusing most pairs on their first byte. */
static int same_key(const char *a, const char *b)
{
    return a[0] == b[0] && strcmp(a, b) == 0;
}

static const char *find_duplicate(fdx_decoder *d, const cJSON *obj)
{
    size_t n = 0;
    for (const cJSON *c = obj->child; c; c = c->next)
        d->strs[n++] = c->string;
    if (n <= 8) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (same_key(d->strs[i], d->strs[j]))
                    return d->strs[i];
        return NULL;
    }
    qsort(d->strs, n, sizeof *d->strs, cmp_key);
    for (size_t i = 1; i < n; i++)
        if (strcmp(d->strs[i - 1], d->strs[i]) == 0)
            return d->strs[i];
    return NULL;
}

static int check_tree(dctx *x, cJSON *node, size_t *next_num)
{
    for (cJSON *c = node->child; c; c = c->next) {
        if (cJSON_IsNumber(c))
            c->valueint = (int)(*next_num)++;
        else if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && check_tree(x, c, next_num))
            return FDX_EDATA;
    }
    const char *dup = cJSON_IsObject(node) ? find_duplicate(x->d, node) : NULL;
    if (dup) {
        snprintf(x->err, x->errsz, "%s%sduplicate key \"%.64s\"", node->string ? node->string : "",
                 node->string ? ": " : "", dup);
        return FDX_EDATA;
    }
    return FDX_OK;
}

/* ---- field access ---- */

static const char *type_name(const cJSON *v)
{
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? "true" : "false";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "a number";
}

static int fail(dctx *x, const char *path, const char *key, const char *what)
{
    snprintf(x->err, x->errsz, "%s%s: %s", path, key, what);
    return FDX_EDATA;
}

static int expected(dctx *x, const char *path, const char *key, const char *want, const cJSON *got)
{
    char what[160];
    if (cJSON_IsNumber(got)) {
        const fdx_numtok *t = &x->d->lx.nums[got->valueint];
        int len = t->len > 40 ? 40 : (int)t->len;
        snprintf(what, sizeof what, "expected %s, got %.*s%s", want, len, x->d->line + t->off,
                 t->len > 40 ? "..." : "");
    } else {
        snprintf(what, sizeof what, "expected %s, got %s", want, type_name(got));
    }
    return fail(x, path, key, what);
}

static const cJSON *member(const cJSON *obj, const char *key)
{
    for (const cJSON *c = obj->child; c; c = c->next)
        if (same_key(c->string, key))
            return c;
    return NULL;
}

/* A required member. */
static const cJSON *need(dctx *x, const cJSON *obj, const char *path, const char *key)
{
    const cJSON *v = member(obj, key);
    if (!v)
        fail(x, path, key, "missing");
    return v;
}

static int get_string(dctx *x, const cJSON *obj, const char *path, const char *key,
                      const char **out)
{
    const cJSON *v = need(x, obj, path, key);
    if (!v)
        return FDX_EDATA;
    if (!cJSON_IsString(v))
        return expected(x, path, key, "a string", v);
    *out = v->valuestring;
    return FDX_OK;
}

/* Unsigned integer of at most `bits` bits from a number node's own digits. */
static int number_value(dctx *x, const cJSON *v, const char *path, const char *key, int bits,
                        uint64_t *out)
{
    const char *want = bits == 64 ? "an unsigned integer" : "an unsigned 32-bit integer";
    if (!cJSON_IsNumber(v))
        return expected(x, path, key, want, v);
    const fdx_numtok *t = &x->d->lx.nums[v->valueint];
    int r = fdx_u64_parse(x->d->line + t->off, t->len, out);
    if (r == FDX_U64_SYNTAX)
        return expected(x, path, key, want, v);
    if (r == FDX_U64_RANGE || (bits == 32 && *out > UINT32_MAX)) {
        char what[80];
        int len = t->len > 40 ? 40 : (int)t->len;
        snprintf(what, sizeof what, "%.*s%s is out of range", len, x->d->line + t->off,
                 t->len > 40 ? "..." : "");
        return fail(x, path, key, what);
    }
    return FDX_OK;
}

static int get_u64(dctx *x, const cJSON *obj, const char *path, const char *key, uint64_t *out)
{
    const cJSON *v = need(x, obj, path, key);
    return v ? number_value(x, v, path, key, 64, out) : FDX_EDATA;
}

static const cJSON *get_object(dctx *x, const cJSON *obj, const char *path, const char *key)
{
    const cJSON *v = need(x, obj, path, key);
    if (v && !cJSON_IsObject(v)) {
        expected(x, path, key, "an object", v);
        return NULL;
    }
    return v;
}

/* ---- record parts ---- */

static int get_dtypes(dctx *x, const cJSON *arr, const char *path, fdx_impl *id)
{
    if (!arr)
        return FDX_EDATA;
    if (!cJSON_IsArray(arr))
        return expected(x, path, "dtypes", "an array of strings", arr);
    fdx_decoder *d = x->d;
    id->dtypes = d->strs + d->n_strs;
    id->n_dtypes = 0;
    for (const cJSON *c = arr->child; c; c = c->next) {
        if (!cJSON_IsString(c)) {
            char key[48];
            snprintf(key, sizeof key, "dtypes[%zu]", id->n_dtypes);
            return expected(x, path, key, "a string", c);
        }
        d->strs[d->n_strs++] = c->valuestring;
        id->n_dtypes++;
    }
    return FDX_OK;
}

static int get_impl(dctx *x, const cJSON *obj, const char *path, const char *key, fdx_impl *id)
{
    const cJSON *o = get_object(x, obj, path, key);
    if (!o)
        return FDX_EDATA;
    char sub[128];
    snprintf(sub, sizeof sub, "%s%s.", path, key);
    if (get_string(x, o, sub, "backend", &id->backend) || get_string(x, o, sub, "op", &id->op) ||
        get_dtypes(x, need(x, o, sub, "dtypes"), sub, id) ||
        get_string(x, o, sub, "kernel_source", &id->kernel_source) ||
        get_u64(x, o, sub, "kernel_revision_hash", &id->kernel_revision_hash))
        return FDX_EDATA;
    return FDX_OK;
}

static int get_cc(dctx *x, const cJSON *v, fdx_hw *hw)
{
    hw->has_compute_capability = 0;
    if (!v || cJSON_IsNull(v))
        return FDX_OK;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
        return expected(x, "hw.", "compute_capability", "[major, minor]", v);
    uint64_t major, minor;
    if (number_value(x, v->child, "hw.", "compute_capability[0]", 32, &major) ||
        number_value(x, v->child->next, "hw.", "compute_capability[1]", 32, &minor))
        return FDX_EDATA;
    hw->has_compute_capability = 1;
    hw->cc_major = (uint32_t)major;
    hw->cc_minor = (uint32_t)minor;
    return FDX_OK;
}

static int get_hw(dctx *x, const cJSON *rec, fdx_hw *hw)
{
    const cJSON *o = get_object(x, rec, "", "hw");
    if (!o || get_cc(x, member(o, "compute_capability"), hw) ||
        get_string(x, o, "hw.", "hardware_sku", &hw->hardware_sku) ||
        get_string(x, o, "hw.", "driver_version", &hw->driver_version))
        return FDX_EDATA;
    return FDX_OK;
}

static int get_schema(dctx *x, const cJSON *rec)
{
    const cJSON *v = need(x, rec, "", "schema");
    if (!v)
        return FDX_EDATA;
    if (!cJSON_IsNumber(v))
        return expected(x, "", "schema", FDX_WIRE_SCHEMA_TEXT, v);
    const fdx_numtok *t = &x->d->lx.nums[v->valueint];
    if (t->len == sizeof FDX_WIRE_SCHEMA_TEXT - 1 &&
        memcmp(x->d->line + t->off, FDX_WIRE_SCHEMA_TEXT, t->len) == 0)
        return FDX_OK;
    char what[120];
    int len = t->len > 40 ? 40 : (int)t->len;
    snprintf(what, sizeof what, "unsupported version %.*s (this build reads schema %d)", len,
             x->d->line + t->off, FDX_WIRE_SCHEMA);
    return fail(x, "", "schema", what);
}

static int get_candidate(dctx *x, const cJSON *c, size_t i, fdx_candidate *out)
{
    char path[48];
    snprintf(path, sizeof path, "candidates[%zu]", i);
    if (!cJSON_IsObject(c))
        return expected(x, path, "", "an object", c);
    strcat(path, ".");
    if (get_impl(x, c, path, "impl_id", &out->impl_id))
        return FDX_EDATA;
    const cJSON *lat = member(c, "latency_ns");
    out->has_latency = lat && !cJSON_IsNull(lat);
    out->latency_ns = 0;
    x->d->latency_tok[i] = SIZE_MAX;
    if (!out->has_latency)
        return FDX_OK;
    if (number_value(x, lat, path, "latency_ns", 64, &out->latency_ns))
        return FDX_EDATA;
    x->d->latency_tok[i] = (size_t)lat->valueint;
    return FDX_OK;
}

static int get_candidates(dctx *x, const cJSON *rec, fdx_dispatch *dp)
{
    const cJSON *arr = member(rec, "candidates");
    dp->candidates = x->d->cands;
    dp->n_candidates = 0;
    if (!arr)
        return FDX_OK;
    if (!cJSON_IsArray(arr))
        return expected(x, "", "candidates", "an array", arr);
    for (const cJSON *c = arr->child; c; c = c->next) {
        if (get_candidate(x, c, dp->n_candidates, &x->d->cands[dp->n_candidates]))
            return FDX_EDATA;
        dp->n_candidates++;
    }
    return FDX_OK;
}

static int get_miss(dctx *x, const cJSON *rec, fdx_miss *m)
{
    if (get_string(x, rec, "", "wanted", &m->wanted) ||
        get_impl(x, rec, "", "fallback", &m->fallback) || get_u64(x, rec, "", "count", &m->count) ||
        get_hw(x, rec, &m->hw))
        return FDX_EDATA;
    return FDX_OK;
}

static int get_dispatch(dctx *x, const cJSON *rec, fdx_dispatch *dp)
{
    const cJSON *sk = member(rec, "structure_key");
    dp->structure_key = NULL;
    if (sk && !cJSON_IsNull(sk)) {
        if (!cJSON_IsString(sk))
            return expected(x, "", "structure_key", "a string or null", sk);
        dp->structure_key = sk->valuestring;
    }
    if (get_impl(x, rec, "", "chosen", &dp->chosen) || get_candidates(x, rec, dp) ||
        get_u64(x, rec, "", "count", &dp->count) || get_hw(x, rec, &dp->hw))
        return FDX_EDATA;
    return FDX_OK;
}

/* ---- entry point ---- */

static int parse_tree(fdx_decoder *d, const char *line, size_t n, char *err, size_t errsz)
{
    const char *end = NULL;
    fdx_json_arena_use(&d->arena);
    cJSON_Delete(d->root);
    fdx_json_arena_reset(&d->arena); /* the previous line's tree is gone */
    locale_t was = uselocale(d->c_locale);
    d->root = cJSON_ParseWithLengthOpts(line, n, &end, 0);
    uselocale(was);
    fdx_json_arena_use(NULL);
    if (!d->root) {
        size_t at = end && end >= line && end <= line + n ? (size_t)(end - line) : 0;
        snprintf(err, errsz, "invalid JSON at byte %zu", at + 1);
        return FDX_EDATA;
    }
    while (end < line + n && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
        end++;
    if (end != line + n) {
        snprintf(err, errsz, "trailing bytes after the JSON object at byte %zu",
                 (size_t)(end - line) + 1);
        return FDX_EDATA;
    }
    return FDX_OK;
}

/* Room for every string and object the line holds, so no pointer moves later. */
static int reserve_scratch(fdx_decoder *d)
{
    if (fdx_grow(&d->strs, &d->cap_strs, d->lx.n_strings + 1, sizeof *d->strs) ||
        fdx_grow(&d->cands, &d->cap_cands, d->lx.n_objects + 1, sizeof *d->cands) ||
        fdx_grow(&d->latency_tok, &d->cap_latency_tok, d->lx.n_objects + 1, sizeof *d->latency_tok))
        return FDX_ENOMEM;
    d->n_strs = 0;
    return FDX_OK;
}

int fdx_decode_lex(fdx_decoder *d, const char *line, size_t n, char *err, size_t errsz)
{
    d->line = line;
    d->line_len = n;
    d->fast_decoded = 0;
    return fdx_lex_line(line, n, d->max_depth, &d->lx, err, errsz);
}

int fdx_decode_count_token(const fdx_decoder *d, size_t *off, size_t *len)
{
    if (d->fast_decoded) {
        fdx_fast_count_token(d->fast, off, len);
        return 1;
    }
    if (d->lx.count_keys != 1 || d->lx.count_tok < 0)
        return 0;
    *off = d->lx.nums[d->lx.count_tok].off;
    *len = d->lx.nums[d->lx.count_tok].len;
    return 1;
}

int fdx_decode_latency_token(const fdx_decoder *d, size_t i, size_t *off, size_t *len)
{
    if (d->fast_decoded)
        return fdx_fast_latency_token(d->fast, i, off, len);
    if (i >= d->cap_latency_tok || d->latency_tok[i] == SIZE_MAX)
        return 0;
    *off = d->lx.nums[d->latency_tok[i]].off;
    *len = d->lx.nums[d->latency_tok[i]].len;
    return 1;
}

int fdx_decode_parse(fdx_decoder *d, fdx_record *rec, char *err, size_t errsz)
{
    dctx x = {d, err, errsz};
    const char *line = d->line;
    size_t n = d->line_len;
    int rc;
    if (reserve_scratch(d) != FDX_OK) {
        snprintf(err, errsz, "out of memory");
        return FDX_ENOMEM;
    }
    if ((rc = parse_tree(d, line, n, err, errsz)) != FDX_OK)
        return rc;
    size_t next_num = 0;
    if (check_tree(&x, d->root, &next_num))
        return FDX_EDATA;
    if (next_num != d->lx.n_nums) {
        snprintf(err, errsz, "internal error: number count mismatch");
        return FDX_ERROR;
    }
    if (get_schema(&x, d->root))
        return FDX_EDATA;
    memset(rec, 0, sizeof *rec);
    if (member(d->root, "wanted")) {
        rec->kind = FDX_KIND_MISS;
        return get_miss(&x, d->root, &rec->miss);
    }
    rec->kind = FDX_KIND_DISPATCH;
    return get_dispatch(&x, d->root, &rec->dispatch);
}

int fdx_decode_line(fdx_decoder *d, const char *line, size_t n, fdx_record *rec, char *err,
                    size_t errsz)
{
    if (fdx_fast_decode(d->fast, line, n, d->max_depth, rec)) {
        d->fast_decoded = 1;
        return FDX_OK;
    }
    int rc = fdx_decode_lex(d, line, n, err, errsz);
    return rc == FDX_OK ? fdx_decode_parse(d, rec, err, errsz) : rc;
}
