/*
** mpi_devices.c: the devices of an MPI job as rank 0 sees them (mpi.h):
** each rank's own list, and the device each rank gives to one tuning.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "far.h"
#include "mpi.h"
#include "remote.h"

/* The way to the device processes of another rank (far.h): through rank
** 0's relay (mpi_relay.c). Every device of another rank carries it. */
const kt_far kt_mpi_far = {kt_mpi_link_open, kt_mpi_link_stop, kt_mpi_local_id, kt_mpi_rank_alive};

/* ---- the devices of other ranks ---- */

/* Where a device of another rank is: its node's host name and processors. */
static int place(kt_device_info *d, int rank, kt_error *err) {
  kt_mpi_node node;
  if (kt_mpi_peer(rank, &node)) return 0; /* it said nothing: unknown */
  if (kt_device_set_string(d, "host", node.host, err) ||
      kt_device_set_int(d, "host_cpus", node.cpus, err))
    return -1;
  return 0;
}

static int append(kt_device_info **list, size_t *n, kt_device_info *more, size_t m, int rank,
                  kt_error *err) {
  for (size_t i = 0; i < m; i++) {
    char id[sizeof more[i].id];
    int len = snprintf(id, sizeof id, "mpi:%d:%s", rank, more[i].id);
    if (len < 0 || (size_t)len >= sizeof id)
      return kt_fail(err, "device %s of MPI rank %d: its id is too long to name", more[i].id, rank);
  }
  kt_device_info *grown = realloc(*list, (*n + m + 1) * sizeof **list);
  if (!grown) return kt_fail(err, "out of memory listing the devices of MPI rank %d", rank);
  *list = grown;
  for (size_t i = 0; i < m; i++) {
    kt_device_info *d = &grown[(*n)++];
    *d = more[i];
    d->rank = rank;
    d->far = &kt_mpi_far;
    if (snprintf(d->id, sizeof d->id, "mpi:%d:%s", rank, more[i].id) < 0) d->id[0] = '\0';
  }
  free(more); /* its devices' properties now belong to the list */
  for (size_t i = *n - m; i < *n; i++)
    if (place(&grown[i], rank, err)) return -1;
  return 0;
}

/* A device's node: its "host" (another rank's), else this process's. */
static const char *host_of(const kt_device_info *d) {
  const char *h = d->far ? kt_device_string(d, "host") : NULL;
  return h ? h : kt_mpi_host();
}

size_t kt_mpi_node_devices(const kt_device_info *list, size_t n, size_t i) {
  size_t same = 0;
  for (size_t k = 0; k < n; k++)
    if (strcmp(host_of(&list[k]), host_of(&list[i])) == 0) same++;
  return same;
}

/* Each rank lists its devices in a device process of its own (drivers take
** a while to start): all at once, a thread each. */
typedef struct listing {
  pthread_t thread;
  bool started;
  int rank, rc;
  kt_device_info *list;
  size_t n;
  char said[512];
  kt_error err;
} listing;

static void *list_rank(void *ud) {
  listing *l = ud;
  l->rc = kt_devices_remote_far(&kt_mpi_far, l->rank, &l->list, &l->n, l->said, sizeof l->said,
                                &l->err);
  return NULL;
}

static int gather(listing *l, kt_device_info **list, size_t *n, char *why, size_t whysize,
                  kt_error *err) {
  size_t used = why ? strlen(why) : 0;
  if (l->rc) {
    if (err) *err = l->err;
    return kt_fail_prefix(err, "listing the devices of MPI rank %d: ", l->rank);
  }
  if (l->n == 0 && why && used < whysize)
    snprintf(why + used, whysize - used, "%sMPI rank %d sees no device%s%s%s", used ? "; " : "",
             l->rank, l->said[0] ? " (" : "", l->said, l->said[0] ? ")" : "");
  if (append(list, n, l->list, l->n, l->rank, err)) return -1;
  l->list = NULL;
  l->n = 0;
  return 0;
}

int kt_mpi_devices_append(kt_device_info **list, size_t *n, char *why, size_t whysize,
                          kt_error *err) {
  int ranks = kt_mpi_size() - 1, rc = 0;
  listing *all = ranks > 0 ? calloc((size_t)ranks, sizeof *all) : NULL;
  if (ranks > 0 && !all) return kt_fail(err, "out of memory listing the devices of MPI ranks");
  for (int i = 0; i < ranks; i++) {
    all[i].rank = i + 1;
    all[i].started = pthread_create(&all[i].thread, NULL, list_rank, &all[i]) == 0;
    if (!all[i].started) list_rank(&all[i]); /* no thread: here, in turn */
  }
  for (int i = 0; i < ranks; i++) {
    if (all[i].started) pthread_join(all[i].thread, NULL);
    if (rc == 0 && gather(&all[i], list, n, why, whysize, err)) rc = -1;
    kt_devices_free(all[i].list, all[i].n);
  }
  free(all);
  return rc;
}

/* ---- one device per rank ---- */

/* Whether d answers `what` as kt_device_find reads it, the id being the
** one d has on its rank; "default" is handled by the caller. */
static bool answers(const kt_device_info *d, const char *what) {
  if (!strcmp(what, "gpu") || !strcmp(what, "cpu") || !strcmp(what, "accelerator"))
    return !strcmp(kt_device_string(d, "type"), what);
  if (!strchr(what, ':')) return !strcmp(d->backend->name, what);
  return !strcmp(kt_mpi_local_id(d), what);
}

static size_t matches(const kt_device_info *list, size_t n, int rank, const char *what,
                      int *found) {
  size_t m = 0;
  bool dflt = !strcmp(what, "default");
  for (size_t i = 0; i < n; i++)
    if (list[i].rank == rank && (dflt ? !strcmp(kt_device_string(&list[i], "type"), "gpu")
                                      : answers(&list[i], what)))
      found[m++] = (int)i;
  if (dflt && m == 0) /* no GPU: every device of the rank */
    for (size_t i = 0; i < n; i++)
      if (list[i].rank == rank) found[m++] = (int)i;
  return m;
}

static int none_on(const kt_device_info *list, size_t n, int rank, const char *what,
                   kt_error *err) {
  if (kt_mpi_size() == 1) return kt_device_find(list, n, what, err); /* alone: as ever */
  char have[512] = "";
  size_t used = 0;
  kt_mpi_node node = {0, 0, "?", false};
  for (size_t i = 0; i < n && used < sizeof have; i++)
    if (list[i].rank == rank)
      used += (size_t)snprintf(have + used, sizeof have - used, "%s%s (%s)", used ? ", " : "",
                               kt_mpi_local_id(&list[i]), kt_device_string(&list[i], "name"));
  kt_mpi_peer(rank, &node);
  return kt_fail(err, "MPI rank %d (on %s) has no device '%s'; it sees: %s", rank, node.host, what,
                 used ? have : "no devices at all");
}

int kt_mpi_pick(const kt_device_info *list, size_t n, const char *what, int *picked,
                kt_error *err) {
  int *found = calloc(n ? n : 1, sizeof *found);
  if (!found) return kt_fail(err, "out of memory choosing the devices of the MPI ranks");
  int rc = 0;
  for (int r = 0; r < kt_mpi_size() && rc == 0; r++) {
    size_t m = matches(list, n, r, what, found);
    if (m == 0) rc = none_on(list, n, r, what, err);
    else picked[r] = found[(size_t)kt_mpi_local_rank(r) % m];
  }
  free(found);
  return rc;
}
