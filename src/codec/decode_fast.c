/*
 * The one-pass decoder (see decode_fast.h). Most lines of a feed never
 * repeat, and for each the lexer, cJSON's tree and the walk over it cost a
 * third of an ingest; this reads the same record in one pass. It takes only
 * what the reference surely accepts the same way: each object's known keys,
 * at most once each and spelled without escapes; values of the type the
 * field needs (null where the reference allows it); numbers as plain digits
 * in range; strings of valid UTF-8 whose escapes it decodes as cJSON does;
 * JSON whitespace; a nesting within the limit. Anything else is not its.
 * Members it does not know it reads past as the reference ignores them (a
 * producer newer than this build adds fields to every line), taking only
 * values the reference surely accepts and keys without escapes, each once.
 */
#include "codec/decode_fast.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/wire.h"
#include "common/buf.h"
#include "common/json_word.h"
#include "common/utf8.h"

typedef struct tok {
    size_t off;
    size_t len; /* 0: none */
} tok;

struct fdx_fast_decoder {
    char *text; /* the line's strings, decoded, each NUL-terminated */
    size_t cap_text;
    const char **strs; /* the dtypes arrays */
    size_t cap_strs;
    fdx_candidate *cands;
    size_t cap_cands;
    tok *lats; /* per candidate, its latency's digits */
    size_t cap_lats;
    size_t n_cands;
    tok count;
};

/* The cursor over one line. */
typedef struct cur {
    const char *s, *p, *e; /* the line, where reading is, its end */
    int depth, max_depth;
    fdx_fast_decoder *f;
    char *out; /* where the next string goes in f->text */
    size_t n_strs;
    size_t n_cands;
    uint64_t count;
    fdx_hw hw;
} cur;

/* A field's key as a line spells it, closing quote included, in room for
 * whole words: a key is told from the words of the line at once. */
typedef struct keyname {
    char s[24];
    size_t n; /* the key's length, without the quote */
} keyname;

#define KEY(s)                                                                                     \
    {                                                                                              \
        s "\"", sizeof s - 1                                                                       \
    }

/* Some bytes of the line: a key no field has. */
typedef struct span {
    const char *s;
    size_t n;
} span;

fdx_fast_decoder *fdx_fast_decoder_new(void)
{
    return calloc(1, sizeof(fdx_fast_decoder));
}

void fdx_fast_decoder_free(fdx_fast_decoder *f)
{
    if (!f)
        return;
    free(f->text);
    free(f->strs);
    free(f->cands);
    free(f->lats);
    free(f);
}

/* ---- tokens ---- */

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* Most tokens follow no whitespace: one comparison tells. */
static inline void skip_space(cur *c)
{
    while (c->p < c->e && (unsigned char)*c->p <= ' ' && is_space(*c->p))
        c->p++;
}

/* The byte ch, after whitespace. */
static inline int eat(cur *c, char ch)
{
    skip_space(c);
    if (c->p == c->e || *c->p != ch)
        return 0;
    c->p++;
    return 1;
}

/* An object or array opening, within the nesting limit. */
static int open_nested(cur *c, char ch)
{
    return eat(c, ch) && ++c->depth <= c->max_depth;
}

/* After a member or an element: 1 for a comma, 0 for the closing byte,
 * -1 for anything else. */
static int next(cur *c, char close)
{
    skip_space(c);
    if (c->p < c->e && *c->p == ',') {
        c->p++;
        return 1;
    }
    if (c->p < c->e && *c->p == close) {
        c->p++;
        c->depth--;
        return 0;
    }
    return -1;
}

/* An object's or array's closing right after its opening. */
static int closes(cur *c, char close)
{
    skip_space(c);
    if (c->p == c->e || *c->p != close)
        return 0;
    c->p++;
    c->depth--;
    return 1;
}

/* The word at c->p, a literal. */
static int literal(cur *c, const char *word, size_t n)
{
    if ((size_t)(c->e - c->p) < n || memcmp(c->p, word, n) != 0)
        return 0;
    c->p += n;
    return 1;
}

static int null(cur *c)
{
    skip_space(c);
    return literal(c, "null", 4);
}

