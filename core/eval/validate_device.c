/*
** validate_device.c: a comparison kernel (validate_device.h).
*/
#include "validate_device.h"

#include <stdlib.h>
#include <string.h>

#include "build.h"

#define NAME "ktlua_compare"
#define GROUP 256
#define MOST_ITEMS ((size_t)1 << 18)

/* The loop, the same for OpenCL C and CUDA: each work-item counts the
** elements it finds different, and keeps n - i of the first (so that a
** zero-filled result means none, and the largest is the first). */
#define BODY                                                                   \
  "  unsigned int count = 0, last = 0;\n"                                     \
  "  for (INDEX i = FIRST; i < n; i += STRIDE) {\n"                           \
  "    double g = got[i], e = want[i], d;\n"                                  \
  "    if (g == e) continue;\n"                                               \
  "    if (g != g || e != e) d = (g != g && e != e) ? 0.0 : INF;\n"           \
  "    else d = fabs(g - e);\n"                                               \
  "    if (relative && e != 0.0 && e == e) d /= fabs(e);\n"                   \
  "    if (d > tol) {\n"                                                      \
  "      count++;\n"                                                          \
  "      if ((unsigned int)(n - i) > last) last = (unsigned int)(n - i);\n"   \
  "    }\n"                                                                   \
  "  }\n"                                                                     \
  "  if (count) {\n"                                                          \
  "    ADD(&out[0], count);\n"                                                \
  "    MAX(&out[1], last);\n"                                                 \
  "  }\n"                                                                     \
  "}\n"

static const char opencl_source[] =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#define INDEX ulong\n#define FIRST get_global_id(0)\n#define STRIDE get_global_size(0)\n"
    "#define INF INFINITY\n#define ADD atomic_add\n#define MAX atomic_max\n"
    "__kernel void " NAME "(__global const T *got, __global const T *want, ulong n,\n"
    "                        int relative, double tol, __global unsigned int *out) {\n" BODY;

static const char cuda_source[] =
    "#define INDEX unsigned long long\n"
    "#define FIRST ((INDEX)blockIdx.x * blockDim.x + threadIdx.x)\n"
    "#define STRIDE ((INDEX)gridDim.x * blockDim.x)\n"
    "#define INF __longlong_as_double(0x7ff0000000000000LL)\n"
    "#define ADD atomicAdd\n#define MAX atomicMax\n"
    "extern \"C\" __global__ void " NAME "(const T *got, const T *want, unsigned long long n,\n"
    "                        int relative, double tol, unsigned int *out) {\n" BODY;

typedef struct slot {
  kt_array *counts; /* 2 uints on the device: differing elements, n - the first */
  kt_array *want;   /* the expected values with a device copy (retained) ... */
  bool own_want;    /* ... made here (not an array of the task's, which stays bound) */
  kt_bevent *ev;    /* the last comparison's launch */
  uint64_t losses;  /* the tuner's, when it was queued (tuner_losses) */
  uint64_t n;       /* the elements it compares */
  bool queued;      /* and its outcome not yet taken */
  bool landed;      /* counts read back behind it, without waiting */
} slot;

struct kt_devcheck {
  kt_tuner *t;
  bool broken; /* the kernel does not compile here */
  slot *slots;
  size_t n;
};

static bool is_cuda(const kt_tuner *t) {
  const char *b = kt_device_string(&t->device, "backend");
  return b && strcmp(b, "cuda") == 0;
}

/* The kernel's source for elements of `kind` (malloc'd). */
static char *source_for(const kt_tuner *t, kt_kind kind, kt_error *err) {
  const char *body = is_cuda(t) ? cuda_source : opencl_source;
  const char *type = kind == KT_FLOAT ? "float" : "double";
  size_t n = strlen(body) + 32;
  char *s = kt_alloc(n, err);
  if (s) snprintf(s, n, "#define T %s\n%s", type, body);
  return s;
}

static bool has_doubles(const kt_tuner *t) {
  if (is_cuda(t)) return true;
  const char *ext = kt_device_string(&t->device, "extensions");
  return ext && strstr(ext, "cl_khr_fp64");
}

