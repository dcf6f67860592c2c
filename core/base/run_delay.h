/*
** run_delay.h: how long threads waited for a processor (Linux's schedstat:
** time runnable but not running). A time limit on work that runs on the
** host's processors subtracts it, so that a machine busy with other jobs
** stretches the limit instead of failing the work: the verdict is the one
** an idle machine gives. Where /proc has no schedstat, every wait is 0.
*/
#ifndef KT_RUN_DELAY_H
#define KT_RUN_DELAY_H

#include <stdint.h>
#include <sys/types.h>

/* The calling thread's waits so far. */
int64_t kt_run_delay_self(void);

/* The waits of each thread of a process, as read at one moment. */
#define KT_RUN_DELAY_THREADS 64
typedef struct kt_run_delays {
  int n;
  pid_t tid[KT_RUN_DELAY_THREADS];
  int64_t ns[KT_RUN_DELAY_THREADS];
} kt_run_delays;

void kt_run_delays_read(pid_t pid, kt_run_delays *out);
/* The most any one thread of pid waited since then (a thread started
** since counts from 0): the threads of a kernel on the host's processors
** wait side by side, so the longest wait is how much later it ends. */
int64_t kt_run_delays_since(pid_t pid, const kt_run_delays *then);

#endif