#ifdef FDX_WORD_FIRST
/* The eight bytes at p as a number, when all are digits: a byte is one when
 * its high nibble is 3 and stays 3 with 6 added (no carry can cross bytes
 * once every high nibble is 3). The pairs, then the quads, are summed in
 * place (little-endian: the first digit is the lowest byte). */
static int eight_digits(const char *p, uint64_t *v)
{
    uint64_t w = fdx_word_load(p);
    if ((w & FDX_WORD_BYTES(0xF0)) != FDX_WORD_BYTES(0x30) ||
        ((w + FDX_WORD_BYTES(0x06)) & FDX_WORD_BYTES(0xF0)) != FDX_WORD_BYTES(0x30))
        return 0;
    w -= FDX_WORD_BYTES('0');
    w = w * 10 + (w >> 8);
    *v = ((w & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)) +
          ((w >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32))) >>
         32;
    return 1;
}
#endif

/* An unsigned integer of at most max, as plain digits: "0" or no leading
 * zero. Whatever follows the digits is left to the caller's next byte,
 * which a fraction, an exponent or another digit is not. Nineteen digits
 * cannot overflow 64 bits; only a twentieth needs the check. */
static int number(cur *c, uint64_t max, uint64_t *v, tok *t)
{
    skip_space(c);
    const char *start = c->p, *p = c->p;
    uint64_t x = 0;
    if (p == c->e || !is_digit(*p))
        return 0;
    if (*p == '0') {
        p++;
    } else {
        const char *stop = c->e - p > 19 ? p + 19 : c->e;
#ifdef FDX_WORD_FIRST
        uint64_t eight;
        for (; stop - p >= 8 && eight_digits(p, &eight); p += 8)
            x = x * 100000000 + eight;
#endif
        for (; p < stop && is_digit(*p); p++)
            x = x * 10 + (unsigned)(*p - '0');
        if (p < c->e && is_digit(*p)) {
            unsigned d = (unsigned)(*p++ - '0');
            if (x > (UINT64_MAX - d) / 10 || (p < c->e && is_digit(*p)))
                return 0;
            x = x * 10 + d;
        }
        if (x > max)
            return 0;
    }
    c->p = p;
    *v = x;
    if (t) {
        t->off = (size_t)(start - c->s);
        t->len = (size_t)(p - start);
    }
    return 1;
}

/* ---- strings ---- */

static int hex4(const cur *c, const char *p)
{
    if (c->e - p < 6 || p[0] != '\\' || p[1] != 'u')
        return -1;
    int v = 0;
    for (int i = 2; i < 6; i++) {
        char h = p[i];
        int d = is_digit(h)            ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* A \u escape (a surrogate pair as one) at c->p, written into o as UTF-8;
 * NULL for U+0000 and lone surrogates, which the reference rejects. */
static char *unicode_escape(cur *c, char *o)
{
    int hi = hex4(c, c->p);
    uint32_t cp = (uint32_t)hi;
    if (hi <= 0 || (hi >= 0xDC00 && hi <= 0xDFFF))
        return NULL;
    c->p += 6;
    if (hi >= 0xD800 && hi <= 0xDBFF) {
        int lo = hex4(c, c->p);
        if (lo < 0xDC00 || lo > 0xDFFF)
            return NULL;
        c->p += 6;
        cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
    }
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3F));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* The escape at c->p (a backslash), decoded into o; NULL when invalid. */
static char *escape(cur *c, char *o)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (c->e - c->p < 2)
        return NULL;
    if (c->p[1] == 'u')
        return unicode_escape(c, o);
    const char *k = c->p[1] ? strchr(from, c->p[1]) : NULL;
    if (!k)
        return NULL;
    *o++ = to[k - from];
    c->p += 2;
    return o;
}

/* Bytes a string holds as they are: not a quote, a backslash or a control
 * character. */
static int plain(unsigned char ch)
{
    return ch >= 0x20 && ch != '"' && ch != '\\';
}

/* The bytes from p on that a string holds as they are, a word at a time
 * where the first byte of another kind can be told. Until the string has
 * shown a byte of a longer UTF-8 sequence, such a byte stops the run, so that
 * the string is marked for validation; after that (it is validated whole)
 * those bytes are plain too. */
