/*
** ahead.h: the next configuration's kernels made while the device runs
** the current one.
**
** Between one configuration's last wait and the next one's first launch
** the device idles while the tuning thread makes the next kernels (a
** round trip to the device process each) among other host work. The
** loop announces the configurations it will evaluate, in order (its
** prefetch); the tuning keeps their final sources, and once the current
** configuration's runs are queued, before they are waited for, makes the
** kernels of the next one whose compile is over (kt_build_ahead). That
** touches no queue: cuModuleGetFunction (the module was loaded on its
** compile thread) or clCreateKernel run on the host, so the timed runs
** queued meanwhile measure what they did before. A guess that proves
** wrong (the configuration is then not evaluated: the tuning stopped, an
** error) leaves a kernel in the build cache, freed with its program.
*/
#ifndef KT_AHEAD_H
#define KT_AHEAD_H

#include "tune_int.h"

typedef struct kt_ahead kt_ahead;

kt_ahead *kt_ahead_new(kt_error *err);
void kt_ahead_free(kt_ahead *a);

/* The configuration at index comes after those announced before; sources
** (one per kernel of the task, malloc'd, NULL where none) are taken. */
int kt_ahead_announce(kt_ahead *a, uint64_t index, char **sources, size_t n, kt_error *err);
/* index is being evaluated: it and what was announced before it are done
** with (an index never announced changes nothing). */
void kt_ahead_begin(kt_ahead *a, uint64_t index);
/* index will not be evaluated after all (the searcher took it back): its
** first announcement is forgotten, so no kernel is made ahead for it. */
void kt_ahead_withdraw(kt_ahead *a, uint64_t index);
/* From now on the loop may evaluate the configurations announced out of
** order (loop.h, ready): kt_ahead_begin forgets only the one it names. */
void kt_ahead_out_of_order(kt_ahead *a);
/* Where the programs of the configuration announced as index stand: 2
** ready (every compile over, nothing to compile, taken from a resumed
** journal, or never announced), 1 compiling (*running_ns, unless NULL:
** the longest its compiles have run so far, builder.h). A program that the cache no
** longer holds (a compile that came to no verdict is compiled again) is
** submitted again now. */
int kt_ahead_state(kt_ahead *a, const tuning *tu, uint64_t index, double *running_ns);

/* The run's idle work (kt_run.idle, ud: the tuning): makes the kernels
** of the next configuration to be evaluated, where compiled. Returns 1
** with err set when the device process was lost meanwhile. */
int tune_ahead_idle(kt_run *run, void *ud, kt_error *err);

#endif
