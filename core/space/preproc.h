/*
** preproc.h: what a C preprocessor would make of a kernel's source under
** given macros (a configuration's parameters, the -D options), as far as
** it can be known before compiling: which lines it leaves in, and the
** value of integer constant expressions there (an array's bounds).
**
** Three-valued: what depends on something not in the source (a header's
** macros, the compiler's own: __CUDA_ARCH__, cl_khr_fp64, ...; # and ##,
** variadic macros, a value that is no integer) is unknown, never guessed.
** An identifier that no #define defines counts as undefined (0 in #if, as
** C says) only where no #include came before and its name is none that a
** compiler may predefine (reserved names, __x and _X; CL_, cl_, CUDA, M_,
** FLT_ and the other families of limits): else it is unknown. A macro
** defined or undefined on a line that may or may not be in is unknown
** from there on. Arithmetic is on 64-bit signed integers.
*/
#ifndef KT_PREPROC_H
#define KT_PREPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kt.h"

typedef enum kt_tri { KT_NO = 0, KT_YES = 1, KT_UNKNOWN = 2 } kt_tri;

typedef enum kt_pp_kind { KT_PP_IDENT, KT_PP_NUMBER, KT_PP_STRING, KT_PP_CHAR, KT_PP_PUNCT }
    kt_pp_kind;

typedef struct kt_pp_token {
  const char *at;  /* into the text kt_pp_new copied */
  uint32_t len;
  uint8_t kind;    /* kt_pp_kind */
  bool space;      /* white space (or a comment) before it */
  uint32_t line;   /* its logical line (line splices joined), from 0 */
} kt_pp_token;

typedef struct kt_pp kt_pp;

/* The source, read into tokens and lines (comments and line splices gone). */
kt_pp *kt_pp_new(const char *text, kt_error *err);
void kt_pp_free(kt_pp *pp);
const kt_pp_token *kt_pp_tokens(const kt_pp *pp, size_t *n);
/* Whether a logical line is a directive (its first token is #). */
bool kt_pp_is_directive(const kt_pp *pp, uint32_t line);
/* Whether the source holds an #include (or #import, #include_next). */
bool kt_pp_includes(const kt_pp *pp);
/* Whether a token is the text s. */
bool kt_pp_is(const kt_pp_token *t, const char *s);

/* A macro defined before the source (value: its replacement text; NULL:
** undefined, as -U does). */
typedef struct kt_pp_define {
  const char *name, *value;
} kt_pp_define;

typedef struct kt_pp_run kt_pp_run;

/* The size of a type named by n tokens (sizeof), -1 where unknown. */
typedef int64_t (*kt_pp_sizer)(const kt_pp_token *t, size_t n, void *ud);

/* Walks the source's directives under defs (in order), with includes set
** when something is read before the source that ktlua does not see (an
** -include option). At each code line of lines (ascending), visit gets
** whether the line is in, and the run, for kt_pp_eval there; a visit
** returning non-zero ends the walk with that. Returns 0, the visit's
** non-zero, or -1 with err when memory runs out. Thread-safe for one pp. */
int kt_pp_walk(const kt_pp *pp, const kt_pp_define *defs, size_t ndefs, bool includes,
               const uint32_t *lines, size_t nlines,
               int (*visit)(void *ud, uint32_t line, kt_tri in, kt_pp_run *run), void *ud,
               kt_error *err);

/* The value of the integer constant expression of n tokens, the macros
** as they are at the line being visited: KT_YES with *value, or
** KT_UNKNOWN (an identifier left after expansion, a syntax the evaluator
** does not know, a division by zero, a type that sizer cannot size). */
kt_tri kt_pp_eval(kt_pp_run *run, const kt_pp_token *t, size_t n, kt_pp_sizer sizer,
                  void *sizer_ud, int64_t *value);

#endif
