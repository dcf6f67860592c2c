/*
** python_str.c: the text Python's str() makes of a JSON value. Kernel
** Tuner writes each parameter's value into a cache key so, and a value that
** ktlua's parameters cannot hold as it is (None, a list, a dict) is held as
** that text: the same string the key has.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result_formats.h"

/* A string as repr() writes it inside a list: single quotes unless it has
** a single quote and no double one. */
static void put_repr(FILE *f, const char *s, size_t n) {
  char q = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
  fputc(q, f);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\\' || c == (unsigned char)q) fprintf(f, "\\%c", c);
    else if (c == '\n') fputs("\\n", f);
    else if (c == '\r') fputs("\\r", f);
    else if (c == '\t') fputs("\\t", f);
    else if (c < 0x20 || c == 0x7f) fprintf(f, "\\x%02x", c);
    else fputc(c, f);
  }
  fputc(q, f);
}

static void put_value(FILE *f, const kt_jvalue *j, bool inside) {
  char buf[64];
  switch (j->type) {
    case KT_JNULL: fputs("None", f); break;
    case KT_JBOOL: fputs(j->u.b ? "True" : "False", f); break;
    case KT_JNUMBER:
    case KT_JNONFINITE: /* float('inf') is "inf" */
      if (j->integer) fprintf(f, "%" PRId64, j->u.num.i);
      else kt_python_float(j->u.num.f, buf, sizeof buf), fputs(buf, f);
      break;
    case KT_JSTRING:
      if (inside) put_repr(f, j->u.str, j->n);
      else fwrite(j->u.str, 1, j->n, f);
      break;
    case KT_JARRAY:
      fputc('[', f);
      for (size_t i = 0; i < j->n; i++) {
        if (i) fputs(", ", f);
        put_value(f, &j->u.items[i], true);
      }
      fputc(']', f);
      break;
    case KT_JOBJECT:
      fputc('{', f);
      for (size_t i = 0; i < j->n; i++) {
        if (i) fputs(", ", f);
        put_repr(f, j->u.members[i].key, j->u.members[i].keylen);
        fputs(": ", f);
        put_value(f, &j->u.members[i].value, true);
      }
      fputc('}', f);
      break;
  }
}

char *kt_python_str(const kt_jvalue *j, kt_error *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return kt_fail(err, "out of memory writing a value's text"), NULL;
  put_value(f, j, false);
  if (fclose(f) != 0 || !text) {
    free(text);
    return kt_fail(err, "out of memory writing a value's text"), NULL;
  }
  return text;
}
