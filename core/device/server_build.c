/*
** server_build.c: a device server's own program cache on disk
** (server_build.h).
*/
#include "server_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kt_server_disk_init(kt_server_disk *d, const kt_device_info *dev, kt_program_loader load,
                         void *load_ud) {
  pthread_mutex_init(&d->lock, NULL);
  d->dev = dev;
  d->disk.load = load;
  d->disk.load_ud = load_ud;
}

/* The settings of this process's environment (the node's), read once:
** the server lives until its process ends, and so does what it opens. */
static void look(kt_server_disk *d) {
  bool off;
  kt_error err;
  const char *b = kt_device_string(d->dev, "backend");
  d->looked = true;
  d->disk.rules = b && strcmp(b, "cuda") == 0 ? KT_HEADERS_CUDA : KT_HEADERS_OPENCL;
  kt_program_store *s = kt_program_store_default(&off, &err);
  char *identity = s ? kt_program_identity(d->dev, &err) : NULL;
  if (s && identity) {
    d->disk.store = s;
    d->disk.identity = identity;
    return;
  }
  kt_program_store_free(s);
  if (!off) {
    size_t n = strlen(err.msg) + 64;
    if ((d->why = malloc(n))) snprintf(d->why, n, "no program cache on this node: %s", err.msg);
  }
}

kt_bprog *kt_server_build(kt_server_disk *d, const kt_backend *be, kt_bctx *ctx,
                          const char *source, const char *options, const char *name,
                          char **log, bool *loaded, char **unkept, kt_error *err) {
  pthread_mutex_lock(&d->lock);
  if (!d->looked) look(d);
  pthread_mutex_unlock(&d->lock);
  kt_bprog *prog =
      kt_program_build(&d->disk, be, ctx, source, options, name, log, loaded, unkept, err);
  if (!*unkept && d->why) *unkept = strdup(d->why);
  return prog;
}
