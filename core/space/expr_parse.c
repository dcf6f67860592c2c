/*
** expr_parse.c: the tokenizer and the recursive-descent parser that turn
** an expression's text into bytecode, checking types on the way.
*/
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_int.h"

typedef enum tk {
  TK_END, TK_INT, TK_FLOAT, TK_STR, TK_NAME, TK_TRUE, TK_FALSE, TK_LPAREN, TK_RPAREN,
  TK_COMMA, TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_DSLASH, TK_PERCENT, TK_EQ, TK_NE,
  TK_LT, TK_LE, TK_GT, TK_GE, TK_AND, TK_OR, TK_NOT, TK_POW, TK_IN, TK_LBRACK, TK_RBRACK,
  TK_IF, TK_ELSE
} tk;

typedef struct token {
  tk kind;
  size_t pos, len; /* in the text; TK_STR: the prefix and quotes included */
  int64_t i;
  double f;
} token;

/* What an operand is, for type checks: a condition, a number, a string,
** a name whose values decide between number and string, or any of them
** (and, or and conditional expressions give one of their operands): then
** the machine checks, at run time, that a number is a number. */
typedef enum vtype { T_BOOL, T_NUM, T_STR, T_NAME, T_ANY } vtype;

typedef struct operand {
  vtype type;
  size_t pos;  /* where it starts */
  size_t ins;  /* T_NAME: its OP_VAR instruction */
  size_t var;  /* T_NAME: its name */
} operand;

typedef struct parser {
  kt_expr *e;
  const char *src;
  size_t at; /* next character to read */
  token tok;
  int depth; /* stack depth after the code emitted so far */
  int nesting; /* parentheses, calls and unary operators open */
  size_t copied; /* instructions that chains and 'in' lists repeated */
  kt_error *err;
} parser;

/* ---- tokens ---- */

static int lex_number(parser *p, token *t) {
  const char *s = p->src + t->pos;
  char *end;
  bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  errno = 0;
  long long v = strtoll(s, &end, hex ? 16 : 10);
  bool is_float = !hex && (*end == '.' || *end == 'e' || *end == 'E');
  if (is_float) {
    t->kind = TK_FLOAT;
    t->f = strtod(s, &end);
  } else if (errno == ERANGE) { /* Python's integers have no bound, these 64 bits */
    return kt_fail_at(p->err, t->pos, "the integer %.*s does not fit in 64 bits", (int)(end - s),
                      s);
  } else {
    t->kind = TK_INT;
    t->i = v;
  }
  if (isalnum((unsigned char)*end) || *end == '_' || *end == '.') {
    size_t n = (size_t)(end - s) + 1;
    while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '.') n++;
    return kt_fail_at(p->err, t->pos, "malformed number '%.*s'", (int)n, s);
  }
  t->len = (size_t)(end - s);
  return 0;
}

static int lex_string(parser *p, token *t) {
  t->kind = TK_STR;
  return expr_string(p->src, t->pos, &t->len, NULL, p->err);
}

static tk keyword(const char *s, size_t n) {
  static const struct { const char *word; tk kind; } words[] = {
      {"and", TK_AND}, {"or", TK_OR}, {"not", TK_NOT}, {"true", TK_TRUE}, {"false", TK_FALSE},
      {"True", TK_TRUE}, {"False", TK_FALSE}, {"in", TK_IN}, {"if", TK_IF}, {"else", TK_ELSE}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strlen(words[i].word) == n && strncmp(words[i].word, s, n) == 0) return words[i].kind;
  return TK_NAME;
}

static void lex_name(parser *p, token *t) {
  const char *s = p->src + t->pos;
  size_t n = 1;
  while (isalnum((unsigned char)s[n]) || s[n] == '_') n++;
  t->len = n;
  t->kind = keyword(s, n);
}

