/*
** replay.h: tuning against recorded results instead of a device
** (simulation mode).
**
** A recording is any results file kt.load reads (result_formats.h: ktlua's
** own, T4, KTT, Kernel Tuner caches), gzip-compressed or not. Its space has the recorded parameters and
** exactly the recorded configurations as its valid set; evaluating a
** configuration copies its recorded outcome (a failed one stays failed),
** and each evaluation advances a simulated clock by the time the
** recording says it cost. Any searcher runs on a recording at a cost of
** microseconds per evaluation.
**
** What a Kernel Tuner record costs on the clock: its compile, verification,
** benchmark and framework times (strategy_time belongs to the searcher
** that made the recording). Its `time` is the kernel time in ms, or an
** error name: CompilationFailedConfig and RuntimeFailedConfig become
** compile_failed and runtime_failed; InvalidConfig marks a configuration
** that is not in the space; any other name is a runtime failure.
*/
#ifndef KT_REPLAY_H
#define KT_REPLAY_H

#include "loop.h"
#include "result.h"

typedef struct kt_replay kt_replay;

kt_replay *kt_replay_load(const char *path, kt_error *err);
void kt_replay_retain(kt_replay *r);
void kt_replay_release(kt_replay *r);

/* The recorded space, generated. */
kt_space *kt_replay_space(const kt_replay *r);
/* The recording as results: items[i] is configuration i. */
const kt_results *kt_replay_records(const kt_replay *r);
/* The fastest recorded configuration, NULL when none succeeded. */
const kt_result *kt_replay_optimum(const kt_replay *r);
/* The file's format, as kt_results_parse names it. */
const char *kt_replay_format(const kt_replay *r);

/* Searches the recording with o (whose clock is ignored: stop.seconds
** counts the simulated clock). *out gets the results even on an error. */
int kt_replay_tune(kt_replay *r, const kt_loop_opts *o, kt_results **out, kt_error *err);

/* How well a search did within its first budget evaluations (0: all of
** them) by an objective (metrics.h: NULL or "kernel" is the time): *reached
** is the recording's optimum over the best found (best over optimum when
** maximised; 0 when nothing had a value); *score is the mean of that ratio
** after each of the budget evaluations, a search that ended early keeping
** its best. -1 when no record has a value of the objective. */
int kt_replay_score(const kt_replay *r, const kt_results *res, uint64_t budget,
                    const char *objective, bool maximize, double *reached, double *score);

#endif
