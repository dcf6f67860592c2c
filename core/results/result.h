/*
** result.h: what a tuning found, configuration by configuration.
*/
#ifndef KT_RESULT_H
#define KT_RESULT_H

#include <stdio.h>

#include "log_append.h"
#include "prune_kind.h"
#include "space.h"
#include "backend.h"
#include "task.h" /* up a layer, types only: results are of a task (scripts/layers.lua) */

/* Where the time of one configuration went, in nanoseconds of host clock
** (kernel time is device time and lives in the samples). */
typedef struct kt_overheads {
  double build;      /* compiling (or finding in the cache) */
  double data;       /* restoring buffers, reading outputs */
  double validation; /* comparing outputs with the reference */
  double launcher;   /* host time inside the launcher */
  double wait;       /* waiting for the device: kernel runs and driver latency */
  double searcher;   /* proposing this configuration */
  double framework;  /* everything else */
  double total;      /* wall time of the configuration */
} kt_overheads;

/* The sizes of launches that ran (a launcher may launch a kernel many
** times with sizes of its own): each distinct shape once, with a count. */
typedef struct kt_launch_shape {
  uint32_t kernel;            /* index in the task */
  int dims;
  size_t global[3], local[3]; /* as the kernel states them; local[0] 0: none */
  size_t count;
} kt_launch_shape;

/* A user metric's value, or a recorded number beside the time (metrics.h). */
typedef struct kt_metric_value {
  char *name;
  double value;
} kt_metric_value;

typedef struct kt_result {
  uint64_t index;     /* in the space, 0-based */
  uint32_t *vi;       /* value index of every parameter */
  kt_status status;
  double time_ns;     /* median of the samples; NAN unless ok */
  double *samples_ns; /* kernel time of every timed run */
  size_t nsamples;
  kt_sizes *sizes;    /* one per kernel */
  kt_kernel_usage *usage; /* one per kernel: registers, memory, thread limit */
  size_t nkernels;
  size_t launches;    /* kernel launches in one run */
  kt_overheads over;
  double compile_ns;  /* the compiles' own time (on worker threads: not part of over) */
  double elapsed_ns;  /* since the search began when recorded (a replay: its clock); NAN: unknown */
  double finished;    /* when it was recorded, in Unix seconds; 0: unknown */
  char *error;        /* compiler log, fault or mismatch; NULL if none */
  char *build_log;    /* the compiler's messages for builds that succeeded (warnings) */
  char *device_log;   /* what the device process wrote on stderr meanwhile */
  char *retried;      /* run twice: the first verdict, and why it was run again */
  bool infrastructure; /* failed by ktlua's machinery rather than by a verdict on the
                       ** configuration: its compiler process died or ran past its time
                       ** limit, or its device process was lost while it compiled; a
                       ** resumed tuning runs it again (tuning.c) */
  bool resumed;       /* taken from the journal being resumed: measured by an earlier run,
                      ** so none of its times are this run's (loop.c) */
  bool cut_short;     /* early stop: clearly slower than the best after its first timed
                      ** runs, so not repeated further; never the best */
  double waited_ns;   /* a CPU device: the longest wait for a processor of one of its
                      ** threads while the configuration ran (run_delay.h); 0: none known */
  bool crowded;       /* its timed runs stopped at KT_CROWDED_RUNS, as the machine's other
                      ** jobs held the device's threads back (measure.c) */
  kt_launch_shape *launched;
  size_t nlaunched;
  kt_metric_value *metrics; /* user metrics and recorded numbers (metrics.h) */
  size_t nmetrics;
  double cost;        /* the objective's, when costed (metrics.h); else the time is */
  bool costed;
  char *device;       /* the id of the device that ran it, in a tuning over several
                      ** (fleet.h); NULL: the results' one device */
} kt_result;

/* Where the time between configurations went on a device (sums over the
** tuning, in ns): from one configuration's last wait for the device to
** the next one's first launch the device idles (idle, over n such gaps);
** the parts are the tuning thread's steps in that order. */
typedef struct kt_gaps {
  size_t n;
  double idle;
  double verdict;    /* last wait -> measured: counters read back, the checker's verdict */
  double after;      /* measured -> evaluated: releasing the run, the guard's input checks */
  double loop;       /* evaluated -> the next evaluation: record, journal, progress, searcher */
  double prepare;    /* building, less the two below: final sources, the cache's lookups */
  double kernel;     /* ... making kernels (a round trip to an isolated device's process) */
  double build_wait; /* ... waiting for compiles */
  double launch;     /* built -> first launch queued: checks, restores, arguments, launches */
  size_t ahead;      /* kernels made ahead, while the configuration before ran */
} kt_gaps;

