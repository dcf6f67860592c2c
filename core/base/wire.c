/*
** wire.c: message buffers and framed socket I/O.
*/
#define _POSIX_C_SOURCE 200809L
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void kt_msg_init(kt_msg *m) { memset(m, 0, sizeof *m); }

void kt_msg_free(kt_msg *m) {
  free(m->data);
  kt_msg_init(m);
}

void kt_msg_reset(kt_msg *m) {
  m->len = m->at = 0;
  m->bad = false;
}

int kt_msg_put(kt_msg *m, const void *p, size_t n) {
  if (kt_grow(&m->data, &m->cap, m->len + n, 1, NULL)) return -1;
  if (n) memcpy(m->data + m->len, p, n);
  m->len += n;
  return 0;
}

int kt_msg_put_u32(kt_msg *m, uint32_t v) { return kt_msg_put(m, &v, sizeof v); }
int kt_msg_put_u64(kt_msg *m, uint64_t v) { return kt_msg_put(m, &v, sizeof v); }
int kt_msg_put_f64(kt_msg *m, double v) { return kt_msg_put(m, &v, sizeof v); }

int kt_msg_put_str(kt_msg *m, const char *s) {
  if (!s) return kt_msg_put_u32(m, UINT32_MAX);
  size_t n = strlen(s);
  return kt_msg_put_u32(m, (uint32_t)n) || kt_msg_put(m, s, n) ? -1 : 0;
}

bool kt_msg_get(kt_msg *m, void *p, size_t n) {
  if (m->bad || m->len - m->at < n) {
    m->bad = true;
    memset(p, 0, n);
    return false;
  }
  memcpy(p, m->data + m->at, n);
  m->at += n;
  return true;
}

uint32_t kt_msg_get_u32(kt_msg *m) {
  uint32_t v;
  kt_msg_get(m, &v, sizeof v);
  return v;
}

uint64_t kt_msg_get_u64(kt_msg *m) {
  uint64_t v;
  kt_msg_get(m, &v, sizeof v);
  return v;
}

double kt_msg_get_f64(kt_msg *m) {
  double v;
  kt_msg_get(m, &v, sizeof v);
  return v;
}

int kt_msg_put_bytes(kt_msg *m, const void *p, size_t n) {
  return kt_msg_put_u64(m, (uint64_t)n) || kt_msg_put(m, p, n) ? -1 : 0;
}

unsigned char *kt_msg_get_bytes(kt_msg *m, size_t *n) {
  uint64_t size = kt_msg_get_u64(m);
  *n = 0;
  if (m->bad || m->len - m->at < size) {
    m->bad = true;
    return NULL;
  }
  unsigned char *p = malloc(size ? (size_t)size : 1);
  if (!p) return NULL;
  kt_msg_get(m, p, (size_t)size);
  *n = (size_t)size;
  return p;
}

char *kt_msg_get_str(kt_msg *m) {
  uint32_t n = kt_msg_get_u32(m);
  if (n == UINT32_MAX || m->bad || m->len - m->at < n) {
    if (n != UINT32_MAX) m->bad = true;
    return NULL;
  }
  char *s = malloc((size_t)n + 1);
  if (!s) return NULL;
  memcpy(s, m->data + m->at, n);
  s[n] = '\0';
  m->at += n;
  return s;
}

static kt_wire_rc send_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return errno == EPIPE || errno == ECONNRESET ? KT_WIRE_CLOSED : KT_WIRE_ERROR;
    c += k;
    n -= (size_t)k;
  }
  return KT_WIRE_OK;
}

kt_wire_rc kt_wire_send(int fd, const kt_msg *m) {
  uint32_t n = (uint32_t)m->len;
  /* A small frame in one send: the reader wakes once, not twice. */
  unsigned char one[512];
  if (m->len <= sizeof one - sizeof n) {
    memcpy(one, &n, sizeof n);
    if (m->len) memcpy(one + sizeof n, m->data, m->len);
    return send_all(fd, one, sizeof n + m->len);
  }
  kt_wire_rc rc = send_all(fd, &n, sizeof n);
  return rc == KT_WIRE_OK ? send_all(fd, m->data, m->len) : rc;
}

int kt_wire_frame(kt_msg *frames, const kt_msg *m) {
  return kt_msg_put_u32(frames, (uint32_t)m->len) || kt_msg_put(frames, m->data, m->len) ? -1 : 0;
}

kt_wire_rc kt_wire_send_frames(int fd, const kt_msg *frames) {
  return send_all(fd, frames->data, frames->len);
}

kt_wire_rc kt_wire_wait(int fd, int64_t deadline_ns) {
  for (;;) {
    int ms = -1;
    if (deadline_ns) {
      int64_t left = deadline_ns - kt_now_ns();
      if (left <= 0) return KT_WIRE_TIMEOUT;
      ms = (int)((left + 999999) / 1000000);
    }
    struct pollfd p = {fd, POLLIN, 0};
    int rc = poll(&p, 1, ms);
    if (rc > 0) return KT_WIRE_OK;
    if (rc == 0) continue; /* the loop checks the deadline */
    if (errno != EINTR) return KT_WIRE_ERROR;
  }
}

static kt_wire_rc recv_all(int fd, void *p, size_t n, int64_t deadline_ns) {
  char *c = p;
  while (n > 0) {
    kt_wire_rc w = kt_wire_wait(fd, deadline_ns);
    if (w != KT_WIRE_OK) return w;
    ssize_t k = recv(fd, c, n, 0);
    if (k == 0) return KT_WIRE_CLOSED;
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return errno == ECONNRESET ? KT_WIRE_CLOSED : KT_WIRE_ERROR;
    c += k;
    n -= (size_t)k;
  }
  return KT_WIRE_OK;
}

kt_wire_rc kt_wire_recv(int fd, kt_msg *m, int64_t deadline_ns) {
  uint32_t n;
  kt_msg_reset(m);
  kt_wire_rc rc = recv_all(fd, &n, sizeof n, deadline_ns);
  if (rc != KT_WIRE_OK) return rc;
  if (kt_grow(&m->data, &m->cap, n, 1, NULL)) return KT_WIRE_ERROR;
  m->len = n;
  return recv_all(fd, m->data, n, deadline_ns);
}
