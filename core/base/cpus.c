/*
** cpus.c: the processors this process may use (cpus.h).
*/
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "cpus.h"

#include <sched.h>
#include <stdio.h>
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
