/*
** program_disk.c: compiling through the program cache on disk
** (program_disk.h).
*/
#include "program_disk.h"

#include <stdlib.h>
#include <string.h>

static bool usable(const kt_program_disk *disk, const kt_backend *be) {
  return disk && disk->store && be->prog_binary && be->prog_load;
}

static kt_program_key key_of(const kt_program_disk *disk, const kt_backend *be,
                             const kt_program_src *p) {
  return (kt_program_key){disk->identity, p->options, be->program_per_kernel ? p->name : NULL,
                          p->headers.key, p->source};
}

void kt_program_src_clear(kt_program_src *p) { kt_headers_clear(&p->headers); }

/* The headers of p, found now; where memory ran out, they are not known. */
static void find_headers(const kt_program_disk *disk, const kt_program_src *p, kt_headers *h) {
  kt_error err;
  if (kt_headers_find(p->source, p->options, disk->rules, h, &err))
    h->why = strdup(err.msg);
}

kt_bprog *kt_program_disk_load(const kt_program_disk *disk, const kt_backend *be, kt_bctx *ctx,
                               kt_program_src *p, char **log, bool *refused) {
  *log = NULL;
  *refused = false;
  if (!usable(disk, be)) return NULL;
  find_headers(disk, p, &p->headers);
  if (!p->headers.key) return NULL; /* compiled, and not kept */
  kt_program_key key = key_of(disk, be, p);
  unsigned char *bytes;
  size_t size;
  char *kept_log, *load_log = NULL;
  kt_error why;
  if (!kt_program_store_get(disk->store, &key, &bytes, &size, &kept_log)) return NULL;
  if ((*refused = size == 0)) { /* no binary: the compiler's refusal */
    free(bytes);
    *log = kept_log;
    return NULL;
  }
  kt_bprog *prog = disk->load ? disk->load(disk->load_ud, bytes, size, p->options, p->name,
                                           &load_log, &why)
                              : be->prog_load(ctx, bytes, size, p->options, p->name, &load_log, &why);
  free(bytes);
  free(load_log);
  if (prog) {
    *log = kept_log;
    return prog;
  }
  free(kept_log);
  kt_program_store_forget(disk->store, &key); /* this driver will not have it */
  return NULL;
}

/* Whether p's program may be kept: its headers are known, and are those
** found before its compile (a header that changed meanwhile: the binary
** may be of either). Else *why (malloc'd; NULL where memory ran out). */
static bool keepable(const kt_program_disk *disk, const kt_program_src *p, char **why) {
  *why = NULL;
  if (!p->headers.key) {
    *why = p->headers.why ? strdup(p->headers.why) : NULL;
    return false;
  }
  kt_headers now;
  find_headers(disk, p, &now);
  bool same = now.key && strcmp(now.key, p->headers.key) == 0;
  if (!now.key) *why = now.why ? strdup(now.why) : NULL;
  else if (!same) *why = strdup("a header it includes changed while it compiled");
  kt_headers_clear(&now);
  return same;
}

char *kt_program_disk_keep(const kt_program_disk *disk, const kt_backend *be,
                           const kt_program_src *p, const unsigned char *bytes, size_t size,
                           const char *log) {
  char *why;
  if (!usable(disk, be)) return NULL;
  if (!keepable(disk, p, &why)) return why;
  kt_program_key key = key_of(disk, be, p);
  kt_error err;
  kt_program_store_put(disk->store, &key, bytes, size, log, &err); /* a cache: best effort */
  return NULL;
}

char *kt_program_disk_refused(const kt_program_disk *disk, const kt_backend *be,
                              const kt_program_src *p, const char *log) {
  return log && log[0] ? kt_program_disk_keep(disk, be, p, NULL, 0, log) : NULL;
}

kt_bprog *kt_program_build(const kt_program_disk *disk, const kt_backend *be, kt_bctx *ctx,
                           const char *source, const char *options, const char *name,
                           char **log, bool *loaded, char **unkept, kt_error *err) {
  if (disk && disk->there && be->build_there) {
    char *why = NULL;
    kt_bprog *prog = be->build_there(ctx, source, options, name, log, loaded, &why, err);
    if (unkept) *unkept = why;
    else free(why);
    return prog;
  }
  kt_program_src p = {source, options, name, {NULL, NULL}};
  bool refused;
  char *why = NULL;
  kt_bprog *prog = kt_program_disk_load(disk, be, ctx, &p, log, &refused);
  if ((*loaded = prog != NULL || refused)) {
    if (refused) kt_fail(err, "the compiler refused it before (the program cache on disk)");
  } else {
    prog = be->compile(ctx, source, options, name, log, err);
    unsigned char *bytes;
    size_t size;
    kt_error e;
    if (prog && usable(disk, be) && be->prog_binary(ctx, prog, &bytes, &size, &e) == 0) {
      why = kt_program_disk_keep(disk, be, &p, bytes, size, *log);
      free(bytes);
    }
  }
  kt_program_src_clear(&p);
  if (unkept) *unkept = why;
  else free(why);
  return prog;
}
