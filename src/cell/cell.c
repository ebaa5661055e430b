/*
 * Cell identity: building it from API records (with validation), packing it
 * into the aggregator's key bytes, and the total export order.
 */
#include "cell/cell.h"

#include <stdio.h>
#include <string.h>

#include "codec/encode.h"
#include "common/utf8.h"

/* A string field must be present, not absurdly long, and (unless the caller
 * vouches for it, as the decoder does) valid UTF-8. The field's name is only
 * formatted when something is wrong. Fields of a list's items (candidates)
 * are named with the item's index: list[item].prefix.field. */
typedef struct check_ctx {
    int trusted;
    char *err;
    size_t errsz;
    const char *list; /* NULL: the field is not in a list's item */
    size_t item;
} check_ctx;

typedef enum text_problem {
    TEXT_OK,
    TEXT_MISSING,
    TEXT_TOO_LONG,
    TEXT_BAD_UTF8, /* at a byte offset */
} text_problem;

#define NO_INDEX ((size_t)-1)

/* Writes "<field's name>: <what>" into the context's error buffer. */
static void name_field(const check_ctx *c, const char *prefix, const char *field, size_t index,
                       const char *what)
{
    char list[48] = "", idx[32] = "";
    if (c->list)
        snprintf(list, sizeof list, "%s[%zu].", c->list, c->item);
    if (index != NO_INDEX)
        snprintf(idx, sizeof idx, "[%zu]", index);
    snprintf(c->err, c->errsz, "%s%s%s%s: %s", list, prefix, field, idx, what);
}

static int check_text(const check_ctx *c, const char *s, const char *prefix, const char *field,
                      size_t index)
{
    static const char *const what[] = {
        [TEXT_MISSING] = "missing (NULL)",
        [TEXT_TOO_LONG] = "too long",
        [TEXT_BAD_UTF8] = "invalid UTF-8",
    };
    text_problem problem = TEXT_OK;
    size_t bad = 0, n = s ? strlen(s) : 0;
    if (!s)
        problem = TEXT_MISSING;
    else if (n > FDX_MAX_STRING)
        problem = TEXT_TOO_LONG;
    else if (!c->trusted && !fdx_utf8_valid(s, n, &bad))
        problem = TEXT_BAD_UTF8;
    if (problem == TEXT_OK)
        return FDX_OK;
    char at[48] = "";
    if (problem == TEXT_BAD_UTF8)
        snprintf(at, sizeof at, "%s at byte %zu", what[problem], bad);
    name_field(c, prefix, field, index, problem == TEXT_BAD_UTF8 ? at : what[problem]);
    return FDX_EDATA;
}

static fdx_str view(const char *s)
{
    fdx_str v = {s, strlen(s)};
    return v;
}

static int check_impl(const check_ctx *c, const fdx_impl *id, const char *prefix)
{
    if (check_text(c, id->backend, prefix, "backend", NO_INDEX) ||
        check_text(c, id->op, prefix, "op", NO_INDEX) ||
        check_text(c, id->kernel_source, prefix, "kernel_source", NO_INDEX))
        return FDX_EDATA;
    if (id->n_dtypes && !id->dtypes) {
        name_field(c, prefix, "dtypes", NO_INDEX, "missing (NULL)");
        return FDX_EDATA;
    }
    for (size_t i = 0; i < id->n_dtypes; i++)
        if (check_text(c, id->dtypes[i], prefix, "dtypes", i))
            return FDX_EDATA;
    return FDX_OK;
}

static int fill_common(const check_ctx *c, fdx_cell *cell, const fdx_impl *id, const fdx_hw *hw,
                       const char *prefix, fdx_buf *dtypes)
{
    if (check_impl(c, id, prefix) != FDX_OK ||
        check_text(c, hw->hardware_sku, "hw.", "hardware_sku", NO_INDEX) != FDX_OK ||
        check_text(c, hw->driver_version, "hw.", "driver_version", NO_INDEX) != FDX_OK)
        return FDX_EDATA;
    fdx_buf_clear(dtypes);
    fdx_enc_string_array(dtypes, id->dtypes, id->n_dtypes);
    if (dtypes->oom) {
        snprintf(c->err, c->errsz, "out of memory");
        return FDX_ENOMEM;
    }
    cell->backend = view(id->backend);
    cell->op = view(id->op);
    cell->dtypes_json.p = dtypes->data;
    cell->dtypes_json.n = dtypes->len;
    cell->kernel_source = view(id->kernel_source);
    cell->revision = id->kernel_revision_hash;
    cell->cc_major = hw->has_compute_capability ? (int64_t)hw->cc_major : FDX_CC_ABSENT;
    cell->cc_minor = hw->has_compute_capability ? (int64_t)hw->cc_minor : FDX_CC_ABSENT;
    cell->sku = view(hw->hardware_sku);
    cell->driver = view(hw->driver_version);
    return FDX_OK;
}

int fdx_cell_from_miss(fdx_cell *cell, const fdx_miss *m, int trusted, fdx_buf *dtypes, char *err,
                       size_t errsz)
{
    check_ctx c = {trusted, err, errsz, NULL, 0};
    if (check_text(&c, m->wanted, "", "wanted", NO_INDEX) != FDX_OK)
        return FDX_EDATA;
    cell->kind = FDX_KIND_MISS;
    cell->keyed = 1;
    cell->token = view(m->wanted);
    return fill_common(&c, cell, &m->fallback, &m->hw, "fallback.", dtypes);
}

