/*
** probe.c: the device probes (probe.h) on an open context.
**
** Transfers are timed with the host clock around blocking calls: what a
** program waits for is the figure, latency included. Kernels are timed with
** device events, as tunings time them, so that the cost model predicts
** what a tuning measures; the launch floor is also given as the host sees
** it (a launch and the wait for it).
*/
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

void kt_probe_free(kt_probe *p) {
  free(p->rows);
  free(p->notes);
  memset(p, 0, sizeof *p);
}

int kt_probe_add(kt_probe *p, const kt_probe_row *row, kt_error *err) {
  if (kt_grow(&p->rows, &p->cap, p->n + 1, sizeof *p->rows, err)) return -1;
  p->rows[p->n++] = *row;
  return 0;
}

int kt_probe_note(kt_probe *p, const char *note, kt_error *err) {
  size_t old = p->notes ? strlen(p->notes) : 0, len = strlen(note);
  char *s = realloc(p->notes, old + len + 2);
  if (!s) return kt_fail(err, "out of memory");
  if (old) s[old++] = '\n';
  memcpy(s + old, note, len + 1);
  p->notes = s;
  return 0;
}

/* ---- repetition to a target relative standard error ---- */

typedef int (*sample_fn)(void *st, double *ns, kt_error *err);

/* One untimed run, then timed ones until the rse of their mean is below
** the target (after min_reps) or max_reps have run. */
static int measure(const kt_probe_opts *o, sample_fn f, void *st, kt_probe_row *r,
                   kt_error *err) {
  double *x = kt_calloc(o->max_reps, sizeof *x, err), warm;
  if (!x) return -1;
  int rc = f(st, &warm, err);
  uint32_t n = 0;
  while (rc == 0 && n < o->max_reps) {
    rc = f(st, &x[n++], err);
    if (rc == 0 && n >= o->min_reps && kt_rse(x, n) < o->rse) break;
  }
  if (rc == 0) {
    r->reps = n;
    r->mean_ns = kt_mean(x, n);
    r->rse = kt_rse(x, n);
    r->capped = !(r->rse < o->rse);
  }
  free(x);
  return rc;
}

static void row_name(kt_probe_row *r, const char *kind, const char *name, uint64_t size) {
  memset(r, 0, sizeof *r);
  snprintf(r->kind, sizeof r->kind, "%s", kind);
  snprintf(r->name, sizeof r->name, "%s", name);
  r->size = size;
}

/* ---- transfers ---- */

typedef struct xfer {
  const kt_backend *be;
  kt_bctx *ctx;
  kt_bbuf *dev;
  void *host;
  size_t bytes;
  bool to_device;
} xfer;

static int xfer_sample(void *st, double *ns, kt_error *err) {
  xfer *x = st;
  int64_t t0 = kt_now_ns();
  int rc = x->to_device ? x->be->buffer_write(x->ctx, 0, x->dev, 0, x->bytes, x->host, true, err)
                        : x->be->buffer_read(x->ctx, 0, x->dev, 0, x->bytes, x->host, true, err);
  *ns = (double)(kt_now_ns() - t0);
  return rc;
}

static int transfers_with(xfer *x, const char *kind, const kt_probe_opts *o, kt_probe *out,
                          kt_error *err) {
  for (int dir = 0; dir < 2; dir++) {
    x->to_device = dir == 0;
    for (size_t i = 0; i < o->nsizes; i++) {
      kt_probe_row r;
      row_name(&r, x->to_device ? "h2d" : "d2h", kind, o->sizes[i]);
      x->bytes = (size_t)o->sizes[i];
      if (measure(o, xfer_sample, x, &r, err)) return -1;
      r.value = (double)r.size / r.mean_ns; /* bytes per ns = GB/s */
      if (kt_probe_add(out, &r, err)) return -1;
    }
  }
  return 0;
}

/* Pinned memory where the backend has it; a note where it has none. */
static int pinned_transfers(xfer *x, size_t most, const kt_probe_opts *o, kt_probe *out,
                            kt_error *err) {
  kt_error perr;
  snprintf(perr.msg, sizeof perr.msg, "the backend has no pinned host memory");
  const kt_backend *be = x->be;
  kt_bbuf *pinned = be->host_memory
                        ? be->buffer_new(x->ctx, most, KT_PLACE_HOST, KT_READ_WRITE, &perr)
                        : NULL;
  x->host = pinned ? be->host_memory(x->ctx, pinned, &perr) : NULL;
  int rc;
  if (x->host) {
    memset(x->host, 1, most);
    rc = transfers_with(x, "pinned", o, out, err);
  } else {
    char why[KT_ERRMAX + 32];
    snprintf(why, sizeof why, "pinned transfers: %s", perr.msg);
    rc = kt_probe_note(out, why, err);
  }
  x->host = NULL;
  if (pinned) be->buffer_free(x->ctx, pinned);
  return rc;
}

