/*
** preproc.c: a C preprocessor's verdicts known before compiling (preproc.h):
** the source read once into tokens and logical lines (comments and line
** splices gone); per set of macros, a walk of its directives with a table
** of macros (preproc_expr.c) and a stack of #if levels, each three-valued.
*/
#include "preproc_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D_CODE, D_DEFINE, D_UNDEF, D_IF, D_IFDEF, D_IFNDEF, D_ELIF, D_ELSE, D_ENDIF, D_INCLUDE,
       D_OTHER };

typedef struct line_info {
  uint32_t first, count; /* its tokens */
  uint8_t directive;     /* D_CODE: none */
} line_info;

struct kt_pp {
  char *text;
  kt_pp_token *tok;
  size_t ntok, captok;
  line_info *lines;
  size_t nlines, caplines;
  bool includes;
};


/* ---- reading ---- */

static const char *const puncts[] = {"<<=", ">>=", "...", "##", "<<", ">>", "<=", ">=", "==",
                                     "!=", "&&", "||", "->", "::", "++", "--", "+=", "-=",
                                     "*=", "/=", "%=", "&=", "|=", "^=", NULL};

static bool ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
static bool digit(char c) { return c >= '0' && c <= '9'; }

static int add_token(kt_pp *pp, const char *at, size_t len, int kind, bool space, uint32_t line,
                     kt_error *err) {
  if (kt_grow(&pp->tok, &pp->captok, pp->ntok + 1, sizeof *pp->tok, err)) return -1;
  pp->tok[pp->ntok++] = (kt_pp_token){at, (uint32_t)len, (uint8_t)kind, space, line};
  return 0;
}

/* The length of a literal quoted by q at s (to its closing quote, or the line's end). */
static size_t quoted(const char *s, char q) {
  size_t i = 1;
  while (s[i] && s[i] != '\n' && s[i] != q) i += s[i] == '\\' && s[i + 1] ? 2 : 1;
  return s[i] == q ? i + 1 : i;
}

static size_t punct_len(const char *s) {
  for (size_t k = 0; puncts[k]; k++)
    if (strncmp(s, puncts[k], strlen(puncts[k])) == 0) return strlen(puncts[k]);
  return 1;
}

/* Tokens of pp->text, whose line splices are gone, each with its line. */
static int tokenize(kt_pp *pp, kt_error *err) {
  const char *s = pp->text;
  uint32_t line = 0;
  bool space = true;
  while (*s) {
    if (*s == '\n') {
      line++, s++, space = true;
    } else if (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\f' || *s == '\v') {
      s++, space = true;
    } else if (s[0] == '/' && s[1] == '/') {
      while (*s && *s != '\n') s++;
      space = true;
    } else if (s[0] == '/' && s[1] == '*') { /* its line ends are not the line's */
      const char *end = strstr(s + 2, "*/");
      s = end ? end + 2 : s + strlen(s);
      space = true;
    } else {
      size_t len;
      int kind;
      if (ident_start(*s)) {
        for (len = 1; ident_char(s[len]); len++) {}
        kind = KT_PP_IDENT;
        if ((s[len] == '"' || s[len] == '\'') && len <= 2) { /* L"", u8'' ... */
          kind = s[len] == '"' ? KT_PP_STRING : KT_PP_CHAR;
          len += quoted(s + len, s[len]);
        }
      } else if (digit(*s) || (*s == '.' && digit(s[1]))) {
        for (len = 1; ident_char(s[len]) || s[len] == '.' ||
                      ((s[len] == '+' || s[len] == '-') && strchr("eEpP", s[len - 1]));
             len++) {}
        kind = KT_PP_NUMBER;
      } else if (*s == '"' || *s == '\'') {
        len = quoted(s, *s);
        kind = *s == '"' ? KT_PP_STRING : KT_PP_CHAR;
      } else {
        len = punct_len(s);
        kind = KT_PP_PUNCT;
      }
      if (add_token(pp, s, len, kind, space, line, err)) return -1;
      s += len;
      space = false;
    }
  }
  pp->nlines = (size_t)line + 1;
  return 0;
}