/* Operators of one or two characters; a lone '&', '|', '=' or '^' is a
** slip from another language, named as such. */
static int lex_operator(parser *p, token *t) {
  static const struct { const char *text; tk kind; } ops[] = {
      {"//", TK_DSLASH}, {"**", TK_POW}, {"==", TK_EQ}, {"!=", TK_NE}, {"~=", TK_NE}, {"<=", TK_LE},
      {">=", TK_GE}, {"&&", TK_AND}, {"||", TK_OR}, {"+", TK_PLUS}, {"-", TK_MINUS},
      {"*", TK_STAR}, {"/", TK_SLASH}, {"%", TK_PERCENT}, {"<", TK_LT}, {">", TK_GT},
      {"!", TK_NOT}, {"(", TK_LPAREN}, {")", TK_RPAREN}, {",", TK_COMMA}, {"[", TK_LBRACK},
      {"]", TK_RBRACK}};
  const char *s = p->src + t->pos;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    size_t n = strlen(ops[i].text);
    if (strncmp(s, ops[i].text, n) == 0) {
      t->kind = ops[i].kind;
      t->len = n;
      return 0;
    }
  }
  switch (s[0]) {
    case '&': return kt_fail_at(p->err, t->pos, "'&' is not an operator: write '&&' (or 'and')");
    case '|': return kt_fail_at(p->err, t->pos, "'|' is not an operator: write '||' (or 'or')");
    case '=': return kt_fail_at(p->err, t->pos, "'=' is not an operator: write '==' to compare");
    case '^':
      return kt_fail_at(p->err, t->pos, "'^' is not an operator: write x ** y or pow(x, y)");
    default:
      if (isprint((unsigned char)s[0]))
        return kt_fail_at(p->err, t->pos, "unexpected character '%c'", s[0]);
      return kt_fail_at(p->err, t->pos, "unexpected byte 0x%02x", (unsigned char)s[0]);
  }
}

static int next(parser *p) {
  while (isspace((unsigned char)p->src[p->at])) p->at++;
  token *t = &p->tok;
  memset(t, 0, sizeof *t);
  t->pos = p->at;
  char c = p->src[p->at];
  int rc = 0;
  if (c == '\0') t->kind = TK_END;
  else if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)p->src[p->at + 1])))
    rc = lex_number(p, t);
  else if (c == '"' || c == '\'' || expr_string_prefix(p->src + p->at)) rc = lex_string(p, t);
  else if (isalpha((unsigned char)c) || c == '_') lex_name(p, t);
  else rc = lex_operator(p, t);
  p->at = t->pos + t->len;
  return rc;
}

/* ---- code ---- */

static uint16_t ins_pos(size_t pos) { return (uint16_t)(pos < UINT16_MAX ? pos + 1 : UINT16_MAX); }

static int emit(parser *p, expr_op op, uint32_t arg, uint8_t nargs, size_t pos) {
  static const signed char effect[] = {
      [OP_CONST] = 1, [OP_VAR] = 1, [OP_NEG] = 0, [OP_NOT] = 0, [OP_ADD] = -1, [OP_SUB] = -1,
      [OP_MUL] = -1, [OP_DIV] = -1, [OP_IDIV] = -1, [OP_MOD] = -1, [OP_EQ] = -1, [OP_NE] = -1,
      [OP_LT] = -1, [OP_LE] = -1, [OP_GT] = -1, [OP_GE] = -1, [OP_AND] = -1, [OP_OR] = -1,
      [OP_POW] = -1, [OP_JFALSE] = -1, [OP_JUMP] = -1}; /* the else pushes the value again */
  kt_expr *e = p->e;
  p->depth += op == OP_CALL ? 1 - nargs : effect[op];
  if (p->depth > EXPR_STACK)
    return kt_fail_at(p->err, pos, "the expression nests too deeply: more than %d operands wait "
                                   "for their operators", EXPR_STACK);
  if (kt_grow(&e->code, &e->capcode, e->ncode + 1, sizeof *e->code, p->err)) return -1;
  e->code[e->ncode++] = (expr_ins){(uint8_t)op, nargs, ins_pos(pos), arg};
  return 0;
}

static int emit_const(parser *p, const kt_value *v, size_t pos) {
  uint32_t k;
  if (expr_add_const(p->e, v, &k, p->err)) return -1;
  return emit(p, OP_CONST, k, 0, pos);
}

static int find_var(parser *p, const token *t, size_t *var) {
  kt_expr *e = p->e;
  const char *name = p->src + t->pos;
  for (size_t i = 0; i < e->nvars; i++)
    if (strlen(e->vars[i].name) == t->len && strncmp(e->vars[i].name, name, t->len) == 0) {
      *var = i;
      return 0;
    }
  if (kt_grow(&e->vars, &e->capvars, e->nvars + 1, sizeof *e->vars, p->err)) return -1;
  expr_var *v = &e->vars[e->nvars];
  if (!(v->name = kt_alloc(t->len + 1, p->err))) return -1;
  memcpy(v->name, name, t->len);
  v->name[t->len] = '\0';
  v->pos = t->pos + 1;
  v->numeric = false;
  *var = e->nvars++;
  return 0;
}

