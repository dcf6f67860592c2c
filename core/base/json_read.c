/*
** json_read.c: a recursive-descent JSON parser (RFC 8259) into an arena.
**
** Every node and string lives in the document's arena, so a document of a
** million values costs a few large allocations and one free. The items of
** an array or object are gathered on a scratch stack while they are read
** and copied into the arena once their count is known.
*/
#include "json_read.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_DEPTH 512
#define BLOCK_SIZE (1u << 16)

typedef struct block {
  struct block *next;
  size_t used, size;
  max_align_t data[];
} block;

struct kt_jdoc {
  block *blocks;
  kt_jvalue root;
};

static void *arena_alloc(kt_jdoc *d, size_t size, kt_error *err) {
  size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  block *b = d->blocks;
  if (!b || b->size - b->used < size) {
    size_t cap = size > BLOCK_SIZE ? size : BLOCK_SIZE;
    block *nb = kt_alloc(sizeof *nb + cap, err);
    if (!nb) return NULL;
    nb->used = 0;
    nb->size = cap;
    /* A large request gets a block of its own behind the current one, so
    ** that the current block's free space is not lost. */
    if (b && cap > BLOCK_SIZE) {
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      d->blocks = nb;
    }
    b = nb;
  }
  void *p = (char *)b->data + b->used;
  b->used += size;
  return p;
}

