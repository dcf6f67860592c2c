/*
** db_open.c: opening the tuned-configuration database (db.h). A file is
** ktlua's when its header carries ktlua's application_id (before version
** 3: none, and user_version 1 or 2) and it holds ktlua's tables, with
** ktlua's columns, and nothing else. A new or empty file is set up, an
** older ktlua file brought up to date; any other file is refused before
** anything is written to it. Reading needs no write: a file that cannot
** be written, or whose folder cannot, is opened read-only.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db_int.h"

#define TUNED_COLUMNS                                                                       \
  "CREATE TABLE IF NOT EXISTS tuned ("                                                      \
  " kernel TEXT NOT NULL, device TEXT NOT NULL, backend TEXT NOT NULL, size TEXT NOT NULL," \
  " objective TEXT NOT NULL, rank INTEGER NOT NULL, source TEXT NOT NULL,"                  \
  " options TEXT NOT NULL, driver TEXT NOT NULL, version TEXT NOT NULL, date TEXT NOT NULL," \
  " config TEXT NOT NULL, time_ms REAL NOT NULL,"
#define TUNED_KEY " PRIMARY KEY (kernel, device, backend, size, objective, rank));"

/* Version 5 added the last two columns of tuned (ALTER TABLE appends them:
** an older file brought up to date has the columns of a new one). */
static const char schema[] =
    TUNED_COLUMNS " compiler TEXT NOT NULL DEFAULT '', origin TEXT NOT NULL DEFAULT ''," TUNED_KEY
    KT_DB_PROBE_SCHEMA KT_DB_METRICS_SCHEMA KT_DB_DEVICES_SCHEMA;
/* The tables of the versions before 5, to compare an older file with. */
static const char schema_v4[] = TUNED_COLUMNS TUNED_KEY KT_DB_PROBE_SCHEMA KT_DB_METRICS_SCHEMA;
static const char migrate_v5[] =
    "ALTER TABLE tuned ADD COLUMN compiler TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE tuned ADD COLUMN origin TEXT NOT NULL DEFAULT '';";

/* The tables of each version (1: tuned alone; 2 and 3: the probes too). */
static const char *const tables_v1[] = {"tuned", NULL};
static const char *const tables_v2[] = {"tuned", "probes", "probe_rows", NULL};
static const char *const tables_v4[] = {"tuned", "probes", "probe_rows", "tuned_metrics", NULL};
static const char *const tables_v5[] = {"tuned", "probes", "probe_rows", "tuned_metrics",
                                        "devices", NULL};

/* Those of a file of that version; of this version when it is none ktlua wrote. */
static const char *const *tables_of(int version, bool known) {
  if (!known || version >= KT_DB_FIRST_WITH_PROVENANCE) return tables_v5;
  if (version >= KT_DB_FIRST_WITH_METRICS) return tables_v4;
  return version == 1 ? tables_v1 : tables_v2;
}

enum { FILE_NEW, FILE_OURS, FILE_OLDER };

struct sqlite3 *kt_db_sqlite(kt_db *db) { return db->h; }
const char *kt_db_path(const kt_db *db) { return db->path; }
const char *kt_db_readonly(const kt_db *db) { return db->readonly; }

int kt_db_fail(kt_db *db, const char *doing, kt_error *err) {
  int code = sqlite3_errcode(db->h);
  const char *why = sqlite3_errmsg(db->h);
  db->code = code;
  if (code == SQLITE_NOTADB) return kt_fail(err, "%s is not a SQLite database (%s)", db->path, why);
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
    return kt_fail(err, "%s: %s: the database stayed locked by another process for %g s",
                   db->path, doing, db->busy_ms / 1000.0);
  return kt_fail(err, "%s: %s: %s", db->path, doing, why);
}

