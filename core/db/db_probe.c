/*
** db_probe.c: device probes (probe.h) kept in the tuned-configuration
** database (db.h): a record per (device, backend), its rows in a table of
** their own, replaced whole in one transaction.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_int.h"
#include "probe.h"

static int finish(kt_db *db, sqlite3_stmt *st, const char *doing, kt_error *err) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return rc == SQLITE_DONE ? 0 : kt_db_fail(db, doing, err);
}

static void bind_key(sqlite3_stmt *st, const kt_db_probe_key *k) {
  sqlite3_bind_text(st, 1, k->device, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, k->backend, -1, SQLITE_TRANSIENT);
}

static int store_rows(kt_db *db, const kt_db_probe_key *k, const kt_probe *p, kt_error *err) {
  sqlite3 *h = kt_db_sqlite(db);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h, "INSERT INTO probe_rows VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                         -1, &st, NULL) != SQLITE_OK)
    return kt_db_fail(db, "storing a probe", err);
  int rc = 0;
  for (size_t i = 0; i < p->n && rc == 0; i++) {
    const kt_probe_row *r = &p->rows[i];
    bind_key(st, k);
    sqlite3_bind_text(st, 3, r->kind, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, r->name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)r->size);
    sqlite3_bind_int64(st, 6, r->reps);
    sqlite3_bind_double(st, 7, r->mean_ns);
    sqlite3_bind_double(st, 8, r->rse);
    sqlite3_bind_int(st, 9, r->capped);
    sqlite3_bind_double(st, 10, r->value);
    rc = finish(db, st, "storing a probe", err);
  }
  sqlite3_finalize(st);
  return rc;
}

static int store_head(kt_db *db, const kt_db_probe_key *k, const kt_probe *p, kt_error *err) {
  sqlite3 *h = kt_db_sqlite(db);
  sqlite3_stmt *del = NULL, *rows = NULL, *ins = NULL;
  int rc =
      sqlite3_prepare_v2(h, "DELETE FROM probes WHERE device = ?1 AND backend = ?2", -1, &del, NULL) ||
      sqlite3_prepare_v2(h, "DELETE FROM probe_rows WHERE device = ?1 AND backend = ?2", -1, &rows,
                         NULL) ||
      sqlite3_prepare_v2(h, "INSERT INTO probes VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &ins, NULL);
  if (rc) rc = kt_db_fail(db, "storing a probe", err);
  if (rc == 0) {
    bind_key(del, k);
    bind_key(rows, k);
    bind_key(ins, k);
    sqlite3_bind_text(ins, 3, k->driver ? k->driver : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 4, k->version ? k->version : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 5, k->date ? k->date : "", -1, SQLITE_TRANSIENT);
    if (p->notes) sqlite3_bind_text(ins, 6, p->notes, -1, SQLITE_TRANSIENT);
    rc = finish(db, del, "storing a probe", err);
    if (rc == 0) rc = finish(db, rows, "storing a probe", err);
    if (rc == 0) rc = finish(db, ins, "storing a probe", err);
  }
  sqlite3_finalize(del);
  sqlite3_finalize(rows);
  sqlite3_finalize(ins);
  return rc;
}

int kt_db_store_probe(kt_db *db, const kt_db_probe_key *key, const kt_probe *p, kt_error *err) {
  sqlite3 *h = kt_db_sqlite(db);
  if (kt_db_writable(db, "storing a probe", err)) return -1;
  if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return kt_db_fail(db, "storing a probe", err);
  int rc = store_head(db, key, p, err);
  if (rc == 0) rc = store_rows(db, key, p, err);
  if (rc == 0 && sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    rc = kt_db_fail(db, "storing a probe", err);
  if (rc) sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

static char *text(sqlite3_stmt *st, int i) {
  const unsigned char *s = sqlite3_column_text(st, i);
  return s ? kt_strdup((const char *)s, NULL) : NULL;
}

static int read_rows(kt_db *db, const char *device, const char *backend, kt_probe *p,
                     kt_error *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(kt_db_sqlite(db),
                         "SELECT kind, name, size, reps, mean_ns, rse, capped, value FROM "
                         "probe_rows WHERE device = ?1 AND backend = ?2 ORDER BY rowid",
                         -1, &st, NULL) != SQLITE_OK)
    return kt_db_fail(db, "reading a probe", err);
  sqlite3_bind_text(st, 1, device, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, backend, -1, SQLITE_TRANSIENT);
  int rc = 0, step;
  while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
    kt_probe_row r = {0};
    const unsigned char *kind = sqlite3_column_text(st, 0), *name = sqlite3_column_text(st, 1);
    snprintf(r.kind, sizeof r.kind, "%s", kind ? (const char *)kind : "");
    snprintf(r.name, sizeof r.name, "%s", name ? (const char *)name : "");
    r.size = (uint64_t)sqlite3_column_int64(st, 2);
    r.reps = (uint32_t)sqlite3_column_int64(st, 3);
    r.mean_ns = sqlite3_column_double(st, 4);
    r.rse = sqlite3_column_double(st, 5);
    r.capped = sqlite3_column_int(st, 6) != 0;
    r.value = sqlite3_column_double(st, 7);
    rc = kt_probe_add(p, &r, err);
  }
  if (rc == 0 && step != SQLITE_DONE) rc = kt_db_fail(db, "reading a probe", err);
  sqlite3_finalize(st);
  return rc;
}

int kt_db_read_probe(kt_db *db, const char *device, const char *backend, kt_probe *p,
                     kt_db_probe_meta *meta, kt_error *err) {
  memset(p, 0, sizeof *p);
  memset(meta, 0, sizeof *meta);
  if (kt_db_version(db) < 2) return 0; /* a version 1 file, read as it is, has no probes */
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(kt_db_sqlite(db),
                         "SELECT driver, version, date, notes FROM probes WHERE device = ?1 AND "
                         "backend = ?2",
                         -1, &st, NULL) != SQLITE_OK)
    return kt_db_fail(db, "reading a probe", err);
  sqlite3_bind_text(st, 1, device, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, backend, -1, SQLITE_TRANSIENT);
  int step = sqlite3_step(st), rc = 0;
  if (step == SQLITE_ROW) {
    meta->driver = text(st, 0);
    meta->version = text(st, 1);
    meta->date = text(st, 2);
    p->notes = text(st, 3);
  } else if (step != SQLITE_DONE) {
    rc = kt_db_fail(db, "reading a probe", err);
  }
  sqlite3_finalize(st);
  if (rc == 0 && step == SQLITE_ROW) rc = read_rows(db, device, backend, p, err);
  if (rc) {
    kt_probe_free(p);
    kt_db_probe_meta_free(meta);
    return -1;
  }
  return step == SQLITE_ROW;
}

void kt_db_probe_meta_free(kt_db_probe_meta *m) {
  free(m->driver);
  free(m->version);
  free(m->date);
  memset(m, 0, sizeof *m);
}
