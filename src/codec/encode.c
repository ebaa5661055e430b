/*
 * JSON Lines writer. Escaping follows docs/FORMAT.md ("The export"): only
 * '"', '\\' and control characters below U+0020 are escaped; everything else
 * is raw UTF-8.
 */
#include "codec/encode.h"

#include <stdint.h>
#include <string.h>

#include "codec/wire.h"
#include "common/json_word.h"
#include "common/u64.h"
#include "common/utf8.h"

static const char hex_digits[] = "0123456789abcdef";

/* How many bytes from s on need no escape, a word at a time where the first
 * byte to escape can be told. */
static size_t plain_run(const unsigned char *s, size_t n)
{
    size_t i = 0;
#ifdef FDX_WORD_FIRST
    for (; i + 8 <= n; i += 8) {
        uint64_t m = fdx_word_to_escape(fdx_word_load(s + i));
        if (m)
            return i + FDX_WORD_FIRST(m);
    }
    if (i < n && n >= 8) { /* the last word overlaps bytes already found plain */
        uint64_t m = fdx_word_to_escape(fdx_word_load(s + n - 8));
        return m ? n - 8 + FDX_WORD_FIRST(m) : n;
    }
#endif
    while (i < n && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

static void enc_escape(fdx_buf *b, unsigned char c)
{
    char esc[6] = {'\\', 0, 0, 0, 0, 0};
    switch (c) {
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    default:
        memcpy(esc + 1, "u00", 3);
        esc[4] = hex_digits[c >> 4];
        esc[5] = hex_digits[c & 15];
        fdx_buf_append(b, esc, 6);
        return;
    }
    fdx_buf_append(b, esc, 2);
}

void fdx_enc_string(fdx_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0, i = plain_run(u, n);
    if (fdx_buf_reserve(b, n + 2) != 0)
        return;
    b->data[b->len++] = '"';
    while (i < n) {
        fdx_buf_append(b, s + run, i - run);
        enc_escape(b, u[i]);
        run = i + 1;
        i = run + plain_run(u + run, n - run);
    }
    fdx_buf_append(b, s + run, n - run);
    fdx_buf_putc(b, '"');
}

void fdx_enc_u64(fdx_buf *b, uint64_t v)
{
    char digits[FDX_U64_DIGITS];
    fdx_buf_append(b, digits, fdx_u64_format(v, digits));
}

void fdx_enc_string_array(fdx_buf *b, const char *const *v, size_t n)
{
    fdx_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            fdx_buf_putc(b, ',');
        fdx_enc_string(b, v[i], strlen(v[i]));
    }
    fdx_buf_putc(b, ']');
}

/* Keys are literals, appended with their length known at compile time. */
#define KEY(b, text) fdx_buf_append(b, "" text, sizeof text - 1)

static void enc_str_field(fdx_buf *b, const char *key, size_t key_len, fdx_str v)
{
    fdx_buf_append(b, key, key_len);
    fdx_enc_string(b, v.p, v.n);
}

#define STR_FIELD(b, key, v) enc_str_field(b, "" key, sizeof key - 1, v)

/* IMPL is written as head, dtypes array, tail. */
static void enc_impl_head(fdx_buf *b, fdx_str backend, fdx_str op)
{
    STR_FIELD(b, "{\"backend\":", backend);
    STR_FIELD(b, ",\"op\":", op);
    KEY(b, ",\"dtypes\":");
}

static void enc_impl_tail(fdx_buf *b, fdx_str source, uint64_t revision)
{
    STR_FIELD(b, ",\"kernel_source\":", source);
    KEY(b, ",\"kernel_revision_hash\":");
    fdx_enc_u64(b, revision);
    fdx_buf_putc(b, '}');
}

void fdx_enc_candidates(fdx_buf *b, const fdx_candidate *c, size_t n)
{
    fdx_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        const fdx_impl *id = &c[i].impl_id;
        if (i)
            fdx_buf_putc(b, ',');
        KEY(b, "{\"impl_id\":");
        enc_impl_head(b, fdx_cstr(id->backend), fdx_cstr(id->op));
        fdx_enc_string_array(b, id->dtypes, id->n_dtypes);
        enc_impl_tail(b, fdx_cstr(id->kernel_source), id->kernel_revision_hash);
        if (c[i].has_latency) {
            KEY(b, ",\"latency_ns\":");
            fdx_enc_u64(b, c[i].latency_ns);
        }
        fdx_buf_putc(b, '}');
    }
    fdx_buf_putc(b, ']');
}

static void enc_hw(fdx_buf *b, const fdx_cell *cell)
{
    KEY(b, ",\"hw\":{");
    if (cell->cc_major != FDX_CC_ABSENT) {
        KEY(b, "\"compute_capability\":[");
        fdx_enc_u64(b, (uint64_t)cell->cc_major);
        fdx_buf_putc(b, ',');
        fdx_enc_u64(b, (uint64_t)cell->cc_minor);
        KEY(b, "],");
    }
    STR_FIELD(b, "\"hardware_sku\":", cell->sku);
    STR_FIELD(b, ",\"driver_version\":", cell->driver);
    KEY(b, "}}\n");
}

void fdx_enc_cell_line(fdx_buf *b, const fdx_cell *cell, uint64_t count, fdx_str cands)
{
    KEY(b, "{\"schema\":" FDX_WIRE_SCHEMA_TEXT);
    if (cell->kind == FDX_KIND_MISS) {
        STR_FIELD(b, ",\"wanted\":", cell->token);
        KEY(b, ",\"fallback\":");
    } else {
        if (cell->keyed)
            STR_FIELD(b, ",\"structure_key\":", cell->token);
        KEY(b, ",\"chosen\":");
    }
    enc_impl_head(b, cell->backend, cell->op);
    fdx_buf_append(b, cell->dtypes_json.p, cell->dtypes_json.n);
    enc_impl_tail(b, cell->kernel_source, cell->revision);
    if (cell->kind == FDX_KIND_DISPATCH && !fdx_cands_empty(cands)) {
        KEY(b, ",\"candidates\":");
        fdx_buf_append(b, cands.p, cands.n);
    }
    KEY(b, ",\"count\":");
    fdx_enc_u64(b, count);
    enc_hw(b, cell);
}

char *fdx_json_string(const char *s)
{
    size_t n = s ? strlen(s) : 0, bad;
    if (!s || !fdx_utf8_valid(s, n, &bad)) /* no JSON string holds those bytes */
        return NULL;
    fdx_buf b = FDX_BUF_INIT;
    fdx_enc_string(&b, s, n);
    if (b.oom) {
        fdx_buf_free(&b);
        return NULL;
    }
    return b.data;
}
