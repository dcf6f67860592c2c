/*
** preproc_expr.c: the macros of a walk of preproc.c, their expansion
** (object- and function-like, the macros being expanded hidden from their
** own rescan) and an evaluator of integer constant expressions, each
** three-valued (preproc.h).
**
** Simplified where the answer is then unknown, never wrong: # and ##,
** variadic macros, a function-like macro whose name an expansion leaves
** before a ( of the text after it (left as a name: unknown).
*/
#include <stdlib.h>
#include <string.h>

#include "preproc_int.h"

/* What an unknown makes of a token in an expansion: a number that is none. */
static const char UNKNOWN_TEXT[] = "?";

bool kt_pp_is(const kt_pp_token *t, const char *s) {
  return t->len == strlen(s) && memcmp(t->at, s, t->len) == 0;
}

static bool same(const kt_pp_token *a, const kt_pp_token *b) {
  return a->len == b->len && memcmp(a->at, b->at, a->len) == 0;
}

const pp_macro *pp_find(const kt_pp_run *r, const kt_pp_token *name) {
  for (size_t i = r->nm; i-- > 0;)
    if (same(r->m[i].name, name)) return &r->m[i];
  return NULL;
}

static bool starts(const kt_pp_token *t, const char *prefix) {
  return t->len >= strlen(prefix) && memcmp(t->at, prefix, strlen(prefix)) == 0;
}

/* A name that no #define defined may be a header's or the compiler's. */
static bool may_be_predefined(const kt_pp_run *r, const kt_pp_token *t) {
  static const char *const families[] = {"CL_", "cl_", "CUDA", "NV", "M_", "FLT_", "DBL_",
                                         "HALF_", "FP_", "INT", "UINT", "LONG", "ULONG", "SHRT",
                                         "USHRT", "CHAR", "SCHAR", "UCHAR", "SIZE_", "PTRDIFF",
                                         "MAXFLOAT", "HUGE", "INFINITY", "NAN", "NULL", NULL};
  if (r->includes || starts(t, "__") || (t->len > 1 && t->at[0] == '_' && t->at[1] >= 'A' &&
                                         t->at[1] <= 'Z'))
    return true;
  for (size_t i = 0; families[i]; i++)
    if (starts(t, families[i])) return true;
  return false;
}

kt_tri pp_defined(const kt_pp_run *r, const kt_pp_token *name) {
  const pp_macro *m = pp_find(r, name);
  if (m) return m->state;
  return may_be_predefined(r, name) ? KT_UNKNOWN : KT_NO;
}

/* The macro a #define line's tokens t[0..n) make (t[0] its name). */
pp_macro pp_read_define(const kt_pp_token *t, size_t n) {
  pp_macro m = {.name = t, .state = KT_YES};
  size_t i = 1;
  if (n > 1 && kt_pp_is(&t[1], "(") && !t[1].space) {
    m.function = true;
    m.params = &t[2];
    for (i = 2; i < n && !kt_pp_is(&t[i], ")"); i++) {
      if (kt_pp_is(&t[i], "...")) m.variadic = true;
      if (t[i].kind == KT_PP_IDENT) m.nparams++;
    }
    i++; /* past ) */
  }
  m.body = i < n ? &t[i] : t + n;
  m.nbody = i < n ? n - i : 0;
  for (size_t k = 0; k < m.nbody; k++)
    if (kt_pp_is(&m.body[k], "#") || kt_pp_is(&m.body[k], "##")) m.pasting = true;
  return m;
}

void pp_add_macro(kt_pp_run *r, pp_macro m) {
  kt_error ignored;
  if (kt_grow(&r->m, &r->capm, r->nm + 1, sizeof *r->m, &ignored)) {
    r->oom = true;
    return;
  }
  r->m[r->nm++] = m;
}

/* ---- expansion ---- */

static void push(kt_pp_run *r, pp_tokbuf *b, kt_pp_token t) {
  kt_error ignored;
  if (kt_grow(&b->t, &b->cap, b->n + 1, sizeof *b->t, &ignored)) {
    r->oom = true;
    return;
  }
  b->t[b->n++] = t;
}

static void push_unknown(kt_pp_run *r, pp_tokbuf *b) {
  push(r, b, (kt_pp_token){UNKNOWN_TEXT, 1, KT_PP_NUMBER, true, 0});
}

static bool hidden(const kt_pp_run *r, const pp_macro *m) {
  for (size_t i = 0; i < r->nhide; i++)
    if (r->hide[i] == m) return true;
  return false;
}

static void expand(kt_pp_run *r, const kt_pp_token *in, size_t n, pp_tokbuf *out, int depth);

