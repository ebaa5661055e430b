/* Rendering values for terminals and shells (see tool_text.h). */
#include "tool_text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdx.h"

enum piece { PLAIN, ODD, BAD, END };

/* Decodes one strict UTF-8 sequence (RFC 3629) at s into *cp and *len. */
static enum piece next_piece(const unsigned char *s, uint32_t *cp, size_t *len)
{
    static const uint32_t min[4] = {0, 0x80, 0x800, 0x10000};
    size_t n = s[0] < 0x80                    ? 1
               : s[0] >= 0xC2 && s[0] <= 0xDF ? 2
               : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
               : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
                                              : 0;
    uint32_t c = n == 1 ? s[0] : n ? s[0] & (0x7F >> n) : 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            n = 0;
            break;
        }
        c = c << 6 | (s[i] & 0x3F);
    }
    if (n == 0 || c < min[n - 1] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        *cp = s[0];
        *len = 1;
        return BAD;
    }
    *cp = c;
    *len = n;
    return fdx_code_point_escaped(c) ? ODD : PLAIN;
}

/* Writes one piece (the character c, bytes u[0..len)) in some rendering;
 * called once more with END at the end. *state starts at 0. */
typedef void (*put_fn)(FILE *f, enum piece p, uint32_t c, const unsigned char *u, size_t len,
                       int *state);

/* s rendered piece by piece into a malloc'd string; NULL when memory runs out. */
static char *render(const char *s, put_fn put)
{
    char *text = NULL;
    size_t size = 0;
    int state = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    for (const unsigned char *u = (const unsigned char *)s; *u;) {
        uint32_t c;
        size_t len;
        enum piece p = next_piece(u, &c, &len);
        put(f, p, c, u, len, &state);
        u += len;
    }
    put(f, END, 0, NULL, 0, &state);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* The letter of the short escape of c (n, r, t), or 0. */
static int short_escape(uint32_t c)
{
    return c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : 0;
}

static void put_visible(FILE *f, enum piece p, uint32_t c, const unsigned char *u, size_t len,
                        int *state)
{
    (void)state;
    if (p == END)
        return;
    if (p == PLAIN && c == '\\')
        fputs("\\\\", f);
    else if (p == PLAIN)
        fwrite(u, 1, len, f);
    else if (short_escape(c))
        fprintf(f, "\\%c", short_escape(c));
    else if (p == BAD || c < 0x80)
        fprintf(f, "\\x%02x", (unsigned)c);
    else
        fprintf(f, "\\u{%04x}", (unsigned)c);
}

char *tool_visible(const char *s)
{
    return render(s, put_visible);
}

/* As put_visible, but a backslash stays one and a tab a tab (libpq's
 * messages hold one): a message quotes feeds and paths, whose backslashes it
 * shows as they are. */
static void put_message(FILE *f, enum piece p, uint32_t c, const unsigned char *u, size_t len,
                        int *state)
{
    if (p == PLAIN || (p == ODD && c == '\t'))
        fwrite(u, 1, len, f);
    else
        put_visible(f, p, c, u, len, state);
}

char *tool_visible_message(const char *s)
{
    return render(s, put_message);
}

int tool_text_width(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* state: 0 before the first piece, 1 inside a quoted run, 2 after a term. */
static void put_sql(FILE *f, enum piece p, uint32_t c, const unsigned char *u, size_t len,
                    int *state)
{
    if (p == END) {
        fputs(*state == 1 ? "'" : *state == 0 ? "''" : "", f);
        return;
    }
    if (p == PLAIN && *state != 1)
        fputs(*state == 0 ? "'" : "||'", f);
    else if (p != PLAIN)
        fputs(*state == 1 ? "'||" : *state == 0 ? "" : "||", f);
    *state = p == PLAIN ? 1 : 2;
    if (p == PLAIN && c == '\'')
        fputs("''", f);
    else if (p == PLAIN)
        fwrite(u, 1, len, f);
    else if (p == ODD)
        fprintf(f, "char(%u)", (unsigned)c);
    else
        fprintf(f, "CAST(x'%02x' AS TEXT)", (unsigned)c);
}

char *tool_sql_text(const char *s)
{
    return render(s, put_sql);
}

static void put_json(FILE *f, enum piece p, uint32_t c, const unsigned char *u, size_t len,
                     int *state)
{
    if (!*state)
        fputc('"', f);
    *state = 1;
    if (p == END)
        fputc('"', f);
    else if (p == PLAIN && (c == '"' || c == '\\'))
        fprintf(f, "\\%c", (char)c);
    else if (p == PLAIN)
        fwrite(u, 1, len, f);
    else if (short_escape(c))
        fprintf(f, "\\%c", short_escape(c));
    else if (p != BAD && c > 0xFFFF) /* JSON's \\u takes four digits: a surrogate pair */
        fprintf(f, "\\u%04x\\u%04x", 0xD800u + ((c - 0x10000) >> 10), 0xDC00u + (c & 0x3FF));
    else
        fprintf(f, "\\u%04x", p == BAD ? 0xFFFDu : (unsigned)c);
}

char *tool_json_text(const char *s)
{
    return render(s, put_json);
}

char *tool_row_text(const char *s, int json, int *oom)
{
    char *d = !s ? NULL : json ? tool_json_text(s) : tool_visible(s);
    *oom |= s && !d;
    return d;
}

char *tool_shown(const char *s, int json, const char *seps, int *oom)
{
    size_t n = s ? strlen(s) : 0;
    if (json || !s || (n && s[0] != ' ' && s[n - 1] != ' ' && !strchr(s, '"') && !strpbrk(s, seps)))
        return tool_row_text(s, json, oom);
    char *d = tool_json_text(s);
    *oom |= !d;
    return d;
}

int tool_wider(int w, int v)
{
    return v > w ? v : w;
}
