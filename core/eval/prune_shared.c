/*
** prune_shared.c: a kernel's static local memory (CUDA: __shared__, OpenCL:
** __local arrays), as its source declares it, against the device's limit,
** before any compile (prune.h). A CUDA kernel whose static shared memory
** passes 48 KiB is refused by ptxas ("uses too much shared data"), after
** a compile that may take seconds: BAT's convolution declares
** `__shared__ float sh_input[block_size_y*tile_size_y+border_height][shared_mem_width]`,
** over 48 KiB in most of its space.
**
** What counts, per configuration: the arrays (and scalars) declared
** __shared__ (__local) in the kernel's own body, or at file scope, whose
** name the kernel's body uses again, on lines the configuration's macros
** leave in, of a type of known size (the built-in ones and their vectors),
** with bounds that are integer constant expressions of the macros
** (preproc.h: the parameters' #defines, the -D options). Whatever cannot
** be known so (a template's type or bound, a constexpr, a header's macro,
** an #ifdef of the compiler's own) counts nothing: the sum is at most what
** the compiler finds, never more, but for an array the kernel names and the
** compiler drops as unused (k:prune{local_memory = false} turns the check
** off). The device's limit: CUDA's static shared memory per block
** (shared_per_block: 48 KiB, whatever a kernel may opt in to dynamically),
** OpenCL's local memory.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preproc.h"
#include "prune.h"

#define MOST_DIMS 8

typedef struct array {
  uint32_t line;   /* of its statement's first token: the macros there */
  int64_t elem;    /* bytes of an element */
  size_t dim[MOST_DIMS], ndim[MOST_DIMS]; /* each bound's tokens: first, count */
  int dims;
} array;

typedef struct rule {
  kt_pp *pp;
  bool cuda;
  array *arrays;
  size_t narrays, caparrays;
  uint32_t *lines; /* the arrays' lines, ascending, once each */
  size_t nlines;
  kt_pp_define *opts; /* -D and -U of the build options, their text owned */
  size_t nopts, capopts;
  bool includes;   /* an -include option: a header first */
  char **names;    /* the parameters the source names, as the constraint gets them */
  size_t nnames;
  int64_t limit;
} rule;

static void rule_free(void *ud) {
  rule *r = ud;
  if (!r) return;
  kt_pp_free(r->pp);
  free(r->arrays);
  free(r->lines);
  for (size_t i = 0; i < r->nopts; i++) free((char *)r->opts[i].name);
  free(r->opts);
  for (size_t i = 0; i < r->nnames; i++) free(r->names[i]);
  free(r->names);
  free(r);
}

/* ---- types ---- */

/* Bytes of a built-in type or vector (float4, uchar2, __half2), -1 if unknown. */
static int64_t word_size(const kt_pp_token *t, bool cuda) {
  static const struct { const char *name; int size; } base[] = {
      {"char", 1},   {"uchar", 1},  {"bool", 1},     {"int8_t", 1},    {"uint8_t", 1},
      {"short", 2},  {"ushort", 2}, {"half", 2},     {"__half", 2},    {"__nv_bfloat16", 2},
      {"int16_t", 2}, {"uint16_t", 2}, {"int", 4},   {"uint", 4},      {"unsigned", 4},
      {"float", 4},  {"int32_t", 4}, {"uint32_t", 4}, {"long", 8},     {"ulong", 8},
      {"longlong", 8}, {"ulonglong", 8}, {"double", 8}, {"size_t", 8}, {"int64_t", 8},
      {"uint64_t", 8}};
  size_t len = t->len;
  while (len > 0 && t->at[len - 1] >= '0' && t->at[len - 1] <= '9') len--;
  int lanes = len < t->len ? atoi(t->at + len) : 1;
  if (lanes != 1 && lanes != 2 && lanes != 3 && lanes != 4 && lanes != 8 && lanes != 16) return -1;
  for (size_t i = 0; i < sizeof base / sizeof *base; i++) {
    if (strlen(base[i].name) != len || memcmp(base[i].name, t->at, len) != 0) continue;
    if (len < t->len && strstr("int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t "
                               "size_t", base[i].name))
      return -1; /* no vectors of those */
    /* OpenCL's 3-vectors take 4 lanes; CUDA's take 3 */
    return (int64_t)base[i].size * (lanes == 3 && !cuda ? 4 : lanes);
  }
  return -1;
}

