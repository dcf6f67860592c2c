/*
** spawn.h: running a helper program (gnuplot, for reports) safely: no
** shell between us and it, its input and output through files, and a time
** limit after which it is killed.
*/
#ifndef KT_SPAWN_H
#define KT_SPAWN_H

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

#endif
