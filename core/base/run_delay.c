/*
** run_delay.c: threads' waits for a processor, from /proc's schedstat
** (its second field, in ns).
*/
#define _GNU_SOURCE
#include "run_delay.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Read with open and read rather than stdio: a tuning reads its own at
** every deadline it sets. */
static int64_t read_delay(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[96];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = 0;
  unsigned long long run, wait;
  return sscanf(text, "%llu %llu", &run, &wait) == 2 ? (int64_t)wait : 0;
}

int64_t kt_run_delay_self(void) { return read_delay("/proc/thread-self/schedstat"); }

void kt_run_delays_read(pid_t pid, kt_run_delays *out) {
  char path[64];
  out->n = 0;
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  if (!d) return;
  for (struct dirent *e; out->n < KT_RUN_DELAY_THREADS && (e = readdir(d));) {
    pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
    if (tid <= 0) continue;
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
    out->tid[out->n] = tid;
    out->ns[out->n++] = read_delay(path);
  }
  closedir(d);
}

int64_t kt_run_delays_since(pid_t pid, const kt_run_delays *then) {
  kt_run_delays now;
  kt_run_delays_read(pid, &now);
  int64_t most = 0;
  for (int i = 0; i < now.n; i++) {
    int64_t before = 0;
    for (int j = 0; j < then->n; j++)
      if (then->tid[j] == now.tid[i]) before = then->ns[j];
    if (now.ns[i] - before > most) most = now.ns[i] - before;
  }
  return most;
}