int kt_db_exec(kt_db *db, const char *sql, const char *doing, kt_error *err) {
  return sqlite3_exec(db->h, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : kt_db_fail(db, doing, err);
}

static int pragma_int(kt_db *db, const char *name, int *value, kt_error *err) {
  char sql[64];
  sqlite3_stmt *st;
  snprintf(sql, sizeof sql, "PRAGMA %s", name);
  if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
    return kt_db_fail(db, "reading its header", err);
  int rc = sqlite3_step(st);
  *value = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 0 : kt_db_fail(db, "reading its header", err);
}

/* ---- what the file holds ---- */

static const char *column_text(sqlite3_stmt *st, int i) {
  const unsigned char *s = sqlite3_column_text(st, i);
  return s ? (const char *)s : "";
}

/* The columns of a table of h ("kernel TEXT NOT NULL key 1, ...") into
** buf: "" when h has no such table, cut short (and so unlike ktlua's)
** when longer than buf; -1 when SQLite fails. */
static int columns(sqlite3 *h, const char *table, char *buf, size_t size) {
  static const char sql[] = "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)";
  sqlite3_stmt *st;
  buf[0] = 0;
  if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) return -1;
  sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
  size_t len = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW && len < size - 1) {
    const char *type = column_text(st, 1);
    int n = snprintf(buf + len, size - len, "%s%s%s%s%s", len ? ", " : "", column_text(st, 0),
                     *type ? " " : "", type, sqlite3_column_int(st, 2) ? " NOT NULL" : "");
    len = n < 0 || (size_t)n >= size - len ? size - 1 : len + (size_t)n;
    if (sqlite3_column_int(st, 3) && len < size - 1) {
      n = snprintf(buf + len, size - len, " key %d", sqlite3_column_int(st, 3));
      len = n < 0 || (size_t)n >= size - len ? size - 1 : len + (size_t)n;
    }
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

static bool listed(const char *const *names, const char *name) {
  for (; *names; names++)
    if (strcmp(*names, name) == 0) return true;
  return false;
}

/* 1 with what it is in why when the file has a schema object (table,
** index, view, trigger) that is none of `tables`; 0 when not; -1. */
static int other_object(kt_db *db, const char *const *tables, char *why, size_t size,
                        kt_error *err) {
  static const char sql[] = "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' "
                            "ESCAPE '\\' ORDER BY name";
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
    return kt_db_fail(db, "reading its tables", err);
  int rc, found = 0;
  while (!found && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *type = column_text(st, 0), *name = column_text(st, 1);
    if (strcmp(type, "table") != 0 || !listed(tables, name)) {
      snprintf(why, size, "it has the %s '%s', which ktlua's have not", type, name);
      found = 1;
    }
  }
  sqlite3_finalize(st);
  return found ? 1 : rc == SQLITE_DONE ? 0 : kt_db_fail(db, "reading its tables", err);
}

/* 1 with what differs in why when the file's tables are not `tables`
** with ktlua's columns (those of a database made from the schema, ref);
** 0 when they are; -1. */
static int other_tables(kt_db *db, sqlite3 *ref, const char *const *tables, char *why,
                        size_t size, kt_error *err) {
  int rc = other_object(db, tables, why, size, err);
  char have[1024], want[1024];
  for (; rc == 0 && *tables; tables++) {
    if (columns(db->h, *tables, have, sizeof have))
      return kt_db_fail(db, "reading its tables", err);
    if (columns(ref, *tables, want, sizeof want))
      return kt_fail(err, "%s: ktlua's schema: %s", db->path, sqlite3_errmsg(ref));
    if (!*have) snprintf(why, size, "it has no table '%s'", *tables);
    else if (strcmp(have, want) != 0)
      snprintf(why, size, "its table '%s' has the columns (%s), not ktlua's", *tables, have);
    rc = strcmp(have, want) != 0;
  }
  return rc;
}

static int schema_objects(kt_db *db, int *n, kt_error *err) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db->h, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) != SQLITE_OK)
    return kt_db_fail(db, "reading its tables", err);
  int rc = sqlite3_step(st);
  *n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 0 : kt_db_fail(db, "reading its tables", err);
}

