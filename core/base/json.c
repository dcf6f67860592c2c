/*
** json.c: JSON output.
*/
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void kt_json_string(FILE *f, const char *s) {
  if (!s) fputs("null", f);
  else kt_json_lstring(f, s, strlen(s));
}

/* The bytes of the UTF-8 sequence at p (RFC 3629: no overlong form, no
** surrogate, nothing past U+10FFFF), or 0 where none starts. */
static size_t utf8_sequence(const unsigned char *p, const unsigned char *end) {
  size_t n = *p < 0x80 ? 1 : *p >= 0xC2 && *p <= 0xDF ? 2 : *p >= 0xE0 && *p <= 0xEF ? 3
           : *p >= 0xF0 && *p <= 0xF4 ? 4 : 0;
  if (n == 0 || (size_t)(end - p) < n) return 0;
  /* the second byte's range narrows after E0, ED, F0 and F4 */
  unsigned lo = *p == 0xE0 ? 0xA0 : *p == 0xF0 ? 0x90 : 0x80;
  unsigned hi = *p == 0xED ? 0x9F : *p == 0xF4 ? 0x8F : 0xBF;
  for (size_t i = 1; i < n; i++, lo = 0x80, hi = 0xBF)
    if (p[i] < lo || p[i] > hi) return 0;
  return n;
}

void kt_json_chars(FILE *f, const char *s, size_t len) {
  for (const unsigned char *p = (const unsigned char *)s, *end = p + len; p < end; p++) {
    size_t n;
    switch (*p) {
      case '"': fputs("\\\"", f); break;
      case '\\': fputs("\\\\", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      case '\t': fputs("\\t", f); break;
      default:
        if (*p < 0x20) {
          fprintf(f, "\\u%04x", *p);
        } else if ((n = utf8_sequence(p, end)) > 0) {
          fwrite(p, 1, n, f);
          p += n - 1;
        } else { /* a byte of no UTF-8 character, as Python's surrogateescape holds it */
          fprintf(f, "\\udc%02x", *p);
        }
    }
  }
}

void kt_json_lstring(FILE *f, const char *s, size_t len) {
  fputc('"', f);
  kt_json_chars(f, s, len);
  fputc('"', f);
}

/* The shortest of %.15g, %.16g and %.17g that reads back as x: files stay
** readable (0.000751, not 0.00075100000000000004) and lose nothing. */
void kt_number_text(double x, char *buf, size_t size) {
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(buf, size, "%.*g", digits, x);
    if (strtod(buf, NULL) == x) break;
  }
}

void kt_json_number(FILE *f, double x) {
  if (!isfinite(x)) {
    fputs("null", f);
    return;
  }
  char text[32];
  kt_number_text(x, text, sizeof text);
  fputs(text, f);
}

void kt_json_any_number(FILE *f, double x) {
  if (isnan(x)) fputs("NaN", f);
  else if (isinf(x)) fputs(x > 0 ? "Infinity" : "-Infinity", f);
  else kt_json_number(f, x);
}

void kt_json_value(FILE *f, const kt_value *v) {
  switch (v->type) {
    case KT_VINT:
      if (v->boolean) fputs(v->u.i ? "true" : "false", f);
      else fprintf(f, "%" PRId64, v->u.i);
      break;
    case KT_VFLOAT: kt_json_number(f, v->u.f); break;
    case KT_VSTRING: kt_json_string(f, v->u.s); break;
  }
}