/* Whether r's output may be compared on the device, its expected values
** aside (they are computed at the tuning's set-up). */
static bool target_suits(const kt_tuner *t, const kt_reference *r, kt_validate_on where) {
  const kt_array *a = r->target;
  size_t n = r->first && r->first < a->length ? r->first : a->length;
  if (where == KT_VALIDATE_HOST || r->compare || r->method == KT_CMP_SUM ||
      r->method == KT_CMP_CLOSE || r->method == KT_CMP_KERNEL_TUNER)
    return false;
  if (a->type->kind != KT_FLOAT && a->type->kind != KT_DOUBLE) return false;
  if (n == 0 || n >= (size_t)UINT32_MAX || !has_doubles(t)) return false;
  if (where == KT_VALIDATE_DEVICE) return true;
  const char *type = kt_device_string(&t->device, "type");
  return n >= KT_DEVCHECK_AUTO_MIN && (is_cuda(t) || (type && strcmp(type, "gpu") == 0));
}

bool kt_devcheck_suits(const kt_tuner *t, const kt_reference *r, kt_validate_on where) {
  return target_suits(t, r, where) && r->expected &&
         r->expected->type->kind == r->target->type->kind;
}

void kt_devcheck_prefetch(kt_tuner *t, const kt_task *task, kt_validate_on where) {
  bool started[2] = {false, false};
  for (size_t i = 0; i < task->nrefs; i++) {
    const kt_reference *r = &task->refs_list[i];
    if (!target_suits(t, r, where)) continue;
    kt_kind kind = r->target->type->kind;
    if (started[kind == KT_DOUBLE]) continue;
    started[kind == KT_DOUBLE] = true;
    kt_error err; /* what does not compile says so when the kernel is asked for */
    char *src = source_for(t, kind, &err);
    if (src) kt_build_prefetch(t->cache, src, "", NAME, &err);
    free(src);
  }
}

/* An event of a lost context went with it. */
static void drop_event(kt_tuner *t, slot *s) {
  if (s->ev && t->ctx && s->losses == tuner_losses(t)) t->be->event_free(t->ctx, s->ev);
  s->ev = NULL;
}

kt_devcheck *kt_devcheck_new(kt_tuner *t, size_t nrefs, kt_error *err) {
  kt_devcheck *d = kt_calloc(1, sizeof *d, err);
  if (!d || !(d->slots = kt_calloc(nrefs ? nrefs : 1, sizeof *d->slots, err))) {
    kt_devcheck_free(d);
    return NULL;
  }
  d->t = t;
  d->n = nrefs;
  return d;
}

void kt_devcheck_free(kt_devcheck *d) {
  if (!d) return;
  for (size_t i = 0; i < d->n; i++) {
    slot *s = &d->slots[i];
    drop_event(d->t, s);
    if (s->counts) tuner_unbind_array(d->t, s->counts);
    if (s->want && s->own_want) tuner_unbind_array(d->t, s->want);
    kt_array_release(s->counts);
    kt_array_release(s->want);
  }
  free(d->slots);
  free(d);
}

/* The device copy of an array for the comparisons, made again after the
** context was lost. */
static kt_bbuf *device_copy(kt_tuner *t, kt_array *a, kt_access access, kt_error *err) {
  devarray *da = tuner_devarray(t, a);
  if (!da) da = tuner_bind_array(t, a, access, KT_PLACE_DEVICE, err);
  return da ? da->buf : NULL;
}

static int launch(kt_devcheck *d, slot *s, kt_bkernel *bk, const kt_reference *r, kt_bbuf *got,
                  kt_bbuf *want, kt_bbuf *counts, kt_error *err) {
  kt_tuner *t = d->t;
  const kt_array *a = r->target;
  uint64_t n = r->first && r->first < a->length ? r->first : a->length;
  s->n = n;
  int32_t relative = r->method == KT_CMP_RELATIVE;
  double tol = r->tolerance;
  kt_launch_arg args[] = {
      {KT_LARG_BUFFER, got, NULL, 0, NULL},       {KT_LARG_BUFFER, want, NULL, 0, NULL},
      {KT_LARG_SCALAR, NULL, &n, sizeof n, NULL}, {KT_LARG_SCALAR, NULL, &relative, 4, NULL},
      {KT_LARG_SCALAR, NULL, &tol, sizeof tol, NULL}, {KT_LARG_BUFFER, counts, NULL, 0, NULL}};
  size_t items = ((size_t)n + GROUP - 1) / GROUP * GROUP;
  size_t global[3] = {items < MOST_ITEMS ? items : MOST_ITEMS, 1, 1}, local[3] = {GROUP, 1, 1};
  kt_fault fault;
  if (t->be->buffer_fill_zero(t->ctx, 0, counts, 0, 2 * sizeof(uint32_t), err) ||
      t->be->launch(t->ctx, 0, bk, args, 6, 1, global, local, &s->ev, &fault, err))
    return -1;
  /* The counts come back with the wait for the runs queued behind: no read
  ** of their own after it. In-process CUDA reads into pageable memory only
  ** once the queue is done, which would hold the timed runs back. */
  s->landed = (kt_tuner_isolated(t) || !is_cuda(t)) &&
              tuner_read_async(t, s->counts, s->counts, NULL) == 0;
  return 0;
}

