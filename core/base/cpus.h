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

#endif
