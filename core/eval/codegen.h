/*
** codegen.h: kernel sources written per configuration (code generation).
** A kernel with a generator has no fixed source: the generator gives the
** text for each configuration, and the final source (the parameters'
** #defines, then that text) is what the program cache keys on, so that
** configurations whose texts come out equal compile once.
**
** Generators are user code (Lua): they run on the thread that owns the
** tuning, never on the compile threads, when a configuration is proposed
** (before its compile starts ahead) and when it is prepared. A kernel
** remembers the texts of its last KT_CODEGEN_MEMO configurations, so that
** the generator runs once per configuration unless more than that many
** are in flight.
*/
#ifndef KT_CODEGEN_H
#define KT_CODEGEN_H

#include "task.h"

#define KT_CODEGEN_MEMO 64

/* Writes the configuration's source into *text (malloc'd) and returns 0;
** returns 1 when the generator failed, with *text saying why (malloc'd,
** the configuration's error); -1 on a fatal error (err). */
typedef int (*kt_source_fn)(const kt_config *cfg, char **text, void *ud, kt_error *err);

typedef struct kt_codegen kt_codegen;

/* Takes ownership of cb (also on error). */
kt_codegen *kt_codegen_new(kt_source_fn fn, kt_callback cb, kt_error *err);
void kt_codegen_free(kt_codegen *g);

/* Forgets the texts the task's kernels remembered. */
void kt_codegen_forget(const kt_task *t);

/* The final source of kernel k (of task t) under cfg: 0 with *source
** (malloc'd); 1 when k's generator failed for cfg, with *why (malloc'd);
** -1 on a fatal error. */
int kt_final_source(const kt_task *t, const kt_kernel *k, const kt_config *cfg, char **source,
                    char **why, kt_error *err);

#endif
