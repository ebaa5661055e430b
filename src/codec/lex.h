/*
 * A single pass over one raw line before cJSON sees it. It enforces what
 * cJSON does not (strict UTF-8, no U+0000, no lone surrogates, strict number
 * grammar, no raw control characters, a nesting limit) and records the text
 * of every number, because cJSON keeps only a double.
 */
#ifndef FDX_LEX_H
#define FDX_LEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct fdx_numtok {
    uint32_t off;
    uint32_t len;
} fdx_numtok;

typedef struct fdx_lexed {
    fdx_numtok *nums; /* every number in document order */
    size_t n_nums;
    size_t cap_nums;
    size_t n_strings; /* strings (keys included) */
    size_t n_objects;
    long count_tok; /* index in nums of the value of the top-level "count", or -1 */
    int count_keys; /* how many top-level "count" keys (raw, unescaped) */
} fdx_lexed;

/* Returns FDX_OK, FDX_EDATA (reason in err) or FDX_ENOMEM. */
int fdx_lex_line(const char *s, size_t n, int max_depth, fdx_lexed *out, char *err, size_t errsz);
void fdx_lexed_free(fdx_lexed *lx);

#endif
