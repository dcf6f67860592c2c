/*
** expr_list.c: parameter values written as Python lists, as T1 files and
** Kernel Tuner scripts write them: "[1, 2, 4]", "[2**i for i in range(5, 11)]",
** "[1] + [2*i for i in range(1, 11)]", "list(range(32, 1024+1, 32))".
**
** They are evaluated here, never by running Python: list literals, range()
** with one to three integers, list(...), + between lists, parentheses, and
** comprehensions ([item for name in list if condition], several `for` and
** `if` clauses, the later ones seeing the earlier names). Items and
** conditions are expressions of expr.h (with **, //, %, in, chained
** comparisons, True/False, min/max) over the comprehension's names; a
** condition item gives 1 or 0.
**
** Bounded: at most KT_LIST_MAX values, comprehensions nested at most
** LIST_DEPTH names deep, running at most LIST_ITERATIONS iterations,
** testing at most LIST_CONDITIONS conditions and reading at most
** LIST_READ characters in all.
** Errors name the character (1-based) where the text went wrong.
*/
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_int.h"

#define LIST_DEPTH 16
#define LIST_ITERATIONS ((size_t)1 << 20)
#define LIST_CONDITIONS ((size_t)1 << 22)
#define LIST_READ ((size_t)1 << 26)

typedef struct lname {
  const char *name; /* in the text, len bytes */
  size_t len;
  kt_value v;
} lname;

typedef struct vlist {
  kt_value *v; /* strings owned */
  size_t n, cap;
} vlist;

typedef struct lparser {
  const char *src;
  size_t at;
  kt_error *err;
  lname names[LIST_DEPTH]; /* the comprehensions' names in scope, innermost last */
  size_t nnames;
  int nesting;
  size_t iterations;
  size_t conditions; /* `if` clauses tested */
  size_t read;       /* characters parsed, again and again in comprehensions */
  size_t item; /* where the comprehension's item starts */
} lparser;

void kt_values_free(kt_value *v, size_t n) {
  for (size_t i = 0; v && i < n; i++)
    if (v[i].type == KT_VSTRING) free(v[i].u.s);
  free(v);
}

static void vlist_free(vlist *l) {
  kt_values_free(l->v, l->n);
  *l = (vlist){0};
}

/* Appends v (a string is copied). */
static int vlist_add(lparser *p, vlist *l, const kt_value *v, size_t pos) {
  if (l->n == KT_LIST_MAX)
    return kt_fail_at(p->err, pos, "the list has more than %zu values", KT_LIST_MAX);
  if (kt_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v, p->err)) return -1;
  kt_value *to = &l->v[l->n];
  *to = *v;
  if (v->type == KT_VSTRING && !(to->u.s = kt_strdup(v->u.s, p->err))) return -1;
  l->n++;
  return 0;
}

static int vlist_join(lparser *p, vlist *l, vlist *more, size_t pos) {
  for (size_t i = 0; i < more->n; i++)
    if (vlist_add(p, l, &more->v[i], pos)) return -1;
  return 0;
}

/* ---- tokens ---- */

static void skip_space(lparser *p) {
  while (isspace((unsigned char)p->src[p->at])) p->at++;
}

static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static bool accept(lparser *p, char c) {
  skip_space(p);
  if (p->src[p->at] != c) return false;
  p->at++;
  return true;
}

static int expect(lparser *p, char c, const char *where) {
  if (accept(p, c)) return 0;
  return kt_fail_at(p->err, p->at, "expected '%c' %s", c, where);
}

/* A whole word such as "for", not the start of "format". */
static bool accept_word(lparser *p, const char *w) {
  skip_space(p);
  size_t n = strlen(w);
  if (strncmp(p->src + p->at, w, n) != 0 || is_name_char(p->src[p->at + n])) return false;
  p->at += n;
  return true;
}

/* ---- items: expressions over the names in scope ---- */

/* A comprehension reads its clauses again for each value of the names
** before them: what it reads in all is bounded, as its iterations are. */
static int count_read(lparser *p, size_t from, size_t to) {
  p->read += to - from;
  if (p->read <= LIST_READ) return 0;
  return kt_fail_at(p->err, from, "the list reads more than %zu characters in all (a "
                                  "comprehension reads its clauses for each value)", LIST_READ);
}

/* An item, an argument or (no_if) a condition of a comprehension. */
static kt_expr *parse_expr(lparser *p, bool no_if) {
  size_t end;
  kt_expr *e = kt_expr_parse_part(p->src, p->at, &end, no_if, p->err);
  if (!e) return NULL;
  if (count_read(p, p->at, end)) {
    kt_expr_free(e);
    return NULL;
  }
  p->at = end;
  return e;
}

