/*
** regular_file.c: read a regular file of bounded size (regular_file.h).
*/
#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK ((size_t)1 << 16)

static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "of an unknown type";
}

/* 0 when st is a regular file of at most max bytes. */
static int check(const struct stat *st, size_t max, kt_file_fault *fault, kt_error *err) {
  *fault = KT_FILE_REFUSED;
  if (!S_ISREG(st->st_mode)) return kt_fail(err, "not a regular file (%s)", kind_of(st->st_mode));
  if ((unsigned long long)st->st_size > (unsigned long long)max)
    return kt_fail(err, "%lld bytes, more than the limit of %zu", (long long)st->st_size, max);
  *fault = KT_FILE_READ;
  return 0;
}

static int open_checked(const char *path, size_t max, kt_file_fault *fault, kt_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) {
    *fault = errno == ENOENT || errno == ENOTDIR ? KT_FILE_ABSENT : KT_FILE_REFUSED;
    return kt_fail(err, "%s", strerror(errno)), -1;
  }
  if (check(&st, max, fault, err)) return -1;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    *fault = errno == ENOENT ? KT_FILE_ABSENT : KT_FILE_REFUSED;
    return kt_fail(err, "%s", strerror(errno)), -1;
  }
  if (fstat(fd, &st) != 0) {
    *fault = KT_FILE_REFUSED;
    kt_fail(err, "%s", strerror(errno));
  } else if (!check(&st, max, fault, err)) {
    return fd;
  }
  close(fd);
  return -1;
}

/* Up to max + 1 bytes of fd: the size fstat gave may have grown since, and
** some regular files (/proc) say 0. */
static char *read_all(int fd, size_t max, size_t *len, kt_file_fault *fault, kt_error *err) {
  char *data = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (kt_grow(&data, &cap, n + CHUNK + 1, 1, err)) break;
    size_t want = n + CHUNK > max + 1 ? max + 1 - n : CHUNK;
    ssize_t got = read(fd, data + n, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      kt_fail(err, "%s", strerror(errno));
      break;
    }
    n += (size_t)got;
    if (n > max) {
      kt_fail(err, "more than the limit of %zu bytes", max);
      break;
    }
    if (got == 0) {
      data[n] = '\0';
      *len = n;
      return data;
    }
  }
  *fault = KT_FILE_REFUSED;
  free(data);
  return NULL;
}

char *kt_read_regular(const char *path, size_t max, size_t *len, kt_file_fault *fault,
                      kt_error *err) {
  int fd = open_checked(path, max, fault, err);
  if (fd < 0) return NULL;
  char *data = read_all(fd, max, len, fault, err);
  close(fd);
  return data;
}
