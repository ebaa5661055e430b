/*
 * Values from a store or the command line printed where a terminal or a
 * shell interprets text: rendered so that none leaves its literal, whatever
 * bytes it holds.
 */
#ifndef FDX_TOOL_TEXT_H
#define FDX_TOOL_TEXT_H

/*
 * s with every control character (C0, DEL, C1), line or paragraph separator
 * and bidirectional control shown as an escape (\n, \r, \t, \x1b, \u{202e}),
 * every byte that is not UTF-8 as \xNN and a backslash as \\; malloc'd,
 * NULL when memory runs out. Its width is its number of code points.
 */
char *tool_visible(const char *s);
/* s as tool_visible shows it, but with its backslashes and tabs as they are: for a
 * message, which quotes feeds' text and file names (a line of a feed must
 * not erase or forge lines on a terminal). */
char *tool_visible_message(const char *s);
/* Number of code points in UTF-8 text. */
int tool_text_width(const char *s);
/*
 * s as one line of SQL that evaluates to the same bytes: quoted runs joined
 * with char(N) for the characters tool_visible escapes and CAST(x'NN' AS
 * TEXT) for bytes that are not UTF-8 ('' for ""); malloc'd, NULL on ENOMEM.
 */
char *tool_sql_text(const char *s);
/*
 * s as a JSON string, the characters tool_visible escapes as \n, \r, \t or
 * \uXXXX and each byte that is not UTF-8 (which JSON cannot hold) as \ufffd;
 * malloc'd, NULL when memory runs out.
 */
char *tool_json_text(const char *s);
/*
 * A row's value as a table or JSON prints it: tool_json_text(s) when json,
 * else tool_visible(s); NULL for a NULL s. Sets *oom when memory runs out.
 */
char *tool_row_text(const char *s, int json, int *oom);
/*
 * A row's value in a table whose columns are apart by spaces: as
 * tool_row_text shows it, but JSON-quoted (tool_json_text) when it is empty,
 * begins or ends with a space, or holds a quote or a byte of seps (the
 * column's own separators), so that no two values, nor a value and the
 * columns around it, read the same ("k" and "k "; "SKU X" "1.0" and "SKU"
 * "X 1.0"). NULL for a NULL s.
 */
char *tool_shown(const char *s, int json, const char *seps, int *oom);
/* A column's width w widened to fit a value v wide. */
int tool_wider(int w, int v);

#endif
