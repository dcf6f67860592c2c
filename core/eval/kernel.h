/*
** kernel.h: a kernel as the user defines it: source, function name,
** default sizes, compiler options and arguments.
*/
#ifndef KT_KERNEL_H
#define KT_KERNEL_H

#include "arg.h"

/* What the global size means: OpenCL counts work-items, CUDA counts
** blocks (work-groups). */
typedef enum kt_notation { KT_NOTATION_OPENCL, KT_NOTATION_CUDA } kt_notation;

typedef struct kt_kernel {
  int refs;
  char *name;     /* function name */
  char *source;   /* with a generator: what identifies it (journals, databases) */
  struct kt_codegen *gen; /* writes the source per configuration (codegen.h); NULL: none */
  char *origin;   /* file the source came from, or "<string>" */
  char *options;  /* compiler options, as given */
  char *folder;   /* the source file's folder, on the include path; NULL: none */
  char *build_options; /* what compiles get: -I <folder>, then options */
  int dims;       /* 1 to 3 */
  size_t global[3], local[3]; /* local[0] == 0: the runtime chooses */
  kt_notation notation;
  bool round_global; /* round the global size up to a multiple of local */
  kt_arg **args;
  size_t nargs;
  unsigned pins; /* tunings and runs of tasks holding it (kt_task_pin) */
  unsigned online; /* ... of which online tunings */
} kt_kernel;

kt_kernel *kt_kernel_new(const char *name, const char *source, const char *origin,
                         kt_error *err);
void kt_kernel_retain(kt_kernel *k);
void kt_kernel_release(kt_kernel *k);
int kt_kernel_set_options(kt_kernel *k, const char *options, kt_error *err);
/* The folder of the file the source came from (absolute), searched for the
** headers it includes, as nvcc and clang search the source file's own
** folder: -I <folder> comes before the options. NULL: none. A folder whose
** name holds white space or a quote is not added (options are split at
** white space): its headers are found only where the compiler looks
** anyway (the working folder). */
int kt_kernel_set_folder(kt_kernel *k, const char *folder, kt_error *err);
/* dims 1..3; every size positive; local may be NULL (runtime chooses). */
int kt_kernel_set_sizes(kt_kernel *k, int dims, const size_t *global,
                        const size_t *local, kt_error *err);
/* Replaces the argument list; the kernel retains each argument. */
int kt_kernel_set_args(kt_kernel *k, kt_arg *const *args, size_t n, kt_error *err);

#endif
