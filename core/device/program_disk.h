/*
** program_disk.h: compiling through the program cache on disk
** (program_store.h). A program is looked for there before it is compiled,
** and what is compiled is kept there, keyed by its source, options and
** kernel, the device's identity and the headers its compile reads
** (headers.h). A program whose headers cannot be known, or changed while it
** compiled, is compiled every time and not kept; the caller is told why
** (a tuning says it in its summary's device_log).
*/
#ifndef KT_PROGRAM_DISK_H
#define KT_PROGRAM_DISK_H

#include "backend.h"
#include "headers.h"
#include "program_store.h"

/* How a program the store kept is loaded (NULL: the backend's prog_load). */
typedef kt_bprog *(*kt_program_loader)(void *ud, const unsigned char *bytes, size_t size,
                                       const char *options, const char *name, char **log,
                                       kt_error *err);

/* Where a builder finds programs: a store (NULL: none), the identity of
** the device its programs are for, and whose search finds their headers.
** With `there`, the device's own process keeps them, on its node, and a
** build asks it (backend.h, build_there: a device of another node). */
typedef struct kt_program_disk {
  kt_program_store *store;
  const char *identity;
  kt_header_rules rules;
  bool there;
  kt_program_loader load;
  void *load_ud;
} kt_program_disk;

/* A program to build, and the headers its compile reads, found by
** kt_program_disk_load before the compile (kt_program_src_clear frees them). */
typedef struct kt_program_src {
  const char *source, *options, *name;
  kt_headers headers;
} kt_program_src;

void kt_program_src_clear(kt_program_src *p);

/* Compiles, or loads from the store what an earlier compile kept there
** (*loaded: a program, or NULL for a refusal kept there), keeping what it
** compiles; *unkept (where not NULL): why what it compiled was not kept
** (malloc'd), else NULL. As the backend's compile; the log of a loaded
** program is its compile's. Thread-safe. */
kt_bprog *kt_program_build(const kt_program_disk *disk, const kt_backend *be, kt_bctx *ctx,
                           const char *source, const char *options, const char *name,
                           char **log, bool *loaded, char **unkept, kt_error *err);

/* The parts of kt_program_build: a program loaded from the store, or NULL
** (none there, or one that would not load: it is removed; or, *refused,
** an earlier compile that the compiler refused, *log its messages);
** keeping a program's binary there, or a refusal (kt_program_disk_refused:
** the compiler's log, where it gave one, kept as an entry without a
** binary: compilers refuse a source alike every time, and the slowest
** compiles are often refusals, ptxas's of too much shared memory). Keeping
** returns why it did not keep (malloc'd: headers not known, or changed
** since kt_program_disk_load), else NULL. They do nothing without a store. */
kt_bprog *kt_program_disk_load(const kt_program_disk *disk, const kt_backend *be, kt_bctx *ctx,
                               kt_program_src *p, char **log, bool *refused);
char *kt_program_disk_keep(const kt_program_disk *disk, const kt_backend *be,
                           const kt_program_src *p, const unsigned char *bytes, size_t size,
                           const char *log);
char *kt_program_disk_refused(const kt_program_disk *disk, const kt_backend *be,
                              const kt_program_src *p, const char *log);

#endif
