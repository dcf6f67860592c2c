/*
** journal.c: a locked file of results, one line each, each line written
** whole.
*/
#define _DEFAULT_SOURCE /* flock */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "atomic_file.h"
#include "json_read.h"

struct kt_journal {
  int fd;
  char *path;
  off_t whole; /* after kt_journal_read: the bytes up to the last whole line */
  int threads; /* the results' device_threads as the journal last said them */
};

static int write_fails(kt_journal *j, kt_error *err) {
  return kt_fail(err, "cannot write the journal %s: %s", j->path, strerror(errno));
}

kt_journal *kt_journal_open(const char *path, kt_error *err) {
  kt_journal *j = kt_calloc(1, sizeof *j, err);
  if (!j || !(j->path = kt_strdup(path, err))) {
    free(j);
    return NULL;
  }
  /* Not truncated here: a journal another tuning holds stays as it is. */
  j->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (j->fd < 0) kt_fail(err, "cannot open the journal %s: %s", path, strerror(errno));
  else if (flock(j->fd, LOCK_EX | LOCK_NB) == 0) return j;
  else if (errno == EWOULDBLOCK) kt_fail(err, "the journal %s is in use by another tuning", path);
  else kt_fail(err, "cannot lock the journal %s: %s", path, strerror(errno));
  if (j->fd >= 0) close(j->fd);
  free(j->path);
  free(j);
  return NULL;
}

int kt_journal_close(kt_journal *j, kt_error *err) {
  if (!j) return 0;
  int rc = close(j->fd) == 0 ? 0 : write_fails(j, err); /* closing unlocks */
  free(j->path);
  free(j);
  return rc;
}

/* A line of /proc/locks: "3: FLOCK  ADVISORY  WRITE 5227 fe:00:10954614 0 EOF"
** (the device's major and minor numbers in hex, the inode in decimal). */
int kt_journal_held(const char *path, bool *held, kt_error *err) {
  struct stat st;
  *held = false;
  if (stat(path, &st) != 0) return kt_fail(err, "cannot read %s: %s", path, strerror(errno));
  FILE *f = fopen("/proc/locks", "r");
  if (!f) return kt_fail(err, "cannot tell whether a tuning holds %s: /proc/locks: %s", path,
                         strerror(errno));
  char kind[16], mode[16];
  unsigned major_no, minor_no;
  unsigned long long inode;
  char text[512];
  while (!*held && fgets(text, sizeof text, f))
    if (sscanf(text, "%*[^:]: %15s %*s %15s %*d %x:%x:%llu", kind, mode, &major_no, &minor_no,
               &inode) == 5)
      *held = strcmp(kind, "FLOCK") == 0 && strcmp(mode, "WRITE") == 0 &&
              inode == (unsigned long long)st.st_ino && major_no == major(st.st_dev) &&
              minor_no == minor(st.st_dev);
  fclose(f);
  return 0;
}

/* ---- writing ---- */

/* A line formatted in memory by the FILE writers, then written in one
** write(): a kill leaves it whole, or cut at its end only. */
typedef struct line {
  char *text;
  size_t len;
  FILE *f;
} line;

static FILE *line_begin(line *l) {
  *l = (line){NULL, 0, NULL};
  return l->f = open_memstream(&l->text, &l->len);
}

static int write_whole(kt_journal *j, const char *p, size_t n, kt_error *err) {
  while (n > 0) {
    ssize_t done = write(j->fd, p, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) return write_fails(j, err);
    p += done;
    n -= (size_t)done;
  }
  return 0;
}

static int line_end(kt_journal *j, line *l, kt_error *err) {
  fputc('\n', l->f);
  int rc = fclose(l->f) == 0 && l->text
               ? write_whole(j, l->text, l->len, err)
               : kt_fail(err, "out of memory writing the journal %s", j->path);
  free(l->text);
  return rc;
}

static int out_of_memory(kt_journal *j, kt_error *err) {
  return kt_fail(err, "out of memory writing the journal %s", j->path);
}

int kt_journal_append(kt_journal *j, const kt_results *r, const kt_result *x, kt_error *err) {
  line l;
  if (!line_begin(&l)) return out_of_memory(j, err);
  /* a device process started again may have been given other threads
  ** (results.device_threads): said from the line of the first result since */
  if (r->device_threads != j->threads) kt_result_write_json_threads(l.f, r, x, r->device_threads);
  else kt_result_write_json(l.f, r, x);
  if (line_end(j, &l, err)) return -1;
  j->threads = r->device_threads;
  return 0;
}

static void write_header(FILE *f, const kt_results *r, const kt_journal_id *id) {
  kt_results_write_json_header(f, r, "ktlua-journal");
  fputc(',', f);
  kt_journal_id_write(f, id);
  fputc('}', f);
}

int kt_journal_start(kt_journal *j, const kt_results *r, const kt_journal_id *id, bool fresh,
                     kt_error *err) {
  if (!fresh) /* a line cut by a kill would join the next one */
    return ftruncate(j->fd, j->whole) == 0 ? 0 : write_fails(j, err);
  if (ftruncate(j->fd, 0) != 0) return write_fails(j, err);
  j->threads = r->device_threads; /* the header says them */
  line l;
  if (!line_begin(&l)) return out_of_memory(j, err);
  write_header(l.f, r, id);
  return line_end(j, &l, err);
}