/* ---- types ---- */

/* A condition is a number (True is 1, as in Python). */
static int need_number(parser *p, const operand *o, const char *what) {
  if (o->type == T_NUM || o->type == T_BOOL || o->type == T_ANY) return 0;
  if (o->type == T_NAME) {
    p->e->vars[o->var].numeric = true;
    p->e->code[o->ins].nargs = 1;
    return 0;
  }
  return kt_fail_at(p->err, o->pos, "%s takes numbers, not a string", what);
}

/* == and != compare anything but a number with a string. */
static int need_comparable(parser *p, const operand *a, const operand *b) {
  bool an = a->type == T_NUM || a->type == T_BOOL, bn = b->type == T_NUM || b->type == T_BOOL;
  if ((an && b->type == T_STR) || (a->type == T_STR && bn))
    return kt_fail_at(p->err, b->pos, "a number is compared with a string");
  return 0;
}

/* What 'a or b' (and, a if c else b) may give: either operand. */
static vtype either(vtype a, vtype b) {
  if (a == b && a != T_NAME) return a;
  bool an = a == T_NUM || a == T_BOOL, bn = b == T_NUM || b == T_BOOL;
  return an && bn ? T_NUM : T_ANY;
}

/* ---- grammar ---- */

static int parse_or(parser *p, operand *o);
static int parse_test(parser *p, operand *o);

/* Each level of nesting is a recursion of the parser, bounded so that no
** text overflows the C stack. */
static int nest(parser *p, size_t pos) {
  if (++p->nesting <= EXPR_NESTING) return 0;
  return kt_fail_at(p->err, pos,
                    "the expression nests more than %d levels deep (parentheses, calls "
                    "and unary operators)",
                    EXPR_NESTING);
}

static int expect_close(parser *p, size_t open) {
  if (p->tok.kind == TK_RPAREN) return next(p);
  return kt_fail_at(p->err, p->tok.pos, "expected ')' to close the '(' at character %zu", open + 1);
}

static int parse_call(parser *p, operand *o, const token *name) {
  static const struct { const char *name; expr_fn fn; int min, max; } fns[] = {
      {"min", FN_MIN, 1, 255}, {"max", FN_MAX, 1, 255}, {"abs", FN_ABS, 1, 1},
      {"floor", FN_FLOOR, 1, 1}, {"ceil", FN_CEIL, 1, 1}, {"sqrt", FN_SQRT, 1, 1},
      {"pow", FN_POW, 2, 2}};
  size_t f = 0, nfns = sizeof fns / sizeof fns[0];
  while (f < nfns && !(strlen(fns[f].name) == name->len &&
                       strncmp(fns[f].name, p->src + name->pos, name->len) == 0))
    f++;
  if (f == nfns)
    return kt_fail_at(p->err, name->pos,
                      "unknown function '%.*s' (expected min, max, abs, floor, "
                      "ceil, sqrt or pow)",
                      (int)name->len, p->src + name->pos);
  size_t open = p->tok.pos;
  int nargs = 0;
  if (nest(p, open) || next(p)) return -1;
  while (p->tok.kind != TK_RPAREN) {
    operand a;
    if (nargs > 0 && (p->tok.kind != TK_COMMA ? expect_close(p, open) : next(p))) return -1;
    if (parse_test(p, &a) || need_number(p, &a, fns[f].name)) return -1;
    nargs++;
  }
  if (nargs < fns[f].min || nargs > fns[f].max)
    return kt_fail_at(p->err, name->pos, "%s takes %d argument%s", fns[f].name, fns[f].min,
                      fns[f].min == 1 ? "" : "s");
  *o = (operand){T_NUM, name->pos, 0, 0};
  p->nesting--;
  return emit(p, OP_CALL, (uint32_t)fns[f].fn, (uint8_t)nargs, name->pos) || next(p);
}

