/*
** tuner.h: a device opened for tuning: its context, the device copies of
** the arrays that kernels use, and the program cache; and the tuning loop
** that proposes, builds, runs and records configurations.
*/
#ifndef KT_TUNER_H
#define KT_TUNER_H

#include "build.h"
#include "device.h"
#include "loop.h"
#include "result.h"
#include "search.h"
#include "task.h"

typedef struct kt_tuner kt_tuner;

/* build_threads: compile threads (<= 0: one per online processor).
** isolate: the device is driven from a child process (see remote.h), so
** that kernels that hang or crash can be stopped and tuning goes on. */
kt_tuner *kt_tuner_new(const kt_device_info *dev, int build_threads, bool isolate,
                       kt_error *err);
bool kt_tuner_isolated(const kt_tuner *t);
void kt_tuner_free(kt_tuner *t);
/* Whether a tuning or a run is in progress on it: then it cannot tune,
** run or be freed (a Lua callback of that tuning might try). */
bool kt_tuner_busy(const kt_tuner *t);
/* The online tunings on it (online.h) count themselves while they live:
** their steps run on it between the application's calls, so it cannot be
** freed until they have gone. */
void kt_tuner_hold_online(kt_tuner *t, bool hold);
bool kt_tuner_held_online(const kt_tuner *t);
/* A device process that has grown by more than `bytes` since its first
** configuration is replaced between configurations, as after a crash (0:
** never; the default is KT_DEVICE_GROWTH_DEFAULT). Drivers keep some of
** what a tuning builds: PoCL keeps every kernel it compiled loaded, about
** 23 KB and 4 memory mappings each, and a process may have 65,530
** mappings (Linux's vm.max_map_count): 128 MiB is some 5,700 kernels.
** A process runs at least bytes / 128 KiB configurations (1,024 for the
** default) first. Isolated tuners only. kt_tuner_renewals counts the
** replacements. */
#define KT_DEVICE_GROWTH_DEFAULT ((size_t)128 << 20)
void kt_tuner_set_device_growth(kt_tuner *t, size_t bytes);
unsigned kt_tuner_renewals(const kt_tuner *t);
/* What is called around each wait for the device or a compile, also in
** the contexts that replace a lost one (fleet.h). */
void kt_tuner_set_wait(kt_tuner *t, kt_wait_hook hook);
const kt_device_info *kt_tuner_device(const kt_tuner *t);
/* The program caches' counts; compiled and cached over every context the
** tuner had. */
kt_build_stats kt_tuner_build_stats(const kt_tuner *t);
/* Whether compiles look in the program cache on disk (program_store.h)
** and keep their programs there: on by default where the environment
** names or allows one; the folder in use, or NULL. */
void kt_tuner_set_disk_cache(kt_tuner *t, bool on);
const char *kt_tuner_disk_cache(const kt_tuner *t);
int kt_tuner_build_threads(const kt_tuner *t);
/* Compiles from now on in `workers` compiler processes (compile_pool.h):
** < 0 as many as kt_compile_pool_default_size gives, 0 none (compiles in
** the device process). Only for an isolated tuner of a device of this
** host; a tuner that has them keeps them. */
int kt_tuner_set_compile_workers(kt_tuner *t, int workers, kt_error *err);
/* The tuner is one of `devices` of one tuning on this host (fleet.h):
** their default compiler processes share its processors. Before
** kt_tuner_set_compile_workers. */
void kt_tuner_set_host_devices(kt_tuner *t, int devices);
/* The longest a compile in its compiler processes may take, seconds (<= 0:
** no limit; KT_COMPILE_TIMEOUT_DEFAULT until set): past it the process is
** killed and the configuration is compile_failed. Before tuning. */
void kt_tuner_set_compile_timeout(kt_tuner *t, double seconds);
/* Why its compiler processes gave up (no ktlua executable to run, the
** platform gives no program binaries), or NULL. */
const char *kt_tuner_compile_fallback(const kt_tuner *t);
size_t kt_tuner_build_compiling(const kt_tuner *t);

/* How many timed runs a configuration gets. fixed > 0: exactly that many.
** Otherwise adaptive: at least min, at most max, stopping once the
** relative standard error of the mean falls below rse; on a CPU device
** whose threads the machine's other jobs keep waiting for a processor
** (more than KT_CROWDED_WAIT of the configuration's time), at
** KT_CROWDED_RUNS (or min) already: more runs would measure those jobs as
** much as the kernel, and their spread is in the samples (measure.c). */
typedef struct kt_repeat {
  int fixed;
  double rse;
  int min, max;
} kt_repeat;

#define KT_REPEAT_DEFAULT ((kt_repeat){0, 0.02, 3, 50})
#define KT_CROWDED_RUNS 10
#define KT_CROWDED_WAIT 0.1

