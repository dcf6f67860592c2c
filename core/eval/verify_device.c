/*
** verify_device.c: the inputs' checks compared on the device (tuner_int.h).
** Reading every input back and comparing it on the host costs tens of
** milliseconds a check on a GEMM of a few hundred MB, between
** configurations. Here each copy that no run may change is compared with a
** reference copy on the device, copied from the upload of the tuning's
** host contents (tuner.c; else written from them at the first check), and
** each zone with its pattern, by one small kernel that raises a flag; the
** flag is read once per check, in the one round trip (to an isolated
** tuner's device process) that sends the comparisons. Only a raised flag
** sends the check to the host (verify.c), which says what changed. Where
** the kernel does not build, or an array has no reference (its placement is
** not device memory, or the references would take more than their share of
** the device's memory), that array is checked on the host as before.
*/
#include <stdlib.h>
#include <string.h>

#include "program_disk.h"
#include "remote.h"
#include "tuner_int.h"

#define NAME "ktlua_unchanged"
#define GROUP 256
/* Work-items per compute unit, enough loads in flight for the memory's
** full speed on a GPU, and at least this many in all. */
#define ITEMS_PER_UNIT 2048
#define LEAST_ITEMS ((size_t)1 << 16)

/* mode 0 compares bytes, 1 eight bytes at a time (both offsets aligned),
** 2 a with the zones' pattern (tuner_zone.c), 3 the same eight bytes at a
** time (a's offset aligned; on a little-endian device, else as 2). */
#define PATTERN(i) "(unsigned char)" TUNER_TEXT_OF(TUNER_ZONE_BYTE(i))
#define BODY                                                                    \
  "  unsigned int differ = 0;\n"                                               \
  "  a += aoff;\n"                                                             \
  "  b += boff;\n"                                                             \
  "  if (mode >= 2) {\n"                                                       \
  "    INDEX words = mode == 3 && LITTLE ? n / 8 : 0;\n"                       \
  "    for (INDEX w = FIRST; w < words; w += STRIDE) {\n"                      \
  "      WORD want = 0;\n"                                                     \
  "      for (int j = 7; j >= 0; j--) want = want << 8 | " PATTERN(w * 8 + j) ";\n" \
  "      differ |= ((GLOBAL const WORD *)a)[w] != want;\n"                     \
  "    }\n"                                                                    \
  "    for (INDEX i = words * 8 + FIRST; i < n; i += STRIDE)\n"                \
  "      differ |= a[i] != " PATTERN(i) ";\n"                                  \
  "    if (differ) *flag = mark;\n"                                               \
  "    return;\n"                                                              \
  "  }\n"                                                                      \
  "  INDEX words = mode == 1 ? n / 8 : 0;\n"                                   \
  "  for (INDEX i = FIRST; i < words; i += STRIDE)\n"                          \
  "    differ |= ((GLOBAL const WORD *)a)[i] != ((GLOBAL const WORD *)b)[i];\n" \
  "  for (INDEX i = words * 8 + FIRST; i < n; i += STRIDE) differ |= a[i] != b[i];\n" \
  "  if (differ) *flag = mark;\n"                                                 \
  "}\n"

static const char opencl_source[] =
    "#define INDEX ulong\n#define FIRST get_global_id(0)\n#define STRIDE get_global_size(0)\n"
    "#define GLOBAL __global\n#define WORD ulong\n"
    "#ifdef __ENDIAN_LITTLE__\n#define LITTLE 1\n#else\n#define LITTLE 0\n#endif\n"
    "__kernel void " NAME "(__global const uchar *a, ulong aoff, __global const uchar *b,\n"
    "                      ulong boff, ulong n, int mode, __global uint *flag, uint mark) {\n" BODY;

static const char cuda_source[] =
    "#define INDEX unsigned long long\n"
    "#define FIRST ((INDEX)blockIdx.x * blockDim.x + threadIdx.x)\n"
    "#define STRIDE ((INDEX)gridDim.x * blockDim.x)\n"
    "#define GLOBAL\n#define WORD unsigned long long\n#define LITTLE 1\n"
    "extern \"C\" __global__ void " NAME "(const unsigned char *a, INDEX aoff,\n"
    "    const unsigned char *b, INDEX boff, INDEX n, int mode, unsigned int *flag,\n"
    "    unsigned int mark) {\n" BODY;

