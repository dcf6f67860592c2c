/*
** nvrtc_apart.c: compiling CUDA C++ in a child process (see remote.h):
** the child compiles and sends the outcome back as one message.
*/
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "apart.h"
#include "nvrtc.h"
#include "remote.h"
#include "wire.h"

static void put_outcome(kt_msg *m, int rc, const kt_error *err, const kt_nvrtc_out *out) {
  kt_msg_put_u32(m, (uint32_t)(rc + 1)); /* -1, 0, 1 travel as 0, 1, 2 */
  kt_msg_put_str(m, rc < 0 ? err->msg : NULL);
  kt_msg_put_str(m, out->ptx);
  kt_msg_put_u64(m, out->cubin ? out->cubin_size : UINT64_MAX);
  if (out->cubin) kt_msg_put(m, out->cubin, out->cubin_size);
  kt_msg_put_u32(m, (uint32_t)out->nlowered);
  for (size_t i = 0; i < out->nlowered; i++) kt_msg_put_str(m, out->lowered[i]);
  kt_msg_put_str(m, out->log);
}

static int get_outcome(kt_msg *m, kt_nvrtc_out *out, kt_error *err) {
  int rc = (int)kt_msg_get_u32(m) - 1;
  char *why = kt_msg_get_str(m);
  if (rc < 0) kt_fail(err, "%s", why ? why : "the compile process failed");
  free(why);
  out->ptx = kt_msg_get_str(m);
  uint64_t size = kt_msg_get_u64(m);
  if (size != UINT64_MAX && !m->bad && m->len - m->at >= size) {
    if ((out->cubin = malloc(size ? size : 1))) kt_msg_get(m, out->cubin, size);
    out->cubin_size = size;
  }
  uint32_t n = kt_msg_get_u32(m);
  if (!m->bad && n && (out->lowered = calloc(n, sizeof *out->lowered))) {
    for (uint32_t i = 0; i < n; i++) out->lowered[i] = kt_msg_get_str(m);
    out->nlowered = n;
  }
  out->log = kt_msg_get_str(m);
  if (m->bad) return kt_fail(err, "the compile process sent a short answer");
  return rc;
}

typedef struct compile_job {
  const kt_nvrtc_job *job;
  kt_nvrtc_out *out;
} compile_job;

static void compile_in_child(kt_msg *m, void *ud) {
  compile_job *c = ud;
  kt_error cerr;
  int rc = kt_nvrtc_compile(c->job, c->out, &cerr);
  put_outcome(m, rc, &cerr, c->out);
}

int kt_nvrtc_compile_apart(const kt_nvrtc_job *job, kt_nvrtc_out *out, kt_error *err) {
  memset(out, 0, sizeof *out);
  kt_msg m;
  int w = kt_apart(compile_in_child, &(compile_job){job, out}, 0, &m);
  int rc = w == KT_WIRE_OK ? get_outcome(&m, out, err)
           : w < 0         ? kt_fail(err, "cannot start a compile process")
                           : kt_fail(err, "the compile process died before answering");
  kt_msg_free(&m);
  return rc;
}