/* Adds the gaps of d to g (the devices of one tuning, summed). */
void kt_gaps_add(kt_gaps *g, const kt_gaps *d);

typedef struct kt_results {
  int refs;
  char *task;
  char *device;
  kt_param *params;   /* a copy: results outlive changes to the space */
  size_t nparams;
  char **kernels;     /* kernel function names */
  size_t nkernels;
  kt_result *items;
  size_t n, cap;
  uint64_t space_count;
  double space_all;
  uint64_t pruned[KT_PRUNE_END - 1]; /* removed by the device's limits, by kt_prune_kind - 1 */
  double wall_ns;     /* whole tuning */
  double setup_ns;    /* uploads and references before the first configuration */
  kt_gaps gap;        /* between configurations (kt_gaps) */
  int device_threads; /* the PoCL threads ktlua gave a CPU device's process on a busy
                      ** machine (remote.h: kt_remote_threads); 0: none */
  double device_ns;   /* device time of every launch, timed or not (warm-ups, references,
                      ** runs again); 0 where unknown */
  char *searcher;
  const char *stopped; /* why the tuning ended (static text, or stopped_read); NULL: unknown */
  char *stopped_read;  /* owned: the reason a results file gave */
  size_t compiles;       /* programs the tuning compiled ... */
  size_t cached;         /* ... and loaded from the program cache on disk instead */
  size_t withdrawn;      /* proposals the searcher took back before evaluation (loop.c) */
  size_t abandoned;      /* compiles still running when the tuning ended, ended then:
                         ** their compiler processes killed (builder.h) */
  size_t compile_workers; /* compiler processes that ran (compile_pool.h), over its devices */
  size_t input_checks;   /* device inputs compared with the tuning's host contents */
  size_t input_checks_device; /* ... of them compared on the device (verify_device.c) */
  /* Requests to the device process that those checks sent, and of them the
  ** ones whose reply they waited for (isolated tuners; reruns of a hunt
  ** not counted). */
  size_t input_check_requests, input_check_round_trips;
  size_t input_checks_queued; /* of them sent with a configuration's runs */
  size_t inputs_changed; /* ... found changed by a configuration, and restored */
  size_t restores;       /* written arrays restored on the device before a run */
  char *inputs_log;      /* who changed them, and what */
  char *device_log;      /* everything the device process wrote on stderr */
  /* What ran, and on what: for the database (db.h), which keeps a
  ** configuration with what it belongs to; NULL when unknown (read from a
  ** file that did not say). */
  char *backend, *driver;
  /* The problem size a file said it was tuned for (a Kernel Tuner cache's
  ** problem_size: its 1 to 3 positive integers, x, y, z); nproblem 0: none. */
  int64_t problem_size[3];
  size_t nproblem;
  char *source;    /* a hash of the kernels' names and sources */
  char *options;   /* the kernels' compiler options, joined by "; " */
  char *objective; /* "kernel" or "kernel+host", or a metric's name (metrics.h) */
  bool maximize;   /* ... which is maximised */
  char *notice;       /* what a person should know of them (a resume forced); NULL: nothing */
  double profile_ns;       /* the runs that collected hardware counters (profile.c) ... */
  size_t profiled;         /* ... the configurations that got them ... */
  unsigned profile_passes; /* ... and the passes each launch took */
} kt_results;

/* Fills the fields above for a tuning of task on a device. */
int kt_results_identify(kt_results *r, const kt_task *task, const char *backend,
                        const char *driver, const char *objective, kt_error *err);

/* Results over a space; kernels names what runs per configuration. */
kt_results *kt_results_new(const char *name, const kt_space *space,
                           const char *const *kernels, size_t nkernels, const char *device,
                           kt_error *err);
