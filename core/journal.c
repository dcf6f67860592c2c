/*
** journal.c: appending results, one flushed line each.
*/
#include "journal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct kt_journal {
  FILE *f;
  char *path;
};

static int write_fails(kt_journal *j, kt_error *err) {
  return kt_fail(err, "cannot write the journal %s: %s", j->path, strerror(errno));
}

kt_journal *kt_journal_open(const char *path, const kt_results *r, bool append,
                            kt_error *err) {
  kt_journal *j = kt_calloc(1, sizeof *j, err);
  if (!j || !(j->path = kt_strdup(path, err))) {
    free(j);
    return NULL;
  }
  if (!(j->f = fopen(path, append ? "a" : "w"))) {
    kt_fail(err, "cannot open the journal %s: %s", path, strerror(errno));
    free(j->path);
    free(j);
    return NULL;
  }
  if (!append) {
    kt_results_write_json_header(j->f, r, "ktlua-journal");
    fputs("}\n", j->f);
    if (fflush(j->f) != 0) {
      write_fails(j, err);
      kt_journal_close(j, NULL);
      return NULL;
    }
  }
  return j;
}

/* One line, flushed, so that only the configuration in flight can be lost. */
int kt_journal_append(kt_journal *j, const kt_results *r, const kt_result *x, kt_error *err) {
  kt_result_write_json(j->f, r, x);
  fputc('\n', j->f);
  return fflush(j->f) == 0 && !ferror(j->f) ? 0 : write_fails(j, err);
}

int kt_journal_close(kt_journal *j, kt_error *err) {
  if (!j) return 0;
  int rc = fclose(j->f) == 0 ? 0 : write_fails(j, err);
  free(j->path);
  free(j);
  return rc;
}