int fdx_cands_encode(const fdx_candidate *cands, size_t n, int trusted, fdx_buf *out, char *err,
                     size_t errsz)
{
    check_ctx c = {trusted, err, errsz, "candidates", 0};
    if (n && !cands) {
        snprintf(err, errsz, "candidates: missing (NULL)");
        return FDX_EDATA;
    }
    for (c.item = 0; c.item < n; c.item++)
        if (check_impl(&c, &cands[c.item].impl_id, "impl_id.") != FDX_OK)
            return FDX_EDATA;
    fdx_buf_clear(out);
    fdx_enc_candidates(out, cands, n);
    if (out->oom) {
        snprintf(err, errsz, "out of memory");
        return FDX_ENOMEM;
    }
    return FDX_OK;
}

int fdx_cell_from_dispatch(fdx_cell *cell, const fdx_dispatch *d, int trusted, fdx_buf *dtypes,
                           fdx_buf *cands, char *err, size_t errsz)
{
    static const char unkeyed[] = "";
    check_ctx c = {trusted, err, errsz, NULL, 0};
    if (d->structure_key &&
        check_text(&c, d->structure_key, "", "structure_key", NO_INDEX) != FDX_OK)
        return FDX_EDATA;
    int rc = fdx_cands_encode(d->candidates, d->n_candidates, trusted, cands, err, errsz);
    if (rc != FDX_OK)
        return rc;
    cell->kind = FDX_KIND_DISPATCH;
    cell->keyed = d->structure_key != NULL;
    cell->token = view(d->structure_key ? d->structure_key : unkeyed);
    return fill_common(&c, cell, &d->chosen, &d->hw, "chosen.", dtypes);
}

/* Packed layout: kind, keyed, revision, cc_major, cc_minor, then the seven
 * strings, each as a 4-byte length and its bytes. */
static void pack_str(fdx_buf *out, fdx_str s)
{
    uint32_t n = (uint32_t)s.n;
    fdx_buf_append(out, &n, sizeof n);
    fdx_buf_append(out, s.p, s.n);
}

void fdx_cell_pack(const fdx_cell *c, fdx_buf *out)
{
    unsigned char head[2] = {(unsigned char)c->kind, (unsigned char)c->keyed};
    fdx_buf_clear(out);
    fdx_buf_append(out, head, sizeof head);
    fdx_buf_append(out, &c->revision, sizeof c->revision);
    fdx_buf_append(out, &c->cc_major, sizeof c->cc_major);
    fdx_buf_append(out, &c->cc_minor, sizeof c->cc_minor);
    pack_str(out, c->token);
    pack_str(out, c->backend);
    pack_str(out, c->op);
    pack_str(out, c->dtypes_json);
    pack_str(out, c->kernel_source);
    pack_str(out, c->sku);
    pack_str(out, c->driver);
}

static const char *unpack_str(fdx_str *s, const char *p)
{
    uint32_t n;
    memcpy(&n, p, sizeof n);
    s->p = p + sizeof n;
    s->n = n;
    return s->p + n;
}

void fdx_cell_unpack(fdx_cell *c, const char *key, size_t len)
{
    (void)len;
    const char *p = key;
    c->kind = (fdx_kind)(unsigned char)p[0];
    c->keyed = (unsigned char)p[1];
    p += 2;
    memcpy(&c->revision, p, sizeof c->revision);
    p += sizeof c->revision;
    memcpy(&c->cc_major, p, sizeof c->cc_major);
    p += sizeof c->cc_major;
    memcpy(&c->cc_minor, p, sizeof c->cc_minor);
    p += sizeof c->cc_minor;
    p = unpack_str(&c->token, p);
    p = unpack_str(&c->backend, p);
    p = unpack_str(&c->op, p);
    p = unpack_str(&c->dtypes_json, p);
    p = unpack_str(&c->kernel_source, p);
    p = unpack_str(&c->sku, p);
    unpack_str(&c->driver, p);
}

/* Raw byte order, shorter first on a common prefix (memcmp, like SQLite's BINARY). */
static int cmp_str(fdx_str a, fdx_str b)
{
    size_t n = a.n < b.n ? a.n : b.n;
    int r = n ? memcmp(a.p, b.p, n) : 0;
    if (r)
        return r;
    return (a.n > b.n) - (a.n < b.n);
}

#define CMP_NUM(x, y)                                                                              \
    do {                                                                                           \
        if ((x) != (y))                                                                            \
            return (x) < (y) ? -1 : 1;                                                             \
    } while (0)

int fdx_cell_compare(const fdx_cell *a, const fdx_cell *b)
{
    int r;
    CMP_NUM(a->keyed, b->keyed);
    if ((r = cmp_str(a->token, b->token)) != 0 ||
        (r = cmp_str(a->kernel_source, b->kernel_source)) != 0)
        return r;
    CMP_NUM(a->revision, b->revision);
    if ((r = cmp_str(a->backend, b->backend)) != 0 || (r = cmp_str(a->op, b->op)) != 0 ||
        (r = cmp_str(a->dtypes_json, b->dtypes_json)) != 0)
        return r;
    CMP_NUM(a->cc_major, b->cc_major);
    CMP_NUM(a->cc_minor, b->cc_minor);
    if ((r = cmp_str(a->sku, b->sku)) != 0)
        return r;
    return cmp_str(a->driver, b->driver);
}
