/*
** db.h: the tuned-configuration database, in SQLite. A row is one of the
** best configurations (rank 1 the best) that a tuning found for a kernel
** on a device at one problem size and objective, with what identifies
** the kernel's code (a hash of its source, its compiler options), so that
** a later run or a production build takes the stored configuration, and
** a stale one (the kernel changed since) is known as such. SQLite lets
** several processes read and write one file at once.
*/
#ifndef KT_DB_H
#define KT_DB_H

#include "kt.h"

typedef struct kt_db kt_db;

/* A metric of a stored configuration (energy, a counter, a user's):
** its name is data, any text without a NUL byte. */
typedef struct kt_db_metric {
  char *name;
  double value;
} kt_db_metric;

/* The key of a stored tuning is (kernel, device, backend, size,
** objective); size is a JSON object of named positive numbers with its
** names sorted ({"m":512,"n":4096}), compared as text. */
typedef struct kt_db_row {
  char *kernel, *device, *backend, *size, *objective;
  char *source, *options;   /* what identifies the kernel's code */
  char *driver, *version, *date;
  char *compiler;           /* NVRTC's version, or the OpenCL platform's ("" unknown) */
  char *origin;             /* what re-runs it: "t1:" and a T1 file's path, or "" */
  int64_t rank;             /* 1: the best */
  char *config;             /* JSON object: parameter name -> value */
  double time_ms;
  kt_db_metric *metrics;    /* in the order stored (NAN values are not stored) */
  size_t nmetrics;
} kt_db_row;

/* Opens the database at path; a writer waits up to busy_ms for another's
** transaction. A missing or empty file becomes a new database, unless
** readonly; a file that is not ktlua's database is refused, unchanged.
** Where the file or its folder cannot be written it is opened read-only. */
kt_db *kt_db_open(const char *path, int busy_ms, bool readonly, kt_error *err);
void kt_db_close(kt_db *db);
const char *kt_db_path(const kt_db *db);
/* Why it was opened read-only, or NULL when it can be written. */
const char *kt_db_readonly(const kt_db *db);

/* Replaces the rows of the key that rows[0] names by rows[0..n), with
** their metrics, in one transaction: readers see the old rows or the new
** ones. */
int kt_db_store(kt_db *db, const kt_db_row *rows, size_t n, kt_error *err);

/* The rows whose fields equal the given ones (NULL: any), ordered by
** kernel, device, backend, objective, size and rank, with their metrics
** (none from a file of version 3 or older opened read-only). */
typedef struct kt_db_filter {
  const char *kernel, *device, *backend, *objective, *size;
  bool best_only; /* rank 1 only */
} kt_db_filter;

int kt_db_query(kt_db *db, const kt_db_filter *f, kt_db_row **rows, size_t *n, kt_error *err);
void kt_db_rows_free(kt_db_row *rows, size_t n);

/* Among rows (of one kernel and device), the rank-1 row whose size has
** the same names as `size` and the least distance to it: the square root
** of the summed squares of the differences of log2 of each dimension (as
** Kernel Launcher measures it). Returns its position, or -1 when no row
** has sizes of the same names; -2 when size is no JSON or a rank-1 row's
** size is no size (an object of positive numbers), naming the row;
** *distance is 0 for the same size. */
long kt_db_nearest(const kt_db_row *rows, size_t n, const char *size, double *distance,
                   kt_error *err);

/* A stored tuning measured again (ktlua.db_recheck): every rank of the key
** that r names (kernel, device, backend, size, objective) takes r's
** driver, compiler, version and date, and rank 1 r's time_ms unless it is
** NAN. 0 when done, 1 when the key holds nothing, -1 with err. */
int kt_db_touch(kt_db *db, const kt_db_row *r, kt_error *err);

/* The properties of a device tuned for (a JSON object of numbers and
** strings), replacing those stored for (device, backend). */
int kt_db_store_device(kt_db *db, const char *device, const char *backend,
                       const char *properties, const char *date, kt_error *err);
/* Every device's properties: n rows of device, backend, properties, date
** (4 strings each, freed with kt_db_strings_free(list, 4 * n)); none
** before version 5. */
int kt_db_devices(kt_db *db, char ***list, size_t *n, kt_error *err);
void kt_db_strings_free(char **list, size_t n);

/* For the database's other tables (db_probe.c): its SQLite handle, and
** the error of its last call, saying what was being done. */
struct sqlite3;
struct sqlite3 *kt_db_sqlite(kt_db *db);
int kt_db_fail(kt_db *db, const char *doing, kt_error *err);

/* Device probes (probe.h), one record per (device, backend). */
#define KT_DB_PROBE_SCHEMA                                                                  \
  "CREATE TABLE IF NOT EXISTS probes (device TEXT NOT NULL, backend TEXT NOT NULL,"         \
  " driver TEXT NOT NULL, version TEXT NOT NULL, date TEXT NOT NULL, notes TEXT,"           \
  " PRIMARY KEY (device, backend));"                                                        \
  "CREATE TABLE IF NOT EXISTS probe_rows (device TEXT NOT NULL, backend TEXT NOT NULL,"     \
  " kind TEXT NOT NULL, name TEXT NOT NULL, size INTEGER NOT NULL, reps INTEGER NOT NULL,"  \
  " mean_ns REAL NOT NULL, rse REAL NOT NULL, capped INTEGER NOT NULL, value REAL NOT NULL,"\
  " PRIMARY KEY (device, backend, kind, name, size));"

struct kt_probe;
typedef struct kt_db_probe_key {
  const char *device, *backend, *driver, *version, *date;
} kt_db_probe_key;
/* Replaces the record of (device, backend). */
int kt_db_store_probe(kt_db *db, const kt_db_probe_key *key, const struct kt_probe *p,
                      kt_error *err);
/* Reads it back into p (zeroed first; the caller frees it with
** kt_probe_free) and meta (freed with kt_db_probe_meta_free): 1 when found,
** 0 when the database has none, -1 on error (both left empty). */
typedef struct kt_db_probe_meta {
  char *driver, *version, *date;
} kt_db_probe_meta;
int kt_db_read_probe(kt_db *db, const char *device, const char *backend, struct kt_probe *p,
                     kt_db_probe_meta *meta, kt_error *err);
void kt_db_probe_meta_free(kt_db_probe_meta *m);

#endif