/* Rescans a macro's replacement with the macro hidden. */
static void rescan(kt_pp_run *r, const pp_macro *m, const kt_pp_token *t, size_t n, pp_tokbuf *out,
                   int depth) {
  kt_error ignored;
  if (kt_grow(&r->hide, &r->caphide, r->nhide + 1, sizeof *r->hide, &ignored)) {
    r->oom = true;
    return;
  }
  r->hide[r->nhide++] = m;
  expand(r, t, n, out, depth + 1);
  r->nhide--;
}

/* The arguments of a call whose ( is in[at]: their starts and ends in
** starts/ends (at most max), their count in *count; the index of its ),
** or n where it has none. */
static size_t arguments(const kt_pp_token *in, size_t n, size_t at, size_t *starts, size_t *ends,
                        size_t max, size_t *count) {
  size_t depth = 0, i = at + 1;
  *count = 0;
  size_t begin = i;
  for (; i < n; i++) {
    bool open = kt_pp_is(&in[i], "("), close = kt_pp_is(&in[i], ")");
    if ((close && depth == 0) || (kt_pp_is(&in[i], ",") && depth == 0)) {
      if (*count < max) starts[*count] = begin, ends[*count] = i;
      (*count)++;
      begin = i + 1;
      if (close) return i;
    }
    if (open) depth++;
    if (close) depth--;
  }
  return n;
}

#define MOST_PARAMS 32

/* A function-like macro's call at in[i] (its name; in[i + 1] is "("):
** its replacement, with each parameter replaced by its argument expanded,
** rescanned into out. Returns the index of the call's ). */
static size_t call(kt_pp_run *r, const pp_macro *m, const kt_pp_token *in, size_t n, size_t i,
                   pp_tokbuf *out, int depth) {
  size_t starts[MOST_PARAMS], ends[MOST_PARAMS], count;
  size_t close = arguments(in, n, i + 1, starts, ends, MOST_PARAMS, &count);
  bool none = m->nparams == 0 && count == 1 && starts[0] == ends[0];
  if (close == n || m->variadic || m->pasting || count > MOST_PARAMS ||
      (count != m->nparams && !none)) {
    push_unknown(r, out);
    return close == n ? n - 1 : close;
  }
  pp_tokbuf with = {0};
  for (size_t k = 0; k < m->nbody; k++) {
    size_t p = 0;
    const kt_pp_token *param = m->params;
    for (; p < m->nparams; p++, param++) {
      while (param->kind != KT_PP_IDENT) param++;
      if (same(param, &m->body[k])) break;
    }
    if (p < m->nparams) expand(r, in + starts[p], ends[p] - starts[p], &with, depth + 1);
    else push(r, &with, m->body[k]);
  }
  rescan(r, m, with.t, with.n, out, depth);
  free(with.t);
  return close;
}

static void expand(kt_pp_run *r, const kt_pp_token *in, size_t n, pp_tokbuf *out, int depth) {
  if (depth > 64) {
    push_unknown(r, out);
    return;
  }
  for (size_t i = 0; i < n && !r->oom; i++) {
    const pp_macro *m = in[i].kind == KT_PP_IDENT ? pp_find(r, &in[i]) : NULL;
    if (!m || m->state == KT_NO || hidden(r, m)) {
      push(r, out, in[i]);
    } else if (m->state == KT_UNKNOWN || (!m->function && m->pasting)) {
      push_unknown(r, out);
    } else if (!m->function) {
      rescan(r, m, m->body, m->nbody, out, depth);
    } else if (i + 1 < n && kt_pp_is(&in[i + 1], "(")) {
      i = call(r, m, in, n, i, out, depth);
    } else {
      push(r, out, in[i]); /* a function-like macro's name alone */
    }
  }
}

/* ---- evaluation ---- */

typedef struct val {
  int64_t v;
  bool known;
} val;

typedef struct ev {
  kt_pp_run *r;
  const kt_pp_token *t;
  size_t n, i;
  bool bad;     /* a syntax it does not know: the whole is unknown */
  bool in_if;   /* #if: a name left is 0 (or unknown); else unknown */
  kt_pp_sizer sizer;
  void *sizer_ud;
} ev;

static const val UNKNOWN = {0, false};

static bool at(const ev *e, const char *s) { return e->i < e->n && kt_pp_is(&e->t[e->i], s); }
static bool take(ev *e, const char *s) { return at(e, s) ? (e->i++, true) : false; }

