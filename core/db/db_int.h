/*
** db_int.h: what the database's files (db.c, db_open.c, db_probe.c) share.
*/
#ifndef KT_DB_INT_H
#define KT_DB_INT_H

#include <sqlite3.h>

#include "db.h"

/* The file format's version, in SQLite's user_version: 1 the tuned
** table, 2 the probes tables, 3 ktlua's application_id in the header,
** 4 the tuned_metrics table, 5 the tuned table's compiler and origin
** columns and the devices table. */
#define KT_DB_VERSION 5
#define KT_DB_FIRST_WITH_PROVENANCE 5
#define KT_DB_FIRST_WITH_METRICS 4
#define KT_DB_FIRST_WITH_ID 3
#define KT_DB_APPLICATION_ID 0x6b746c75 /* "ktlu" */

struct kt_db {
  sqlite3 *h;
  char *path;
  int busy_ms;
  int version;          /* KT_DB_VERSION, or an older one opened read-only */
  const char *readonly; /* why it was opened read-only; NULL when writable */
  int code;             /* SQLite's code of the last failure (kt_db_fail) */
};

/* The version of the file opened (older ones are read as they are). */
int kt_db_version(const kt_db *db);
/* Runs sql; on failure kt_db_fail's error, saying what was being done. */
int kt_db_exec(kt_db *db, const char *sql, const char *doing, kt_error *err);
/* 0 when db can be written, else an error saying why not. */
int kt_db_writable(kt_db *db, const char *doing, kt_error *err);

/* A stored configuration's metrics, a row per (row of tuned, name). */
#define KT_DB_METRICS_SCHEMA                                                                \
  "CREATE TABLE IF NOT EXISTS tuned_metrics (kernel TEXT NOT NULL, device TEXT NOT NULL,"   \
  " backend TEXT NOT NULL, size TEXT NOT NULL, objective TEXT NOT NULL,"                    \
  " rank INTEGER NOT NULL, name TEXT NOT NULL, value REAL NOT NULL,"                        \
  " PRIMARY KEY (kernel, device, backend, size, objective, rank, name));"

/* The properties of the devices tuned for (db_devices.c), a row per
** (device, backend): a JSON object of their numbers and names. */
#define KT_DB_DEVICES_SCHEMA                                                                \
  "CREATE TABLE IF NOT EXISTS devices (device TEXT NOT NULL, backend TEXT NOT NULL,"        \
  " properties TEXT NOT NULL, date TEXT NOT NULL, PRIMARY KEY (device, backend));"

/* db_metrics.c, inside kt_db_store's transaction: replaces the metrics of
** the key that rows[0] names by those of rows[0..n); -1 with SQLite's
** error (kt_db_fail's to report). */
int kt_db_replace_metrics(kt_db *db, const kt_db_row *rows, size_t n);
/* Reads each row's metrics (none before version 4); -1 with err. */
int kt_db_read_metrics(kt_db *db, kt_db_row *rows, size_t n, kt_error *err);
void kt_db_free_metrics(kt_db_row *r);

#endif