/* Early stop (measure.c): after its first `runs` timed runs, a
** configuration whose fastest run took more than the best time so far
** times max(factor, 1 + noise x the best's relative spread), plus twice
** the device's timer resolution, and whose runs spread by at most
** `spread` ((slowest - fastest) / fastest), is repeated no further: it
** keeps its samples, is marked cut_short, and is never the best. runs 0:
** never. */
typedef struct kt_early_stop {
  int runs;
  double factor, spread, noise;
} kt_early_stop;

#define KT_EARLY_STOP_DEFAULT ((kt_early_stop){2, 1.2, 0.1, 3.0})

/* Compile outliers (outlier.c): the tuning does not wait for a compile
** that has run longer than `factor` times the median of the tuning's
** compiles so far (once `after` of them are over) and longer than
** floor_ns; its configuration is set aside (loop.h); one past floor_ns and
** KT_OVERTAKE_FACTOR times the median lets those behind it go first.
** factor < 0: neither, the order proposed always; 0 (each field): the
** default. */
typedef struct kt_outlier_rule {
  double factor;
  size_t after;
  double floor_ns;
} kt_outlier_rule;

#define KT_OUTLIER_FACTOR_DEFAULT 10.0
#define KT_OUTLIER_AFTER_DEFAULT 3
#define KT_OUTLIER_FLOOR_DEFAULT 1e9
/* Beyond the floor and this many times the median, a compile holds none
** of the configurations behind it whose compiles are over (outlier.c). */
#define KT_OVERTAKE_FACTOR 2.0
#define KT_TIME_FACTOR_DEFAULT 50.0
#define KT_TIME_FLOOR_DEFAULT 10e9


/* When the inputs are checked after a configuration (guard.c): after every
** one that did not come out ok, and after ok ones as often as keeps the
** checks near 2% of the time (auto), after every one (always), or only
** after failures (and at the end). */
typedef enum kt_check_inputs { KT_CHECK_AUTO, KT_CHECK_ALWAYS, KT_CHECK_FAILURES } kt_check_inputs;

typedef struct kt_tune_opts {
  kt_searcher *searcher; /* required; the tuning does not free it */
  kt_stop stop;
  kt_repeat repeat;
  bool include_host;     /* a sample is kernel time plus the launcher's host time */
  const char *journal;   /* append each result to this file (NULL: none) */
  bool resume;           /* take the results already in the journal instead of running them */
  bool resume_force;     /* ... also when the journal is of another task (journal_id.h) */
  /* How long one execution may wait for the device (isolated tuners):
  ** time_limit_ns when set, else time_factor times the best time so far,
  ** but never less than time_floor_ns. */
  double time_limit_ns, time_factor, time_floor_ns;
  /* Proposals compiled ahead of the device (0: 4 per compile thread, + 1). */
  size_t lookahead;
  kt_progress_fn progress;
  void *progress_ud;
  /* Stop with an error when the first fail_fast configurations all failed
  ** alike (0: KT_FAIL_FAST_DEFAULT; < 0: never). */
  int fail_fast;
  kt_check_inputs check_inputs;
  /* Configurations evaluated first (kt_loop_opts.seeds): nseeds value-index
  ** lists, one after the other; those the device's limits prune are left out. */
  const uint32_t *seeds;
  size_t nseeds;
  /* What was learnt elsewhere, for the searcher (kt_loop_opts.prior). */
  kt_prior prior;
  const struct kt_metrics *metrics; /* user metrics and the objective (NULL: the time) */
  /* Timed runs one by one, outputs compared on the tuning thread, as
  ** before the pipeline (measure.c): for comparing the two. */
  bool serial;
  /* Where outputs are compared: 0 (auto), 1 (host), 2 (device), as
  ** kt_validate_on (validate_device.h). */
  int validate_on;
  kt_early_stop early;
  /* > 0: after its timed runs, each configuration runs for at least this
  ** long while NVML measures its energy and power (measure_energy.c). */
  double energy_window_ns;
  /* Hardware counters of each ok configuration, by CUPTI's metric names,
  ** as metrics of its result (profile.c); CUDA only. */
  const char *const *profile;
  size_t nprofile;
  kt_outlier_rule outlier;
} kt_tune_opts;

#define KT_FAIL_FAST_DEFAULT 8

/* Tunes the task. *out receives the results even when the tuning stops
** with an error (a Lua error in a callback, a broken context): what was
** measured is never lost. Ctrl-C stops the tuning after the configuration
** in flight, with results->stopped "interrupted". */
int kt_tune(kt_tuner *t, kt_task *task, const kt_tune_opts *opts, kt_results **out,
            kt_error *err);

/* Runs one configuration once with the arrays' current host contents and,
** when it ran correctly, copies every array the task writes back into its
** host array. out is a fresh record (from kt_results_add) whose run fields
** are filled in. limit_ns (0: none) bounds the wait for the device; a
** device process lost meanwhile fails the configuration, not the call. */
int kt_tuner_run_once(kt_tuner *t, kt_task *task, const uint32_t *vi, int64_t limit_ns,
                      kt_result *out, kt_error *err);

#endif
