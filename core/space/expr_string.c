/*
** expr_string.c: string literals in Python's syntax, for expressions and
** the Python lists of expr_list.c: 'a' and "a", with the prefixes r (raw:
** backslashes stay) and u (none), and Python's escapes: \\ \' \" \a \b \f
** \n \r \t \v, \ooo (octal), \xhh, \uhhhh, \Uhhhhhhhh (written as UTF-8)
** and a backslash before a newline, which joins lines. A backslash before
** any other character stays, as Python keeps it.
**
** Not supported, each an error that says so: triple quotes, bytes (b'')
** and f-strings (f''), \N{name}, and a NUL character (values are C
** strings).
*/
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "expr_int.h"

static bool is_quote(char c) { return c == '\'' || c == '"'; }

size_t expr_string_prefix(const char *s) {
  size_t n = 0;
  while (n < 2 && s[n] && strchr("rRuUbBfF", s[n])) n++;
  return is_quote(s[n]) ? n : 0;
}

/* The prefix's letters, lower case: "r", "u", "" or an error. */
static int check_prefix(const char *text, size_t pos, size_t n, bool *raw, kt_error *err) {
  char a = (char)tolower((unsigned char)text[pos]);
  char b = n == 2 ? (char)tolower((unsigned char)text[pos + 1]) : a;
  if (a == 'b' || b == 'b')
    return kt_fail_at(err, pos, "bytes literals (b'...') are not supported");
  if (a == 'f' || b == 'f')
    return kt_fail_at(err, pos, "f-strings (f'...') are not supported");
  if (n == 2 && a == b) return kt_fail_at(err, pos, "'%.2s' is no string prefix", text + pos);
  if (n == 2 && (a == 'u' || b == 'u'))
    return kt_fail_at(err, pos, "'%.2s' is no string prefix (u and r do not combine)",
                      text + pos);
  *raw = n > 0 && a == 'r';
  return 0;
}

/* Where the string whose quote is at open ends (its closing quote). */
static int scan(const char *text, size_t start, size_t open, size_t *close, kt_error *err) {
  char quote = text[open];
  if (text[open + 1] == quote && text[open + 2] == quote)
    return kt_fail_at(err, start, "triple-quoted strings are not supported");
  size_t q = open + 1;
  for (; text[q] != quote; q++) {
    if (text[q] == '\0' || text[q] == '\n')
      return kt_fail_at(err, start, "unterminated string");
    if (text[q] == '\\' && text[q + 1] != '\0') q++;
  }
  *close = q;
  return 0;
}

static int hex_digits(const char *s, int n, unsigned long *cp) {
  *cp = 0;
  for (int i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!isxdigit(c)) return -1;
    *cp = *cp * 16 + (unsigned long)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
  }
  return 0;
}

/* A numeric escape at s (after the backslash): its code point and the
** characters it takes; 0 characters when s starts no such escape. */
static int numeric_escape(const char *s, size_t at, unsigned long *cp, size_t *used,
                          kt_error *err) {
  static const struct { char c; int digits; const char *name; } hex[] = {
      {'x', 2, "\\xhh"}, {'u', 4, "\\uhhhh"}, {'U', 8, "\\Uhhhhhhhh"}};
  *used = 0;
  if (s[0] >= '0' && s[0] <= '7') {
    *cp = 0;
    for (; *used < 3 && s[*used] >= '0' && s[*used] <= '7'; (*used)++)
      *cp = *cp * 8 + (unsigned long)(s[*used] - '0');
  }
  for (size_t i = 0; i < sizeof hex / sizeof hex[0]; i++) {
    if (s[0] != hex[i].c) continue;
    if (hex_digits(s + 1, hex[i].digits, cp))
      return kt_fail_at(err, at, "truncated %s escape", hex[i].name);
    *used = 1 + (size_t)hex[i].digits;
  }
  if (*used == 0) return 0;
  if (*cp == 0)
    return kt_fail_at(err, at, "a string may not hold a NUL character (ktlua's strings are C "
                               "strings)");
  if (*cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
    return kt_fail_at(err, at, "the escape gives no Unicode character (U+%lX)", *cp);
  return 0;
}

/* The escape at text + *q (a backslash) written to o; *q moves past it. */
static int escape(const char *text, size_t *q, char *o, size_t *wrote, kt_error *err) {
  static const char from[] = "\\'\"abfnrtv", to[] = "\\'\"\a\b\f\n\r\t\v";
  const char *s = text + *q + 1, *hit = strchr(from, s[0]);
  unsigned long cp;
  size_t used;
  *wrote = 0;
  if (s[0] == '\n') {
    *q += 2;
    return 0;
  }
  if (s[0] == 'N') return kt_fail_at(err, *q, "\\N{...} escapes are not supported");
  if (hit) {
    *o = to[hit - from];
    *wrote = 1;
    *q += 2;
    return 0;
  }
  if (numeric_escape(s, *q, &cp, &used, err)) return -1;
  if (used == 0) { /* an unknown escape: the backslash stays */
    *o = '\\';
    *wrote = 1;
    *q += 1;
    return 0;
  }
  *wrote = kt_utf8_put(o, cp);
  *q += 1 + used;
  return 0;
}

/* No escape makes a string longer than it is written. */
static int decode(const char *text, size_t open, size_t close, bool raw, char **value,
                  kt_error *err) {
  char *o = kt_alloc(close - open, err);
  if (!o) return -1;
  size_t n = 0;
  for (size_t q = open + 1; q < close;) {
    size_t wrote;
    if (text[q] != '\\' || raw) {
      o[n++] = text[q++];
    } else if (escape(text, &q, o + n, &wrote, err)) {
      free(o);
      return -1;
    } else {
      n += wrote;
    }
  }
  o[n] = '\0';
  *value = o;
  return 0;
}

int expr_string(const char *text, size_t pos, size_t *len, char **value, kt_error *err) {
  size_t n = expr_string_prefix(text + pos), close = 0;
  bool raw = false;
  if ((n > 0 && check_prefix(text, pos, n, &raw, err)) || scan(text, pos, pos + n, &close, err))
    return -1;
  *len = close + 1 - pos;
  return value ? decode(text, pos + n, close, raw, value, err) : 0;
}
