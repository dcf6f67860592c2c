/*
** nvrtc.c: compiling CUDA C++ with NVRTC.
*/
#include "nvrtc.h"

#include <stdlib.h>
#include <string.h>

void kt_nvrtc_out_clear(kt_nvrtc_out *out) {
  free(out->ptx);
  free(out->cubin);
  for (size_t i = 0; i < out->nlowered; i++) free(out->lowered[i]);
  free(out->lowered);
  free(out->log);
  memset(out, 0, sizeof *out);
}

/* The standard headers NVRTC has the contents of built in but cannot open
** (it has no host headers): CUDA's math functions are NVRTC builtins, so
** <math.h> adds only the C library's M_ constants. Given to every program;
** NVRTC reads one only where the source includes it. */
static const char *const builtin_names[] = {"math.h"};
static const char *const builtin_texts[] = {
    "#pragma once\n"
    "/* ktlua: CUDA's math functions are NVRTC builtins; these are the C library's constants */\n"
    "#ifndef M_E\n#define M_E 2.7182818284590452354\n#endif\n"
    "#ifndef M_LOG2E\n#define M_LOG2E 1.4426950408889634074\n#endif\n"
    "#ifndef M_LOG10E\n#define M_LOG10E 0.43429448190325182765\n#endif\n"
    "#ifndef M_LN2\n#define M_LN2 0.69314718055994530942\n#endif\n"
    "#ifndef M_LN10\n#define M_LN10 2.30258509299404568402\n#endif\n"
    "#ifndef M_PI\n#define M_PI 3.14159265358979323846\n#endif\n"
    "#ifndef M_PI_2\n#define M_PI_2 1.57079632679489661923\n#endif\n"
    "#ifndef M_PI_4\n#define M_PI_4 0.78539816339744830962\n#endif\n"
    "#ifndef M_1_PI\n#define M_1_PI 0.31830988618379067154\n#endif\n"
    "#ifndef M_2_PI\n#define M_2_PI 0.63661977236758134308\n#endif\n"
    "#ifndef M_2_SQRTPI\n#define M_2_SQRTPI 1.12837916709551257390\n#endif\n"
    "#ifndef M_SQRT2\n#define M_SQRT2 1.41421356237309504880\n#endif\n"
    "#ifndef M_SQRT1_2\n#define M_SQRT1_2 0.70710678118654752440\n#endif\n"};
#define NBUILTIN_HEADERS ((int)(sizeof builtin_names / sizeof *builtin_names))

const char *kt_nvrtc_builtin_header(const char *name) {
  for (int i = 0; i < NBUILTIN_HEADERS; i++)
    if (strcmp(name, builtin_names[i]) == 0) return builtin_texts[i];
  return NULL;
}

#ifdef KT_HAVE_CUDA

#include <stdio.h>

#include "cuda_lib.h"

/* The options as NVRTC wants them: an argument list, with the target
** architecture and the toolkit's headers added unless given. */
typedef struct option_list {
  char *text; /* the options, cut at white space */
  const char **argv;
  int argc;
  char arch[64], include[1100];
} option_list;

static bool names_arch(const char *opt) {
  return strncmp(opt, "-arch", 5) == 0 || strncmp(opt, "--gpu-architecture", 18) == 0;
}

static int option_list_make(option_list *o, const kt_nvrtc_job *job, const char *include_dir,
                            kt_error *err) {
  memset(o, 0, sizeof *o);
  const char *options = job->options ? job->options : "";
  if (!(o->text = kt_strdup(options, err)) ||
      !(o->argv = kt_calloc(strlen(options) / 2 + 3, sizeof *o->argv, err)))
    return -1;
  bool has_arch = false;
  for (char *save = NULL, *tok = strtok_r(o->text, " \t\r\n", &save); tok;
       tok = strtok_r(NULL, " \t\r\n", &save)) {
    has_arch = has_arch || names_arch(tok);
    o->argv[o->argc++] = tok;
  }
  if (!has_arch && job->arch && job->arch[0]) {
    snprintf(o->arch, sizeof o->arch, "--gpu-architecture=%s", job->arch);
    o->argv[o->argc++] = o->arch;
  }
  if (include_dir[0]) {
    snprintf(o->include, sizeof o->include, "--include-path=%s", include_dir);
    o->argv[o->argc++] = o->include;
  }
  return 0;
}


/* Whether source has `#include <name>` or `#include "name"`. */
static bool includes(const char *source, const char *name) {
  size_t n = strlen(name);
  for (const char *at = strstr(source, "include"); at; at = strstr(at + 1, "include")) {
    const char *p = at + 7;
    while (*p == ' ' || *p == '\t') p++;
    if ((*p == '<' || *p == '"') && strncmp(p + 1, name, n) == 0 &&
        p[1 + n] == (*p == '<' ? '>' : '"'))
      return true;
  }
  return false;
}