static const lname *find_name(const lparser *p, const char *name) {
  for (size_t i = p->nnames; i-- > 0;)
    if (strlen(name) == p->names[i].len && strncmp(p->names[i].name, name, p->names[i].len) == 0)
      return &p->names[i];
  return NULL;
}

static int eval_expr(lparser *p, const kt_expr *e, kt_value *out) {
  size_t n = kt_expr_nvars(e);
  const kt_value *vals[64];
  if (n > sizeof vals / sizeof vals[0])
    return kt_fail_at(p->err, kt_expr_var_pos(e, 0) - 1, "an item reads more than 64 names");
  for (size_t i = 0; i < n; i++) {
    const lname *v = find_name(p, kt_expr_var(e, i));
    if (!v)
      return kt_fail_at(p->err, kt_expr_var_pos(e, i) - 1,
                        "unknown name '%s' (an item may read the "
                        "names of its comprehension's for clauses)",
                        kt_expr_var(e, i));
    vals[i] = &v->v;
  }
  return kt_expr_eval(e, vals, out, p->err);
}

/* ---- lists ---- */

static int list_expr(lparser *p, vlist *out);

/* The offset of the ']' that closes the '[' before `from`. */
static int find_close(lparser *p, size_t from, size_t open, size_t *close) {
  int depth = 0;
  for (size_t i = from; p->src[i]; i++) {
    char c = p->src[i];
    if (c == '"' || c == '\'') {
      size_t len;
      if (expr_string(p->src, i, &len, NULL, p->err)) return -1;
      i += len - 1;
    } else if (c == '[' || c == '(') {
      depth++;
    } else if (c == ']' || c == ')') {
      if (depth-- == 0) {
        if (c != ']') break;
        *close = i;
        return count_read(p, from, i);
      }
    }
  }
  return kt_fail_at(p->err, open, "the '[' is not closed by a ']'");
}

/* Whether the condition at p->at (after an `if`) keeps the names' values. */
static int condition(lparser *p, bool *keep) {
  if (++p->conditions > LIST_CONDITIONS)
    return kt_fail_at(p->err, p->at, "the comprehension tests more than %zu conditions",
                      LIST_CONDITIONS);
  kt_expr *cond = parse_expr(p, true);
  if (!cond) return -1;
  kt_value v;
  int rc = eval_expr(p, cond, &v);
  kt_expr_free(cond);
  if (rc) return -1;
  *keep = expr_truthy(&v);
  return 0;
}

/* The clauses of a comprehension from `at` to its ']' at close, for each
** binding of the earlier names: each `for` walks its list (evaluated for
** the names bound so far), each `if` filters; at the end the item is
** evaluated. `if` clauses are a loop and only `for` clauses recurse, at
** most LIST_DEPTH deep: no text overflows the C stack. A `for` list is
** evaluated before its name is bound, so that it sees only the names of
** the clauses before it (and an inner comprehension's names end with it). */
static int clauses(lparser *p, const kt_expr *item, size_t at, size_t close, vlist *out) {
  p->at = at;
  for (;;) {
    skip_space(p);
    if (p->at == close) {
      kt_value v;
      return eval_expr(p, item, &v) || vlist_add(p, out, &v, p->item);
    }
    if (!accept_word(p, "if")) break;
    bool keep = false;
    if (condition(p, &keep)) return -1;
    if (!keep) return 0;
  }
  size_t clause = p->at;
  if (!accept_word(p, "for")) return kt_fail_at(p->err, p->at, "expected 'for', 'if' or ']'");
  skip_space(p);
  size_t name = p->at;
  while (is_name_char(p->src[p->at])) p->at++;
  if (p->at == name || isdigit((unsigned char)p->src[name]))
    return kt_fail_at(p->err, name, "expected a name after 'for'");
  if (p->nnames == LIST_DEPTH)
    return kt_fail_at(p->err, clause, "comprehensions nest more than %d names deep", LIST_DEPTH);
  lname named = {p->src + name, p->at - name, {.type = KT_VINT}};
  if (!accept_word(p, "in"))
    return kt_fail_at(p->err, p->at, "expected 'in' after 'for %.*s'", (int)named.len,
                      named.name);
  vlist values = {0};
  if (list_expr(p, &values)) {
    vlist_free(&values);
    return -1;
  }
  size_t next = p->at;
  int rc = 0;
  lname *bound = &p->names[p->nnames++];
  *bound = named;
  for (size_t i = 0; i < values.n && rc == 0; i++) {
    if (++p->iterations > LIST_ITERATIONS) {
      rc = kt_fail_at(p->err, clause, "the comprehension runs more than %zu iterations",
                      LIST_ITERATIONS);
      break;
    }
    bound->v = values.v[i];
    rc = clauses(p, item, next, close, out);
  }
  p->nnames--;
  vlist_free(&values);
  return rc;
}