static bool is_cuda(const kt_tuner *t) {
  const char *b = kt_device_string(&t->device, "backend");
  return b && strcmp(b, "cuda") == 0;
}

/* The kernel and its flag, built once per context (the program cache on
** disk keeps the program); 0 when the checks stay on the host. */
static int ready(kt_tuner *t, kt_unchanged *u, kt_error *err) {
  if (u->broken) return 0;
  if (u->kernel) return 1;
  kt_program_disk disk = kt_tuner_program_disk(t);
  char *log = NULL;
  bool loaded;
  kt_error why;
  kt_fork_guard_enter();
  u->prog = kt_program_build(&disk, t->be, t->ctx, is_cuda(t) ? cuda_source : opencl_source,
                             "", NAME, &log, &loaded, NULL, &why);
  kt_fork_guard_leave();
  free(log);
  if (u->prog) u->kernel = t->be->kernel(t->ctx, u->prog, NAME, &why);
  if (!u->kernel) return u->broken = true, 0;
  int64_t units = kt_device_int(&t->device, "compute_units", 1);
  u->most_items = units > 0 && (uint64_t)units * ITEMS_PER_UNIT > LEAST_ITEMS
                      ? (size_t)units * ITEMS_PER_UNIT / GROUP * GROUP : LEAST_ITEMS;
  u->flag = t->be->buffer_new(t->ctx, sizeof(uint32_t), KT_PLACE_DEVICE, KT_READ_WRITE, err);
  return u->flag ? 1 : -1;
}

static int compare(kt_tuner *t, kt_unchanged *u, kt_bbuf *a, uint64_t aoff, kt_bbuf *b,
                   uint64_t boff, uint64_t n, int32_t mode, kt_error *err) {
  if (n == 0) return 0;
  if (mode == 0 && aoff % 8 == 0 && boff % 8 == 0) mode = 1;
  if (mode == 2 && aoff % 8 == 0) mode = 3;
  kt_launch_arg args[] = {
      {KT_LARG_BUFFER, a, NULL, 0, NULL},          {KT_LARG_SCALAR, NULL, &aoff, 8, NULL},
      {KT_LARG_BUFFER, b, NULL, 0, NULL},          {KT_LARG_SCALAR, NULL, &boff, 8, NULL},
      {KT_LARG_SCALAR, NULL, &n, 8, NULL},         {KT_LARG_SCALAR, NULL, &mode, 4, NULL},
      {KT_LARG_BUFFER, u->flag, NULL, 0, NULL},   {KT_LARG_SCALAR, NULL, &u->mark, 4, NULL}};
  uint64_t units = mode == 1 || mode == 3 ? n / 8 : n;
  size_t items = ((size_t)units + GROUP - 1) / GROUP * GROUP;
  size_t global[3] = {items < u->most_items ? items : u->most_items, 1, 1};
  size_t local[3] = {GROUP, 1, 1};
  if (global[0] == 0) global[0] = GROUP;
  kt_fault fault;
  u->launched++;
  return t->be->launch(t->ctx, 0, u->kernel, args, 8, 1, global, local, NULL, &fault, err);
}

/* d's reference, written from the host contents h when the device's share
** allows: 0 without one (d is checked on the host). */
static int make_ref(kt_tuner *t, devarray *d, const hostcopy *h, kt_error *err) {
  size_t bytes = kt_array_bytes(d->array);
  if (!tuner_ref_fits(t, d)) return 0;
  kt_error why;
  if (!(d->ref = t->be->buffer_new(t->ctx, bytes, KT_PLACE_DEVICE, KT_READ_WRITE, &why)))
    return 0; /* no room: the host compares it */
  return t->be->buffer_write(t->ctx, 0, d->ref, 0, bytes, h->data, true, err) ? -1 : 1;
}

