/*
** atomic_file.c: write a temporary file beside the target, sync it,
** rename it over the target.
*/
#define _DEFAULT_SOURCE /* realpath */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Names tried for the temporary file before giving up. */
#define TEMP_TRIES 64
#define BUFFER_BYTES (1 << 16)

typedef enum target { ABSENT, REGULAR, OTHER } target;

/* OTHER also when stat fails for another reason than absence: opening it
** then says why. */
static target target_of(const char *path, mode_t *mode) {
  struct stat st;
  *mode = 0;
  if (stat(path, &st) != 0) return errno == ENOENT ? ABSENT : OTHER;
  *mode = st.st_mode;
  return S_ISREG(st.st_mode) ? REGULAR : OTHER;
}

/* A new file beside path, created exclusively (so no other writer's), with
** the permissions a plain fopen would give it. */
static char *create_temp(const char *path, int *fd, kt_error *err) {
  size_t size = strlen(path) + 32;
  char *temp = kt_alloc(size, err);
  if (!temp) return NULL;
  uint64_t salt = (uint64_t)kt_now_ns() ^ ((uint64_t)getpid() << 40);
  errno = EEXIST;
  for (int i = 0; i < TEMP_TRIES && errno == EEXIST; i++) {
    snprintf(temp, size, "%s.tmp-%llx", path, (unsigned long long)(salt + (uint64_t)i));
    *fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (*fd >= 0) return temp;
  }
  kt_fail(err, "cannot write %s: %s", path, strerror(errno));
  free(temp);
  return NULL;
}

static int open_in_place(kt_atomic_file *af, kt_error *err) {
  if (!(af->f = fopen(af->path, "w"))) {
    kt_fail(err, "cannot write %s: %s", af->path, strerror(errno));
    kt_atomic_abort(af);
    return -1;
  }
  return 0;
}

/* A symbolic link is followed: the file it names is replaced, the link
** stays (*dangling: it names no file yet). */
static char *resolve(const char *path, bool *dangling, kt_error *err) {
  struct stat st;
  bool link = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
  char *real = link ? realpath(path, NULL) : NULL;
  *dangling = link && !real;
  return real ? real : kt_strdup(path, err);
}

int kt_atomic_open(kt_atomic_file *af, const char *path, kt_error *err) {
  *af = (kt_atomic_file){NULL, NULL, NULL, NULL};
  bool dangling;
  if (!(af->path = resolve(path, &dangling, err))) return -1;
  mode_t mode;
  target kind = target_of(af->path, &mode);
  if (kind == OTHER || dangling) return open_in_place(af, err);
  int fd;
  if (!(af->temp = create_temp(af->path, &fd, err))) {
    kt_atomic_abort(af);
    return -1;
  }
  /* The new file keeps the old one's permissions. */
  if (kind == REGULAR) (void)fchmod(fd, mode & 07777);
  if (!(af->f = fdopen(fd, "w"))) {
    kt_fail(err, "cannot write %s: %s", af->path, strerror(errno));
    close(fd);
    kt_atomic_abort(af);
    return -1;
  }
  /* (glibc ignores the size of a buffer it is to allocate itself) */
  if ((af->buffer = malloc(BUFFER_BYTES))) setvbuf(af->f, af->buffer, _IOFBF, BUFFER_BYTES);
  return 0;
}

void kt_atomic_abort(kt_atomic_file *af) {
  if (af->f) fclose(af->f);
  if (af->temp) unlink(af->temp);
  free(af->buffer);
  free(af->temp);
  free(af->path);
  *af = (kt_atomic_file){NULL, NULL, NULL, NULL};
}

/* The rename is on the disk once its directory is (best effort: some file
** systems refuse to sync a directory). */
static void sync_directory(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  int fd = dir ? open(dir, O_RDONLY | O_CLOEXEC) : -1;
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
  free(dir);
}

int kt_atomic_commit(kt_atomic_file *af, kt_error *err) {
  errno = 0;
  bool bad = ferror(af->f) || fflush(af->f) != 0 || (af->temp && fsync(fileno(af->f)) != 0);
  int why = errno;
  if (fclose(af->f) != 0 && !bad) {
    bad = true;
    why = errno;
  }
  af->f = NULL;
  int rc = 0;
  if (bad && why) rc = kt_fail(err, "error writing %s: %s", af->path, strerror(why));
  else if (bad) rc = kt_fail(err, "error writing %s", af->path);
  else if (af->temp && rename(af->temp, af->path) != 0)
    rc = kt_fail(err, "cannot replace %s: %s", af->path, strerror(errno));
  else if (af->temp) {
    sync_directory(af->path);
    free(af->temp);
    af->temp = NULL; /* renamed: nothing to remove */
  }
  kt_atomic_abort(af);
  return rc;
}

int kt_atomic_check(const char *path, kt_error *err) {
  kt_atomic_file af;
  mode_t mode;
  if (target_of(path, &mode) == OTHER) {
    /* Opened without truncating: checking must not change it. */
    int fd = S_ISDIR(mode) ? -1 : open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return kt_fail(err, "cannot write %s: %s", path, strerror(S_ISDIR(mode) ? EISDIR : errno));
    close(fd);
    return 0;
  }
  if (kt_atomic_open(&af, path, err)) return -1;
  kt_atomic_abort(&af);
  return 0;
}