static int parse_name(parser *p, operand *o) {
  token name = p->tok;
  if (next(p)) return -1;
  if (p->tok.kind == TK_LPAREN) return parse_call(p, o, &name);
  size_t var;
  if (find_var(p, &name, &var)) return -1;
  *o = (operand){T_NAME, name.pos, p->e->ncode, var};
  return emit(p, OP_VAR, (uint32_t)var, 0, name.pos);
}

static int parse_literal(parser *p, operand *o) {
  token *t = &p->tok;
  kt_value v = {.type = KT_VINT};
  o->pos = t->pos;
  o->type = t->kind == TK_STR ? T_STR : t->kind == TK_INT || t->kind == TK_FLOAT ? T_NUM : T_BOOL;
  if (t->kind == TK_INT) v.u.i = t->i;
  else if (t->kind == TK_TRUE) v.u.i = 1;
  else if (t->kind == TK_FLOAT) v = (kt_value){.type = KT_VFLOAT, .u.f = t->f};
  char *s = NULL;
  if (t->kind == TK_STR) {
    size_t len;
    if (expr_string(p->src, t->pos, &len, &s, p->err)) return -1;
    v = (kt_value){.type = KT_VSTRING, .u.s = s};
  }
  int rc = emit_const(p, &v, t->pos);
  free(s);
  return rc || next(p);
}

static int parse_primary(parser *p, operand *o) {
  token *t = &p->tok;
  switch (t->kind) {
    case TK_INT: case TK_FLOAT: case TK_STR: case TK_TRUE: case TK_FALSE:
      return parse_literal(p, o);
    case TK_NAME:
      return parse_name(p, o);
    case TK_LPAREN: {
      size_t open = t->pos;
      if (nest(p, open) || next(p) || parse_test(p, o)) return -1;
      p->nesting--;
      o->pos = open;
      return expect_close(p, open);
    }
    case TK_END:
      return kt_fail_at(p->err, t->pos, "expected a value, found the end of the expression");
    default:
      return kt_fail_at(p->err, t->pos, "expected a value, found '%.*s'", (int)t->len,
                        p->src + t->pos);
  }
}

/* x ** y, right to left; the exponent may be negated (2 ** -1), and a
** unary minus on the left takes the whole power (-2 ** 2 == -4), as in
** Python. */
static int parse_unary(parser *p, operand *o);

static int parse_power(parser *p, operand *o) {
  if (parse_primary(p, o)) return -1;
  if (p->tok.kind != TK_POW) return 0;
  token t = p->tok;
  operand r;
  if (need_number(p, o, "'**'") || nest(p, t.pos) || next(p) || parse_unary(p, &r) ||
      need_number(p, &r, "'**'"))
    return -1;
  p->nesting--;
  o->type = T_NUM;
  return emit(p, OP_POW, 0, 0, t.pos);
}

static int arith_loop(parser *p, operand *o, int level);
static int comparison_rest(parser *p, operand *o, size_t start);

static int parse_unary(parser *p, operand *o) {
  token t = p->tok;
  if (t.kind != TK_MINUS && t.kind != TK_NOT) return parse_power(p, o);
  size_t start = p->e->ncode;
  if (nest(p, t.pos) || next(p) || parse_unary(p, o)) return -1;
  p->nesting--;
  /* `not` (and `!`) binds as in Python, more loosely than comparisons:
  ** not A == 1 is not (A == 1), not A + 1 is not (A + 1). */
  if (t.kind == TK_NOT &&
      (arith_loop(p, o, 1) || arith_loop(p, o, 0) || comparison_rest(p, o, start)))
    return -1;
  if (t.kind == TK_MINUS && need_number(p, o, "'-'")) return -1;
  o->pos = t.pos;
  o->type = t.kind == TK_MINUS ? T_NUM : T_BOOL;
  return emit(p, t.kind == TK_MINUS ? OP_NEG : OP_NOT, 0, 0, t.pos);
}

static int arith_op(tk kind, int level) {
  if (level == 0) return kind == TK_PLUS ? OP_ADD : kind == TK_MINUS ? OP_SUB : -1;
  switch (kind) {
    case TK_STAR: return OP_MUL;
    case TK_SLASH: return OP_DIV;
    case TK_DSLASH: return OP_IDIV;
    case TK_PERCENT: return OP_MOD;
    default: return -1;
  }
}

static int parse_arith(parser *p, operand *o, int level);