static const char *skip_plain(const char *p, const char *e, int utf8_seen)
{
#ifdef FDX_WORD_FIRST
    for (; e - p >= 8; p += 8) {
        uint64_t w = fdx_word_load(p);
        uint64_t m = utf8_seen ? fdx_word_to_escape(w) : fdx_word_not_ascii_text(w);
        if (m)
            return p + FDX_WORD_FIRST(m);
    }
#endif
    while (p < e && plain((unsigned char)*p) && (utf8_seen || !((unsigned char)*p & 0x80)))
        p++;
    return p;
}

/* What f->text holds past a line's strings, so that a short run is copied
 * as two whole words. */
#define TEXT_SLACK 16

/* The n bytes at p, which the line holds to e, copied to o. */
static void copy_run(char *o, const char *p, size_t n, const char *e)
{
#ifdef FDX_WORD_FIRST
    if (n <= TEXT_SLACK && e - p >= TEXT_SLACK) {
        memcpy(o, p, TEXT_SLACK); /* a constant size: two moves, no call */
        return;
    }
#endif
    memcpy(o, p, n);
}

/* A string, decoded into f->text; *out is its copy there. */
static int string(cur *c, const char **out)
{
    if (!eat(c, '"'))
        return 0;
    const char *start = c->p;
    char *o = c->out;
    unsigned char high = 0;
    for (;;) {
        const char *run = c->p;
        for (;;) {
            c->p = skip_plain(c->p, c->e, high & 0x80);
            if (c->p == c->e || !plain((unsigned char)*c->p))
                break;
            high |= (unsigned char)*c->p++;
        }
        copy_run(o, run, (size_t)(c->p - run), c->e);
        o += c->p - run;
        if (c->p == c->e || (unsigned char)*c->p < 0x20)
            return 0;
        if (*c->p == '"')
            break;
        if (!(o = escape(c, o)))
            return 0;
    }
    size_t bad;
    if ((high & 0x80) && !fdx_utf8_valid(start, (size_t)(c->p - start), &bad))
        return 0;
    c->p++;
    *o++ = '\0';
    *out = c->out;
    c->out = o;
    return 1;
}

/* ---- members this decoder does not know ---- */

/* An object's unknown keys so far, each refused the second time as the
 * reference refuses a repeated key; past UNKNOWN_KEYS of them in one object
 * the line is not this decoder's. */
#define UNKNOWN_KEYS 16

typedef struct unknown_keys {
    span v[UNKNOWN_KEYS];
    int n;
} unknown_keys;

static int skip_value(cur *c);

/* The key at c->p (its opening quote), one no field has, and its colon. A
 * key spelled with an escape may be a known one to the reference: not ours. */
static int unknown_key(cur *c, unknown_keys *seen)
{
    const char *name, *start = c->p + 1;
    if (!string(c, &name))
        return 0;
    size_t n = (size_t)(c->p - start) - 1;
    if ((size_t)(c->out - name) - 1 != n || seen->n == UNKNOWN_KEYS)
        return 0;
    for (int i = 0; i < seen->n; i++)
        if (seen->v[i].n == n && memcmp(seen->v[i].s, start, n) == 0)
            return 0;
    seen->v[seen->n++] = (span){start, n};
    return eat(c, ':');
}

/* A number nothing reads: RFC 8259's grammar, and at most NUMBER_BYTES of
 * it (cJSON reads no more than 63 bytes of a number, so the reference
 * refuses a longer one). */
#define NUMBER_BYTES 40

static const char *digits(const char *p, const char *e)
{
    while (p < e && is_digit(*p))
        p++;
    return p;
}

static int skip_number(cur *c)
{
    const char *p = c->p, *e = c->e;
    if (p < e && *p == '-')
        p++;
    if (p == e || !is_digit(*p))
        return 0;
    p = *p == '0' ? p + 1 : digits(p, e);
    if (p < e && *p == '.') {
        if (++p == e || !is_digit(*p))
            return 0;
        p = digits(p, e);
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        if (++p < e && (*p == '+' || *p == '-'))
            p++;
        if (p == e || !is_digit(*p))
            return 0;
        p = digits(p, e);
    }
    if (p - c->p > NUMBER_BYTES)
        return 0;
    c->p = p;
    return 1;
}