static bool qualifier(const kt_pp_token *t) {
  static const char *const words[] = {"static", "volatile", "const", "__shared__", "__local",
                                      "local", "__device__", "__restrict__", "restrict",
                                      "signed", NULL};
  for (size_t i = 0; words[i]; i++)
    if (kt_pp_is(t, words[i])) return true;
  return false;
}

/* The bytes of the type t[0..n) names, -1 if unknown. */
static int64_t type_size(const kt_pp_token *t, size_t n, bool cuda) {
  int64_t size = -1;
  size_t words = 0, longs = 0;
  bool is_unsigned = false;
  for (size_t i = 0; i < n; i++) {
    if (qualifier(&t[i])) continue;
    if (kt_pp_is(&t[i], "unsigned")) {
      is_unsigned = true;
      continue;
    }
    if (kt_pp_is(&t[i], "long")) longs++;
    else if (kt_pp_is(&t[i], "int") && words) continue; /* short int, long int */
    words++;
    size = word_size(&t[i], cuda);
    if (size < 0) return -1;
  }
  if (longs > 2 || (longs && words > longs)) return -1; /* long double */
  if (longs) return 8;
  return words == 0 ? (is_unsigned ? 4 : -1) : words == 1 ? size : -1;
}

static int64_t sizer(const kt_pp_token *t, size_t n, void *ud) {
  const rule *r = ud;
  return type_size(t, n, r->cuda);
}

/* ---- finding the declarations ---- */

typedef struct scan {
  const kt_pp *pp;
  const kt_pp_token *tok;
  size_t ntok;
  size_t body, end; /* the kernel's body: its { and } */
} scan;

static bool code(const scan *s, size_t i) { return !kt_pp_is_directive(s->pp, s->tok[i].line); }

/* The code token after i (s->ntok: none). */
static size_t next_code(const scan *s, size_t i) {
  for (i++; i < s->ntok && !code(s, i); i++) {}
  return i;
}

/* The code token that closes the bracket at i, s->ntok where none does. */
static size_t closing(const scan *s, size_t i, const char *open, const char *close) {
  int depth = 0;
  for (; i < s->ntok; i = next_code(s, i)) {
    if (kt_pp_is(&s->tok[i], open)) depth++;
    if (kt_pp_is(&s->tok[i], close) && --depth == 0) return i;
  }
  return s->ntok;
}

/* The body of the kernel called name: 0 when found once, else -1. */
static int find_body(scan *s, const char *name, bool cuda) {
  int found = 0;
  size_t start = 0; /* the first token of the declaration being read */
  for (size_t i = code(s, 0) ? 0 : next_code(s, 0); i < s->ntok; i = next_code(s, i)) {
    const kt_pp_token *t = &s->tok[i];
    if (kt_pp_is(t, ";") || kt_pp_is(t, "{") || kt_pp_is(t, "}")) start = next_code(s, i);
    size_t open = next_code(s, i);
    if (t->kind != KT_PP_IDENT || !kt_pp_is(t, name) || open >= s->ntok ||
        !kt_pp_is(&s->tok[open], "("))
      continue;
    bool kernel = false;
    for (size_t k = start; k < i; k = next_code(s, k))
      kernel = kernel || kt_pp_is(&s->tok[k], cuda ? "__global__" : "__kernel") ||
               (!cuda && kt_pp_is(&s->tok[k], "kernel"));
    size_t shut = closing(s, open, "(", ")"), body = next_code(s, shut);
    if (!kernel || body >= s->ntok || !kt_pp_is(&s->tok[body], "{")) continue;
    s->body = body;
    s->end = closing(s, body, "{", "}");
    if (s->end >= s->ntok) return -1;
    found++;
    i = s->end;
  }
  return found == 1 ? 0 : -1;
}

