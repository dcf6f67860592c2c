/*
** remote_counters.c: hardware counters (backend.h's counters_begin and
** counters_end) of a context in a device process: the tuner's side
** (backend_remote.c's table) and the server's (server.c), one request and
** one reply each. A reply carries counters_*'s own return code, so that
** "cannot be read here" (1) stays apart from an error.
*/
#include <math.h>
#include <stdlib.h>

#include "remote.h"
#include "remote_int.h"

enum { CODE_OK = 0, CODE_UNREADABLE = 1, CODE_ERROR = 2 };

/* ---- the tuner's side ---- */

/* The reply's code as the backend's return code, err from its text. */
static int take_code(kt_bctx *c, kt_error *err) {
  uint32_t code = kt_msg_get_u32(&c->in);
  if (code == CODE_OK) return 0;
  char *why = kt_msg_get_str(&c->in);
  kt_fail(err, "%s", why ? why : "hardware counters failed in the device process");
  free(why);
  return code == CODE_UNREADABLE ? 1 : -1;
}

int rm_counters_begin(kt_bctx *c, const char *const *names, size_t n, unsigned *passes,
                      kt_error *err) {
  kt_fault fault;
  if (begin(c, OP_COUNTERS_BEGIN, err)) return -1;
  kt_msg_put_u32(&c->out, passes != NULL); /* 0: only prepare */
  kt_msg_put_u32(&c->out, (uint32_t)n);
  for (size_t i = 0; i < n; i++) kt_msg_put_str(&c->out, names[i]);
  if (call(c, &fault, err)) return -1;
  int rc = take_code(c, err);
  unsigned got = rc == 0 ? kt_msg_get_u32(&c->in) : 0;
  if (passes) *passes = got;
  return rc;
}

int rm_counters_end(kt_bctx *c, double *values, size_t n, unsigned *ranges, kt_error *err) {
  kt_fault fault;
  if (begin(c, OP_COUNTERS_END, err)) return -1;
  kt_msg_put_u32(&c->out, (uint32_t)n);
  if (call(c, &fault, err)) return -1;
  int rc = take_code(c, err);
  *ranges = rc == 0 ? kt_msg_get_u32(&c->in) : 0;
  for (size_t i = 0; i < n; i++) values[i] = rc == 0 ? kt_msg_get_f64(&c->in) : NAN;
  return rc;
}

/* ---- the server's side ---- */

static void reply_code(kt_msg *out, int rc, const kt_error *err) {
  kt_msg_reset(out);
  kt_msg_put_u32(out, KT_FAULT_NONE);
  kt_msg_put_u32(out, rc == 0 ? CODE_OK : rc == 1 ? CODE_UNREADABLE : CODE_ERROR);
  if (rc) kt_msg_put_str(out, err->msg);
}

static int no_counters(const kt_backend *be, kt_error *err) {
  return kt_fail(err, "hardware counters: the %s backend has none (only CUDA has them, "
                 "through CUPTI)", be->name);
}

static bool serve_begin(const kt_backend *be, kt_bctx *ctx, kt_msg *in, kt_msg *out) {
  kt_error err;
  bool start = kt_msg_get_u32(in) != 0;
  uint32_t n = kt_msg_get_u32(in);
  char **names = calloc(n ? n : 1, sizeof *names);
  int rc = names ? 0 : kt_fail(&err, "out of memory in the device server");
  for (uint32_t i = 0; rc == 0 && i < n; i++)
    if (!(names[i] = kt_msg_get_str(in)))
      rc = kt_fail(&err, "hardware counters: a name is missing");
  unsigned passes = 0;
  if (rc == 0)
    rc = be->counters_begin ? be->counters_begin(ctx, (const char *const *)names, n,
                                                 start ? &passes : NULL, &err)
                            : no_counters(be, &err);
  for (uint32_t i = 0; names && i < n; i++) free(names[i]);
  free(names);
  reply_code(out, rc, &err);
  if (rc == 0) kt_msg_put_u32(out, passes);
  return rc == 0 && start;
}

static void serve_end(const kt_backend *be, kt_bctx *ctx, kt_msg *in, kt_msg *out) {
  kt_error err;
  uint32_t n = kt_msg_get_u32(in);
  double *values = calloc(n ? n : 1, sizeof *values);
  unsigned ranges = 0;
  int rc = !values ? kt_fail(&err, "out of memory in the device server")
           : be->counters_end ? be->counters_end(ctx, values, n, &ranges, &err)
                              : no_counters(be, &err);
  reply_code(out, rc, &err);
  if (rc == 0) {
    kt_msg_put_u32(out, ranges);
    for (uint32_t i = 0; i < n; i++) kt_msg_put_f64(out, values[i]);
  }
  free(values);
}

bool kt_server_counters(const kt_backend *be, kt_bctx *ctx, uint32_t op, kt_msg *in,
                        kt_msg *out) {
  kt_error err;
  if (!ctx) reply_code(out, kt_fail(&err, "hardware counters: no device is open"), &err);
  else if (op == OP_COUNTERS_BEGIN) return serve_begin(be, ctx, in, out);
  else serve_end(be, ctx, in, out);
  return false;
}