/* An array, each element read by element. */
static int array(cur *c, int (*element)(cur *c))
{
    int more;
    if (!open_nested(c, '['))
        return 0;
    if (closes(c, ']'))
        return 1;
    do {
        if (!element(c))
            return 0;
    } while ((more = next(c, ']')) == 1);
    return more == 0;
}

typedef int (*member_fn)(cur *c, int key, void *out);

static int object(cur *c, const keyname *keys, int n_keys, member_fn member, void *out,
                  unsigned *has);

/* The value of a member no field has: any JSON value, read and dropped. */
static int skip_value(cur *c)
{
    const char *ignored;
    unsigned none;
    skip_space(c);
    if (c->p == c->e)
        return 0;
    switch (*c->p) {
    case '"': return string(c, &ignored);
    case '{': return object(c, NULL, 0, NULL, NULL, &none);
    case '[': return array(c, skip_value);
    case 't': return literal(c, "true", 4);
    case 'f': return literal(c, "false", 5);
    case 'n': return literal(c, "null", 4);
    default: return skip_number(c);
    }
}

/* ---- objects ---- */

/* Whether the key whose bytes start at k (room of them to the line's end)
 * is name: its bytes, then the closing quote. */
static int is_name(const char *k, size_t room, const keyname *name)
{
    size_t n = name->n + 1;
#ifdef FDX_WORD_FIRST
    if (room >= sizeof name->s) {
        for (size_t at = 0; at < n; at += 8) {
            uint64_t diff = fdx_word_load(k + at) ^ fdx_word_load(name->s + at);
            if (n - at < 8)
                diff &= (1ULL << 8 * (n - at)) - 1;
            if (diff)
                return 0;
        }
        return 1;
    }
#endif
    return n <= room && memcmp(name->s, k, n) == 0;
}

enum { KEY_BAD = -1, KEY_UNKNOWN = -2 };

/* The next member's key, as its index in keys, and its colon; KEY_UNKNOWN
 * for a key not in keys, KEY_BAD for one not read as the reference reads it
 * or one in seen already. Writers put an object's keys in one order, so the
 * key after the last one found (*hint) is tried first. */
static int key(cur *c, const keyname *keys, int n_keys, unsigned *seen, int *hint,
               unknown_keys *unknown)
{
    if (!eat(c, '"'))
        return KEY_BAD;
    const char *k = c->p;
    size_t room = (size_t)(c->e - k);
    for (int tried = 0, i = *hint; tried < n_keys; tried++, i = i + 1 < n_keys ? i + 1 : 0) {
        size_t n = keys[i].n;
        if (!is_name(k, room, &keys[i]))
            continue;
        if (*seen & 1u << i)
            return KEY_BAD;
        *seen |= 1u << i;
        c->p = k + n + 1;
        *hint = i + 1 < n_keys ? i + 1 : 0;
        return eat(c, ':') ? i : KEY_BAD;
    }
    c->p = k - 1; /* the unknown key is read whole, from its quote */
    return unknown_key(c, unknown) ? KEY_UNKNOWN : KEY_BAD;
}

/* An object whose known keys are those in keys, each read by member; *has
 * is the set of those it has (a bit per index). 0 when it is not one this
 * decoder reads. */
static int object(cur *c, const keyname *keys, int n_keys, member_fn member, void *out,
                  unsigned *has)
{
    unknown_keys unknown;
    int more, hint = 0;
    unknown.n = 0;
    *has = 0;
    if (!open_nested(c, '{'))
        return 0;
    if (!n_keys && closes(c, '}')) /* an object with fields has members */
        return 1;
    do {
        int k = key(c, keys, n_keys, has, &hint, &unknown);
        if (k == KEY_BAD || !(k == KEY_UNKNOWN ? skip_value(c) : member(c, k, out)))
            return 0;
    } while ((more = next(c, '}')) == 1);
    return more == 0;
}