static int probe_transfers(const kt_backend *be, kt_bctx *ctx, const kt_probe_opts *o,
                           kt_probe *out, kt_error *err) {
  size_t most = 1;
  for (size_t i = 0; i < o->nsizes; i++)
    if (o->sizes[i] > most) most = (size_t)o->sizes[i];
  xfer x = {.be = be, .ctx = ctx};
  int rc = -1;
  x.dev = be->buffer_new(ctx, most, KT_PLACE_DEVICE, KT_READ_WRITE, err);
  void *pageable = x.dev ? kt_alloc(most, err) : NULL;
  if (pageable) {
    memset(pageable, 1, most); /* its pages exist before the first transfer */
    x.host = pageable;
    rc = transfers_with(&x, "pageable", o, out, err);
    free(pageable);
  }
  if (rc == 0) rc = pinned_transfers(&x, most, o, out, err);
  if (x.dev) be->buffer_free(ctx, x.dev);
  return rc;
}

/* ---- kernels ---- */

static const char prelude_cl[] =
    "#define KERNEL __kernel\n#define GLOBAL __global\n#define GID ((uint)get_global_id(0))\n"
    "#ifdef FP64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n";
static const char prelude_cu[] =
    "#define KERNEL extern \"C\" __global__\n#define GLOBAL\n"
    "#define GID (blockIdx.x * blockDim.x + threadIdx.x)\ntypedef unsigned int uint;\n";

/* Eight independent chains, so that a device with deep pipelines keeps
** them full; each step is one operation of the kind measured. */
static const char kernels[] =
    "KERNEL void probe_empty(void) {}\n"
    "KERNEL void probe_copy(GLOBAL const float *src, GLOBAL float *dst) {\n"
    "  uint i = GID; dst[i] = src[i];\n}\n"
    "#ifdef T\n"
    "KERNEL void probe_ops(GLOBAL T *out, T a, T b) {\n"
    "  uint i = GID;\n"
    "  T x0 = a + (T)(2 * (i & 7)), x1 = x0 + (T)2, x2 = x0 + (T)4, x3 = x0 + (T)6,\n"
    "    x4 = x0 + (T)8, x5 = x0 + (T)10, x6 = x0 + (T)12, x7 = x0 + (T)14;\n"
    "  for (int k = 0; k < ITERS; k++) {\n"
    "    STEP(x0, x1) STEP(x1, x0) STEP(x2, x3) STEP(x3, x2)\n"
    "    STEP(x4, x5) STEP(x5, x4) STEP(x6, x7) STEP(x7, x6)\n"
    "  }\n"
    "  out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;\n}\n"
    "#endif\n";

/* What each operation's step is. Integer chains feed each other (x += y):
** with a constant the compiler would fold the loop into one step. */
typedef struct op_kind {
  const char *name, *type, *step;
  unsigned shrink; /* loop trips divided by this: slow operations take as long as the rest */
} op_kind;

static const op_kind ops[] = {
    {"fp32_add", "float", "x = x + b;", 1},
    {"fp32_mul", "float", "x = x * b;", 1},
    {"fp32_fma", "float", "x = fma(x, b, a);", 1},
    {"fp32_div", "float", "x = b / x;", 1},
    {"fp32_sqrt", "float", "x = sqrt(x);", 1},
    {"fp32_exp", "float", "x = exp(-x);", 4},
    {"fp32_sin", "float", "x = sin(x);", 16},
    {"fp64_add", "double", "x = x + b;", 1},
    {"fp64_mul", "double", "x = x * b;", 1},
    {"fp64_fma", "double", "x = fma(x, b, a);", 1},
    {"int32_add", "uint", "x = x + y;", 1},
    {"int32_mul", "uint", "x = x * y;", 1},
};

