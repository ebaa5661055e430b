/*
 * Line pre-scan (see lex.h). It only classifies bytes; cJSON still builds the
 * tree and rejects structural errors such as a missing colon.
 */
#include "codec/lex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "fdx.h"

typedef struct scan {
    const char *s;
    size_t n;
    char *err;
    size_t errsz;
} scan;

static int fail(scan *sc, size_t at, const char *what)
{
    snprintf(sc->err, sc->errsz, "%s at byte %zu", what, at + 1);
    return FDX_EDATA;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits after "\u" at s[i]; -1 if malformed. */
static long read_u16(const scan *sc, size_t i)
{
    if (i + 6 > sc->n || sc->s[i] != '\\' || sc->s[i + 1] != 'u')
        return -1;
    long v = 0;
    for (size_t k = 2; k < 6; k++) {
        int h = hexval(sc->s[i + k]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Validates the escape at s[i] == '\\'; returns its length or 0 on error. */
static size_t scan_escape(scan *sc, size_t i)
{
    if (i + 1 >= sc->n)
        return fail(sc, i, "unterminated string"), 0;
    char e = sc->s[i + 1];
    if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
        e == 't')
        return 2;
    if (e != 'u')
        return fail(sc, i, "invalid escape in string"), 0;
    long u = read_u16(sc, i);
    if (u < 0)
        return fail(sc, i, "invalid \\u escape in string"), 0;
    if (u == 0)
        return fail(sc, i, "string holds U+0000, which fdx cannot store"), 0;
    if (u >= 0xDC00 && u <= 0xDFFF)
        return fail(sc, i, "lone UTF-16 surrogate escape in string"), 0;
    if (u >= 0xD800 && u <= 0xDBFF) {
        long lo = read_u16(sc, i + 6);
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(sc, i, "lone UTF-16 surrogate escape in string"), 0;
        return 12;
    }
    return 6;
}

/* s[i] == '"'; returns the index after the closing quote, or 0 on error. */
static size_t scan_string(scan *sc, size_t i)
{
    const unsigned char *u = (const unsigned char *)sc->s;
    for (size_t j = i + 1; j < sc->n;) {
        if (u[j] == '"')
            return j + 1;
        if (u[j] == '\\') {
            size_t len = scan_escape(sc, j);
            if (!len)
                return 0;
            j += len;
        } else if (u[j] < 0x20) {
            return fail(sc, j, "unescaped control character in string"), 0;
        } else {
            j++;
        }
    }
    return fail(sc, i, "unterminated string"), 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* RFC 8259 number at s[i]; returns the index after it, or 0 on error. */
static size_t scan_number(scan *sc, size_t i)
{
    const char *s = sc->s;
    size_t n = sc->n, j = i;
    if (s[j] == '-')
        j++;
    if (j < n && s[j] == '0')
        j++;
    else if (j < n && is_digit(s[j]))
        while (j < n && is_digit(s[j]))
            j++;
    else
        return fail(sc, i, "invalid number"), 0;
    if (j < n && s[j] == '.') {
        if (++j >= n || !is_digit(s[j]))
            return fail(sc, i, "invalid number"), 0;
        while (j < n && is_digit(s[j]))
            j++;
    }
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        j++;
        if (j < n && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j >= n || !is_digit(s[j]))
            return fail(sc, i, "invalid number"), 0;
        while (j < n && is_digit(s[j]))
            j++;
    }
    if (j < n && (is_digit(s[j]) || s[j] == '.' || s[j] == '-' || s[j] == '+'))
        return fail(sc, i, "invalid number"), 0;
    return j;
}

static int push_num(fdx_lexed *lx, size_t off, size_t len)
{
    if (fdx_grow(&lx->nums, &lx->cap_nums, lx->n_nums + 1, sizeof *lx->nums))
        return FDX_ENOMEM;
    lx->nums[lx->n_nums].off = (uint32_t)off;
    lx->nums[lx->n_nums].len = (uint32_t)len;
    lx->n_nums++;
    return FDX_OK;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Whether the string s[i..next) is the root object's key "count": spelled
 * without escapes, at depth 1, followed by a colon. */
static int is_count_key(const scan *sc, int depth, size_t i, size_t next)
{
    if (depth != 1 || next - i != 7 || memcmp(sc->s + i, "\"count\"", 7) != 0)
        return 0;
    while (next < sc->n && is_space(sc->s[next]))
        next++;
    return next < sc->n && sc->s[next] == ':';
}

static int scan_all(scan *sc, int max_depth, fdx_lexed *lx)
{
    const unsigned char *u = (const unsigned char *)sc->s;
    int depth = 0, count_value_next = 0;
    for (size_t i = 0; i < sc->n;) {
        unsigned char c = u[i];
        size_t next = i + 1;
        if (is_space((char)c)) {
            i = next;
            continue;
        }
        int expecting = count_value_next;
        count_value_next = 0;
        if (c == '"') {
            lx->n_strings++;
            if (!(next = scan_string(sc, i)))
                return FDX_EDATA;
            count_value_next = is_count_key(sc, depth, i, next);
            lx->count_keys += count_value_next;
        } else if (c == ':') {
            count_value_next = expecting;
        } else if (c == '{' || c == '[') {
            lx->n_objects += c == '{';
            if (++depth > max_depth) {
                snprintf(sc->err, sc->errsz, "nesting deeper than %d levels at byte %zu", max_depth,
                         i + 1);
                return FDX_EDATA;
            }
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == '-' || is_digit((char)c)) {
            if (!(next = scan_number(sc, i)))
                return FDX_EDATA;
            if (expecting)
                lx->count_tok = (long)lx->n_nums;
            if (push_num(lx, i, next - i) != FDX_OK)
                return FDX_ENOMEM;
        } else if (c < 0x20 && !is_space((char)c)) {
            return fail(sc, i, "control character outside a string");
        }
        i = next;
    }
    return FDX_OK;
}

int fdx_lex_line(const char *s, size_t n, int max_depth, fdx_lexed *lx, char *err, size_t errsz)
{
    scan sc = {s, n, err, errsz};
    size_t bad;
    lx->n_nums = lx->n_strings = lx->n_objects = 0;
    lx->count_tok = -1;
    lx->count_keys = 0;
    if (!fdx_utf8_valid(s, n, &bad))
        return fail(&sc, bad, "invalid UTF-8");
    size_t i = 0;
    while (i < n && is_space(s[i]))
        i++;
    if (i == n || s[i] != '{') {
        /* an editor's byte order mark is not JSON whitespace (RFC 8259 8.1) */
        int bom = n - i >= 3 && memcmp(s + i, "\xEF\xBB\xBF", 3) == 0;
        snprintf(err, errsz, "not a JSON object%s",
                 bom ? " (it starts with a UTF-8 byte order mark, which JSON Lines does not allow)"
                     : "");
        return FDX_EDATA;
    }
    return scan_all(&sc, max_depth, lx);
}

void fdx_lexed_free(fdx_lexed *lx)
{
    free(lx->nums);
    lx->nums = NULL;
    lx->n_nums = lx->cap_nums = 0;
}
