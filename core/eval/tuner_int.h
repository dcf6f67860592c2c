/*
** tuner_int.h: what tuner.c, run.c and tune.c share and nobody else sees.
*/
#ifndef KT_TUNER_INT_H
#define KT_TUNER_INT_H

#include <sys/types.h>

#include "copy_wide.h"
#include "run.h"
#include "tuner.h"

/* The device copy of a host array. An array that a run may change keeps a
** pristine device copy (made at upload for arrays a kernel writes, before
** the first change for others) from which it is restored before the next
** run once it is dirty. */
typedef struct devarray {
  kt_array *array;
  kt_placement place;
  kt_access access;
  kt_bbuf *buf, *pristine;
  kt_bbuf *ref; /* the tuning's host contents on the device, to check against (verify_device.c) */
  size_t zone; /* bytes of buf past the array: a known pattern that a kernel
               ** writing past its buffer changes (verify.c) */
  bool dirty;
} devarray;

/* The kernel of the inputs' checks on the device, per context (made by
** verify_device.c, freed with the context by tuner.c). */
typedef struct kt_unchanged {
  kt_bprog *prog;
  kt_bkernel *kernel;
  kt_bbuf *flag;    /* one uint on the device: set to mark when something differs */
  uint32_t mark;    /* this check's (0: the flag is to be cleared first) */
  bool broken;      /* the kernel does not build here: every check on the host */
  size_t launched;  /* comparisons queued by this check */
  size_t most_items; /* work-items of one comparison at most */
  /* A check queued behind a configuration's runs (tuner_unchanged_queue):
  ** its flag as read with them, and the tuner's executions and losses
  ** then; valid while both are unchanged. */
  bool queued;
  uint32_t queued_flag;
  uint64_t queued_executions, queued_losses;
} kt_unchanged;

/* The host contents of an array as a tuning found them: a launcher may
** change them (run:read into the array, or Lua writes), and the next
** execution, or an upload after a lost context, must not see that. */
typedef struct hostcopy {
  kt_array *array;
  void *data;
  uint64_t changes; /* array->changes when the contents last matched data */
  bool borrowed;    /* data is another tuner's (tuner_share_hosts), never written */
  kt_wide_copy *making; /* data still being copied (tuner_keep_hosts) */
} hostcopy;

struct kt_tuner {
  kt_device_info device;
  bool isolate;        /* the context lives in a device process */
  int build_threads;
  const kt_backend *be;
  kt_bctx *ctx;
  uint64_t generation; /* of the context, as the buffers below know it */
  bool reopened;       /* the context was closed and opened again */
  uint64_t reopens;    /* how often (tuner_losses) */
  kt_build_cache *cache;
  kt_program_store *store; /* the program cache on disk (NULL: none) ... */
  char *identity;          /* ... the device's key in it */
  bool disk_off;           /* ... not used (kt_tuner_set_disk_cache) */
  struct kt_compile_pool *pool; /* compiler processes (NULL: compiles in the device process) */
  int host_devices;             /* the tuning's devices on this host: they share its processors */
  size_t compiled, cached; /* builds of the contexts closed so far (kt_build_stats) */
  size_t unkept;           /* ... and programs the disk did not keep, the last one's why: */
  char *unkept_why;
  devarray *arrays;
  size_t narrays, caparrays;
  char *output;    /* what closed contexts' processes said, not yet taken */
  hostcopy *hosts; /* during a tuning */
  size_t nhosts, caphosts;
  bool busy;       /* tuning or running: its callbacks may not use it */
  size_t online;   /* online tunings on it (kt_tuner_hold_online) */
  size_t growth;   /* what the device process may grow by (0: any) ... */
  uint64_t watched; /* ... in this generation of the context, */
  unsigned checks;  /* checked this many times, */
  size_t base;      /* from this size after its first configuration */
  unsigned renewals;
  double device_ns; /* every launch's device time, timed or not */
  unsigned char *pattern; /* the zones' pattern, as long as the longest zone so far */
  size_t npattern;
  unsigned char *readback; /* where the inputs' checks read, kept between checks */
  size_t nreadback;
  kt_unchanged *unchanged; /* the checks' kernel on the device (verify_device.c) */
  bool checked_on_device;         /* the last check compared on the device ... */
  bool checked_queued;            /* ... queued behind the runs before it */
  kt_wait_hook wait; /* around waits for the device and compiles (fleet.h) */
  size_t restores;   /* copies that restored written arrays before a run (tuner_restore) */
  uint64_t executions; /* of any configuration's kernels (run_reset) */
  bool keep_outputs; /* runs leave arrays that kernels only write as the last run left them
                     ** (timed runs: measure.c; an energy pass: measure_energy.c); the next
                     ** run without it restores them */
};

