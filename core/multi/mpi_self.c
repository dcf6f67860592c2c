/*
** mpi_self.c: what every rank of a job must agree on (mpi.h's
** kt_mpi_self): ktlua's version, and the script it was started with, by
** its contents. Each rank says it in its hello; rank 0 refuses a rank that
** differs before the tuning starts, naming the rank and what differs.
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "regular_file.h"
#include "sha256.h"

/* This process's, set once by kt_mpi_start before it joins (one thread). */
static char self[KT_MPI_SELF_MAX];

void kt_mpi_self_set(const char *version, const char *script) {
  if (!script) {
    snprintf(self, sizeof self, "%s\n-", version);
    return;
  }
  size_t len = 0;
  kt_file_fault fault;
  kt_error err;
  char *text = kt_read_regular(script, KT_SOURCE_MAX, &len, &fault, &err);
  if (!text) {
    snprintf(self, sizeof self, "%s\n%.200s !%.150s", version, script,
             fault == KT_FILE_ABSENT ? "it is not there" : err.msg);
    return;
  }
  kt_sha256 s;
  char hex[KT_SHA256_HEX];
  kt_sha256_init(&s);
  kt_sha256_add(&s, text, len);
  kt_sha256_hex(&s, hex);
  free(text);
  snprintf(self, sizeof self, "%s\n%.200s %s", version, script, hex);
}

const char *kt_mpi_self(void) { return self[0] ? self : "?\n-"; }

/* Splits "VERSION\nSCRIPT" into its two lines (the first cut at its end). */
static void split(const char *said, char *version, size_t vsize, const char **script) {
  const char *nl = strchr(said, '\n');
  size_t n = nl ? (size_t)(nl - said) : strlen(said);
  snprintf(version, vsize, "%.*s", (int)n, said);
  *script = nl ? nl + 1 : "-";
}

int kt_mpi_self_check(int rank, const char *host, const char *said, kt_error *err) {
  char mine[64], theirs[64];
  const char *my_script, *their_script;
  split(kt_mpi_self(), mine, sizeof mine, &my_script);
  split(said, theirs, sizeof theirs, &their_script);
  if (strcmp(mine, theirs) != 0)
    return kt_fail(err, "MPI rank %d (on %s) runs %s, rank 0 %s: every rank needs the same ktlua",
                   rank, host, theirs, mine);
  /* A rank started without a script serves its devices all the same; one
  ** that rank 0 cannot read itself is rank 0's error, said after. */
  if (!strcmp(their_script, "-") || !strcmp(my_script, "-") || strstr(my_script, " !"))
    return 0;
  const char *bang = strstr(their_script, " !");
  if (bang)
    return kt_fail(err, "MPI rank %d (on %s) was started with the script %.*s, which it cannot "
                        "read: %s (every rank given a script needs the one rank 0 runs)",
                   rank, host, (int)(bang - their_script), their_script, bang + 2);
  const char *my_hex = strrchr(my_script, ' '), *their_hex = strrchr(their_script, ' ');
  if (my_hex && their_hex && strcmp(my_hex, their_hex) != 0)
    return kt_fail(err, "MPI rank %d (on %s) was started with another script: %.*s (sha256 %.12s) "
                        "where rank 0 runs %.*s (sha256 %.12s)",
                   rank, host, (int)(their_hex - their_script), their_script, their_hex + 1,
                   (int)(my_hex - my_script), my_script, my_hex + 1);
  return 0;
}
