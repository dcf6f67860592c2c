/*
** loop.h: the search loop that every way of evaluating configurations
** shares (on a device, from a recording): ask the searcher, evaluate what
** is new, record, report back, stop when a condition is reached.
*/
#ifndef KT_LOOP_H
#define KT_LOOP_H

#include "result.h"
#include "search.h"

/* Gives a configuration its result. res arrives with index and vi set;
** evaluate fills status, samples, time, sizes and overheads. Returns 0,
** 1 when the result was taken from the journal being resumed (it is not
** appended again), 2 when the result is whole but the loop must stop with
** err (it is recorded first), or -1 on a fatal error: the loop stops, and
** res, which ran to no verdict, is dropped (nothing unrun is recorded).
** prefetch (may be NULL) hears of a configuration that will be evaluated
** soon, to start its builds; withdrawn (may be NULL) that one announced so
** will not be after all (the searcher took it back), unless announced again.
** An asynchronous evaluator (slots > 1: several devices) has up to slots
** configurations in flight and no evaluate: submit starts res in a free
** slot (0), answers it at once from the journal being resumed (1), or
** fails (-1); wait blocks until a submitted one is done and names its
** slot: 0, 2 as evaluate's 2 (that slot's result is recorded, then the
** loop stops once the others are in), or -1 on a fatal error (that slot's
** result is dropped, the loop stops once the others are in). res stays
** where it is until then.
** Results come back in the order they finish, and the searcher hears of
** each as it comes. pick (may be NULL: the first) chooses which of the n
** proposals pending, in the order proposed, slot takes: the one whose
** compiles started on its device, say.
** The indices the evaluator sees (res->index, prefetch's, pick's, ready's
** and outlier's) number the space as defined (space.h: the natural
** numbering); the searcher's number it as the device's limits left it.
**
** Out of order (a synchronous evaluator with ready; without it, the
** proposals pending are evaluated in the order proposed): ready says
** whether evaluate would not wait for a compile of index now, and
** overtake (may be NULL: never) whether the compile of index has run long
** enough that proposals behind it whose compiles are over may go first.
** The loop evaluates the first proposal pending that is ready and that
** only proposals it may overtake come before; while there is none, it
** waits with await (until a compile may have finished since mark, a count
** that marked gives, or until kt_now_ns() reaches deadline_ns), and asks
** outlier (may be NULL) whether the compile of a proposal pending has run
** so far beyond the others' that the loop should not wait for it (why
** then says so, in at most size bytes). Such a proposal is set aside: the
** budget no longer counts it, so that the searcher may propose others in
** its place, and it holds none behind it; it is evaluated once its
** compile is over, if the search has not ended by then, else recorded
** compile_deferred with why (an infrastructure failure: no verdict, a
** resumed tuning runs it again), neither counted by the stop conditions
** nor reported to the searcher. */
typedef struct kt_evaluator {
  int (*evaluate)(void *ud, kt_result *res, kt_error *err);
  int (*prefetch)(void *ud, uint64_t index, const uint32_t *vi, kt_error *err);
  void *ud;
  size_t slots; /* 0 or 1: synchronous, through evaluate */
  int (*submit)(void *ud, size_t slot, kt_result *res, kt_error *err);
  int (*wait)(void *ud, size_t *slot, kt_error *err);
  size_t (*pick)(void *ud, size_t slot, const uint64_t *pending, size_t n);
  void (*withdrawn)(void *ud, uint64_t index);
  bool (*ready)(void *ud, uint64_t index);
  bool (*overtake)(void *ud, uint64_t index);
  uint64_t (*marked)(void *ud);
  void (*await)(void *ud, uint64_t mark, int64_t deadline_ns);
  bool (*outlier)(void *ud, uint64_t index, char *why, size_t size);
} kt_evaluator;

/* Called after each new configuration; an error stops the loop. */
typedef int (*kt_progress_fn)(const kt_results *r, const kt_result *last, void *ud,
                              kt_error *err);

typedef enum kt_clock {
  KT_CLOCK_WALL,     /* stop.seconds counts wall-clock time */
  KT_CLOCK_RESULTS   /* ... the sum of the results' total time (replays) */
} kt_clock;

/* The least lookahead by default, on a device or a replay: a searcher that
** keeps up to this many proposals in flight searches alike on both and on
** any machine. */
#define KT_LOOKAHEAD_MIN 32

typedef struct kt_loop_opts {
  kt_searcher *searcher;
  kt_stop stop;
  kt_clock clock;
  size_t lookahead; /* proposals asked for ahead of evaluation (0: KT_LOOKAHEAD_MIN) */
  struct kt_journal *journal; /* each new result is appended (may be NULL) */
  kt_progress_fn progress;
  void *progress_ud;
  const uint64_t *seeds; /* evaluated first, in order (may be NULL) */
  size_t nseeds;
  kt_prior prior;        /* given to the searcher after its start (n == 0: none) */
  const struct kt_metrics *metrics; /* computed for each result before it is recorded
                                    ** (metrics.h; may be NULL) */
} kt_loop_opts;

/* The loop one step at a time, for drivers that evaluate in their own
** time (online tuning): kt_loop_next gives the next configuration's
** result to fill (its index and vi set; valid until the next call), or 0
** when the search is over (results->stopped says why); kt_loop_record
** then takes it in (recorded: it came from the journal being resumed).
** o and ev (only its prefetch) must outlive the loop. */
typedef struct kt_loop kt_loop;
kt_loop *kt_loop_new(const kt_space *space, const kt_loop_opts *o, const kt_evaluator *ev,
                     kt_results *results, kt_error *err);
int kt_loop_next(kt_loop *l, kt_result **res, kt_error *err);
int kt_loop_record(kt_loop *l, bool recorded, kt_error *err);
/* ... or, when it did not run to a verdict (a fatal error), drops it: the
** searcher may propose its configuration again. */
void kt_loop_drop(kt_loop *l);
void kt_loop_free(kt_loop *l);

/* Runs the search over a generated space, appending to results (whose
** stopped field says why it ended). */
int kt_search_loop(const kt_space *space, const kt_loop_opts *o, const kt_evaluator *ev,
                   kt_results *results, kt_error *err);

#endif
