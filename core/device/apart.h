/*
** apart.h: one job in a short-lived child process, whose answer comes back
** as a wire message: for work that must not load drivers into a process
** that forks device servers (NVRTC compiles, device probes: remote.h).
*/
#ifndef KT_APART_H
#define KT_APART_H

#include <stdint.h>

#include "wire.h"

/* Runs job(answer, ud) in a child, which sends *answer back, and receives
** it into *answer (initialised here; the caller frees it). Returns
** KT_WIRE_OK, KT_WIRE_TIMEOUT once deadline (a kt_now_ns() time; 0:
** none) passed (the child is killed), another code when the child died
** before answering, or -1 when no child could start. */
int kt_apart(void (*job)(kt_msg *answer, void *ud), void *ud, int64_t deadline, kt_msg *answer);

#endif