static int directive_of(const kt_pp_token *t) {
  static const struct { const char *name; int kind; } names[] = {
      {"define", D_DEFINE}, {"undef", D_UNDEF},   {"if", D_IF},         {"ifdef", D_IFDEF},
      {"ifndef", D_IFNDEF}, {"elif", D_ELIF},     {"else", D_ELSE},     {"endif", D_ENDIF},
      {"include", D_INCLUDE}, {"import", D_INCLUDE}, {"include_next", D_INCLUDE}};
  for (size_t i = 0; t && i < sizeof names / sizeof *names; i++)
    if (kt_pp_is(t, names[i].name)) return names[i].kind;
  return D_OTHER;
}

static int index_lines(kt_pp *pp, kt_error *err) {
  if (!(pp->lines = kt_calloc(pp->nlines, sizeof *pp->lines, err))) return -1;
  for (size_t i = 0; i < pp->ntok;) {
    line_info *li = &pp->lines[pp->tok[i].line];
    li->first = (uint32_t)i;
    while (i < pp->ntok && pp->tok[i].line == pp->tok[li->first].line) i++;
    li->count = (uint32_t)(i - li->first);
    const kt_pp_token *t = &pp->tok[li->first];
    if (kt_pp_is(t, "#")) li->directive = (uint8_t)directive_of(li->count > 1 ? t + 1 : NULL);
    if (li->directive == D_INCLUDE) pp->includes = true;
  }
  return 0;
}

kt_pp *kt_pp_new(const char *text, kt_error *err) {
  kt_pp *pp = kt_calloc(1, sizeof *pp, err);
  if (!pp || !(pp->text = kt_alloc(strlen(text) + 1, err))) return kt_pp_free(pp), NULL;
  char *d = pp->text;
  for (const char *s = text; *s; s++) { /* line splices joined */
    if (s[0] == '\\' && s[1] == '\n') s++;
    else if (s[0] == '\\' && s[1] == '\r' && s[2] == '\n') s += 2;
    else *d++ = *s;
  }
  *d = 0;
  if (tokenize(pp, err) || index_lines(pp, err)) return kt_pp_free(pp), NULL;
  return pp;
}

void kt_pp_free(kt_pp *pp) {
  if (!pp) return;
  free(pp->text);
  free(pp->tok);
  free(pp->lines);
  free(pp);
}

const kt_pp_token *kt_pp_tokens(const kt_pp *pp, size_t *n) {
  *n = pp->ntok;
  return pp->tok;
}

bool kt_pp_is_directive(const kt_pp *pp, uint32_t line) {
  return line < pp->nlines && pp->lines[line].directive != D_CODE;
}

bool kt_pp_includes(const kt_pp *pp) { return pp->includes; }

/* ---- the walk ---- */

typedef struct level {
  kt_tri own, taken; /* this branch in; an earlier branch of its #if in */
} level;

static kt_tri and3(kt_tri a, kt_tri b) {
  if (a == KT_NO || b == KT_NO) return KT_NO;
  return a == KT_YES && b == KT_YES ? KT_YES : KT_UNKNOWN;
}

static kt_tri not3(kt_tri a) { return a == KT_UNKNOWN ? KT_UNKNOWN : a == KT_YES ? KT_NO : KT_YES; }

static kt_tri or3(kt_tri a, kt_tri b) { return not3(and3(not3(a), not3(b))); }

/* Whether lines are in under the levels below the top n. */
static kt_tri in_under(const level *lv, size_t n) {
  kt_tri in = KT_YES;
  for (size_t i = 0; i < n; i++) in = and3(in, lv[i].own);
  return in;
}

typedef struct walk {
  kt_pp_run *r;
  level *lv;
  size_t nlv, caplv;
} walk;