static int dtypes(cur *c, fdx_impl *id)
{
    fdx_fast_decoder *f = c->f;
    int more;
    if (!open_nested(c, '['))
        return 0;
    id->dtypes = f->strs + c->n_strs;
    id->n_dtypes = 0;
    if (closes(c, ']'))
        return 1;
    do {
        if (!string(c, &f->strs[c->n_strs]))
            return 0;
        c->n_strs++;
        id->n_dtypes++;
    } while ((more = next(c, ']')) == 1);
    return more == 0;
}

enum { BACKEND, OP, DTYPES, KERNEL_SOURCE, KERNEL_REVISION_HASH, N_IMPL_KEYS };

static const keyname impl_keys[] = {KEY("backend"), KEY("op"), KEY("dtypes"), KEY("kernel_source"),
                                    KEY("kernel_revision_hash")};

static int impl_member(cur *c, int k, void *out)
{
    fdx_impl *id = out;
    switch (k) {
    case BACKEND: return string(c, &id->backend);
    case OP: return string(c, &id->op);
    case DTYPES: return dtypes(c, id);
    case KERNEL_SOURCE: return string(c, &id->kernel_source);
    default: return number(c, UINT64_MAX, &id->kernel_revision_hash, NULL);
    }
}

static int impl(cur *c, fdx_impl *id)
{
    unsigned has;
    return object(c, impl_keys, N_IMPL_KEYS, impl_member, id, &has) &&
           has == (1u << N_IMPL_KEYS) - 1;
}

enum { COMPUTE_CAPABILITY, HARDWARE_SKU, DRIVER_VERSION, N_HW_KEYS };

static const keyname hw_keys[] = {KEY("compute_capability"), KEY("hardware_sku"),
                                  KEY("driver_version")};

static int compute_capability(cur *c, fdx_hw *hw)
{
    uint64_t major, minor;
    if (null(c))
        return 1;
    if (!open_nested(c, '[') || !number(c, UINT32_MAX, &major, NULL) || next(c, ']') != 1 ||
        !number(c, UINT32_MAX, &minor, NULL) || next(c, ']') != 0)
        return 0;
    hw->has_compute_capability = 1;
    hw->cc_major = (uint32_t)major;
    hw->cc_minor = (uint32_t)minor;
    return 1;
}

static int hw_member(cur *c, int k, void *out)
{
    fdx_hw *hw = out;
    switch (k) {
    case COMPUTE_CAPABILITY: return compute_capability(c, hw);
    case HARDWARE_SKU: return string(c, &hw->hardware_sku);
    default: return string(c, &hw->driver_version);
    }
}

static int hw(cur *c, fdx_hw *hw)
{
    unsigned has, need = 1u << HARDWARE_SKU | 1u << DRIVER_VERSION;
    return object(c, hw_keys, N_HW_KEYS, hw_member, hw, &has) && (has & need) == need;
}

enum { IMPL_ID, LATENCY_NS, N_CANDIDATE_KEYS };

static const keyname candidate_keys[] = {KEY("impl_id"), KEY("latency_ns")};

/* A member of candidate c->n_cands. */
static int candidate_member(cur *c, int k, void *out)
{
    fdx_candidate *cand = out;
    if (k == IMPL_ID)
        return impl(c, &cand->impl_id);
    if (null(c))
        return 1;
    cand->has_latency = 1;
    return number(c, UINT64_MAX, &cand->latency_ns, &c->f->lats[c->n_cands]);
}

static int candidate(cur *c)
{
    fdx_fast_decoder *f = c->f;
    size_t i = c->n_cands;
    if (fdx_grow(&f->cands, &f->cap_cands, i + 1, sizeof *f->cands) ||
        fdx_grow(&f->lats, &f->cap_lats, i + 1, sizeof *f->lats))
        return 0;
    memset(&f->cands[i], 0, sizeof f->cands[i]);
    f->lats[i].len = 0;
    unsigned has;
    if (!object(c, candidate_keys, N_CANDIDATE_KEYS, candidate_member, &f->cands[i], &has) ||
        !(has & 1u << IMPL_ID))
        return 0;
    c->n_cands++;
    return 1;
}

