/*
** nvrtc.h: compiling CUDA C++ with NVRTC, for the CUDA backend and for
** checking kernels on a machine without a GPU (only libnvrtc is needed).
**
** Kernels are found by name expressions: "vadd" for an extern "C" kernel
** or any plain __global__ function, "vadd<float, 4>" for a template
** instance. A name expression is compiled with the program, so macros in
** it expand: "vadd<float, VEC>" instantiates the template with the VEC of
** the configuration being compiled.
*/
#ifndef KT_NVRTC_H
#define KT_NVRTC_H

#include "kt.h"

/* Why there is no CUDA in a build made without cuda.h. */
#define KT_CUDA_NOT_BUILT \
  "ktlua was built without the CUDA headers (no cuda.h at build time, see CUDA_INC in the Makefile)"

typedef struct kt_nvrtc_job {
  const char *source;
  const char *origin;  /* the program's name in the compiler's messages */
  const char *options; /* split at white space */
  const char *arch;    /* "sm_90" (machine code), "compute_90" (PTX); NULL or
                       ** "": the options' choice, else NVRTC's default */
  const char *const *names; /* name expressions of the kernels wanted */
  size_t nnames;
} kt_nvrtc_job;

typedef struct kt_nvrtc_out {
  char *ptx;          /* NUL-terminated */
  char *cubin;        /* machine code when compiled for a real (sm_) arch */
  size_t cubin_size;
  char **lowered;     /* per name: the symbol to ask the driver for */
  size_t nlowered;
  char *log;          /* the compiler's messages, "" when none */
} kt_nvrtc_out;

/* Returns 0 on success, 1 when the source does not compile (out->log says
** why), -1 when NVRTC is missing or fails (err). out is always left for
** kt_nvrtc_out_clear. */
int kt_nvrtc_compile(const kt_nvrtc_job *job, kt_nvrtc_out *out, kt_error *err);
void kt_nvrtc_out_clear(kt_nvrtc_out *out);

/* The text of a header that ktlua gives NVRTC under name (every program
** may include it: <math.h>), or NULL. */
const char *kt_nvrtc_builtin_header(const char *name);

#endif
