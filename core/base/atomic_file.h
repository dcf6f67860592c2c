/*
** atomic_file.h: a file replaced whole or not at all. What is written
** goes to a temporary file beside the target; commit flushes it to the
** disk and renames it over the target, so that a kill at any moment
** leaves the previous file or the new one, never a mix (a kill before the
** rename may leave the temporary file, named target.tmp-N). A target that
** exists and is no regular file (/dev/stdout, a pipe) is written in place.
*/
#ifndef KT_ATOMIC_FILE_H
#define KT_ATOMIC_FILE_H

#include <stdio.h>

#include "kt.h"

typedef struct kt_atomic_file {
  FILE *f;
  char *path; /* the target */
  char *temp; /* where f writes; NULL when it writes the target in place */
  char *buffer; /* f's, large: a results file is thousands of small writes */
} kt_atomic_file;

/* Opens the temporary file (or the target in place). */
int kt_atomic_open(kt_atomic_file *af, const char *path, kt_error *err);
/* Flushes, syncs and renames over the target; on failure the target is
** left as it was. Closes af in every case. */
int kt_atomic_commit(kt_atomic_file *af, kt_error *err);
/* Closes af and removes the temporary file; the target is untouched. */
void kt_atomic_abort(kt_atomic_file *af);
/* Whether kt_atomic_open could write path: creates and removes a
** temporary file beside it (or opens a non-regular target, unchanged). */
int kt_atomic_check(const char *path, kt_error *err);

#endif
