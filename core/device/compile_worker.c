/*
** compile_worker.c: a compiler process of a pool (compile_pool.h),
** `ktlua --compile-worker`. It lives until the tuner closes its connection
** or dies; nothing of it is freed before it exits.
*/
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "compile_pool.h"
#include "device_wire.h"
#include "remote.h"
#include "wire.h"

typedef struct worker {
  const kt_device_info *dev;
  const kt_backend *be;  /* the real backend, opened here */
  kt_bctx *ctx;          /* where the backend compiles in a context; NULL until the first */
  const char *crash_on;  /* KTLUA_TEST_COMPILER_CRASH */
  const char *hang_on;   /* KTLUA_TEST_COMPILER_HANG */
  const char *until;     /* KTLUA_TEST_COMPILER_UNTIL */
} worker;

/* The device as this process lists it (a handle of its own), in place. */
static int open_context(worker *w, kt_error *err) {
  kt_device_info *list;
  size_t n;
  char why[1024];
  if (kt_devices_here(&list, &n, why, sizeof why, err)) return -1;
  int found = kt_device_find(list, n, w->dev->id, err);
  if (found >= 0) {
    w->be = list[found].backend;
    w->ctx = w->be->open(&list[found], err);
  }
  return w->ctx ? 0 : -1; /* the listing stays: the context may point into it */
}

static void put_failed(kt_msg *out, kt_pool_outcome o, char *log, const char *why) {
  kt_msg_put_u32(out, o);
  kt_msg_put_str(out, log && log[0] ? log : why);
}

/* Compiles in a context, then takes the binary of the program. */
static void in_context(worker *w, const char *source, const char *options, const char *name,
                       kt_msg *out) {
  kt_error err;
  char *log = NULL;
  unsigned char *bytes = NULL;
  size_t size = 0;
  if (!w->ctx && open_context(w, &err)) {
    kt_msg_put_u32(out, KT_POOL_NO_BINARIES);
    kt_fail_prefix(&err, "cannot open the compiler in a process of its own: ");
    kt_msg_put_str(out, err.msg);
    return;
  }
  kt_bprog *prog = w->be->compile(w->ctx, source, options, name, &log, &err);
  if (!prog) {
    put_failed(out, KT_POOL_FAILED, log, err.msg);
  } else if (!w->be->prog_binary || w->be->prog_binary(w->ctx, prog, &bytes, &size, &err)) {
    kt_msg_put_u32(out, KT_POOL_NO_BINARIES);
    kt_msg_put_str(out, w->be->prog_binary ? err.msg : "the backend gives no program binaries");
  } else {
    kt_msg_put_u32(out, KT_POOL_BUILT);
    kt_msg_put_bytes(out, bytes, size);
    kt_msg_put_str(out, log);
  }
  if (prog) w->be->prog_free(w->ctx, prog);
  free(bytes);
  free(log);
}

static void compile(worker *w, const char *source, const char *options, const char *name,
                    kt_msg *out) {
  if (w->crash_on && w->crash_on[0] && strstr(source, w->crash_on)) raise(SIGKILL);
  bool hang = w->hang_on && w->hang_on[0] && strstr(source, w->hang_on);
  while (hang && !(w->until && w->until[0])) pause();
  while (hang && access(w->until, F_OK) != 0) usleep(10000);
  if (!w->be->compile_binary) {
    in_context(w, source, options, name, out);
    return;
  }
  kt_error err;
  char *log = NULL;
  unsigned char *bytes = NULL;
  size_t size = 0;
  int rc = w->be->compile_binary(w->dev, source, options, name, &bytes, &size, &log, &err);
  if (rc == 0) {
    kt_msg_put_u32(out, KT_POOL_BUILT);
    kt_msg_put_bytes(out, bytes, size);
    kt_msg_put_str(out, log);
  } else { /* 1: the source does not compile, which the disk cache keeps */
    put_failed(out, rc > 0 ? KT_POOL_REFUSED : KT_POOL_FAILED, log, err.msg);
  }
  free(bytes);
  free(log);
}

/* The greeting: the tuner's protocol and device, answered with this
** process's protocol and "" or why it cannot serve. */
static int greet(int fd, kt_device_info *dev) {
  kt_msg in, out;
  kt_msg_init(&in);
  kt_msg_init(&out);
  kt_error err = {0};
  int rc = kt_wire_recv(fd, &in, 0) == KT_WIRE_OK ? 0 : -1;
  if (rc == 0 && kt_msg_get_u32(&in) != KT_COMPILE_PROTOCOL)
    rc = kt_fail(&err, "it speaks protocol %u", KT_COMPILE_PROTOCOL);
  else if (rc == 0)
    rc = kt_msg_get_device(&in, dev, &err);
  kt_msg_put_u32(&out, KT_COMPILE_PROTOCOL);
  kt_msg_put_str(&out, rc ? err.msg : "");
  kt_wire_send(fd, &out);
  return rc;
}

/* Loads and starts the compiler now, while the tuner sets up: a first
** compile pays for loading NVRTC and its built-in headers, hundreds of ms. */
static void warm_up(worker *w) {
  if (!w->be->compile_binary) return;
  kt_error err;
  char *log = NULL;
  unsigned char *bytes = NULL;
  size_t size = 0;
  w->be->compile_binary(w->dev, "extern \"C\" __global__ void kt_warm_up(void) {}\n", "",
                        "kt_warm_up", &bytes, &size, &log, &err);
  free(bytes);
  free(log);
}

/* No PR_SET_PDEATHSIG as device processes have: it follows the thread
** that started it, and compile threads end while the tuner goes on. The
** connection's end of file (the tuner closed it, or died) ends it. */
void kt_compile_worker_main(int fd) {
  signal(SIGINT, SIG_IGN); /* Ctrl-C is the tuner's to handle */
  signal(SIGPIPE, SIG_IGN);
  kt_server_keep_only(fd, NULL, 0); /* what the starter left open, where spawn could not close it */
  kt_device_info dev;
  if (greet(fd, &dev)) _exit(2);
  worker w = {&dev, dev.backend, NULL, getenv("KTLUA_TEST_COMPILER_CRASH"),
              getenv("KTLUA_TEST_COMPILER_HANG"), getenv("KTLUA_TEST_COMPILER_UNTIL")};
  warm_up(&w);
  kt_msg in, out;
  kt_msg_init(&in);
  kt_msg_init(&out);
  while (kt_wire_recv(fd, &in, 0) == KT_WIRE_OK) {
    char *source = kt_msg_get_str(&in), *options = kt_msg_get_str(&in);
    char *name = kt_msg_get_str(&in);
    kt_msg_reset(&out);
    if (!source || !options || !name) _exit(3); /* the tuner and this process disagree */
    compile(&w, source, options, name, &out);
    free(source);
    free(options);
    free(name);
    if (kt_wire_send(fd, &out) != KT_WIRE_OK) break; /* the tuner is gone */
  }
  _exit(0);
}