/* Whether the kernel's body names t, apart from tokens [from, to). */
static bool used(const scan *s, const kt_pp_token *t, size_t from, size_t to) {
  for (size_t i = s->body; i < s->end; i++)
    if ((i < from || i >= to) && s->tok[i].kind == KT_PP_IDENT && t->len == s->tok[i].len &&
        memcmp(t->at, s->tok[i].at, t->len) == 0)
      return true;
  return false;
}

/* The declaration from..to (its ;) holding the keyword: its arrays into r. */
static int read_declaration(rule *r, const scan *s, size_t from, size_t to, kt_error *err) {
  const kt_pp_token *t = s->tok;
  for (uint32_t l = t[from].line; l <= t[to].line; l++)
    if (kt_pp_is_directive(s->pp, l)) return 0; /* an #if inside: not read */
  size_t i = from, type = from;
  for (; i < to && (qualifier(&t[i]) || word_size(&t[i], r->cuda) > 0 ||
                    kt_pp_is(&t[i], "unsigned") || kt_pp_is(&t[i], "long"));
       i++) {
    if (kt_pp_is(&t[i], "extern")) return 0; /* dynamic: sized at the launch */
  }
  int64_t elem = type_size(&t[type], i - type, r->cuda);
  if (elem <= 0 || i == from) return 0;
  while (i < to) { /* declarators: NAME [bound]... [= init], ... */
    if (t[i].kind != KT_PP_IDENT) return 0; /* a pointer, a type unknown */
    array a = {t[from].line, elem, {0}, {0}, 0};
    const kt_pp_token *name = &t[i++];
    while (i < to && kt_pp_is(&t[i], "[")) {
      size_t shut = closing(s, i, "[", "]");
      if (shut > to || a.dims == MOST_DIMS) return 0;
      a.dim[a.dims] = i + 1;
      a.ndim[a.dims++] = shut - i - 1;
      i = shut + 1;
    }
    while (i < to && !kt_pp_is(&t[i], ",")) i++; /* an initializer */
    i++;
    bool file_scope = from < s->body || from > s->end;
    if (!used(s, name, file_scope ? 0 : from, file_scope ? 0 : to + 1)) continue;
    if (kt_grow(&r->arrays, &r->caparrays, r->narrays + 1, sizeof *r->arrays, err)) return -1;
    r->arrays[r->narrays++] = a;
  }
  return 0;
}

/* The declarations of static local memory at file scope and in the body. */
static int find_arrays(rule *r, const scan *s, kt_error *err) {
  const char *const keywords[] = {r->cuda ? "__shared__" : "__local", r->cuda ? NULL : "local"};
  int depth = 0;
  size_t start = 0;
  for (size_t i = code(s, 0) ? 0 : next_code(s, 0); i < s->ntok; i = next_code(s, i)) {
    const kt_pp_token *t = &s->tok[i];
    if (kt_pp_is(t, "{")) depth++;
    if (kt_pp_is(t, "}")) depth--;
    if (kt_pp_is(t, ";") || kt_pp_is(t, "{") || kt_pp_is(t, "}")) start = next_code(s, i);
    bool keyword = kt_pp_is(t, keywords[0]) || (keywords[1] && kt_pp_is(t, keywords[1]));
    bool in_body = i > s->body && i < s->end;
    if (!keyword || (depth != 0 && !in_body)) continue;
    size_t end = i;
    while (end < s->ntok && !kt_pp_is(&s->tok[end], ";") && !kt_pp_is(&s->tok[end], "{"))
      end = next_code(s, end);
    if (end < s->ntok && kt_pp_is(&s->tok[end], ";") && read_declaration(r, s, start, end, err))
      return -1;
  }
  return 0;
}

