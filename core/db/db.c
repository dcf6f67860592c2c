/*
** db.c: the tuned-configuration database (db.h) over SQLite.
*/
#include "db_int.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

int kt_db_writable(kt_db *db, const char *doing, kt_error *err) {
  if (!db->readonly) return 0;
  return kt_fail(err, "%s: %s: it was opened read-only (%s)", db->path, doing, db->readonly);
}

/* ---- storing ---- */

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
  sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_TRANSIENT);
}

static int insert(kt_db *db, sqlite3_stmt *st, const kt_db_row *r) {
  const char *texts[] = {r->kernel, r->device,  r->backend, r->size,    r->objective,
                         r->source, r->options, r->driver,  r->version, r->date, r->config};
  sqlite3_reset(st);
  for (int i = 0; i < 5; i++) bind_text(st, i + 1, texts[i]);
  sqlite3_bind_int64(st, 6, r->rank);
  for (int i = 5; i < 11; i++) bind_text(st, i + 2, texts[i]);
  sqlite3_bind_double(st, 13, r->time_ms);
  bind_text(st, 14, r->compiler);
  bind_text(st, 15, r->origin);
  (void)db;
  return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

static int replace_rows(kt_db *db, const kt_db_row *rows, size_t n, kt_error *err) {
  sqlite3_stmt *del = NULL, *ins = NULL;
  int rc = sqlite3_prepare_v2(db->h, "DELETE FROM tuned WHERE kernel = ?1 AND device = ?2 AND "
                              "backend = ?3 AND size = ?4 AND objective = ?5", -1, &del, NULL) ||
           sqlite3_prepare_v2(db->h, "INSERT INTO tuned VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                              "?9, ?10, ?11, ?12, ?13, ?14, ?15)", -1, &ins, NULL);
  if (rc == SQLITE_OK) {
    const char *key[] = {rows[0].kernel, rows[0].device, rows[0].backend, rows[0].size,
                         rows[0].objective};
    for (int i = 0; i < 5; i++) bind_text(del, i + 1, key[i]);
    rc = sqlite3_step(del) == SQLITE_DONE ? 0 : -1;
  }
  for (size_t i = 0; i < n && rc == 0; i++) rc = insert(db, ins, &rows[i]);
  if (rc == 0) rc = kt_db_replace_metrics(db, rows, n);
  if (rc) kt_db_fail(db, "storing", err);
  sqlite3_finalize(del);
  sqlite3_finalize(ins);
  return rc ? -1 : 0;
}

int kt_db_store(kt_db *db, const kt_db_row *rows, size_t n, kt_error *err) {
  if (n == 0) return 0;
  if (kt_db_writable(db, "storing", err)) return -1;
  /* IMMEDIATE: the write lock now, so that two writers queue, not deadlock. */
  if (kt_db_exec(db, "BEGIN IMMEDIATE", "storing", err)) return -1;
  if (replace_rows(db, rows, n, err) || kt_db_exec(db, "COMMIT", "storing", err)) {
    sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return -1;
  }
  return 0;
}

int kt_db_touch(kt_db *db, const kt_db_row *r, kt_error *err) {
  static const char sql[] =
      "UPDATE tuned SET driver = ?6, compiler = ?7, version = ?8, date = ?9, "
      "time_ms = CASE WHEN rank = 1 AND ?10 IS NOT NULL THEN ?10 ELSE time_ms END "
      "WHERE kernel = ?1 AND device = ?2 AND backend = ?3 AND size = ?4 AND objective = ?5";
  if (kt_db_writable(db, "storing a new measurement", err)) return -1;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
    return kt_db_fail(db, "storing a new measurement", err);
  const char *texts[] = {r->kernel, r->device, r->backend, r->size,    r->objective,
                         r->driver, r->compiler, r->version, r->date};
  for (int i = 0; i < 9; i++) bind_text(st, i + 1, texts[i]);
  if (!isnan(r->time_ms)) sqlite3_bind_double(st, 10, r->time_ms);
  int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kt_db_fail(db, "storing a new measurement", err);
  if (rc == 0 && sqlite3_changes(db->h) == 0) rc = 1;
  sqlite3_finalize(st);
  return rc;
}

/* ---- reading ---- */

static char *column_text(sqlite3_stmt *st, int i) {
  const unsigned char *s = sqlite3_column_text(st, i);
  return strdup(s ? (const char *)s : "");
}

/* A text column holding a NUL byte (SQLite keeps one; the C string would
** end there, a name read as the one before it): an error naming the row,
** the column and the whole text. */
static int nul_column(const kt_db *db, sqlite3_stmt *st, const kt_db_row *r, int col,
                      kt_error *err) {
  const char *text = (const char *)sqlite3_column_text(st, col);
  size_t n = (size_t)sqlite3_column_bytes(st, col);
  if (!text || !memchr(text, '\0', n)) return 0;
  char shown[256];
  return kt_fail(err, "%s: the %s stored for %s on %s (rank %lld) holds a NUL byte: %s", db->path,
                 sqlite3_column_name(st, col), r->kernel, r->device, (long long)r->rank,
                 kt_quote(text, n, shown, sizeof shown));
}

/* -1 and why when out of memory or a text holds a NUL byte. A file of
** version 4 or older (read as it is) has no compiler and origin: "". */
static int read_row(const kt_db *db, sqlite3_stmt *st, kt_db_row *r, kt_error *err) {
  char **texts[] = {&r->kernel, &r->device,  &r->backend, &r->size,    &r->objective,
                    &r->source, &r->options, &r->driver,  &r->version, &r->date, &r->config,
                    &r->compiler, &r->origin};
  int ncols = sqlite3_column_count(st) >= 15 ? 15 : 13;
  memset(r, 0, sizeof *r);
  for (int i = 0; i < 5; i++) *texts[i] = column_text(st, i);
  r->rank = sqlite3_column_int64(st, 5);
  for (int i = 5; i < 11; i++) *texts[i] = column_text(st, i + 1);
  r->time_ms = sqlite3_column_double(st, 12);
  for (int i = 11; i < 13; i++) *texts[i] = ncols == 15 ? column_text(st, i + 2) : strdup("");
  for (int i = 0; i < 13; i++)
    if (!*texts[i]) return kt_fail(err, "out of memory reading %s", db->path);
  for (int col = 0; col < ncols; col++)
    if (col != 5 && col != 12 && nul_column(db, st, r, col, err)) return -1;
  return 0;
}

static void row_free(kt_db_row *r) {
  char *texts[] = {r->kernel, r->device,  r->backend, r->size,    r->objective, r->source,
                   r->options, r->driver, r->version, r->date, r->config, r->compiler, r->origin};
  for (int i = 0; i < 13; i++) free(texts[i]);
  kt_db_free_metrics(r);
}

void kt_db_rows_free(kt_db_row *rows, size_t n) {
  for (size_t i = 0; i < n; i++) row_free(&rows[i]);
  free(rows);
}

int kt_db_query(kt_db *db, const kt_db_filter *f, kt_db_row **rows, size_t *n, kt_error *err) {
  static const char sql[] =
      "SELECT * FROM tuned WHERE (?1 IS NULL OR kernel = ?1) AND (?2 IS NULL OR device = ?2) AND "
      "(?3 IS NULL OR backend = ?3) AND (?4 IS NULL OR objective = ?4) AND "
      "(?5 IS NULL OR size = ?5) AND (?6 = 0 OR rank = 1) "
      "ORDER BY kernel, device, backend, objective, size, rank";
  const char *given[] = {f->kernel, f->device, f->backend, f->objective, f->size};
  sqlite3_stmt *st;
  size_t cap = 0;
  *rows = NULL;
  *n = 0;
  if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) return kt_db_fail(db, "reading", err);
  for (int i = 0; i < 5; i++)
    if (given[i]) bind_text(st, i + 1, given[i]);
  sqlite3_bind_int(st, 6, f->best_only);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (kt_grow(rows, &cap, *n + 1, sizeof **rows, err)) break;
    if (read_row(db, st, &(*rows)[(*n)++], err)) break;
  }
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) kt_db_fail(db, "reading", err);
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE && kt_db_read_metrics(db, *rows, *n, err) == 0) return 0;
  kt_db_rows_free(*rows, *n);
  *rows = NULL;
  *n = 0;
  return -1;
}