static int parse_term(parser *p, operand *o, int level) {
  return level == 0 ? parse_arith(p, o, 1) : parse_unary(p, o);
}

/* The operators of one level after its first operand o. */
static int arith_loop(parser *p, operand *o, int level) {
  for (int code; (code = arith_op(p->tok.kind, level)) >= 0;) {
    token t = p->tok;
    char what[8];
    snprintf(what, sizeof what, "'%.*s'", (int)t.len, p->src + t.pos);
    operand r;
    if (need_number(p, o, what) || next(p)) return -1;
    if (parse_term(p, &r, level) || need_number(p, &r, what)) return -1;
    o->type = T_NUM;
    if (emit(p, (expr_op)code, 0, 0, t.pos)) return -1;
  }
  return 0;
}

/* Left-associative arithmetic: level 0 adds, level 1 multiplies. */
static int parse_arith(parser *p, operand *o, int level) {
  return parse_term(p, o, level) || arith_loop(p, o, level);
}

static bool is_comparison(tk k) { return k >= TK_EQ && k <= TK_GE; }

/* Emits the code [from, to) once more (an operand that a chain or an 'in'
** list reads again), its jumps moved along with it. */
static int copy_code(parser *p, size_t from, size_t to, size_t pos) {
  p->copied += to - from;
  if (p->copied > EXPR_COPIES_MAX)
    return kt_fail_at(p->err, pos,
                      "the expression is too long once its chained comparisons and "
                      "'in' lists are expanded");
  size_t at = p->e->ncode;
  for (size_t pc = from; pc < to; pc++) {
    expr_ins in = p->e->code[pc];
    if (expr_is_jump(in.op)) in.arg = in.arg - (uint32_t)from + (uint32_t)at;
    if (emit(p, (expr_op)in.op, in.arg, in.nargs, in.pos - 1u)) return -1;
  }
  return 0;
}

/* Whether the token after the current one is 'in' (for 'not in'). */
static bool next_is_in(parser *p) {
  size_t at = p->at;
  token t = p->tok;
  kt_error *err = p->err, scratch;
  p->err = &scratch;
  bool in = next(p) == 0 && p->tok.kind == TK_IN;
  p->at = at;
  p->tok = t;
  p->err = err;
  return in;
}

static bool at_in(parser *p) {
  return p->tok.kind == TK_IN || (p->tok.kind == TK_NOT && next_is_in(p));
}

/* x in []: false (true for not in), once x is evaluated, as Python
** evaluates it (its errors are the expression's): "v if x else v". */
static int in_nothing(parser *p, bool negate, size_t open) {
  kt_value v = {.type = KT_VINT, .u.i = negate};
  size_t jfalse = p->e->ncode, jump;
  if (emit(p, OP_JFALSE, 0, 0, open) || emit_const(p, &v, open)) return -1;
  jump = p->e->ncode;
  if (emit(p, OP_JUMP, 0, 0, open)) return -1;
  p->e->code[jfalse].arg = (uint32_t)p->e->ncode;
  if (emit_const(p, &v, open)) return -1;
  p->e->code[jump].arg = (uint32_t)p->e->ncode;
  return 0;
}

/* x in [a, b, ...] (or a tuple) is max(max(x == a, x == b), ...), x read
** again for each item; x not in [...] is its negation. Python builds the
** whole list before it looks in it, so every item is evaluated (an error
** in one is the expression's), not only those up to the first equal one.
** The left operand's code is [start, end of code). */
static int parse_in(parser *p, operand *o, size_t start) {
  bool negate = p->tok.kind == TK_NOT;
  if ((negate && next(p)) || next(p)) return -1;
  tk close = p->tok.kind == TK_LBRACK ? TK_RBRACK : p->tok.kind == TK_LPAREN ? TK_RPAREN : TK_END;
  if (close == TK_END) return kt_fail_at(p->err, p->tok.pos, "'in' takes a list: [1, 2] or (1, 2)");
  size_t open = p->tok.pos, lend = p->e->ncode, n = 0;
  if (nest(p, open) || next(p)) return -1;
  while (p->tok.kind != close) {
    if (n > 0) {
      if (p->tok.kind != TK_COMMA)
        return kt_fail_at(p->err, p->tok.pos, "expected ',' or '%c' in the list at character %zu",
                          close == TK_RBRACK ? ']' : ')', open + 1);
      if (next(p)) return -1;
      if (p->tok.kind == close) break;
      if (copy_code(p, start, lend, p->tok.pos)) return -1;
    }
    operand r;
    size_t pos = p->tok.pos;
    if (parse_arith(p, &r, 0) || need_comparable(p, o, &r) || emit(p, OP_EQ, 0, 0, pos))
      return -1;
    if (n > 0 && emit(p, OP_CALL, FN_MAX, 2, pos)) return -1;
    n++;
  }
  p->nesting--;
  if (n == 0 ? in_nothing(p, negate, open) : negate && emit(p, OP_NOT, 0, 0, open)) return -1;
  o->type = T_BOOL;
  if (next(p)) return -1;
  if (is_comparison(p->tok.kind) || at_in(p))
    return kt_fail_at(p->err, p->tok.pos,
                      "'in' does not chain with other comparisons: join them "
                      "with and");
  return 0;
}