static int schema(cur *c)
{
    uint64_t v;
    tok t;
    return number(c, UINT64_MAX, &v, &t) && t.len == sizeof FDX_WIRE_SCHEMA_TEXT - 1 &&
           memcmp(c->s + t.off, FDX_WIRE_SCHEMA_TEXT, t.len) == 0;
}

enum { SCHEMA, WANTED, FALLBACK, STRUCTURE_KEY, CHOSEN, CANDIDATES, COUNT, HW, N_RECORD_KEYS };

static const keyname record_keys[] = {KEY("schema"),        KEY("wanted"), KEY("fallback"),
                                      KEY("structure_key"), KEY("chosen"), KEY("candidates"),
                                      KEY("count"),         KEY("hw")};

#define BIT(k)         (1u << (k))
#define MISS_KEYS      (BIT(SCHEMA) | BIT(WANTED) | BIT(FALLBACK) | BIT(COUNT) | BIT(HW))
#define DISPATCH_NEEDS (BIT(SCHEMA) | BIT(CHOSEN) | BIT(COUNT) | BIT(HW))
#define DISPATCH_KEYS  (DISPATCH_NEEDS | BIT(STRUCTURE_KEY) | BIT(CANDIDATES))

static int record_member(cur *c, int k, void *out)
{
    fdx_record *r = out;
    switch (k) {
    case SCHEMA: return schema(c);
    case WANTED: return string(c, &r->miss.wanted);
    case FALLBACK: return impl(c, &r->miss.fallback);
    case STRUCTURE_KEY: return null(c) || string(c, &r->dispatch.structure_key);
    case CHOSEN: return impl(c, &r->dispatch.chosen);
    case CANDIDATES: return array(c, candidate);
    case COUNT: return number(c, UINT64_MAX, &c->count, &c->f->count);
    default: return hw(c, &c->hw);
    }
}

/* Room for everything a line of n bytes can hold: its strings decode to at
 * most their length with quotes (and copy_run may write TEXT_SLACK bytes
 * past the last), and each takes at least two bytes. The
 * candidates grow as they come, from room for one (so a dispatch's list is
 * never NULL, as the reference's is not). */
static int reserve(fdx_fast_decoder *f, size_t n)
{
    return fdx_grow(&f->text, &f->cap_text, n + 1 + TEXT_SLACK, 1) ||
           fdx_grow(&f->strs, &f->cap_strs, n / 2 + 1, sizeof *f->strs) ||
           fdx_grow(&f->cands, &f->cap_cands, 1, sizeof *f->cands) ||
           fdx_grow(&f->lats, &f->cap_lats, 1, sizeof *f->lats);
}

int fdx_fast_decode(fdx_fast_decoder *f, const char *line, size_t n, int max_depth, fdx_record *rec)
{
    if (reserve(f, n))
        return 0;
    cur c = {.s = line, .p = line, .e = line + n, .max_depth = max_depth, .f = f, .out = f->text};
    memset(rec, 0, sizeof *rec);
    unsigned seen;
    int read = object(&c, record_keys, N_RECORD_KEYS, record_member, rec, &seen);
    skip_space(&c);
    if (!read || c.p != c.e)
        return 0;
    f->n_cands = 0;
    if (seen == MISS_KEYS) {
        rec->kind = FDX_KIND_MISS;
        rec->miss.count = c.count;
        rec->miss.hw = c.hw;
        return 1;
    }
    if ((seen & DISPATCH_NEEDS) != DISPATCH_NEEDS || (seen & ~DISPATCH_KEYS))
        return 0;
    rec->kind = FDX_KIND_DISPATCH;
    rec->dispatch.candidates = f->cands;
    rec->dispatch.n_candidates = f->n_cands = c.n_cands;
    rec->dispatch.count = c.count;
    rec->dispatch.hw = c.hw;
    return 1;
}

void fdx_fast_count_token(const fdx_fast_decoder *f, size_t *off, size_t *len)
{
    *off = f->count.off;
    *len = f->count.len;
}

int fdx_fast_latency_token(const fdx_fast_decoder *f, size_t i, size_t *off, size_t *len)
{
    if (i >= f->n_cands || !f->lats[i].len)
        return 0;
    *off = f->lats[i].off;
    *len = f->lats[i].len;
    return 1;
}
