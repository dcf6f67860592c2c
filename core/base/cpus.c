/*
** cpus.c: the processors this process may use (cpus.h).
*/
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "cpus.h"

#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* Two numbers from the first line of a file, or -1 where there are not two
** (cgroup v2's "max 100000" has no quota). */
static int read_two(const char *path, long long *a, long long *b) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = fscanf(f, "%lld %lld", a, b);
  fclose(f);
  return n == 2 ? 0 : -1;
}

static int read_one(const char *path, long long *a) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = fscanf(f, "%lld", a);
  fclose(f);
  return n == 1 ? 0 : -1;
}

/* The quota in processors, rounded up; 0 where there is none. */
static long long quota_cpus(void) {
  long long quota, period;
  if (read_two("/sys/fs/cgroup/cpu.max", &quota, &period) &&
      (read_one("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &quota) ||
       read_one("/sys/fs/cgroup/cpu/cpu.cfs_period_us", &period)))
    return 0;
  return quota > 0 && period > 0 ? (quota + period - 1) / period : 0;
}

int kt_cpus_usable(void) {
  long long n = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 &&
      (n <= 0 || CPU_COUNT(&set) < n))
    n = CPU_COUNT(&set);
  long long quota = quota_cpus();
  if (quota > 0 && (n <= 0 || quota < n)) n = quota;
  return n > 0 ? (int)n : 1;
}

/* The threads ready to run now, the caller's among them: loadavg's fourth
** field, "running/total"; -1 where it cannot be read. */
static long runnable(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return -1;
  long running = -1, total;
  if (fscanf(f, "%*f %*f %*f %ld/%ld", &running, &total) != 2) running = -1;
  fclose(f);
  return running;
}

int kt_cpus_free(void) {
  int usable = kt_cpus_usable();
  long fewest = -1;
  for (int i = 0; i < 3; i++) {
    long n = runnable();
    if (n >= 0 && (fewest < 0 || n < fewest)) fewest = n;
    if (i < 2) nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  if (fewest < 0) return usable;
  long free = usable - (fewest - 1);
  return free < 1 ? 1 : free > usable ? usable : (int)free;
}