static int compare_pair(parser *p, const token *t, operand *l, operand *r) {
  char what[8];
  snprintf(what, sizeof what, "'%.*s'", (int)t->len, p->src + t->pos);
  bool equality = t->kind == TK_EQ || t->kind == TK_NE;
  if (equality ? need_comparable(p, l, r) : need_number(p, l, what) || need_number(p, r, what))
    return -1;
  return emit(p, (expr_op)(OP_EQ + (t->kind - TK_EQ)), 0, 0, t->pos);
}

/* The comparisons after a left operand o whose code starts at start. They
** chain as in Python: a < b <= c is a < b and b <= c, b read twice; each
** jump ends after the next comparison, as (a && b) && c does. */
static int comparison_rest(parser *p, operand *o, size_t start) {
  if (at_in(p)) return parse_in(p, o, start);
  if (!is_comparison(p->tok.kind)) return 0;
  operand l = *o;
  size_t jump = SIZE_MAX;
  for (;;) {
    token t = p->tok;
    operand r;
    size_t rs = p->e->ncode;
    if (next(p) || parse_arith(p, &r, 0)) return -1;
    size_t re = p->e->ncode;
    if (compare_pair(p, &t, &l, &r)) return -1;
    if (jump != SIZE_MAX) p->e->code[jump].arg = (uint32_t)p->e->ncode;
    if (at_in(p))
      return kt_fail_at(p->err, p->tok.pos,
                        "'in' does not chain with other comparisons: join them "
                        "with and");
    if (!is_comparison(p->tok.kind)) break;
    jump = p->e->ncode;
    size_t copy = jump + 1;
    if (emit(p, OP_AND, 0, 0, p->tok.pos) || copy_code(p, rs, re, p->tok.pos)) return -1;
    l = r;
    if (r.type == T_NAME) l.ins = copy + (r.ins - rs); /* the copy is what is compared next */
  }
  o->type = T_BOOL;
  return 0;
}

static int parse_comparison(parser *p, operand *o) {
  size_t start = p->e->ncode;
  return parse_arith(p, o, 0) || comparison_rest(p, o, start);
}

/* && and || at one level: the left side decides by jumping over the right
** side, which is evaluated only when it matters. */
static int parse_logic(parser *p, operand *o, bool is_or) {
  if (is_or ? parse_logic(p, o, false) : parse_comparison(p, o)) return -1;
  while (p->tok.kind == (is_or ? TK_OR : TK_AND)) {
    token t = p->tok;
    char what[8];
    snprintf(what, sizeof what, "'%.*s'", (int)t.len, p->src + t.pos);
    size_t jump = p->e->ncode;
    operand r;
    if (emit(p, is_or ? OP_OR : OP_AND, 0, 0, t.pos) || next(p)) return -1;
    if (is_or ? parse_logic(p, &r, false) : parse_comparison(p, &r)) return -1;
    p->e->code[jump].arg = (uint32_t)p->e->ncode;
    o->type = either(o->type, r.type);
  }
  return 0;
}

static int parse_or(parser *p, operand *o) { return parse_logic(p, o, true); }

/* Moves the jumps of the n instructions at code, which were at from. */
static void relocate(expr_ins *code, size_t n, size_t from, size_t to) {
  for (size_t i = 0; i < n; i++)
    if (expr_is_jump(code[i].op)) code[i].arg = code[i].arg - (uint32_t)from + (uint32_t)to;
}