kt_results *kt_results_for_task(const kt_task *t, const char *device, kt_error *err);
void kt_results_retain(kt_results *r);
void kt_results_release(kt_results *r);
/* Appends a copy of vi; returns the new record (zeroed but for index/vi). */
kt_result *kt_results_add(kt_results *r, uint64_t index, const uint32_t *vi,
                          kt_error *err);
/* Forgets the last result: one whose configuration did not run to a verdict. */
void kt_results_drop_last(kt_results *r);
/* The ok result of least cost (kt_result_cost: the fastest, unless an
** objective says otherwise) that was not cut short, or NULL. */
const kt_result *kt_results_best(const kt_results *r);
void kt_result_clear(kt_result *r);
/* Forgets the outcome of r (status, times, sizes, logs), keeping index and
** configuration: for running it again. */
void kt_result_reset(kt_result *r);
int kt_result_set_error(kt_result *r, kt_status status, const char *msg);

/* A kernel's usage as (name, value) pairs, in a fixed order, for writers;
** a negative value is unknown. */
#define KT_USAGE_FIELDS 5
void kt_usage_fields(const kt_kernel_usage *u, const char *names[KT_USAGE_FIELDS],
                     int64_t values[KT_USAGE_FIELDS]);

/* The outcome of src (all but index and vi) into dst. */
int kt_result_copy(kt_result *dst, const kt_result *src, kt_error *err);

/* Results back from a results file or a journal, gzipped or not, of at
** most max bytes (0: KT_FILE_MAX) (result_read.c). */
kt_results *kt_results_read(const char *path, size_t max, kt_error *err);
/* A journal's results from its text; 1 (err untouched) when the text is no
** journal (its first line is no journal header). */
int kt_journal_parse(const char *text, size_t len, kt_results **out, kt_error *err);
struct kt_jvalue;
/* Appends the result that a JSON object describes (as written by
** kt_result_write_json) to r, whose parameters name its config. */
int kt_result_read_json(const struct kt_jvalue *x, kt_results *r, kt_error *err);
/* Appends to r the samples of a JSON array of times in ms (NULL: none). */
int kt_result_samples_from_json(kt_result *r, const struct kt_jvalue *ms, kt_error *err);
/* Whether text is a CSV file of ktlua's results (its header's first
** column is index), and its results (result_csv.c). */
bool kt_results_csv_is(const char *text, size_t len);
kt_results *kt_results_from_csv(const char *text, size_t len, kt_error *err);
/* The results of a parsed results file (format "ktlua-results"). */
kt_results *kt_results_from_json(const struct kt_jvalue *root, kt_error *err);

/* Refuses results read from a file whose records contradict each other:
** one index given two configurations, or with both one configuration two
** indices (result_check.c). where[i] is how the file numbers record i
** (NULL: i + 1), unit what it numbers ("result", "line"). */
int kt_results_check_indices(const kt_results *r, bool both, const size_t *where,
                             const char *unit, kt_error *err);
/* Notes in r->notice the configurations that a file records more than
** once (a T4 file's repeated measurements; results converted from one),
** and what is done with them: what. */
int kt_results_note_repeats(kt_results *r, const char *what, kt_error *err);
/* A configuration recorded again (a journal's, found later to have changed
** the inputs) takes the place of its first record; where[] (may be NULL)
** moves alike. */
int kt_results_keep_last(kt_results *r, size_t *where, kt_error *err);
/* Both checks for two records, numbered wa and wb in their file. */
int kt_result_contradicts(const kt_results *r, const kt_result *a, const kt_result *b,
                          size_t wa, size_t wb, const char *unit, kt_error *err);

/* Files: CSV with one row per configuration, JSON with everything. */
int kt_results_write_csv(const kt_results *r, const char *path, kt_error *err);
int kt_results_write_json(const kt_results *r, const char *path, kt_error *err);
/* The pieces, shared with the journal: the header object's fields (left
** open for more) and one result as a JSON object. */
void kt_results_write_json_header(FILE *f, const kt_results *r, const char *format);
void kt_result_write_json(FILE *f, const kt_results *r, const kt_result *x);
/* The same, its first member "device_threads": threads (a journal's line
** from which the device process had other threads, journal.c). */
void kt_result_write_json_threads(FILE *f, const kt_results *r, const kt_result *x, int threads);

/* The cost of a result: its time (or its objective), infinity when it failed. */
double kt_result_cost(const kt_result *r);

#endif