/* ---- the options and the parameters ---- */

static int add_opt(rule *r, const char *text, size_t len, bool define, kt_error *err) {
  char *name = kt_alloc(len + 3, err);
  if (!name || kt_grow(&r->opts, &r->capopts, r->nopts + 1, sizeof *r->opts, err))
    return free(name), -1;
  memcpy(name, text, len);
  name[len] = 0;
  char *eq = strchr(name, '=');
  const char *value = NULL;
  if (define && eq) *eq = 0, value = eq + 1;
  else if (define) value = strcpy(name + len + 1, "1");
  r->opts[r->nopts++] = (kt_pp_define){name, value};
  return 0;
}

/* -D, -U, --define-macro, --undefine-macro and the options that read a
** header before the source (whose macros ktlua does not see). */
static int read_options(rule *r, const char *opts, kt_error *err) {
  static const struct { const char *flag; int what; } flags[] = {
      {"--define-macro", 'D'}, {"--undefine-macro", 'U'}, {"--pre-include", 'I'},
      {"-include", 'I'}, {"-imacros", 'I'}, {"-D", 'D'}, {"-U", 'U'}};
  const char *s = opts ? opts : "";
  int pending = 0; /* a flag whose value is the next word */
  while (*s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t len = strcspn(s, " \t");
    if (!len) break;
    const char *word = s;
    s += len;
    if (pending) {
      if (pending != 'I' && add_opt(r, word, len, pending == 'D', err)) return -1;
      pending = 0;
      continue;
    }
    for (size_t f = 0; f < sizeof flags / sizeof *flags; f++) {
      size_t fl = strlen(flags[f].flag);
      if (len < fl || strncmp(word, flags[f].flag, fl) != 0) continue;
      if (flags[f].what == 'I') r->includes = true;
      size_t skip = fl + (len > fl && word[fl] == '=');
      if (len == fl) pending = flags[f].what;
      else if (flags[f].what != 'I' && add_opt(r, word + skip, len - skip, flags[f].what == 'D', err))
        return -1;
      break;
    }
  }
  return 0;
}

/* The parameters the source names (all of them where it pastes tokens). */
static int read_names(rule *r, const kt_space *space, kt_error *err) {
  size_t np = kt_space_nparams(space), ntok;
  const kt_pp_token *tok = kt_pp_tokens(r->pp, &ntok);
  bool pastes = false;
  for (size_t i = 0; i < ntok; i++) pastes = pastes || kt_pp_is(&tok[i], "##");
  if (!(r->names = kt_calloc(np + 1, sizeof *r->names, err))) return -1;
  for (size_t p = 0; p < np; p++) {
    const char *name = kt_space_param(space, p)->name;
    bool named = pastes;
    for (size_t i = 0; i < ntok && !named; i++)
      named = tok[i].kind == KT_PP_IDENT && tok[i].len == strlen(name) &&
              memcmp(tok[i].at, name, tok[i].len) == 0;
    if (named && !(r->names[r->nnames++] = kt_strdup(name, err))) return -1;
  }
  return 0;
}

/* ---- the constraint ---- */

typedef struct sum {
  const rule *r;
  int64_t bytes;
} sum;

static int visit(void *ud, uint32_t line, kt_tri in, kt_pp_run *run) {
  sum *s = ud;
  const rule *r = s->r;
  const kt_pp_token *tok;
  size_t ntok;
  tok = kt_pp_tokens(r->pp, &ntok);
  for (size_t k = 0; in == KT_YES && k < r->narrays; k++) {
    const array *a = &r->arrays[k];
    if (a->line != line) continue;
    int64_t bytes = a->elem, bound;
    bool known = true;
    for (int d = 0; d < a->dims && known; d++) {
      known = kt_pp_eval(run, tok + a->dim[d], a->ndim[d], sizer, (void *)r, &bound) == KT_YES &&
              bound > 0 && bound <= INT64_MAX / 2 / bytes;
      if (known) bytes *= bound;
    }
    if (known && s->bytes <= INT64_MAX / 2 - bytes) s->bytes += bytes;
  }
  return 0;
}