/* The new file is locked before it takes the journal's name, and its lock
** outlives the commit's close through a duplicate of its descriptor: no
** other tuning can take the journal in between. */
int kt_journal_rewrite(kt_journal *j, const kt_results *r, const kt_journal_id *id,
                       const kt_results *prior, kt_error *err) {
  kt_atomic_file af;
  if (kt_atomic_open(&af, j->path, err)) return -1;
  int fd = fileno(af.f);
  int keep = flock(fd, LOCK_EX | LOCK_NB) == 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (keep < 0) {
    kt_atomic_abort(&af);
    return write_fails(j, err);
  }
  write_header(af.f, r, id);
  for (size_t i = 0; i < prior->n; i++) {
    fputc('\n', af.f);
    kt_result_write_json(af.f, prior, &prior->items[i]);
  }
  fputc('\n', af.f);
  int rc = kt_atomic_commit(&af, err);
  if (rc == 0 && fcntl(keep, F_SETFL, O_APPEND) != 0) rc = write_fails(j, err);
  if (rc) {
    close(keep);
    return -1;
  }
  close(j->fd);
  j->fd = keep;
  j->threads = r->device_threads; /* the header says them, and no line since */
  return 0;
}

/* ---- reading ---- */

static char *read_all(kt_journal *j, size_t *len, kt_error *err) {
  struct stat st;
  if (fstat(j->fd, &st) != 0)
    return kt_fail(err, "cannot read the journal %s: %s", j->path, strerror(errno)), NULL;
  if ((uint64_t)st.st_size > KT_FILE_MAX)
    return kt_fail(err, "the journal %s is larger than %llu bytes", j->path,
                   (unsigned long long)KT_FILE_MAX), NULL;
  char *text = kt_alloc((size_t)st.st_size + 1, err);
  size_t n = 0;
  while (text && n < (size_t)st.st_size) {
    ssize_t got = pread(j->fd, text + n, (size_t)st.st_size - n, (off_t)n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += (size_t)got;
  }
  if (text) text[n] = '\0';
  *len = n;
  return text;
}

static bool same_parameters(const kt_results *a, const kt_space *s) {
  if (a->nparams != kt_space_nparams(s)) return false;
  for (size_t p = 0; p < a->nparams; p++) {
    const kt_param *q = kt_space_param(s, p);
    if (strcmp(a->params[p].name, q->name) != 0 || a->params[p].nvalues != q->nvalues) return false;
    for (size_t v = 0; v < q->nvalues; v++)
      if (!kt_value_equal(&a->params[p].values[v], &q->values[v])) return false;
  }
  return true;
}

/* How the header's task differs from id's: refused, or with force
** described in *changed. */
static int check_identity(kt_journal *j, const char *text, size_t len, const kt_journal_id *id,
                          bool force, char **changed, kt_error *err) {
  const char *nl = memchr(text, '\n', len);
  kt_jdoc *doc = kt_json_parse_results(text, nl ? (size_t)(nl - text) : len, NULL);
  char why[1024];
  int differ = doc ? kt_journal_id_compare(id, kt_json_root(doc), why, sizeof why) : 0;
  kt_json_free(doc);
  if (!differ) return 0;
  if (!force)
    return kt_fail(err, "cannot resume from %s: it was written for another task: %s; resume = "
                   "\"force\" takes its results all the same", j->path, why);
  size_t size = strlen(j->path) + strlen(why) + 64;
  if (!(*changed = kt_alloc(size, err))) return -1;
  snprintf(*changed, size, "resumed from %s, written for another task: %s", j->path, why);
  return 0;
}

/* Nothing recorded: an empty file, or one cut inside its header. */
static bool holds_nothing(const char *text, size_t len) {
  static const char start[] = "{\"format\":\"ktlua-journal\"";
  if (memchr(text, '\n', len)) return false;
  size_t n = len < sizeof start - 1 ? len : sizeof start - 1;
  return memcmp(text, start, n) == 0;
}

static int parse(kt_journal *j, const char *text, size_t len, const kt_space *space,
                 const kt_journal_id *id, bool force, kt_results **prior, char **changed,
                 kt_error *err) {
  if (holds_nothing(text, len)) return 1;
  int rc = kt_journal_parse(text, len, prior, err);
  if (rc > 0) return kt_fail(err, "cannot resume from %s: it is no ktlua journal", j->path);
  if (rc < 0) return kt_fail_prefix(err, "%s: ", j->path);
  if (!same_parameters(*prior, space))
    return kt_fail(err, "cannot resume from %s: its parameters and values differ from task %s's",
                   j->path, id->values[KT_ID_TASK]);
  if (check_identity(j, text, len, id, force, changed, err)) return -1;
  const char *end = text + len;
  while (end > text && end[-1] != '\n') end--;
  j->whole = (off_t)(end - text);
  j->threads = (*prior)->device_threads; /* as its header and lines last said them */
  return 0;
}

int kt_journal_read(kt_journal *j, const kt_space *space, const kt_journal_id *id, bool force,
                    kt_results **prior, char **changed, kt_error *err) {
  size_t len;
  *prior = NULL;
  *changed = NULL;
  char *text = read_all(j, &len, err);
  if (!text) return -1;
  int rc = parse(j, text, len, space, id, force, prior, changed, err);
  free(text);
  if (rc != 0) {
    kt_results_release(*prior);
    *prior = NULL;
  }
  return rc;
}