/* Between configurations: replaces a device process that has grown past
** its allowance (kt_tuner_set_device_growth). */
void tuner_bound_device(kt_tuner *t);
/* Makes sure every array of the task has its device buffers. */
int tuner_bind(kt_tuner *t, const kt_task *task, kt_error *err);
/* The device copy of an array, made (and uploaded) if it has none. */
devarray *tuner_bind_array(kt_tuner *t, kt_array *a, kt_access access, kt_placement place,
                           kt_error *err);
devarray *tuner_devarray(kt_tuner *t, const kt_array *a);
/* Frees the device copies of an array no kernel of the tuner uses again. */
void tuner_unbind_array(kt_tuner *t, const kt_array *a);
/* Marks the array as changed by this run, keeping a pristine copy first. */
int tuner_protect(kt_tuner *t, devarray *d, int queue, kt_error *err);
/* Copies every array of the task from the host to the device (and to the
** pristine copies); counts the time into *ns. */
int tuner_upload(kt_tuner *t, const kt_task *task, double *ns, kt_error *err);
/* Copies one array from the host (the contents the tuning kept, if it
** did) to its device buffer and pristine copy. */
int tuner_upload_array(kt_tuner *t, devarray *d, kt_error *err);
/* The bytes of the zone that follows an array of `bytes` on the device,
** and writing its pattern (tuner_zone.c). */
size_t tuner_zone_bytes(size_t bytes);
int tuner_fill_zone(kt_tuner *t, devarray *d, kt_error *err);
/* The zones' pattern, its first n bytes (tuner_zone.c). */
const unsigned char *tuner_zone_pattern(kt_tuner *t, size_t n, kt_error *err);
/* The pattern's byte at offset i, as C and as the text of the device's
** check (verify_device.c), so that both stay the one pattern. */
#define TUNER_ZONE_BYTE(i) (0xA5 ^ ((i) * 37))
#define TUNER_TEXT(x) #x
#define TUNER_TEXT_OF(x) TUNER_TEXT(x)
/* The host contents the tuning kept of a (once copied), or NULL. */
hostcopy *tuner_hostcopy(kt_tuner *t, const kt_array *a);
/* Compares the device copies that no run may change (inputs, the pristine
** copies of written arrays) with the host contents the tuning kept (after
** waiting for every queue); uploads again what differs. Returns 1 when
** something differed, with *what (malloc'd) saying what and where, 0 when
** all matched, -1 on error (verify.c). */
int tuner_verify(kt_tuner *t, const kt_task *task, char **what, kt_error *err);
/* The same comparisons on the device, for the arrays it covers: 1 when
** they all matched, 0 when one differed or none ran there (the host then
** compares every array), -1 on error (verify_device.c). */
int tuner_unchanged_check(kt_tuner *t, kt_error *err);
/* Queues that check's comparisons behind what is queued, with a read of
** their flag that comes back with the next wait for every queue, for the
** next tuner_unchanged_check to take when nothing ran in between: an
** isolated tuner, whose check would be a round trip of its own, after the
** first check made the kernel and the references. A check that cannot be
** queued is made as before. Returns 1 when the device process was lost
** meanwhile (err says how: the runs queued before went with it), else 0. */
int tuner_unchanged_queue(kt_tuner *t, kt_error *err);
/* Whether tuner_unchanged_check compares every copy of d that verify does. */
bool tuner_unchanged_covers(kt_tuner *t, const devarray *d);
/* Frees the arrays' references (at a tuning's end: they hold its host
** contents; or when one was found changed itself). */
void tuner_drop_refs(kt_tuner *t);
/* Restores every dirty array from its pristine copy, on queue 0 (no wait);
** returns how many it restored, or -1. */
int tuner_restore(kt_tuner *t, kt_error *err);
/* Keeps the host contents of the task's arrays for the tuning that starts:
** the copies are made behind the caller's back, so that the uploads that
** follow overlap them, until tuner_hosts_kept, which must come before
** anything may write the arrays (a reference, a launcher). */
int tuner_keep_hosts(kt_tuner *t, const kt_task *task, kt_error *err);
void tuner_hosts_kept(kt_tuner *t);
/* Keeps those that `from` kept, without copying them again: `from` keeps
** them (tuner_drop_hosts) after t has dropped them (the devices of a fleet:
** one copy, not one a device). */
int tuner_share_hosts(kt_tuner *t, const kt_tuner *from, kt_error *err);
/* Puts back the host contents of the kept arrays that changed since. */
void tuner_restore_hosts(kt_tuner *t);
/* At the end of a tuning: restores, then forgets, the kept contents. */
void tuner_drop_hosts(kt_tuner *t);
/* Counts the losses of the context (see kt_backend.generation). */
uint64_t tuner_generation(const kt_tuner *t);
/* True when the context was lost and recreated: buffers and programs were
** forgotten, and arrays must be bound and uploaded again. */
bool tuner_recover(kt_tuner *t);
/* Device waits give up at this time (0: never), where the backend can. */
void tuner_set_deadline(kt_tuner *t, int64_t deadline_ns);
bool tuner_can_time_out(const kt_tuner *t);
/* Reads an array's device contents into dst (same shape). */
int tuner_read(kt_tuner *t, const kt_array *a, kt_array *dst, kt_error *err);
/* The same queued on queue 0 without waiting: dst holds the data once
** the queue is finished. */
int tuner_read_async(kt_tuner *t, const kt_array *a, kt_array *dst, kt_error *err);
/* What the device process wrote on stderr since the last take (also
** before a context was closed), malloc'd; NULL when nothing. */
char *tuner_take_output(kt_tuner *t);
/* Counts the contexts lost so far (sticky faults, and for isolated tuners
** the device processes that died or were stopped): a change between two
** calls says the device state of the arrays is new. */
uint64_t tuner_losses(const kt_tuner *t);
/* The inputs' checks' references take at most this share of the device's
** memory; whether d's would fit (device memory alone has one). */
#define TUNER_REF_SHARE 8
bool tuner_ref_fits(const kt_tuner *t, const devarray *d);
/* Requests to the device process so far, and round trips among them
** (kt_remote_counts); 0 in-process. */
void tuner_link_counts(const kt_tuner *t, uint64_t *requests, uint64_t *round_trips);
/* The process whose threads run the device's work: an isolated tuner's
** device process (kt_remote_pid), else this one; 0 when none is known. */
pid_t tuner_device_pid(const kt_tuner *t);
/* The PoCL threads ktlua gave its device process (kt_remote_threads); 0
** where it gave none. */
int tuner_device_threads(const kt_tuner *t);
/* Closes the context after a sticky fault and opens a new one (every
** buffer and program goes with the old one). */
int tuner_reopen(kt_tuner *t, kt_error *err);
/* Before new work: a tuner left without a context (a reopen failed) tries
** to open one again, and says why it cannot. */
int tuner_ensure_open(kt_tuner *t, kt_error *err);
/* The program cache on disk as t's compiles use it (program_disk.h). */
kt_program_disk kt_tuner_program_disk(const kt_tuner *t);
/* Why the disk did not keep the last program it did not keep (malloc'd),
** or NULL (kt_build_stats.unkept counts them). */
char *kt_tuner_unkept_why(const kt_tuner *t);
/* Calls fn for every distinct array the task's kernels use. */
int tuner_each_array(const kt_task *task, int (*fn)(kt_array *a, kt_access access,
                     kt_placement place, void *ud), void *ud, kt_error *err);

#endif
