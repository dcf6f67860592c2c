/*
** devout.c: gathering a device process's standard error (devout.h).
*/
#define _GNU_SOURCE
#include "devout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

/* Room enough that a device process never blocks on its stderr between
** two drains (after every call). */
#define PIPE_BYTES (1 << 20)

void kt_devout_init(kt_devout *o) {
  memset(o, 0, sizeof *o);
  o->fd = -1;
}

int kt_devout_pipe(kt_devout *o) {
  int p[2];
  if (o->fd >= 0) {
    kt_devout_drain(o);
    close(o->fd);
    o->fd = -1;
  }
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  fcntl(p[0], F_SETFL, O_NONBLOCK);
  fcntl(p[1], F_SETPIPE_SZ, PIPE_BYTES); /* best effort: the default is 64 KiB */
  o->fd = p[0];
  return p[1];
}

/* Keeps the newest KT_DEVOUT_MAX bytes. */
static void keep(kt_devout *o, const char *s, size_t n) {
  if (n >= KT_DEVOUT_MAX) {
    o->dropped += o->len + n - KT_DEVOUT_MAX;
    s += n - KT_DEVOUT_MAX;
    n = KT_DEVOUT_MAX;
    o->len = 0;
  } else if (o->len + n > KT_DEVOUT_MAX) {
    size_t drop = o->len + n - KT_DEVOUT_MAX;
    memmove(o->text, o->text + drop, o->len - drop);
    o->len -= drop;
    o->dropped += drop;
  }
  if (kt_grow(&o->text, &o->cap, o->len + n + 1, 1, NULL)) {
    o->dropped += n;
    return;
  }
  memcpy(o->text + o->len, s, n);
  o->len += n;
}

void kt_devout_drain(kt_devout *o) {
  char buf[4096];
  while (o->fd >= 0) {
    ssize_t k = read(o->fd, buf, sizeof buf);
    if (k > 0) {
      keep(o, buf, (size_t)k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) { /* every writer is gone */
      close(o->fd);
      o->fd = -1;
    }
    return;
  }
}

/* "3 errors generated." and "1 warning and 2 errors generated." */
static int is_clang_tally(const char *line, size_t n) {
  static const char tail[] = " generated.";
  size_t t = sizeof tail - 1;
  if (n <= t || memcmp(line + n - t, tail, t) != 0 || line[0] < '0' || line[0] > '9') return 0;
  for (size_t i = 0; i < n - t; i++)
    if (!strchr("0123456789 abdegilnorsw", line[i])) return 0;
  return 1;
}

static size_t without_tallies(char *s, size_t n) {
  size_t out = 0;
  for (size_t at = 0; at < n;) {
    char *nl = memchr(s + at, '\n', n - at);
    size_t len = nl ? (size_t)(nl - (s + at)) : n - at, next = at + len + (nl ? 1 : 0);
    if (!is_clang_tally(s + at, len)) {
      memmove(s + out, s + at, next - at);
      out += next - at;
    }
    at = next;
  }
  return out;
}

char *kt_devout_take(kt_devout *o) {
  kt_devout_drain(o);
  size_t n = o->text ? without_tallies(o->text, o->len) : 0;
  size_t dropped = o->dropped;
  o->len = 0;
  o->dropped = 0;
  if (n == 0) return NULL;
  char head[64] = "";
  if (dropped) snprintf(head, sizeof head, "[%zu earlier bytes left out]\n", dropped);
  size_t h = strlen(head);
  char *s = malloc(h + n + 1);
  if (!s) return NULL;
  memcpy(s, head, h);
  memcpy(s + h, o->text, n);
  s[h + n] = '\0';
  return s;
}

void kt_devout_last_line(const kt_devout *o, char *buf, size_t size) {
  size_t end = o->len;
  for (;;) {
    while (end > 0 && (o->text[end - 1] == '\n' || o->text[end - 1] == '\r')) end--;
    if (end == 0) return;
    size_t start = end;
    while (start > 0 && o->text[start - 1] != '\n') start--;
    if (!is_clang_tally(o->text + start, end - start)) {
      size_t have = strlen(buf);
      if (have + 3 < size)
        snprintf(buf + have, size - have, ": %.*s", (int)(end - start), o->text + start);
      return;
    }
    end = start;
  }
}

void kt_devout_free(kt_devout *o) {
  if (o->fd >= 0) close(o->fd);
  free(o->text);
  kt_devout_init(o);
}
