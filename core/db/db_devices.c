/*
** db_devices.c: the properties of the devices tuned for (db.h), kept in
** the tuned-configuration database so that a tuning on another device
** can tell how alike the two are (ktlua.transfer). A row per (device,
** backend): a JSON object of the device's numbers and names, replaced
** whole. Names and values are data: bound, never part of the SQL.
*/
#include <stdlib.h>
#include <string.h>

#include "db_int.h"

int kt_db_store_device(kt_db *db, const char *device, const char *backend,
                       const char *properties, const char *date, kt_error *err) {
  if (kt_db_writable(db, "storing a device's properties", err)) return -1;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db->h, "INSERT OR REPLACE INTO devices VALUES (?1, ?2, ?3, ?4)", -1, &st,
                         NULL) != SQLITE_OK)
    return kt_db_fail(db, "storing a device's properties", err);
  const char *texts[] = {device, backend, properties, date};
  for (int i = 0; i < 4; i++) sqlite3_bind_text(st, i + 1, texts[i], -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kt_db_fail(db, "storing a device's properties", err);
  sqlite3_finalize(st);
  return rc;
}

void kt_db_strings_free(char **list, size_t n) {
  for (size_t i = 0; list && i < n; i++) free(list[i]);
  free(list);
}

int kt_db_devices(kt_db *db, char ***list, size_t *n, kt_error *err) {
  *list = NULL;
  *n = 0;
  if (kt_db_version(db) < KT_DB_FIRST_WITH_PROVENANCE) return 0; /* read as it is */
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db->h, "SELECT device, backend, properties, date FROM devices "
                         "ORDER BY device, backend", -1, &st, NULL) != SQLITE_OK)
    return kt_db_fail(db, "reading the devices", err);
  size_t cap = 0;
  int step, rc = 0;
  while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
    if (kt_grow(list, &cap, 4 * (*n + 1), sizeof **list, err)) {
      rc = -1;
      break;
    }
    for (int i = 0; i < 4; i++) {
      const char *s = (const char *)sqlite3_column_text(st, i);
      size_t len = (size_t)sqlite3_column_bytes(st, i);
      if (s && memchr(s, '\0', len)) {
        rc = kt_fail(err, "%s: the %s of a device stored holds a NUL byte", kt_db_path(db),
                     sqlite3_column_name(st, i));
        for (int k = 0; k < i; k++) free((*list)[4 * *n + (size_t)k]);
        break;
      }
      if (!((*list)[4 * *n + (size_t)i] = kt_strdup(s ? s : "", err))) {
        for (int k = 0; k < i; k++) free((*list)[4 * *n + (size_t)k]);
        rc = -1;
        break;
      }
    }
    if (rc == 0) (*n)++;
  }
  if (rc == 0 && step != SQLITE_DONE) rc = kt_db_fail(db, "reading the devices", err);
  sqlite3_finalize(st);
  if (rc) {
    kt_db_strings_free(*list, 4 * *n);
    *list = NULL;
    *n = 0;
  }
  return rc;
}