/* ---- the nearest size ---- */

/* An object of positive numbers, as kt.db stores sizes. */
static bool is_size(const kt_jvalue *v) {
  if (v->type != KT_JOBJECT || v->n == 0) return false;
  for (size_t i = 0; i < v->n; i++)
    if (v->u.members[i].value.type != KT_JNUMBER || !(v->u.members[i].value.u.num.f > 0))
      return false;
  return true;
}

/* log2 distance between two sizes, or -1 when their names differ (both
** sorted as stored; a name may hold a NUL byte, so lengths count). */
static double distance(const kt_jvalue *a, const kt_jvalue *b) {
  if (a->n != b->n) return -1;
  double sum = 0;
  for (size_t i = 0; i < a->n; i++) {
    const kt_jmember *x = &a->u.members[i], *y = &b->u.members[i];
    if (x->keylen != y->keylen || memcmp(x->key, y->key, x->keylen) != 0) return -1;
    double d = log2(x->value.u.num.f) - log2(y->value.u.num.f);
    sum += d * d;
  }
  return sqrt(sum);
}

/* A stored size that is no size: an error naming its row, as kt.db's list
** gives it; a row that cannot be read could have been the nearest. */
static long bad_size(const kt_db_row *r, const char *why, kt_error *err) {
  char shown[256];
  kt_quote(r->size, strlen(r->size), shown, sizeof shown);
  if (why) kt_fail(err, "the size stored for %s on %s (rank %lld) is no JSON object: %s: %s",
                   r->kernel, r->device, (long long)r->rank, why, shown);
  else kt_fail(err, "the size stored for %s on %s (rank %lld) is no size (an object of "
               "positive numbers): %s", r->kernel, r->device, (long long)r->rank, shown);
  return -2;
}

long kt_db_nearest(const kt_db_row *rows, size_t n, const char *size, double *dist,
                   kt_error *err) {
  kt_jdoc *want = kt_json_parse(size, strlen(size), err);
  if (!want) return kt_fail_prefix(err, "size %s: ", size), -2;
  long best = -1;
  for (size_t i = 0; i < n && best > -2; i++) {
    if (rows[i].rank != 1) continue;
    kt_error why;
    kt_jdoc *have = kt_json_parse(rows[i].size, strlen(rows[i].size), &why);
    const kt_jvalue *h = have ? kt_json_root(have) : NULL;
    double d = h && is_size(h) ? distance(kt_json_root(want), h) : -2;
    if (d == -2)
      best = bad_size(&rows[i], !h ? why.msg : h->type != KT_JOBJECT ? "not an object" : NULL, err);
    kt_json_free(have);
    if (d >= 0 && (best < 0 || d < *dist)) {
      best = (long)i;
      *dist = d;
    }
  }
  kt_json_free(want);
  return best;
}