/* The expected values of a reference (computed again by each tuning)
** whose device copy this slot frees. */
static int keep_expected(slot *s, kt_array *want, kt_tuner *t) {
  if (s->want == want) return 0;
  if (s->want && s->own_want) tuner_unbind_array(t, s->want);
  s->own_want = !tuner_devarray(t, want);
  kt_array_release(s->want);
  kt_array_retain(want);
  s->want = want;
  return 0;
}

/* The comparison kernel for r's element type (waiting for its compile).
** One that does not compile here leaves the comparisons to the host: 1,
** with *why saying so (malloc'd). */
static int kernel_for(kt_devcheck *d, const kt_reference *r, kt_bkernel **bk, char **why,
                      kt_error *err) {
  if (d->broken) return 1;
  char *src = source_for(d->t, r->target->type->kind, err);
  if (!src) return -1;
  const char *log = NULL;
  double compile_ns = 0;
  int rc = kt_build_get(d->t->cache, src, "", NAME, bk, &log, &compile_ns, err);
  free(src);
  if (rc <= 0) return rc;
  d->broken = true;
  size_t n = (log ? strlen(log) : 0) + 128;
  if (why && (*why = malloc(n)))
    snprintf(*why, n, "the comparison kernel does not compile here; outputs are compared on "
             "the host:\n%s\n", log ? log : "");
  return 1;
}

int kt_devcheck_ready(kt_devcheck *d, const kt_reference *r, char **why, kt_error *err) {
  kt_bkernel *bk;
  return kernel_for(d, r, &bk, why, err);
}

int kt_devcheck_enqueue(kt_devcheck *d, size_t i, const kt_reference *r, char **why,
                        kt_error *err) {
  kt_tuner *t = d->t;
  slot *s = &d->slots[i];
  if (!s->counts && !(s->counts = kt_array_new(kt_type_scalar(KT_UINT), 2, err))) return -1;
  kt_bkernel *bk = NULL;
  int rc = kernel_for(d, r, &bk, why, err);
  if (rc > 0) return 1;
  if (rc < 0 || keep_expected(s, r->expected, t)) return -1;
  kt_bbuf *want = device_copy(t, r->expected, KT_READ, err);
  kt_bbuf *counts = want ? device_copy(t, s->counts, KT_READ_WRITE, err) : NULL;
  if (!counts) return -1;
  devarray *out = tuner_devarray(t, r->target); /* after the binds, which move the list */
  if (!out) return kt_fail(err, "output %zu is not an argument of the task's kernels", i + 1);
  drop_event(t, s);
  s->losses = tuner_losses(t);
  s->queued = true;
  return launch(d, s, bk, r, out->buf, want, counts, err);
}

void kt_devcheck_discard(kt_devcheck *d) {
  for (size_t i = 0; d && i < d->n; i++) {
    drop_event(d->t, &d->slots[i]);
    d->slots[i].queued = d->slots[i].landed = false;
  }
}

bool kt_devcheck_queued(const kt_devcheck *d, size_t i) { return d && d->slots[i].queued; }

int kt_devcheck_result(kt_devcheck *d, size_t i, size_t *ndiff, size_t *at, kt_error *err) {
  kt_tuner *t = d->t;
  slot *s = &d->slots[i];
  *ndiff = *at = 0;
  s->queued = false;
  bool landed = s->landed;
  s->landed = false;
  if (!s->counts || !tuner_devarray(t, s->counts) || s->losses != tuner_losses(t))
    return kt_fail(err, "the comparison of output %zu was lost with its context", i + 1);
  if (!landed && tuner_read(t, s->counts, s->counts, err)) return -1;
  const uint32_t *c = s->counts->data;
  if (s->ev) {
    double ns = t->be->event_ns(t->ctx, s->ev);
    if (ns > 0) t->device_ns += ns;
    drop_event(t, s);
  }
  *ndiff = c[0];
  *at = (size_t)(s->n - c[1]);
  return c[0] == 0;
}