void kt_json_free(kt_jdoc *d) {
  if (!d) return;
  for (block *b = d->blocks, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(d);
}

const kt_jvalue *kt_json_root(const kt_jdoc *d) { return &d->root; }

/* ---- the parser ---- */

/* A member name and where it was read, for finding names given twice. */
typedef struct name_at {
  const char *key;
  size_t len, pos;
} name_at;

typedef struct parser {
  const char *start, *p, *end;
  kt_jdoc *doc;
  kt_jvalue *values; /* scratch stack of array items */
  size_t nvalues, capvalues;
  kt_jmember *members; /* scratch stack of object members ... */
  size_t nmembers, capmembers;
  name_at *names;      /* ... and their names, beside them */
  size_t capnames;
  int depth;
  bool results; /* a NUL byte in a string is an error, Infinity and NaN are read
                ** (kt_json_parse_results) */
  kt_error *err;
} parser;

static int fail_at(parser *ps, const char *what) {
  size_t line = 1, col = 1;
  for (const char *q = ps->start; q < ps->p; q++) {
    if (*q == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  if (ps->p >= ps->end)
    return kt_fail(ps->err, "JSON: line %zu, column %zu: %s (at the end of the text)", line, col,
                   what);
  return kt_fail(ps->err, "JSON: line %zu, column %zu: %s", line, col, what);
}

static void skip_space(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static bool take(parser *ps, char c) {
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == c) {
    ps->p++;
    return true;
  }
  return false;
}

static bool take_word(parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return false;
  ps->p += n;
  return true;
}

static int hex4(parser *ps, const char *q, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = q[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return fail_at(ps, "bad \\u escape");
  }
  *out = v;
  return 0;
}

/* A lone low surrogate from U+DC80 to U+DCFF: a byte that is part of no
** UTF-8 character, as ktlua's writer (json.c) and Python's surrogateescape
** write it. */
#define BYTE_ESCAPE(cp) ((cp) >= 0xDC80 && (cp) <= 0xDCFF)

/* A \u escape at q (after the backslash and 'u'), with its low surrogate
** when it is a high one; *used: the bytes read after "\u". */
static int unicode_escape(parser *ps, const char *q, unsigned *cp, size_t *used) {
  if (ps->end - q < 4) return fail_at(ps, "bad \\u escape");
  if (hex4(ps, q, cp)) return -1;
  *used = 4;
  if (*cp < 0xD800 || *cp > 0xDFFF || BYTE_ESCAPE(*cp)) return 0;
  unsigned low;
  if (*cp > 0xDBFF || ps->end - q < 10 || q[4] != '\\' || q[5] != 'u' || hex4(ps, q + 6, &low) ||
      low < 0xDC00 || low > 0xDFFF)
    return fail_at(ps, "unpaired surrogate in a \\u escape");
  *cp = 0x10000 + ((*cp - 0xD800) << 10) + (low - 0xDC00);
  *used = 10;
  return 0;
}

static int escape(parser *ps, const char **q, char *o, size_t *wrote) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  const char *hit = *q < ps->end ? strchr(from, **q) : NULL;
  if (hit && **q) {
    *o = to[hit - from];
    *wrote = 1;
    (*q)++;
    return 0;
  }
  if (*q >= ps->end || **q != 'u') return fail_at(ps, "bad escape in a string");
  unsigned cp;
  size_t used;
  if (unicode_escape(ps, *q + 1, &cp, &used)) return -1;
  if (BYTE_ESCAPE(cp)) {
    *o = (char)(cp & 0xFF);
    *wrote = 1;
  } else {
    *wrote = kt_utf8_put(o, cp);
  }
  *q += 1 + used;
  return 0;
}

/* A string that holds a NUL byte where strings must not: an error at its
** opening quote, quoting it whole. */
static int nul_inside(parser *ps, const char *quote, const char *s, size_t len, bool name) {
  char shown[160], what[256];
  snprintf(what, sizeof what, "the %s %s holds a NUL byte", name ? "member name" : "string",
           kt_quote(s, len, shown, sizeof shown));
  ps->p = quote;
  return fail_at(ps, what);
}

/* After the opening quote; the decoded text is never longer than the raw.
** name: it is a member's name. */
static int parse_string(parser *ps, const char **out, size_t *len, bool name) {
  const char *q = ps->p, *q0 = ps->p;
  while (q < ps->end && *q != '"') q += *q == '\\' ? 2 : 1;
  if (q >= ps->end) return fail_at(ps, "unterminated string");
  char *o = arena_alloc(ps->doc, (size_t)(q - ps->p) + 1, ps->err), *w = o;
  if (!o) return -1;
  for (q = ps->p; *q != '"';) {
    if ((unsigned char)*q < 0x20) {
      ps->p = q;
      return fail_at(ps, "control character in a string");
    }
    if (*q != '\\') {
      *w++ = *q++;
      continue;
    }
    q++;
    size_t wrote = 0;
    ps->p = q;
    if (escape(ps, &q, w, &wrote)) return -1;
    w += wrote;
  }
  *w = '\0';
  *out = o;
  *len = (size_t)(w - o);
  if (ps->results && memchr(o, '\0', *len)) return nul_inside(ps, q0 - 1, o, *len, name);
  ps->p = q + 1;
  return 0;
}

static const char *digits(const char *q, const char *end) {
  while (q < end && *q >= '0' && *q <= '9') q++;
  return q;
}

static int parse_number(parser *ps, kt_jvalue *v) {
  const char *q = ps->p, *end = ps->end;
  if (q < end && *q == '-') q++;
  const char *int_start = q;
  q = digits(q, end);
  if (q == int_start || (*int_start == '0' && q - int_start > 1)) return fail_at(ps, "bad number");
  bool integer = true;
  if (q < end && *q == '.') {
    const char *f = ++q;
    if ((q = digits(q, end)) == f) return fail_at(ps, "bad number");
    integer = false;
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    q++;
    if (q < end && (*q == '+' || *q == '-')) q++;
    const char *e = q;
    if ((q = digits(q, end)) == e) return fail_at(ps, "bad number");
    integer = false;
  }
  char buf[128];
  size_t n = (size_t)(q - ps->p);
  if (n >= sizeof buf) return fail_at(ps, "number too long");
  memcpy(buf, ps->p, n);
  buf[n] = '\0';
  v->type = KT_JNUMBER;
  v->u.num.f = strtod(buf, NULL);
  if (!isfinite(v->u.num.f)) return fail_at(ps, "number out of range"); /* 1e999 */
  if (integer) {
    errno = 0;
    long long i = strtoll(buf, NULL, 10);
    integer = errno == 0;
    v->u.num.i = integer ? (int64_t)i : 0;
  }
  v->integer = integer;
  ps->p = q;
  return 0;
}

/* Python's Infinity, -Infinity and NaN, where the parser reads them. */
static bool nonfinite(parser *ps, kt_jvalue *v) {
  if (!ps->results) return false;
  bool minus = ps->p < ps->end && *ps->p == '-';
  ps->p += minus;
  if (take_word(ps, "Infinity")) v->u.num.f = minus ? -INFINITY : INFINITY;
  else if (!minus && take_word(ps, "NaN")) v->u.num.f = NAN;
  else {
    ps->p -= minus;
    return false;
  }
  v->type = KT_JNONFINITE;
  return true;
}

static int parse_value(parser *ps, kt_jvalue *v);

static int push_value(parser *ps, const kt_jvalue *v) {
  if (kt_grow(&ps->values, &ps->capvalues, ps->nvalues + 1, sizeof *ps->values, ps->err)) return -1;
  ps->values[ps->nvalues++] = *v;
  return 0;
}

static int push_member(parser *ps, const name_at *name, const kt_jvalue *v) {
  if (kt_grow(&ps->members, &ps->capmembers, ps->nmembers + 1, sizeof *ps->members, ps->err) ||
      kt_grow(&ps->names, &ps->capnames, ps->nmembers + 1, sizeof *ps->names, ps->err))
    return -1;
  ps->names[ps->nmembers] = *name;
  ps->members[ps->nmembers++] = (kt_jmember){name->key, *v, name->len};
  return 0;
}

static int by_name(const void *a, const void *b) {
  const name_at *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->key, y->key, n);
  if (c) return c;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* A name given twice in one object is an error at its second place: each
** reader would take one of the values and silently lose the other. */
static int unique_names(parser *ps, size_t base) {
  name_at *names = ps->names + base;
  size_t n = ps->nmembers - base;
  if (n < 2) return 0;
  qsort(names, n, sizeof *names, by_name);
  for (size_t i = 1; i < n; i++) {
    if (names[i].len != names[i - 1].len || memcmp(names[i].key, names[i - 1].key, names[i].len))
      continue;
    char shown[160], what[256];
    snprintf(what, sizeof what, "the member name %s appears twice in an object",
             kt_quote(names[i].key, names[i].len, shown, sizeof shown));
    ps->p = ps->start + names[i].pos;
    return fail_at(ps, what);
  }
  return 0;
}

/* Moves the scratch entries from base up into the arena. */
static void *settle(parser *ps, void *stack, size_t *top, size_t base, size_t size) {
  size_t n = *top - base;
  void *items = arena_alloc(ps->doc, n * size, ps->err);
  if (items && n) memcpy(items, (char *)stack + base * size, n * size);
  *top = base;
  return items;
}

static int parse_array(parser *ps, kt_jvalue *v) {
  size_t base = ps->nvalues;
  v->type = KT_JARRAY;
  if (!take(ps, ']')) {
    do {
      kt_jvalue item;
      if (parse_value(ps, &item) || push_value(ps, &item)) return -1;
    } while (take(ps, ','));
    if (!take(ps, ']')) return fail_at(ps, "expected ',' or ']' in an array");
  }
  v->n = ps->nvalues - base;
  v->u.items = settle(ps, ps->values, &ps->nvalues, base, sizeof *ps->values);
  return v->u.items ? 0 : -1;
}

static int parse_object(parser *ps, kt_jvalue *v) {
  size_t base = ps->nmembers;
  v->type = KT_JOBJECT;
  if (!take(ps, '}')) {
    do {
      name_at name;
      kt_jvalue item;
      if (!take(ps, '"')) return fail_at(ps, "expected a member name in quotes");
      name.pos = (size_t)(ps->p - 1 - ps->start);
      if (parse_string(ps, &name.key, &name.len, true)) return -1;
      if (!take(ps, ':')) return fail_at(ps, "expected ':' after a member name");
      if (parse_value(ps, &item) || push_member(ps, &name, &item)) return -1;
    } while (take(ps, ','));
    if (!take(ps, '}')) return fail_at(ps, "expected ',' or '}' in an object");
    if (unique_names(ps, base)) return -1;
  }
  v->n = ps->nmembers - base;
  v->u.members = settle(ps, ps->members, &ps->nmembers, base, sizeof *ps->members);
  return v->u.members ? 0 : -1;
}

/* An array or object after its bracket: the parser recurses for each, so
** their nesting is bounded (the C stack is not). */
static int parse_container(parser *ps, char open, kt_jvalue *v) {
  if (ps->depth == MAX_DEPTH) {
    char what[64];
    snprintf(what, sizeof what, "arrays and objects nested more than %d deep", MAX_DEPTH);
    return fail_at(ps, what);
  }
  ps->p++;
  ps->depth++;
  int rc = open == '{' ? parse_object(ps, v) : parse_array(ps, v);
  ps->depth--;
  return rc;
}

static int parse_value(parser *ps, kt_jvalue *v) {
  memset(v, 0, sizeof *v);
  skip_space(ps);
  if (ps->p >= ps->end) return fail_at(ps, "expected a value");
  char c = *ps->p;
  if (c == '{' || c == '[') return parse_container(ps, c, v);
  if (c == '"') {
    ps->p++;
    v->type = KT_JSTRING;
    return parse_string(ps, &v->u.str, &v->n, false);
  }
  if (nonfinite(ps, v)) return 0;
  if (c == '-' || (c >= '0' && c <= '9')) return parse_number(ps, v);
  if (take_word(ps, "true")) {
    v->type = KT_JBOOL;
    v->u.b = true;
  } else if (take_word(ps, "false")) {
    v->type = KT_JBOOL;
  } else if (!take_word(ps, "null")) {
    return fail_at(ps, "expected a value");
  }
  return 0;
}

static kt_jdoc *parse(const char *text, size_t len, bool results, kt_error *err) {
  kt_jdoc *d = kt_calloc(1, sizeof *d, err);
  if (!d) return NULL;
  parser ps = {.start = text, .p = text, .end = text + len, .doc = d, .results = results,
               .err = err};
  int rc = parse_value(&ps, &d->root);
  skip_space(&ps);
  if (rc == 0 && ps.p < ps.end) rc = fail_at(&ps, "unexpected text after the value");
  free(ps.values);
  free(ps.members);
  free(ps.names);
  if (rc) {
    kt_json_free(d);
    return NULL;
  }
  return d;
}

kt_jdoc *kt_json_parse(const char *text, size_t len, kt_error *err) {
  return parse(text, len, false, err);
}

kt_jdoc *kt_json_parse_results(const char *text, size_t len, kt_error *err) {
  return parse(text, len, true, err);
}

/* ---- files ---- */

/* Room for `need` bytes, doubling but never past cap_max. */
static int grow_to(char **data, size_t *cap, size_t need, size_t cap_max, kt_error *err) {
  if (need <= *cap) return 0;
  size_t cap2 = *cap ? *cap * 2 : BLOCK_SIZE + 1;
  if (cap2 < need) cap2 = need;
  if (cap2 > cap_max) cap2 = cap_max;
  char *grown = realloc(*data, cap2);
  if (!grown) return kt_fail(err, "out of memory reading a file of %zu bytes", need);
  *data = grown;
  *cap = cap2;
  return 0;
}

/* The next block of f after the n bytes read: what makes it no text file
** or one beyond max is an error, before any more is read. */
static int read_block(gzFile f, const char *path, char *at, size_t n, size_t max, int *got,
                      kt_error *err) {
  int code;
  *got = gzread(f, at, BLOCK_SIZE);
  if (*got < 0) return kt_fail(err, "cannot read %s: %s", path, gzerror(f, &code));
  if (memchr(at, '\0', (size_t)*got))
    return kt_fail(err, "%s is no text file (it holds a NUL byte)", path);
  if (n + (size_t)*got > max)
    return kt_fail(err, "%s %s more than %zu bytes, the limit", path,
                   gzdirect(f) ? "holds" : "expands (gunzipped) to", max);
  return 0;
}

/* gzread passes plain files through unchanged. */
char *kt_read_file(const char *path, size_t max, size_t *len, kt_error *err) {
  gzFile f = gzopen(path, "rb");
  if (!f) {
    kt_fail(err, "cannot read %s: %s", path, errno ? strerror(errno) : "out of memory");
    return NULL;
  }
  if (max == 0) max = KT_FILE_MAX;
  char *data = NULL;
  size_t n = 0, cap = 0;
  int got = 1;
  while (got > 0) {
    if (grow_to(&data, &cap, n + BLOCK_SIZE + 1, max + BLOCK_SIZE + 1, err) ||
        read_block(f, path, data + n, n, max, &got, err))
      break;
    n += (size_t)got;
  }
  gzclose(f);
  if (got == 0) {
    data[n] = '\0';
    *len = n;
    return data;
  }
  free(data);
  return NULL;
}

kt_jdoc *kt_json_read_file(const char *path, kt_error *err) {
  size_t len;
  char *text = kt_read_file(path, 0, &len, err);
  if (!text) return NULL;
  kt_jdoc *d = kt_json_parse(text, len, err);
  free(text);
  if (!d) kt_fail_prefix(err, "%s: ", path);
  return d;
}

/* ---- access ---- */

const kt_jvalue *kt_json_get(const kt_jvalue *obj, const char *key) {
  if (!obj || obj->type != KT_JOBJECT) return NULL;
  size_t len = strlen(key);
  for (size_t i = 0; i < obj->n; i++) {
    const kt_jmember *m = &obj->u.members[i];
    if (m->keylen == len && memcmp(m->key, key, len) == 0) return &m->value;
  }
  return NULL;
}

const kt_jvalue *kt_json_get_type(const kt_jvalue *obj, const char *key, kt_jtype type) {
  const kt_jvalue *v = kt_json_get(obj, key);
  return v && v->type == type ? v : NULL;
}

bool kt_json_real(const kt_jvalue *v, double *out) {
  if (!v || (v->type != KT_JNUMBER && v->type != KT_JNONFINITE)) return false;
  *out = v->u.num.f;
  return true;
}