static int check(const kt_value *const *vals, size_t n, void *ud, kt_error *err) {
  rule *r = ud;
  size_t ndefs = r->nopts + n;
  kt_pp_define *defs = kt_calloc(ndefs + 1, sizeof *defs, err);
  char **texts = kt_calloc(n + 1, sizeof *texts, err);
  int rc = defs && texts ? 0 : -1;
  for (size_t i = 0; i < r->nopts; i++) defs[i] = r->opts[i];
  for (size_t i = 0; rc == 0 && i < n; i++) {
    size_t size = (size_t)kt_value_format(vals[i], NULL, 0) + 4; /* a float's ".0" */
    if (!(texts[i] = kt_alloc(size, err))) rc = -1;
    else kt_value_format(vals[i], texts[i], size);
    defs[r->nopts + i] = (kt_pp_define){r->names[i], texts[i]};
  }
  sum s = {r, 0};
  if (rc == 0)
    rc = kt_pp_walk(r->pp, defs, ndefs, r->includes, r->lines, r->nlines, visit, &s, err);
  for (size_t i = 0; texts && i < n; i++) free(texts[i]);
  free(texts);
  free(defs);
  return rc ? -1 : s.bytes <= r->limit;
}

static int by_line(const void *x, const void *y) {
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return (a > b) - (a < b);
}

/* r's arrays' lines, ascending, once each. */
static int index_lines(rule *r, kt_error *err) {
  if (!(r->lines = kt_calloc(r->narrays, sizeof *r->lines, err))) return -1;
  for (size_t i = 0; i < r->narrays; i++) r->lines[i] = r->arrays[i].line;
  qsort(r->lines, r->narrays, sizeof *r->lines, by_line);
  for (size_t i = 0; i < r->narrays; i++)
    if (r->nlines == 0 || r->lines[r->nlines - 1] != r->lines[i]) r->lines[r->nlines++] = r->lines[i];
  return 0;
}

int kt_prune_static_local(kt_task *t, size_t ki, const kt_device_info *dev, kt_error *err) {
  const kt_kernel *k = t->kernels[ki];
  bool cuda = strcmp(dev->backend->name, "cuda") == 0;
  int64_t limit = kt_device_int(dev, cuda ? "shared_per_block" : "local_memory", 0);
  if (k->gen || !k->source || limit <= 0) return 0;
  rule *r = kt_calloc(1, sizeof *r, err);
  if (!r) return -1;
  *r = (rule){.cuda = cuda, .limit = limit};
  scan s = {0};
  int rc = (r->pp = kt_pp_new(k->source, err)) ? 0 : -1;
  if (rc == 0) {
    s = (scan){r->pp, NULL, 0, 0, 0};
    s.tok = kt_pp_tokens(r->pp, &s.ntok);
  }
  if (rc == 0 && s.ntok && find_body(&s, k->name, cuda) == 0)
    rc = find_arrays(r, &s, err) || read_options(r, k->build_options, err) ||
                 read_names(r, t->space, err) || index_lines(r, err)
             ? -1 : 0;
  if (rc || r->narrays == 0 || r->nnames == 0) { /* nothing a parameter can change */
    rule_free(r);
    return rc;
  }
  char label[200];
  snprintf(label, sizeof label, "kernel %s: its %s arrays within the device's %" PRId64 " bytes",
           k->name, cuda ? "__shared__" : "__local", limit);
  kt_constraint_def d = {(const char *const *)r->names, r->nnames, check, NULL, r, rule_free,
                         label, KT_PRUNE_LOCAL_MEMORY, true};
  return kt_space_add_constraint_def(t->space, &d, err);
}