/* Whether the file is ktlua's: FILE_NEW (nothing in it), FILE_OURS (this
** version) or FILE_OLDER (db->version tells which); -1 with why not. */
static int classify(kt_db *db, sqlite3 *ref, sqlite3 *ref_v4, kt_error *err) {
  int app = 0, version = 0, objects = 0;
  if (pragma_int(db, "application_id", &app, err) || pragma_int(db, "user_version", &version, err)
      || schema_objects(db, &objects, err))
    return -1;
  if (app == 0 && version == 0 && objects == 0) return FILE_NEW;
  bool ours = app == KT_DB_APPLICATION_ID;
  if (ours && version > KT_DB_VERSION)
    return kt_fail(err, "%s was written by a newer ktlua (database version %d; this one reads %d)",
                   db->path, version, KT_DB_VERSION);
  bool known = ours ? version >= KT_DB_FIRST_WITH_ID
                    : version >= 1 && version < KT_DB_FIRST_WITH_ID;
  char why[1536];
  if (app != 0 && !ours) {
    snprintf(why, sizeof why, "its SQLite application_id is 0x%08x, ktlua's 0x%08x", (unsigned)app,
             KT_DB_APPLICATION_ID);
  } else {
    bool older = known && version < KT_DB_FIRST_WITH_PROVENANCE;
    int rc = other_tables(db, older ? ref_v4 : ref, tables_of(version, known), why, sizeof why, err);
    if (rc < 0) return -1;
    if (rc == 0 && known) {
      db->version = version;
      return version == KT_DB_VERSION ? FILE_OURS : FILE_OLDER;
    }
    if (rc == 0)
      snprintf(why, sizeof why, "user_version %d, which ktlua never wrote%s", version,
               ours ? " under its application_id" : " without its application_id");
  }
  return kt_fail(err, "%s is not a ktlua database (%s); it was left unchanged", db->path, why);
}

/* ---- setting up ---- */

/* A new file gets the tables, an older one those it lacks, and both the
** version and application_id: in one transaction, classified again
** under its lock, as another process may have set it up meanwhile. */
static int bring_up(kt_db *db, sqlite3 *ref, sqlite3 *ref_v4, kt_error *err) {
  char sql[sizeof schema + sizeof migrate_v5 + 128];
  if (kt_db_exec(db, "PRAGMA journal_mode=WAL", "setting it up", err) ||
      kt_db_exec(db, "BEGIN IMMEDIATE", "setting it up", err))
    return -1;
  int kind = classify(db, ref, ref_v4, err);
  /* A file of version 4 or older that has a tuned table gains its columns. */
  bool alter = kind == FILE_OLDER && db->version < KT_DB_FIRST_WITH_PROVENANCE;
  snprintf(sql, sizeof sql, "%s%s PRAGMA application_id = %d; PRAGMA user_version = %d;",
           alter ? migrate_v5 : "", schema, KT_DB_APPLICATION_ID, KT_DB_VERSION);
  /* WAL (above): readers never wait for a writer. */
  int rc = kind < 0 ? -1 : kind == FILE_OURS ? 0 : kt_db_exec(db, sql, "creating its tables", err);
  if (rc == 0 && kt_db_exec(db, "COMMIT", "creating its tables", err) == 0) {
    db->version = KT_DB_VERSION;
    return 0;
  }
  sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
  return -1;
}

/* ktlua's tables (of this version, or of version 4) in a database in
** memory, to compare a file's with. */
static sqlite3 *reference(kt_db *db, const char *tables, kt_error *err) {
  sqlite3 *ref = NULL;
  if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
      sqlite3_exec(ref, tables, NULL, NULL, NULL) == SQLITE_OK)
    return ref;
  kt_fail(err, "%s: ktlua's schema: %s", db->path, ref ? sqlite3_errmsg(ref) : "out of memory");
  sqlite3_close(ref);
  return NULL;
}

static int set_up(kt_db *db, kt_error *err) {
  sqlite3 *ref = reference(db, schema, err), *ref_v4 = ref ? reference(db, schema_v4, err) : NULL;
  if (!ref_v4) {
    sqlite3_close(ref);
    return -1;
  }
  int kind = classify(db, ref, ref_v4, err), rc = kind < 0 ? -1 : 0;
  if (kind == FILE_NEW && db->readonly)
    rc = kt_fail(err, "%s holds no database yet, and it is opened read-only (%s)", db->path,
                 db->readonly);
  else if (kind == FILE_NEW || (kind == FILE_OLDER && !db->readonly))
    rc = bring_up(db, ref, ref_v4, err);
  sqlite3_close(ref);
  sqlite3_close(ref_v4);
  return rc;
}

