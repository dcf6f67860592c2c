/*
** server_build.h: a device server's own program cache on disk (OP_BUILD).
** A tuner keeps the programs of a device of its own host in its program
** cache (program_disk.h); the server of a device of another node (far.h)
** keeps that device's programs on its own node instead: in the folder that
** KTLUA_CACHE (KTLUA_CACHE_SIZE, ...) names in that node's environment,
** with the headers found in that node's files, as its compiler finds them.
** A cache folder on a file system shared by several nodes is safe: each
** entry is written whole under a name of its own and renamed into place
** (program_store.c).
*/
#ifndef KT_SERVER_BUILD_H
#define KT_SERVER_BUILD_H

#include <pthread.h>

#include "program_disk.h"

typedef struct kt_server_disk {
  pthread_mutex_t lock;      /* compile threads open it at their first build */
  bool looked;               /* the settings were read */
  kt_program_disk disk;      /* store NULL: none (off, or why) */
  char *why;                 /* why there is none, when it is an error */
  const kt_device_info *dev; /* the device opened (its identity keys the programs) */
} kt_server_disk;

/* What OP_BUILD says beside the program: whether it came from the cache,
** and why it was not kept there (malloc'd, or NULL). */
typedef struct kt_built {
  bool loaded;
  char *unkept;
} kt_built;

/* When the device is open: dev outlives d; load, where not NULL, is how a
** program the cache kept is loaded (the server's loads when idle). */
void kt_server_disk_init(kt_server_disk *d, const kt_device_info *dev, kt_program_loader load,
                         void *load_ud);

/* kt_program_build through d (thread-safe); *unkept also says why there
** is no cache where its settings are wrong. */
kt_bprog *kt_server_build(kt_server_disk *d, const kt_backend *be, kt_bctx *ctx,
                          const char *source, const char *options, const char *name,
                          char **log, bool *loaded, char **unkept, kt_error *err);

#endif