static val number(const kt_pp_token *t) {
  char text[72];
  if (t->len >= sizeof text || t->at == UNKNOWN_TEXT) return UNKNOWN;
  memcpy(text, t->at, t->len);
  text[t->len] = 0;
  size_t len = t->len;
  while (len > 0 && strchr("uUlL", text[len - 1])) text[--len] = 0;
  int base = 10;
  const char *digits = text;
  if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) base = 16, digits += 2;
  else if (text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) base = 2, digits += 2;
  else if (text[0] == '0') base = 8;
  char *end;
  unsigned long long v = strtoull(digits, &end, base);
  if (!*digits || *end || v > INT64_MAX) return UNKNOWN; /* a float, a suffix unknown */
  return (val){(int64_t)v, true};
}

static val character(const kt_pp_token *t) {
  if (t->len == 3 && t->at[0] == '\'' && t->at[1] != '\\') return (val){(unsigned char)t->at[1], true};
  if (t->len == 4 && t->at[1] == '\\') {
    const char *from = "ntr0\\'\"", *to = "\n\t\r\0\\'\"";
    const char *p = strchr(from, t->at[2]);
    if (p) return (val){(unsigned char)to[p - from], true};
  }
  return UNKNOWN;
}

static bool type_word(const kt_pp_token *t) {
  static const char *const words[] = {"int", "unsigned", "signed", "long", "short", "char",
                                      "size_t", "bool", "uint", "ulong", "ushort", "uchar",
                                      "int32_t", "uint32_t", "int64_t", "uint64_t", NULL};
  for (size_t i = 0; words[i]; i++)
    if (kt_pp_is(t, words[i])) return true;
  return false;
}

static val conditional(ev *e);

/* sizeof(type): the sizer's; sizeof of an expression is unknown. */
static val size_of(ev *e) {
  if (!take(e, "(")) return e->bad = true, UNKNOWN;
  size_t first = e->i, depth = 0;
  while (e->i < e->n && (depth || !at(e, ")"))) {
    if (at(e, "(")) depth++;
    if (at(e, ")")) depth--;
    e->i++;
  }
  if (!take(e, ")")) return e->bad = true, UNKNOWN;
  int64_t size = e->sizer && !e->in_if ? e->sizer(e->t + first, e->i - 1 - first, e->sizer_ud) : -1;
  return size >= 0 ? (val){size, true} : UNKNOWN;
}

static val primary(ev *e) {
  if (e->i >= e->n) return e->bad = true, UNKNOWN;
  const kt_pp_token *t = &e->t[e->i++];
  if (kt_pp_is(t, "(")) {
    val v = conditional(e);
    if (!take(e, ")")) e->bad = true;
    return v;
  }
  if (t->kind == KT_PP_NUMBER) return number(t);
  if (t->kind == KT_PP_CHAR) return character(t);
  if (t->kind != KT_PP_IDENT) return e->bad = true, UNKNOWN;
  if (kt_pp_is(t, "sizeof")) return size_of(e);
  if (kt_pp_is(t, "true")) return (val){1, true};
  if (kt_pp_is(t, "false")) return (val){0, true};
  /* a name left: in #if, 0 where it can be no macro (C's rule), else unknown */
  if (e->in_if && !pp_find(e->r, t) && !may_be_predefined(e->r, t)) return (val){0, true};
  return UNKNOWN;
}

static val unary(ev *e) {
  if (take(e, "+")) return unary(e);
  if (take(e, "-")) {
    val v = unary(e);
    return v.known && v.v != INT64_MIN ? (val){-v.v, true} : UNKNOWN;
  }
  if (take(e, "!")) {
    val v = unary(e);
    return v.known ? (val){!v.v, true} : UNKNOWN;
  }
  if (take(e, "~")) {
    val v = unary(e);
    return v.known ? (val){~v.v, true} : UNKNOWN;
  }
  if (at(e, "(") && e->i + 1 < e->n && type_word(&e->t[e->i + 1])) { /* a cast: no effect */
    size_t k = e->i + 1;
    while (k < e->n && type_word(&e->t[k])) k++;
    if (k < e->n && kt_pp_is(&e->t[k], ")")) {
      e->i = k + 1;
      return unary(e);
    }
  }
  return primary(e);
}

/* a op b, both known; unknown where C leaves it undefined. */
static val apply(const char *op, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op[0]) {
    case '*': return (val){(int64_t)(ua * ub), true};
    case '/':
    case '%':
      if (b == 0 || (a == INT64_MIN && b == -1)) return UNKNOWN;
      return (val){op[0] == '/' ? a / b : a % b, true};
    case '+': return (val){(int64_t)(ua + ub), true};
    case '-': return (val){(int64_t)(ua - ub), true};
    case '<':
      if (op[1] == '<') return b < 0 || b > 62 || a < 0 ? UNKNOWN : (val){(int64_t)(ua << b), true};
      return (val){op[1] == '=' ? a <= b : a < b, true};
    case '>':
      if (op[1] == '>') return b < 0 || b > 63 ? UNKNOWN : (val){a >> b, true};
      return (val){op[1] == '=' ? a >= b : a > b, true};
    case '=': return (val){a == b, true};
    case '!': return (val){a != b, true};
    case '&': return (val){a & b, true};
    case '^': return (val){a ^ b, true};
    default: return (val){a | b, true};
  }
}