typedef struct kern {
  const kt_backend *be;
  kt_bctx *ctx;
  kt_bprog *prog;
  kt_bkernel *k;
  const kt_launch_arg *args;
  size_t nargs;
  size_t global, local;
  bool host_clock; /* time launch and wait on the host, not the event */
} kern;

static int kern_open(kern *kr, const char *defines, const char *name, kt_error *err) {
  const char *pre = strcmp(kr->be->name, "cuda") == 0 ? prelude_cu : prelude_cl;
  size_t len = strlen(pre) + strlen(defines) + sizeof kernels;
  char *src = kt_alloc(len, err), *log = NULL;
  if (!src) return -1;
  snprintf(src, len, "%s%s%s", defines, pre, kernels);
  kr->prog = kr->be->compile(kr->ctx, src, "", name, &log, err);
  free(src);
  free(log);
  if (kr->prog) kr->k = kr->be->kernel(kr->ctx, kr->prog, name, err);
  return kr->k ? 0 : -1;
}

static void kern_close(kern *kr) {
  if (kr->k) kr->be->kernel_free(kr->ctx, kr->k);
  if (kr->prog) kr->be->prog_free(kr->ctx, kr->prog);
  kr->k = NULL;
  kr->prog = NULL;
}

static int kern_sample(void *st, double *ns, kt_error *err) {
  kern *kr = st;
  size_t g[3] = {kr->global, 1, 1}, l[3] = {kr->local, 1, 1};
  kt_bevent *ev = NULL;
  kt_fault fault;
  int64_t t0 = kt_now_ns();
  int rc = kr->be->launch(kr->ctx, 0, kr->k, kr->args, kr->nargs, 1, g, l, &ev, &fault, err);
  if (rc == 0) rc = kr->be->finish(kr->ctx, 0, &fault, err);
  *ns = kr->host_clock ? (double)(kt_now_ns() - t0) : ev ? kr->be->event_ns(kr->ctx, ev) : -1;
  if (ev) kr->be->event_free(kr->ctx, ev);
  if (rc == 0 && !(*ns >= 0)) rc = kt_fail(err, "the backend gave no time for a launch");
  return rc;
}

static int probe_launch(kern *kr, const kt_probe_opts *o, kt_probe *out, kt_error *err) {
  if (kern_open(kr, "", "probe_empty", err)) return -1;
  kr->global = kr->local = 1;
  int rc = 0;
  for (int host = 0; host < 2 && rc == 0; host++) {
    kt_probe_row r;
    row_name(&r, "launch", host ? "host" : "event", 0);
    kr->host_clock = host;
    rc = measure(o, kern_sample, kr, &r, err);
    r.value = r.mean_ns;
    if (rc == 0) rc = kt_probe_add(out, &r, err);
  }
  kr->host_clock = false;
  kern_close(kr);
  return rc;
}

static int probe_sweep(kern *kr, const kt_device_info *dev, const kt_probe_opts *o, kt_probe *out,
                       kt_error *err) {
  size_t bytes = (size_t)o->sweep_bytes, n = bytes / sizeof(float);
  kt_bbuf *src = kr->be->buffer_new(kr->ctx, bytes, KT_PLACE_DEVICE, KT_READ, err);
  kt_bbuf *dst = src ? kr->be->buffer_new(kr->ctx, bytes, KT_PLACE_DEVICE, KT_WRITE, err) : NULL;
  int rc = dst ? kr->be->buffer_fill_zero(kr->ctx, 0, src, 0, bytes, err) : -1;
  if (rc == 0) rc = kern_open(kr, "", "probe_copy", err);
  kt_launch_arg args[2] = {{.kind = KT_LARG_BUFFER, .buf = src},
                           {.kind = KT_LARG_BUFFER, .buf = dst}};
  kr->args = args;
  kr->nargs = 2;
  kr->global = n;
  uint64_t most = (uint64_t)kt_device_int(dev, "max_group_size", 256);
  for (uint64_t g = o->group_lo; rc == 0 && g <= o->group_hi && g <= most && g <= n; g *= 2) {
    if (n % g) continue;
    kt_probe_row r;
    row_name(&r, "sweep", "copy", g);
    kr->local = (size_t)g;
    rc = measure(o, kern_sample, kr, &r, err);
    r.value = 2.0 * (double)bytes / r.mean_ns;
    if (rc == 0) rc = kt_probe_add(out, &r, err);
  }
  kern_close(kr);
  kr->args = NULL;
  kr->nargs = 0;
  if (dst) kr->be->buffer_free(kr->ctx, dst);
  if (src) kr->be->buffer_free(kr->ctx, src);
  return rc;
}

