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

void kt_json_lstring(FILE *f, const char *s, size_t len) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s, *end = p + len; p < end; p++) {
    switch (*p) {
      case '"': fputs("\\\"", f); break;
      case '\\': fputs("\\\\", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      case '\t': fputs("\\t", f); break;
      default:
        if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
  }
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
