/*
** kt.c: errors, statuses, values, clock and allocation helpers.
*/
#define _POSIX_C_SOURCE 200809L
#include "kt.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int kt_fail(kt_error *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int kt_fail_at(kt_error *err, size_t pos, const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return kt_fail(err, "at character %zu: %s", pos + 1, why);
}

int kt_fail_prefix(kt_error *err, const char *fmt, ...) {
  if (err) {
    char prefix[512], old[KT_ERRMAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(prefix);
    if (n >= sizeof err->msg) n = sizeof err->msg - 1;
    memcpy(err->msg, prefix, n);
    size_t rest = strlen(old);
    if (rest > sizeof err->msg - 1 - n) rest = sizeof err->msg - 1 - n;
    memcpy(err->msg + n, old, rest);
    err->msg[n + rest] = '\0';
  }
  return -1;
}

static const char *const status_names[KT_STATUS_COUNT] = {
    "ok",      "compile_failed",  "launch_failed",   "runtime_failed",
    "timeout", "invalid_output", "too_many_threads", "out_of_bounds",
    "generator_failed", "too_much_local_memory", "compile_deferred",
};

const char *kt_status_name(kt_status s) {
  return (unsigned)s < KT_STATUS_COUNT ? status_names[s] : "unknown";
}

int kt_status_from_name(const char *name) {
  for (int i = 0; i < KT_STATUS_COUNT; i++)
    if (strcmp(status_names[i], name) == 0) return i;
  return -1;
}

/* Floats keep a '.' or exponent so that the kernel sees a double literal,
** and %.17g so that the value survives the round trip. */
int kt_value_format(const kt_value *v, char *buf, size_t size) {
  switch (v->type) {
    case KT_VINT:
      return snprintf(buf, size, "%" PRId64, v->u.i);
    case KT_VFLOAT: {
      if (isnan(v->u.f)) return snprintf(buf, size, "NAN");
      if (isinf(v->u.f)) return snprintf(buf, size, v->u.f > 0 ? "INFINITY" : "-INFINITY");
      int n = snprintf(buf, size, "%.17g", v->u.f);
      if (n >= 0 && (size_t)n < size && !strpbrk(buf, ".eEn")) {
        if ((size_t)n + 2 < size) memcpy(buf + n, ".0", 3);
        n += 2;
      }
      return n;
    }
    case KT_VSTRING:
      return snprintf(buf, size, "%s", v->u.s);
  }
  return 0;
}

const char *kt_value_show(const kt_value *v, char *buf, size_t size) {
  if (v->type == KT_VSTRING) return kt_quote(v->u.s, strlen(v->u.s), buf, size);
  kt_value_format(v, buf, size);
  return buf;
}

bool kt_value_equal(const kt_value *a, const kt_value *b) {
  if (a->boolean != b->boolean) return false;
  if (a->type != b->type) {
    double x, y;
    return kt_value_number(a, &x) && kt_value_number(b, &y) && x == y;
  }
  switch (a->type) {
    case KT_VINT: return a->u.i == b->u.i;
    case KT_VFLOAT: return a->u.f == b->u.f;
    case KT_VSTRING: return strcmp(a->u.s, b->u.s) == 0;
  }
  return false;
}

bool kt_value_number(const kt_value *v, double *out) {
  switch (v->type) {
    case KT_VINT: *out = (double)v->u.i; return true;
    case KT_VFLOAT: *out = v->u.f; return true;
    case KT_VSTRING: *out = 0; return false;
  }
  return false;
}

int64_t kt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t kt_ns_clamp(double ns) {
  if (!(ns > 0)) return 0;
  return ns < KT_NS_MAX ? (int64_t)ns : (int64_t)KT_NS_MAX;
}

double kt_wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void *kt_alloc(size_t size, kt_error *err) {
  void *p = malloc(size ? size : 1);
  if (!p) kt_fail(err, "out of memory (asked for %zu bytes)", size);
  return p;
}

void *kt_calloc(size_t n, size_t size, kt_error *err) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) kt_fail(err, "out of memory (asked for %zu x %zu bytes)", n, size);
  return p;
}

char *kt_strdup(const char *s, kt_error *err) {
  size_t n = strlen(s) + 1;
  char *p = kt_alloc(n, err);
  if (p) memcpy(p, s, n);
  return p;
}

int kt_grow(void *items, size_t *cap, size_t need, size_t item_size,
            kt_error *err) {
  void **pp = items;
  if (need <= *cap) return 0;
  size_t ncap = *cap ? *cap : 8;
  while (ncap < need) ncap *= 2;
  void *p = realloc(*pp, ncap * item_size);
  if (!p) return kt_fail(err, "out of memory (growing to %zu items)", ncap);
  *pp = p;
  *cap = ncap;
  return 0;
}

bool kt_is_identifier(const char *name) {
  if (!(isalpha((unsigned char)name[0]) || name[0] == '_')) return false;
  for (const char *p = name; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return false;
  return true;
}

size_t kt_utf8_put(char *o, unsigned long cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xC0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* c as a JSON string spells it, into piece (8 bytes). */
static const char *json_char(unsigned char c, char *piece) {
  const char *named = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" :
                      c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
  if (named) return named;
  if (c < 0x20 || c == 0x7f) snprintf(piece, 8, "\\u%04x", c);
  else piece[0] = (char)c, piece[1] = '\0';
  return piece;
}

const char *kt_quote(const char *s, size_t len, char *buf, size_t size) {
  size_t at = 0, room = size - 5; /* the closing quote, "..." and the NUL */
  size_t i = 0;
  buf[at++] = '"';
  for (; i < len; i++) {
    char piece[8];
    const char *e = json_char((unsigned char)s[i], piece);
    size_t n = strlen(e);
    if (at + n > room) break;
    memcpy(buf + at, e, n);
    at += n;
  }
  buf[at++] = '"';
  if (i < len) memcpy(buf + at, "...", 3), at += 3;
  buf[at] = '\0';
  return buf;
}
