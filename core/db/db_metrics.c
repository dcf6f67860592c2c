/*
** db_metrics.c: the metrics of stored configurations (energy, power,
** counters, users' metrics) in the table tuned_metrics, a row per metric
** of a row of tuned, under the same key and rank. Names are data: bound,
** never part of the SQL.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

static void bind_key(sqlite3_stmt *st, const kt_db_row *r) {
  const char *key[] = {r->kernel, r->device, r->backend, r->size, r->objective};
  for (int i = 0; i < 5; i++)
    sqlite3_bind_text(st, i + 1, key[i] ? key[i] : "", -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 6, r->rank);
}

static int step_done(sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : -1;
}

/* SQLite keeps infinities as REAL values but makes a NaN NULL, which the
** column refuses: a NaN is the text NaN (a REAL column keeps text that is
** no number as text), read back by read_one. */
static int insert_row(sqlite3_stmt *ins, const kt_db_row *r) {
  for (size_t i = 0; i < r->nmetrics; i++) {
    bind_key(ins, r);
    sqlite3_bind_text(ins, 7, r->metrics[i].name, -1, SQLITE_TRANSIENT);
    if (isnan(r->metrics[i].value)) sqlite3_bind_text(ins, 8, "NaN", -1, SQLITE_STATIC);
    else sqlite3_bind_double(ins, 8, r->metrics[i].value);
    if (step_done(ins)) return -1;
  }
  return 0;
}

/* The value of a metric row (column 1) as insert_row wrote it: false for
** text that is not NaN, which another program wrote. */
static bool metric_value(sqlite3_stmt *st, double *out) {
  int type = sqlite3_column_type(st, 1);
  if (type == SQLITE_FLOAT || type == SQLITE_INTEGER) {
    *out = sqlite3_column_double(st, 1);
    return true;
  }
  const char *text = (const char *)sqlite3_column_text(st, 1);
  *out = NAN;
  return type == SQLITE_TEXT && text && strcmp(text, "NaN") == 0 &&
         sqlite3_column_bytes(st, 1) == 3;
}

int kt_db_replace_metrics(kt_db *db, const kt_db_row *rows, size_t n) {
  sqlite3_stmt *del = NULL, *ins = NULL;
  static const char delete_sql[] = "DELETE FROM tuned_metrics WHERE kernel = ?1 AND device = ?2 "
                                   "AND backend = ?3 AND size = ?4 AND objective = ?5";
  static const char insert_sql[] = "INSERT INTO tuned_metrics VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
  bool prepared = sqlite3_prepare_v2(db->h, delete_sql, -1, &del, NULL) == SQLITE_OK &&
                  sqlite3_prepare_v2(db->h, insert_sql, -1, &ins, NULL) == SQLITE_OK;
  int rc = prepared ? 0 : -1;
  if (rc == 0) {
    bind_key(del, &rows[0]);
    rc = step_done(del);
  }
  for (size_t i = 0; i < n && rc == 0; i++) rc = insert_row(ins, &rows[i]);
  sqlite3_finalize(del);
  sqlite3_finalize(ins);
  return rc;
}

/* ---- reading ---- */

void kt_db_free_metrics(kt_db_row *r) {
  for (size_t i = 0; i < r->nmetrics; i++) free(r->metrics[i].name);
  free(r->metrics);
  r->metrics = NULL;
  r->nmetrics = 0;
}

/* A metric whose name holds a NUL byte (it would be read as a shorter
** name) or whose value is no number (a file another program changed). */
static int bad_metric(const kt_db *db, sqlite3_stmt *st, const kt_db_row *r, kt_error *err) {
  const char *name = (const char *)sqlite3_column_text(st, 0);
  size_t len = (size_t)sqlite3_column_bytes(st, 0);
  double value;
  char shown[256];
  kt_quote(name ? name : "", name ? len : 0, shown, sizeof shown);
  if (name && memchr(name, '\0', len))
    return kt_fail(err, "%s: the name of a metric stored for %s on %s (rank %lld) holds a NUL "
                   "byte: %s", db->path, r->kernel, r->device, (long long)r->rank, shown);
  if (!metric_value(st, &value))
    return kt_fail(err, "%s: the metric %s stored for %s on %s (rank %lld) is no number",
                   db->path, shown, r->kernel, r->device, (long long)r->rank);
  return 0;
}

static int read_one(kt_db *db, sqlite3_stmt *st, kt_db_row *r, kt_error *err) {
  size_t cap = 0;
  int step;
  bind_key(st, r);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if (bad_metric(db, st, r, err) || kt_grow(&r->metrics, &cap, r->nmetrics + 1,
                                              sizeof *r->metrics, err))
      break;
    kt_db_metric *m = &r->metrics[r->nmetrics];
    if (!(m->name = kt_strdup((const char *)sqlite3_column_text(st, 0), err))) break;
    metric_value(st, &m->value); /* checked by bad_metric */
    r->nmetrics++;
  }
  if (step != SQLITE_DONE && step != SQLITE_ROW) kt_db_fail(db, "reading metrics", err);
  sqlite3_reset(st);
  return step == SQLITE_DONE ? 0 : -1;
}

int kt_db_read_metrics(kt_db *db, kt_db_row *rows, size_t n, kt_error *err) {
  if (kt_db_version(db) < KT_DB_FIRST_WITH_METRICS || n == 0) return 0; /* read as it is */
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db->h, "SELECT name, value FROM tuned_metrics WHERE kernel = ?1 AND "
                         "device = ?2 AND backend = ?3 AND size = ?4 AND objective = ?5 AND "
                         "rank = ?6 ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
    return kt_db_fail(db, "reading metrics", err);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) rc = read_one(db, st, &rows[i], err);
  sqlite3_finalize(st);
  return rc;
}
