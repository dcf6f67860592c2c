/*
** counters.h: hardware counters of a CUDA context through CUPTI's Range
** Profiler (cupti_lib.h), for the CUDA backend's counters_begin and
** counters_end (backend.h), in whichever process holds the context.
**
** Each launch between begin and end is one range (auto range) that CUPTI
** replays as many times as the counters need (kernel replay: it saves and
** restores the device memory the kernel may write around each pass), so
** the caller runs its launches once. A range's values come from the
** Profiler Host API; a configuration's value of a counter is the sum over
** its launches for a ".sum" counter, the largest for ".max", the least for
** ".min", and the mean of the launches' values for every other (ratios,
** percentages, averages).
*/
#ifndef KT_COUNTERS_H
#define KT_COUNTERS_H

#include "cupti_lib.h"

#ifdef KT_HAVE_CUDA
#include <cuda.h>

#include "kt.h"

/* The most launches of one configuration that are profiled. */
#define KT_COUNTERS_MAX_RANGES 64

typedef struct kt_counters kt_counters;

/* Return codes of begin and end besides 0 and -1: counters cannot be read
** here (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES and the like); err says why. */
#define KT_COUNTERS_UNREADABLE 1

/* A profiler for context ctx (current on the calling thread) of device
** `ordinal`; nothing is asked of CUPTI before the first begin. Fails where
** CUPTI cannot be loaded, or ktlua was built without its headers. */
kt_counters *kt_counters_new(CUcontext ctx, int ordinal, kt_error *err);
void kt_counters_free(kt_counters *c);
/* Starts collecting names (checked and prepared on the first begin with
** them: an unknown one fails naming it); *passes: the replays of each
** launch. With passes NULL, only prepares (a tuning's start: unknown
** names fail there): no collection starts. */
int kt_counters_begin(kt_counters *c, const char *const *names, size_t n, unsigned *passes,
                      kt_error *err);
/* Stops after the device is idle and gives the n values (NAN for a counter
** no launch gave) and how many launches were profiled. */
int kt_counters_end(kt_counters *c, double *values, size_t n, unsigned *ranges, kt_error *err);

#endif
#endif
