/*
** probe_apart.c: probing a device by its id, in a short-lived child process
** that sends its rows back as one message (see probe.h and remote.h), or in
** place in a process that drives devices itself.
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apart.h"
#include "probe.h"
#include "remote.h"
#include "wire.h"

/* Opens the device named id in this process and probes it. */
static int probe_here(const char *id, const kt_probe_opts *o, kt_probe *out, kt_error *err) {
  kt_device_info *list = NULL;
  size_t n = 0;
  if (kt_devices_here(&list, &n, NULL, 0, err)) return -1;
  int at = kt_device_find(list, n, id, err), rc = -1;
  kt_bctx *ctx = at >= 0 ? list[at].backend->open(&list[at], err) : NULL;
  if (ctx) {
    rc = kt_probe_run(&list[at], ctx, o, out, err);
    list[at].backend->close(ctx);
  }
  kt_devices_free(list, n);
  return rc;
}

static void put_probe(kt_msg *m, int rc, const kt_error *err, const kt_probe *p) {
  kt_msg_put_u32(m, rc == 0);
  kt_msg_put_str(m, rc == 0 ? NULL : err->msg);
  kt_msg_put_str(m, p->notes);
  kt_msg_put_u32(m, (uint32_t)p->n);
  for (size_t i = 0; i < p->n; i++) {
    const kt_probe_row *r = &p->rows[i];
    kt_msg_put_str(m, r->kind);
    kt_msg_put_str(m, r->name);
    kt_msg_put_u64(m, r->size);
    kt_msg_put_u32(m, r->reps);
    kt_msg_put_f64(m, r->mean_ns);
    kt_msg_put_f64(m, r->rse);
    kt_msg_put_u32(m, r->capped);
    kt_msg_put_f64(m, r->value);
  }
}

static void get_row(kt_msg *m, kt_probe_row *r) {
  char *kind = kt_msg_get_str(m), *name = kt_msg_get_str(m);
  memset(r, 0, sizeof *r);
  snprintf(r->kind, sizeof r->kind, "%s", kind ? kind : "");
  snprintf(r->name, sizeof r->name, "%s", name ? name : "");
  free(kind);
  free(name);
  r->size = kt_msg_get_u64(m);
  r->reps = kt_msg_get_u32(m);
  r->mean_ns = kt_msg_get_f64(m);
  r->rse = kt_msg_get_f64(m);
  r->capped = kt_msg_get_u32(m) != 0;
  r->value = kt_msg_get_f64(m);
}

static int get_probe(kt_msg *m, kt_probe *p, kt_error *err) {
  int ok = (int)kt_msg_get_u32(m);
  char *why = kt_msg_get_str(m);
  int rc = ok ? 0 : kt_fail(err, "%s", why ? why : "the probe process failed");
  free(why);
  p->notes = kt_msg_get_str(m);
  uint32_t n = kt_msg_get_u32(m);
  for (uint32_t i = 0; rc == 0 && i < n && !m->bad; i++) {
    kt_probe_row r;
    get_row(m, &r);
    rc = kt_probe_add(p, &r, err);
  }
  if (rc == 0 && m->bad) rc = kt_fail(err, "the probe process sent a short answer");
  return rc;
}

typedef struct probe_job {
  const char *id;
  const kt_probe_opts *o;
} probe_job;

static void probe_in_child(kt_msg *m, void *ud) {
  probe_job *j = ud;
  kt_error cerr;
  kt_probe p = {0};
  int rc = probe_here(j->id, j->o, &p, &cerr);
  put_probe(m, rc, &cerr, &p);
}

int kt_probe_device(const char *id, const kt_probe_opts *o, kt_probe *out, kt_error *err) {
  memset(out, 0, sizeof *out);
  if (kt_drivers_in_process()) return probe_here(id, o, out, err);
  int64_t deadline = o->time_limit > 0 ? kt_now_ns() + kt_ns_clamp(o->time_limit * 1e9) : 0;
  kt_msg m;
  int w = kt_apart(probe_in_child, &(probe_job){id, o}, deadline, &m);
  int rc = w == KT_WIRE_OK        ? get_probe(&m, out, err)
           : w < 0                ? kt_fail(err, "cannot start a probe process")
           : w == KT_WIRE_TIMEOUT ? kt_fail(err, "the probe took longer than its time limit "
                                                 "(%g s) and was stopped", o->time_limit)
                                  : kt_fail(err, "the probe process died before answering");
  kt_msg_free(&m);
  if (rc) kt_probe_free(out);
  return rc;
}
