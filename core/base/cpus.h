/*
** cpus.h: how many processors this process may use at once: the online
** ones, fewer where its affinity mask allows fewer, fewer again where its
** control group's CPU quota allows fewer (a container on a large host
** sees all the host's processors but may use a share of them).
*/
#ifndef KT_CPUS_H
#define KT_CPUS_H

/* At least 1. */
int kt_cpus_usable(void);

/* Of those, the ones free now: less the threads of the machine that are
** ready to run (Linux's /proc/loadavg counts them, the caller's one
** among them), the fewest of three looks a millisecond apart; at least 1.
** Without /proc, all of them. */
int kt_cpus_free(void);

#endif