/* One directive line: its tokens t[0..n) past the # and the directive's name. */
static void directive(walk *w, int kind, const kt_pp_token *t, size_t n) {
  kt_pp_run *r = w->r;
  kt_tri in = in_under(w->lv, w->nlv);
  level *top = w->nlv ? &w->lv[w->nlv - 1] : NULL;
  kt_tri outer = top ? in_under(w->lv, w->nlv - 1) : KT_YES;
  kt_error ignored;
  switch (kind) {
    case D_IF:
    case D_IFDEF:
    case D_IFNDEF: {
      kt_tri own = in == KT_NO ? KT_NO
                   : kind == D_IF ? pp_condition(r, t, n)
                   : n == 0 || t[0].kind != KT_PP_IDENT ? KT_UNKNOWN
                   : kind == D_IFDEF ? pp_defined(r, t) : not3(pp_defined(r, t));
      if (kt_grow(&w->lv, &w->caplv, w->nlv + 1, sizeof *w->lv, &ignored)) {
        r->oom = true;
        return;
      }
      w->lv[w->nlv++] = (level){own, in == KT_NO ? KT_YES : own};
      return;
    }
    case D_ELIF:
      if (!top) return;
      if (outer == KT_NO || top->taken == KT_YES) {
        top->own = KT_NO;
      } else {
        kt_tri c = pp_condition(r, t, n);
        top->own = and3(c, not3(top->taken));
        top->taken = or3(top->taken, c);
      }
      return;
    case D_ELSE:
      if (top) top->own = not3(top->taken), top->taken = KT_YES;
      return;
    case D_ENDIF:
      if (top) w->nlv--;
      return;
    case D_DEFINE:
    case D_UNDEF:
      if (in == KT_NO || n == 0 || t[0].kind != KT_PP_IDENT) return;
      if (in == KT_UNKNOWN) pp_add_macro(r, (pp_macro){.name = t, .state = KT_UNKNOWN});
      else if (kind == D_UNDEF) pp_add_macro(r, (pp_macro){.name = t, .state = KT_NO});
      else pp_add_macro(r, pp_read_define(t, n));
      return;
    case D_INCLUDE:
      if (in != KT_NO) r->includes = true;
      return;
    default:
      return;
  }
}

/* Walks pp's lines; visits the code lines of lines. */
static int walk_lines(walk *w, const kt_pp *pp, const uint32_t *lines, size_t nlines,
                      int (*visit)(void *, uint32_t, kt_tri, kt_pp_run *), void *ud) {
  size_t next = 0;
  for (uint32_t l = 0; l < pp->nlines && !w->r->oom; l++) {
    const line_info *li = &pp->lines[l];
    if (li->directive == D_CODE) {
      while (next < nlines && lines[next] < l) next++;
      int rc = next < nlines && lines[next] == l ? visit(ud, l, in_under(w->lv, w->nlv), w->r) : 0;
      if (rc) return rc;
      continue;
    }
    size_t skip = li->count > 1 ? 2 : li->count;
    directive(w, li->directive, pp->tok + li->first + skip, li->count - skip);
  }
  return 0;
}

/* The defines as a source of their own, "#define NAME VALUE" a line. */
static kt_pp *prelude(const kt_pp_define *defs, size_t n, kt_error *err) {
  size_t size = 1;
  for (size_t i = 0; i < n; i++)
    size += strlen(defs[i].name) + (defs[i].value ? strlen(defs[i].value) : 0) + 12;
  char *text = kt_alloc(size, err);
  if (!text) return NULL;
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    const char *v = defs[i].value;
    used += (size_t)snprintf(text + used, size - used, "#%s %s %s\n", v ? "define" : "undef",
                             defs[i].name, v ? v : "");
  }
  text[used] = 0;
  kt_pp *pp = kt_pp_new(text, err);
  free(text);
  return pp;
}

int kt_pp_walk(const kt_pp *pp, const kt_pp_define *defs, size_t ndefs, bool includes,
               const uint32_t *lines, size_t nlines,
               int (*visit)(void *ud, uint32_t line, kt_tri in, kt_pp_run *run), void *ud,
               kt_error *err) {
  kt_pp *first = prelude(defs, ndefs, err);
  if (!first) return -1;
  kt_pp_run r = {.includes = includes};
  walk w = {&r, NULL, 0, 0};
  int rc = walk_lines(&w, first, NULL, 0, visit, ud);
  w.nlv = 0;
  if (rc == 0) rc = walk_lines(&w, pp, lines, nlines, visit, ud);
  if (r.oom && rc == 0) rc = kt_fail(err, "out of memory reading a kernel's directives");
  free(w.lv);
  free(r.m);
  free(r.hide);
  kt_pp_free(first);
  return rc;
}