/* ---- opening ---- */

/* Opens name with flags and sets it up; db->code says why it failed. */
static int attempt(kt_db *db, const char *name, int flags, kt_error *err) {
  db->code = 0;
  int rc = sqlite3_open_v2(name, &db->h, flags, NULL);
  if (rc != SQLITE_OK) {
    int e = db->h ? sqlite3_system_errno(db->h) : 0;
    kt_fail(err, "cannot open the database %s: %s%s%s%s", db->path,
            db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc), e ? " (" : "", e ? strerror(e) : "",
            e ? ")" : "");
  } else {
    sqlite3_busy_timeout(db->h, db->busy_ms);
    if (!db->readonly && sqlite3_db_readonly(db->h, "main") == 1)
      db->readonly = "the file is not writable";
    if (set_up(db, err) == 0) return 0;
  }
  sqlite3_close(db->h);
  db->h = NULL;
  return -1;
}

/* Whether the last attempt failed for want of writing (the file, or the
** -wal and -shm files beside it in the folder). */
static bool refused_write(const kt_db *db) {
  int code = db->code & 0xff;
  return code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_PERM;
}

/* "file:" and the path, %-escaped, for SQLite's URI parameters. */
static char *uri(const char *path, const char *params, kt_error *err) {
  char *s = kt_calloc(strlen(path) * 3 + strlen(params) + 16, 1, err);
  if (!s) return NULL;
  char *p = s + sprintf(s, path[0] == '/' ? "file://" : "file:");
  for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
    bool plain = (*c >= '0' && *c <= '9') || ((*c | 0x20) >= 'a' && (*c | 0x20) <= 'z');
    if (plain || strchr("/._-~", *c))
      *p++ = (char)*c;
    else
      p += sprintf(p, "%%%02X", *c);
  }
  strcpy(p, params);
  return s;
}

/* A file in WAL mode in a folder that cannot be written: SQLite cannot
** make its -shm file to read it; as immutable it reads the file alone,
** which holds it all unless a -wal file holds changes not yet in it. */
static int attempt_immutable(kt_db *db, kt_error *err) {
  size_t len = strlen(db->path);
  char *wal = kt_calloc(len + 5, 1, err);
  if (!wal) return -1;
  memcpy(wal, db->path, len);
  memcpy(wal + len, "-wal", 5);
  struct stat st;
  int rc = stat(wal, &st) == 0 && st.st_size > 0
               ? kt_fail(err, "%s: its write-ahead log %s holds changes not yet in the file, and "
                              "reading them needs a folder that can be written", db->path, wal)
               : 0;
  free(wal);
  char *name = rc ? NULL : uri(db->path, "?immutable=1", err);
  if (!name) return -1;
  rc = attempt(db, name, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, err);
  free(name);
  return rc;
}

kt_db *kt_db_open(const char *path, int busy_ms, bool readonly, kt_error *err) {
  kt_db *db = kt_calloc(1, sizeof *db, err);
  if (!db || !(db->path = kt_strdup(path, err))) {
    free(db);
    return NULL;
  }
  db->busy_ms = busy_ms;
  db->readonly = readonly ? "as asked" : NULL;
  int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = attempt(db, path, flags, err);
  if (rc && !readonly && refused_write(db)) {
    db->readonly = "the file or its folder is not writable";
    rc = attempt(db, path, SQLITE_OPEN_READONLY, err);
  }
  if (rc && db->readonly && refused_write(db)) rc = attempt_immutable(db, err);
  if (rc) {
    kt_db_close(db);
    return NULL;
  }
  return db;
}

void kt_db_close(kt_db *db) {
  if (!db) return;
  sqlite3_close(db->h);
  free(db->path);
  free(db);
}

int kt_db_version(const kt_db *db) { return db->version; }
