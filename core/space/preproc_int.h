/*
** preproc_int.h: the parts of preproc.h's preprocessor that share a walk's
** state: its macros (preproc_expr.c: expansion and evaluation) and its
** directives (preproc.c).
*/
#ifndef KT_PREPROC_INT_H
#define KT_PREPROC_INT_H

#include "preproc.h"

typedef struct pp_macro {
  const kt_pp_token *name;
  const kt_pp_token *params, *body;
  size_t nparams, nbody;
  bool function, variadic, pasting; /* pasting: # or ## in its body */
  kt_tri state;                     /* KT_NO: undefined (#undef, -U) */
} pp_macro;

typedef struct pp_tokbuf {
  kt_pp_token *t;
  size_t n, cap;
} pp_tokbuf;

struct kt_pp_run {
  pp_macro *m;
  size_t nm, capm;
  const pp_macro **hide; /* the macros being expanded */
  size_t nhide, caphide;
  bool includes;      /* a header came before: an undefined name may be its */
  bool oom;
};

/* A macro of the walk, the last one named so (NULL: none). */
const pp_macro *pp_find(const kt_pp_run *r, const kt_pp_token *name);
/* Whether a name is defined: unknown for one that may be the compiler's
** or a header's (preproc.h). */
kt_tri pp_defined(const kt_pp_run *r, const kt_pp_token *name);
/* The macro a #define line's tokens t[0..n) make (t[0] its name). */
pp_macro pp_read_define(const kt_pp_token *t, size_t n);
void pp_add_macro(kt_pp_run *r, pp_macro m);
/* An #if's condition t[0..n): defined, then the macros expanded. */
kt_tri pp_condition(kt_pp_run *r, const kt_pp_token *t, size_t n);

#endif