/* The code of a value [sa, sc) and of its condition [sc, end) become the
** condition, an OP_JFALSE at *jfalse, then the value: the condition runs
** first, as Python evaluates it. */
static int condition_first(parser *p, size_t sa, size_t sc, size_t pos, size_t *jfalse) {
  kt_expr *e = p->e;
  size_t na = sc - sa, nc = e->ncode - sc;
  expr_ins *a = kt_alloc(na * sizeof *a, p->err);
  if (!a || kt_grow(&e->code, &e->capcode, e->ncode + 1, sizeof *e->code, p->err)) {
    free(a);
    return -1;
  }
  memcpy(a, e->code + sa, na * sizeof *a);
  memmove(e->code + sa, e->code + sc, nc * sizeof *a);
  relocate(e->code + sa, nc, sc, sa);
  *jfalse = sa + nc;
  e->code[*jfalse] = (expr_ins){OP_JFALSE, 0, ins_pos(pos), 0};
  memcpy(e->code + *jfalse + 1, a, na * sizeof *a);
  relocate(e->code + *jfalse + 1, na, sa, *jfalse + 1);
  e->ncode++;
  free(a);
  return 0;
}

/* Python's a if c else b, below 'or' and right to left (a if b else c if
** d else e is a if b else (c if d else e)): c runs, then a or b alone. */
static int parse_test(parser *p, operand *o) {
  size_t sa = p->e->ncode;
  int depth = p->depth;
  if (parse_or(p, o)) return -1;
  if (p->tok.kind != TK_IF) return 0;
  token t = p->tok;
  size_t sc = p->e->ncode, jfalse, jump;
  operand c, b;
  if (nest(p, t.pos) || next(p) || parse_or(p, &c)) return -1;
  if (p->tok.kind != TK_ELSE)
    return kt_fail_at(p->err, p->tok.pos, "expected 'else' for the 'if' at character %zu",
                      t.pos + 1);
  if (condition_first(p, sa, sc, t.pos, &jfalse)) return -1;
  p->depth = depth + 1; /* the value's */
  jump = p->e->ncode;
  if (emit(p, OP_JUMP, 0, 0, t.pos) || next(p)) return -1;
  p->e->code[jfalse].arg = (uint32_t)p->e->ncode;
  if (parse_test(p, &b)) return -1;
  p->e->code[jump].arg = (uint32_t)p->e->ncode;
  p->nesting--;
  o->type = either(o->type, b.type);
  return 0;
}

/* Parses from text + start; with end, stops before the first token that
** cannot continue the expression (and says where), else that token is an
** error. */
static kt_expr *parse_from(const char *text, size_t start, size_t *end, bool no_if,
                           kt_error *err) {
  kt_expr *e = kt_calloc(1, sizeof *e, err);
  if (!e) return NULL;
  parser p = {e, text, start, {0}, 0, 0, 0, err};
  operand o;
  /* a comprehension's condition is no conditional: an 'if' after it is
  ** the next clause, as in Python */
  int rc = next(&p) || (no_if ? parse_or(&p, &o) : parse_test(&p, &o));
  if (rc == 0 && p.tok.kind != TK_END && !end)
    rc = kt_fail_at(p.err, p.tok.pos, "unexpected '%.*s' after a complete expression",
                    (int)p.tok.len, text + p.tok.pos);
  if (rc == 0) {
    size_t stop = p.tok.pos;
    if (end) {
      *end = stop;
      while (stop > start && isspace((unsigned char)text[stop - 1])) stop--;
    }
    e->condition = o.type == T_BOOL;
    rc = (e->text = kt_alloc(stop - start + 1, err)) ? 0 : -1;
    if (rc == 0) {
      memcpy(e->text, text + start, stop - start);
      e->text[stop - start] = '\0';
      rc = expr_build_tree(e, err);
    }
  }
  if (rc) {
    kt_expr_free(e);
    return NULL;
  }
  return e;
}

kt_expr *kt_expr_parse(const char *text, kt_error *err) {
  return parse_from(text, 0, NULL, false, err);
}

kt_expr *kt_expr_parse_part(const char *text, size_t start, size_t *end, bool no_if,
                            kt_error *err) {
  return parse_from(text, start, end, no_if, err);
}