/* Queues d's comparisons. */
static int queue_array(kt_tuner *t, kt_unchanged *u, devarray *d, kt_error *err) {
  if (d->place != KT_PLACE_DEVICE) return 0;
  uint64_t bytes = kt_array_bytes(d->array);
  if (d->zone && compare(t, u, d->buf, bytes, d->buf, 0, d->zone, 2, err)) return -1;
  const hostcopy *h = tuner_hostcopy(t, d->array);
  if (!h || (!d->ref && make_ref(t, d, h, err) < 0)) return h ? -1 : 0;
  if (!d->ref) return 0;
  if (d->pristine && compare(t, u, d->pristine, 0, d->ref, 0, bytes, 0, err)) return -1;
  if (!(d->access & KT_WRITE) && !d->dirty && compare(t, u, d->buf, 0, d->ref, 0, bytes, 0, err))
    return -1;
  return 0;
}

bool tuner_unchanged_covers(kt_tuner *t, const devarray *d) {
  return d->place == KT_PLACE_DEVICE && (d->ref || !tuner_hostcopy(t, d->array));
}

/* Queues every comparison, then reads the flag (when wait, else queues its
** read): 1 when read, 0 when nothing was compared. */
static int compare_all(kt_tuner *t, kt_unchanged *u, uint32_t *flag, bool wait, kt_error *err) {
  u->launched = 0;
  /* A check's comparisons that differ write its own mark into the flag,
  ** so that it need not be cleared first: a request less. */
  if (u->mark == UINT32_MAX) u->mark = 0;
  if (++u->mark == 1 && t->be->buffer_fill_zero(t->ctx, 0, u->flag, 0, sizeof(uint32_t), err))
    return -1;
  for (size_t i = 0; i < t->narrays; i++)
    if (queue_array(t, u, &t->arrays[i], err)) return -1;
  if (u->launched == 0) return 0;
  return t->be->buffer_read(t->ctx, 0, u->flag, 0, sizeof *flag, flag, wait, err) ? -1 : 1;
}

/* Whether every copy a check compares has its reference on the device: a
** queued check makes none (its upload would wait for the runs). */
static bool refs_made(kt_tuner *t) {
  for (size_t i = 0; i < t->narrays; i++) {
    const devarray *d = &t->arrays[i];
    if (d->place == KT_PLACE_DEVICE && !d->ref && tuner_hostcopy(t, d->array) &&
        tuner_ref_fits(t, d))
      return false;
  }
  return true;
}

int tuner_unchanged_queue(kt_tuner *t, kt_error *err) {
  kt_unchanged *u = t->unchanged;
  if (!t->isolate || !u || !u->kernel || !refs_made(t)) return 0;
  uint64_t losses = tuner_losses(t);
  kt_remote_gather(t->ctx, true); /* sent with the flag's read */
  int rc = compare_all(t, u, &u->queued_flag, false, err);
  kt_remote_gather(t->ctx, false);
  u->queued = rc > 0;
  u->queued_executions = t->executions;
  u->queued_losses = tuner_losses(t);
  return u->queued_losses != losses;
}

/* The flag of a check queued behind the runs that ran last, if any. */
static bool take_queued(kt_tuner *t, kt_unchanged *u, uint32_t *flag) {
  if (!u->queued) return false;
  u->queued = false;
  if (u->queued_executions != t->executions || u->queued_losses != tuner_losses(t))
    return false;
  *flag = u->queued_flag;
  return true;
}

int tuner_unchanged_check(kt_tuner *t, kt_error *err) {
  t->checked_on_device = t->checked_queued = false;
  if (!t->unchanged && !(t->unchanged = kt_calloc(1, sizeof *t->unchanged, err))) return -1;
  kt_unchanged *u = t->unchanged;
  int rc = ready(t, u, err);
  if (rc <= 0) return rc;
  uint32_t flag = 0;
  if (!(t->checked_queued = take_queued(t, u, &flag))) {
    if (t->isolate) kt_remote_gather(t->ctx, true); /* one round trip for the check (remote.h) */
    rc = compare_all(t, u, &flag, true, err);
    if (t->isolate) kt_remote_gather(t->ctx, false); /* what a failure left gathered goes now */
    if (rc <= 0) return rc;
  }
  t->checked_on_device = true;
  if (flag != u->mark) return 1;
  /* The host says what changed; a reference found changed itself (a
  ** kernel wrote over it) is made again at the next check. */
  tuner_drop_refs(t);
  return 0;
}