/* A failed compile's log says which headers ktlua gave. */
static char *note_builtins(const char *source, char *log) {
  for (int i = 0; i < NBUILTIN_HEADERS && log; i++) {
    if (!includes(source, builtin_names[i])) continue;
    const char *fmt = "%s(ktlua: <%s> was given as NVRTC's built-in CUDA math functions and the "
                      "C library's M_ constants; NVRTC has no host headers)\n";
    int n = snprintf(NULL, 0, fmt, log, builtin_names[i]);
    char *longer = n < 0 ? NULL : malloc((size_t)n + 1);
    if (longer) snprintf(longer, (size_t)n + 1, fmt, log, builtin_names[i]);
    free(log);
    log = longer;
  }
  return log;
}

static void option_list_clear(option_list *o) {
  free(o->text);
  free(o->argv);
}

static int nvrtc_fail(const kt_cuda_lib *lib, kt_error *err, nvrtcResult r, const char *what) {
  return kt_fail(err, "%s failed: %s", what, lib->nvrtc.GetErrorString(r));
}

static char *program_log(const kt_cuda_lib *lib, nvrtcProgram p) {
  size_t size = 0;
  if (lib->nvrtc.GetProgramLogSize(p, &size) != NVRTC_SUCCESS) size = 0;
  char *log = calloc(size + 1, 1);
  if (log && size) lib->nvrtc.GetProgramLog(p, log);
  return log;
}

/* The compiled program's PTX, machine code and lowered names. */
static int collect(const kt_cuda_lib *lib, nvrtcProgram p, const kt_nvrtc_job *job,
                   kt_nvrtc_out *out, kt_error *err) {
  size_t ptx = 0;
  if (lib->nvrtc.GetPTXSize(p, &ptx) == NVRTC_SUCCESS && ptx) {
    if (!(out->ptx = kt_calloc(ptx + 1, 1, err))) return -1;
    lib->nvrtc.GetPTX(p, out->ptx);
  }
  size_t cubin = 0;
  if (lib->nvrtc.GetCUBINSize(p, &cubin) == NVRTC_SUCCESS && cubin) {
    if (!(out->cubin = kt_alloc(cubin, err))) return -1;
    lib->nvrtc.GetCUBIN(p, out->cubin);
    out->cubin_size = cubin;
  }
  if (job->nnames && !(out->lowered = kt_calloc(job->nnames, sizeof *out->lowered, err)))
    return -1;
  for (size_t i = 0; i < job->nnames; i++) {
    const char *lowered = NULL;
    nvrtcResult r = lib->nvrtc.GetLoweredName(p, job->names[i], &lowered);
    if (r != NVRTC_SUCCESS) return nvrtc_fail(lib, err, r, "nvrtcGetLoweredName");
    if (!(out->lowered[i] = kt_strdup(lowered, err))) return -1;
    out->nlowered = i + 1;
  }
  return 0;
}

/* Returns 1 when the source does not compile. */
static int compile_program(const kt_cuda_lib *lib, nvrtcProgram p, const kt_nvrtc_job *job,
                           kt_nvrtc_out *out, kt_error *err) {
  for (size_t i = 0; i < job->nnames; i++) {
    nvrtcResult r = lib->nvrtc.AddNameExpression(p, job->names[i]);
    if (r != NVRTC_SUCCESS) return nvrtc_fail(lib, err, r, "nvrtcAddNameExpression");
  }
  option_list o;
  if (option_list_make(&o, job, lib->include_dir, err)) {
    option_list_clear(&o);
    return -1;
  }
  nvrtcResult r = lib->nvrtc.CompileProgram(p, o.argc, o.argv);
  option_list_clear(&o);
  if (!(out->log = program_log(lib, p))) return kt_fail(err, "out of memory for a compiler log");
  if (r == NVRTC_SUCCESS) return collect(lib, p, job, out, err);
  if (!out->log[0]) {
    free(out->log);
    out->log = strdup(lib->nvrtc.GetErrorString(r));
  }
  if (!(out->log = note_builtins(job->source, out->log)))
    return kt_fail(err, "out of memory for a compiler log");
  return 1;
}

int kt_nvrtc_compile(const kt_nvrtc_job *job, kt_nvrtc_out *out, kt_error *err) {
  memset(out, 0, sizeof *out);
  const kt_cuda_lib *lib = kt_cuda_nvrtc_get();
  if (!lib->nvrtc_ok) return kt_fail(err, "%s", lib->nvrtc_why);
  nvrtcProgram p;
  nvrtcResult r = lib->nvrtc.CreateProgram(&p, job->source, job->origin, NBUILTIN_HEADERS,
                                            builtin_texts, builtin_names);
  if (r != NVRTC_SUCCESS) return nvrtc_fail(lib, err, r, "nvrtcCreateProgram");
  int rc = compile_program(lib, p, job, out, err);
  lib->nvrtc.DestroyProgram(&p);
  return rc;
}

#else

int kt_nvrtc_compile(const kt_nvrtc_job *job, kt_nvrtc_out *out, kt_error *err) {
  (void)job;
  memset(out, 0, sizeof *out);
  return kt_fail(err, KT_CUDA_NOT_BUILT);
}

#endif
