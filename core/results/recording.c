/*
** recording.c: a results file of any format that kt.load reads
** (result_formats.h) into a recorded space and its records.
**
** Records are gathered as they are read (value indices plus outcome);
** once all are read the space takes their configurations as its valid set
** and the records are laid out in the space's index order.
*/
#include "recording.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "result_formats.h"

typedef struct builder {
  kt_space *space;
  size_t np;
  uint32_t *rows; /* np value indices per record */
  kt_result *recs; /* outcomes only: their value indices are in rows */
  size_t n, caprows, caprecs;
  const char *task, *device;
  kt_results *src; /* the ktlua results read, when they were */
  kt_error *err;
} builder;

/* Appends a record; *vi receives its row of value indices. */
static kt_result *new_record(builder *b, uint32_t **vi) {
  if (b->np == 0) /* records need value indices to lay them out by */
    return kt_fail(b->err, "a recorded space needs at least one parameter"), NULL;
  if (kt_grow(&b->rows, &b->caprows, (b->n + 1) * b->np, sizeof *b->rows, b->err) ||
      kt_grow(&b->recs, &b->caprecs, b->n + 1, sizeof *b->recs, b->err))
    return NULL;
  kt_result *r = &b->recs[b->n];
  memset(r, 0, sizeof *r);
  r->time_ns = NAN;
  *vi = b->rows + b->n * b->np;
  b->n++;
  return r;
}

/* ---- the records read ---- */

/* Takes src's records; b keeps src (released with b) for its names. */
static int read_ktlua(builder *b, kt_results *src) {
  if (!src) return -1;
  int rc = 0;
  for (size_t p = 0; p < src->nparams && rc == 0; p++)
    rc = kt_space_add_param(b->space, src->params[p].name, src->params[p].values,
                            src->params[p].nvalues, b->err);
  b->np = kt_space_nparams(b->space);
  for (size_t i = 0; i < src->n && rc == 0; i++) {
    uint32_t *vi;
    kt_result *r = new_record(b, &vi);
    if (r) memcpy(vi, src->items[i].vi, b->np * sizeof *vi);
    rc = r ? kt_result_copy(r, &src->items[i], b->err) : -1;
  }
  b->src = src; /* its task and device name the recording */
  b->task = src->task;
  b->device = src->device;
  return rc;
}

/* ---- the records in index order ---- */

static int lay_out(builder *b, kt_recording *out) {
  uint64_t count = kt_space_count(b->space);
  size_t *where = kt_calloc(count, sizeof *where, b->err);
  if (!where) return -1;
  for (size_t r = 0; r < b->n; r++) {
    uint64_t index;
    kt_space_index(b->space, b->rows + r * b->np, &index); /* every row is in the space */
    where[index] = r;
  }
  const char *task = b->task ? b->task : "replay";
  const char *device = b->device ? b->device : "recorded";
  out->records = kt_results_new(task, b->space, &task, 1, device, b->err);
  int rc = out->records ? 0 : -1;
  for (uint64_t i = 0; i < count && rc == 0; i++) {
    kt_result *res = kt_results_add(out->records, i, b->rows + where[i] * b->np, b->err);
    rc = res ? kt_result_copy(res, &b->recs[where[i]], b->err) : -1;
  }
  free(where);
  return rc;
}

/* A configuration recorded more than once (a T4 file's repeated
** measurements) is replayed as its last record, as lay_out lays them out,
** and the recording says so (its notice). */
static int build(builder *b, const char *text, size_t len, kt_recording *out) {
  if (read_ktlua(b, kt_results_parse(text, len, &out->format, b->err))) return -1;
  if (b->n == 0) return kt_fail(b->err, "the recording has no configuration");
  if (kt_space_set_configs(b->space, b->rows, b->n, b->err) || lay_out(b, out) ||
      kt_results_note_repeats(b->src, "the replay uses the last record of each", b->err))
    return -1;
  out->records->notice = b->src->notice;
  b->src->notice = NULL;
  return 0;
}

int kt_recording_read(const char *path, kt_recording *out, kt_error *err) {
  memset(out, 0, sizeof *out);
  size_t len;
  char *text = kt_read_file(path, 0, &len, err);
  if (!text) return -1;
  builder b = {kt_space_new(err), 0, NULL, NULL, 0, 0, 0, NULL, NULL, NULL, err};
  int rc = b.space ? build(&b, text, len, out) : -1;
  free(b.rows);
  for (size_t i = 0; i < b.n; i++) kt_result_clear(&b.recs[i]);
  free(b.recs);
  kt_results_release(b.src);
  free(text);
  out->space = b.space;
  if (rc) {
    kt_recording_clear(out);
    return kt_fail_prefix(err, "%s: ", path);
  }
  return 0;
}

void kt_recording_clear(kt_recording *rec) {
  kt_results_release(rec->records);
  kt_space_free(rec->space);
  memset(rec, 0, sizeof *rec);
}