/* Binary operators by precedence, tightest last; && and || apart. */
static const char *const levels[][5] = {
    {"|", NULL},  {"^", NULL},        {"&", NULL},       {"==", "!=", NULL},
    {"<", ">", "<=", ">=", NULL},     {"<<", ">>", NULL}, {"+", "-", NULL},
    {"*", "/", "%", NULL}};
#define NLEVELS (sizeof levels / sizeof *levels)

static val binary(ev *e, size_t level) {
  if (level == NLEVELS) return unary(e);
  val a = binary(e, level + 1);
  for (;;) {
    const char *op = NULL;
    for (size_t k = 0; levels[level][k] && !op; k++)
      if (at(e, levels[level][k]) && !(levels[level][k][0] == '&' && at(e, "&&")) &&
          !(levels[level][k][0] == '|' && at(e, "||")))
        op = levels[level][k];
    if (!op) return a;
    e->i++;
    val b = binary(e, level + 1);
    a = a.known && b.known ? apply(op, a.v, b.v) : UNKNOWN;
  }
}

static val logical_and(ev *e) {
  val a = binary(e, 0);
  while (take(e, "&&")) {
    val b = binary(e, 0);
    if ((a.known && !a.v) || (b.known && !b.v)) a = (val){0, true};
    else a = a.known && b.known ? (val){1, true} : UNKNOWN;
  }
  return a;
}

static val logical_or(ev *e) {
  val a = logical_and(e);
  while (take(e, "||")) {
    val b = logical_and(e);
    if ((a.known && a.v) || (b.known && b.v)) a = (val){1, true};
    else a = a.known && b.known ? (val){0, true} : UNKNOWN;
  }
  return a;
}

static val conditional(ev *e) {
  val c = logical_or(e);
  if (!take(e, "?")) return c;
  val a = conditional(e);
  if (!take(e, ":")) return e->bad = true, UNKNOWN;
  val b = conditional(e);
  if (c.known) return c.v ? a : b;
  return a.known && b.known && a.v == b.v ? a : UNKNOWN;
}

static kt_tri evaluate(kt_pp_run *r, const pp_tokbuf *b, bool in_if, kt_pp_sizer sizer, void *ud,
                       int64_t *value) {
  ev e = {r, b->t, b->n, 0, false, in_if, sizer, ud};
  val v = conditional(&e);
  if (r->oom || e.bad || e.i != e.n || !v.known) return KT_UNKNOWN;
  *value = v.v;
  return KT_YES;
}

kt_tri kt_pp_eval(kt_pp_run *r, const kt_pp_token *t, size_t n, kt_pp_sizer sizer, void *ud,
                  int64_t *value) {
  pp_tokbuf b = {0};
  expand(r, t, n, &b, 0);
  kt_tri rc = evaluate(r, &b, false, sizer, ud, value);
  free(b.t);
  return rc;
}

/* An #if's condition: defined first, then the macros expanded. */
kt_tri pp_condition(kt_pp_run *r, const kt_pp_token *t, size_t n) {
  pp_tokbuf with = {0}, b = {0};
  static const char *const digits[] = {"0", "1", UNKNOWN_TEXT};
  for (size_t i = 0; i < n; i++) {
    if (!kt_pp_is(&t[i], "defined")) {
      push(r, &with, t[i]);
      continue;
    }
    bool paren = i + 1 < n && kt_pp_is(&t[i + 1], "(");
    size_t name = i + 1 + paren;
    if (name >= n || t[name].kind != KT_PP_IDENT || (paren && (name + 1 >= n ||
                                                             !kt_pp_is(&t[name + 1], ")")))) {
      push_unknown(r, &with);
      break;
    }
    const char *d = digits[pp_defined(r, &t[name])];
    push(r, &with, (kt_pp_token){d, 1, KT_PP_NUMBER, true, 0});
    i = name + paren;
  }
  expand(r, with.t, with.n, &b, 0);
  int64_t v = 0;
  kt_tri rc = evaluate(r, &b, true, NULL, NULL, &v);
  free(with.t);
  free(b.t);
  return rc == KT_YES ? (v ? KT_YES : KT_NO) : KT_UNKNOWN;
}