/* One operation's kernel, or a note when the device cannot build it (a
** device without fp64). */
static int probe_op(kern *kr, const op_kind *op, const kt_probe_opts *o, kt_bbuf *outbuf,
                    kt_probe *out, kt_error *err) {
  char defines[512];
  bool fp64 = strcmp(op->type, "double") == 0, integer = op->type[0] == 'u';
  uint32_t iters = o->op_iters / op->shrink ? o->op_iters / op->shrink : 1;
  snprintf(defines, sizeof defines,
           "%s#define T %s\n#define ITERS %u\n#define STEP(x, y) { %s }\n", fp64 ? "#define FP64\n" : "",
           op->type, iters, op->step);
  kt_error cerr;
  if (kern_open(kr, defines, "probe_ops", &cerr)) {
    kern_close(kr);
    char note[KT_ERRMAX + 64];
    snprintf(note, sizeof note, "%s: %.200s", op->name, cerr.msg);
    return kt_probe_note(out, note, err);
  }
  union { float f; double d; uint32_t u; } a, b;
  size_t size = fp64 ? sizeof(double) : sizeof(float);
  if (fp64) a.d = b.d = 1.0;
  else if (integer) a.u = b.u = 1;
  else a.f = b.f = 1.0f; /* x * 1 and x + 1 stay normal: no slow subnormals */
  kt_launch_arg args[3] = {{.kind = KT_LARG_BUFFER, .buf = outbuf},
                           {.kind = KT_LARG_SCALAR, .bytes = &a, .size = size},
                           {.kind = KT_LARG_SCALAR, .bytes = &b, .size = size}};
  kr->args = args;
  kr->nargs = 3;
  kt_probe_row r;
  row_name(&r, "op", op->name, (uint64_t)kr->global * iters * 8);
  int rc = measure(o, kern_sample, kr, &r, err);
  r.value = (double)r.size / r.mean_ns; /* operations per ns = Gop/s */
  if (rc == 0) rc = kt_probe_add(out, &r, err);
  kr->args = NULL;
  kr->nargs = 0;
  kern_close(kr);
  return rc;
}

/* Enough work-items to fill every compute unit several times over. */
static int probe_ops(kern *kr, const kt_device_info *dev, const kt_probe_opts *o, kt_probe *out,
                     kt_error *err) {
  int64_t units = kt_device_int(dev, "compute_units", 1), most = kt_device_int(dev, "max_group_size", 1);
  kr->local = most >= 256 ? 256 : (size_t)(most > 0 ? most : 1);
  kr->global = (size_t)(units > 0 ? units : 1) * (size_t)(most > 0 ? most : 1) * 4;
  if (o->op_items) kr->global = (size_t)o->op_items;
  kr->global = (kr->global + kr->local - 1) / kr->local * kr->local;
  kt_bbuf *outbuf = kr->be->buffer_new(kr->ctx, kr->global * sizeof(double), KT_PLACE_DEVICE,
                                       KT_WRITE, err);
  int rc = outbuf ? 0 : -1;
  for (size_t i = 0; rc == 0 && i < sizeof ops / sizeof *ops; i++)
    rc = probe_op(kr, &ops[i], o, outbuf, out, err);
  if (outbuf) kr->be->buffer_free(kr->ctx, outbuf);
  return rc;
}

int kt_probe_run(const kt_device_info *dev, kt_bctx *ctx, const kt_probe_opts *o, kt_probe *out,
                 kt_error *err) {
  if (o->min_reps < 2 || o->max_reps < o->min_reps || !(o->rse > 0))
    return kt_fail(err, "probe: repetitions need 2 <= min <= max and rse > 0");
  kern kr = {.be = dev->backend, .ctx = ctx};
  int rc = 0;
  if (o->parts & KT_PROBE_TRANSFERS) rc = probe_transfers(dev->backend, ctx, o, out, err);
  if (rc == 0 && (o->parts & KT_PROBE_LAUNCH)) rc = probe_launch(&kr, o, out, err);
  if (rc == 0 && (o->parts & KT_PROBE_SWEEP)) rc = probe_sweep(&kr, dev, o, out, err);
  if (rc == 0 && (o->parts & KT_PROBE_OPS)) rc = probe_ops(&kr, dev, o, out, err);
  return rc;
}