/* After '[': a list literal or a comprehension. */
static int bracket(lparser *p, size_t open, vlist *out) {
  if (accept(p, ']')) return 0;
  for (size_t n = 0;; n++) {
    skip_space(p);
    size_t pos = p->at;
    kt_expr *e = parse_expr(p, false);
    if (!e) return -1;
    int rc = 0;
    if (n == 0 && accept_word(p, "for")) {
      size_t close = 0;
      p->at -= 3;
      p->item = pos;
      rc = find_close(p, p->at, open, &close) || clauses(p, e, p->at, close, out);
      if (rc == 0) p->at = close + 1;
      kt_expr_free(e);
      return rc;
    }
    kt_value v;
    rc = eval_expr(p, e, &v) || vlist_add(p, out, &v, pos);
    kt_expr_free(e);
    if (rc) return -1;
    if (accept(p, ']')) return 0;
    if (!accept(p, ','))
      return kt_fail_at(p->err, p->at, "expected ',' or ']' in the list at character %zu",
                        open + 1);
    if (accept(p, ']')) return 0;
  }
}

/* An integer argument of range(). */
static int range_arg(lparser *p, int64_t *out) {
  skip_space(p);
  size_t pos = p->at;
  kt_expr *e = parse_expr(p, false);
  if (!e) return -1;
  kt_value v;
  bool condition = kt_expr_is_condition(e);
  int rc = eval_expr(p, e, &v);
  kt_expr_free(e);
  if (rc) return -1;
  if (v.type != KT_VINT || condition) return kt_fail_at(p->err, pos, "range() takes integers");
  *out = v.u.i;
  return 0;
}

static int range_call(lparser *p, size_t pos, vlist *out) {
  int64_t a[3];
  int n = 0;
  if (expect(p, '(', "after range")) return -1;
  do {
    if (n == 3) return kt_fail_at(p->err, p->at, "range() takes one to three integers");
    if (range_arg(p, &a[n++])) return -1;
  } while (accept(p, ','));
  if (expect(p, ')', "to close range(")) return -1;
  int64_t start = n == 1 ? 0 : a[0], stop = n == 1 ? a[0] : a[1], step = n == 3 ? a[2] : 1;
  if (step == 0) return kt_fail_at(p->err, pos, "range() step must not be zero");
  uint64_t span = step > 0 ? (uint64_t)stop - (uint64_t)start : (uint64_t)start - (uint64_t)stop;
  uint64_t by = step > 0 ? (uint64_t)step : 0u - (uint64_t)step;
  bool empty = step > 0 ? stop <= start : stop >= start;
  uint64_t count = empty ? 0 : (span - 1) / by + 1;
  if (count > KT_LIST_MAX - out->n)
    return kt_fail_at(p->err, pos, "range() gives %llu values, more than %zu",
                      (unsigned long long)count, KT_LIST_MAX);
  for (uint64_t i = 0; i < count; i++) {
    kt_value v = {.type = KT_VINT, .u.i = (int64_t)((uint64_t)start + i * (uint64_t)step)};
    if (vlist_add(p, out, &v, pos)) return -1;
  }
  return 0;
}

static int list_term(lparser *p, vlist *out) {
  skip_space(p);
  size_t pos = p->at;
  if (++p->nesting > LIST_DEPTH * 4)
    return kt_fail_at(p->err, pos, "the lists nest more than %d levels deep", LIST_DEPTH * 4);
  int rc;
  if (accept(p, '[')) {
    rc = bracket(p, pos, out);
  } else if (accept_word(p, "range")) {
    rc = range_call(p, pos, out);
  } else if (accept_word(p, "list") || p->src[p->at] == '(') {
    bool call = p->src[pos] == 'l';
    rc = expect(p, '(', "after list") || list_expr(p, out) ||
         expect(p, ')', call ? "to close list(" : "to close '('");
  } else {
    rc = kt_fail_at(p->err, pos, "expected a list: [...], range(...) or list(...)");
  }
  p->nesting--;
  return rc;
}

static int list_expr(lparser *p, vlist *out) {
  if (list_term(p, out)) return -1;
  while (accept(p, '+')) {
    size_t pos = p->at;
    vlist more = {0};
    int rc = list_term(p, &more) || vlist_join(p, out, &more, pos);
    vlist_free(&more);
    if (rc) return -1;
  }
  return 0;
}

int kt_expr_list(const char *text, kt_value **out, size_t *n, kt_error *err) {
  lparser p = {.src = text, .err = err};
  vlist l = {0};
  int rc = list_expr(&p, &l);
  skip_space(&p);
  if (rc == 0 && text[p.at])
    rc = kt_fail_at(p.err, p.at, "unexpected '%c' after the list", text[p.at]);
  if (rc) {
    vlist_free(&l);
    return -1;
  }
  *out = l.v;
  *n = l.n;
  return 0;
}
