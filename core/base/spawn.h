/*
** spawn.h: running a helper program (gnuplot, for reports) safely: no
** shell between us and it, its input and output through files, and a time
** limit after which it is killed; and starting a process of ktlua's own
** (a compiler process, compile_pool.h; the live view's follower,
** lk_live.c) from a fresh image.
*/
#ifndef KT_SPAWN_H
#define KT_SPAWN_H

#include <sys/types.h>

#include "kt.h"

typedef struct kt_spawn_opts {
  const char *in;   /* its standard input: a file (NULL: /dev/null) */
  const char *out;  /* its standard output: a file created or truncated (NULL: /dev/null) */
  const char *errs; /* its standard error, likewise */
  double timeout_s; /* killed (with its process group) past this; <= 0: no limit */
} kt_spawn_opts;

/* Runs argv[0] (looked up in PATH when it has no slash) with the
** arguments argv (NULL-terminated) and waits for it. Returns its exit
** status (0..255; 128 + the signal's number when a signal ended it), or -1
** when it could not be started ("cannot run gnuplot: No such file or
** directory") or ran past its time limit. */
int kt_spawn_run(const char *const *argv, const kt_spawn_opts *o, kt_error *err);

/* Starts argv[0] (a path) with the arguments argv and does not wait: its
** descriptors 0 .. nfds - 1 are fds[0 .. nfds - 1] (-1: /dev/null), and
** no other descriptor of the caller is open in it. It stays in the
** caller's process group. A fresh image: nothing of the caller's memory,
** threads or loaded drivers goes with it, so a caller with threads at
** work may start it at any time. */
int kt_spawn_start(const char *const *argv, const int *fds, int nfds, pid_t *pid,
                   kt_error *err);

/* Starts argv[0] (a path) beside the caller and does not wait: its
** standard input is in_fd (the caller keeps the other end of a pipe), its
** output and errors are the caller's. It runs in a process group of its
** own (a Ctrl-C at the terminal is the caller's to handle, and tells it
** through its input) and at the lowest priority (nice 19), so that on a
** busy machine it takes what the caller's work and the other jobs leave. */
int kt_spawn_background(const char *const *argv, int in_fd, pid_t *pid, kt_error *err);
/* Waits for a process started by kt_spawn_background at most timeout_s
** (<= 0: for ever), then kills its group. Its exit status as
** kt_spawn_run's, -1 when it was killed. */
int kt_spawn_wait(pid_t pid, double timeout_s);

#endif
