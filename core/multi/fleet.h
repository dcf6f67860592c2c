/*
** fleet.h: one tuning over several devices of one model. Each device has
** a tuner of its own (its device process, its copies of the arrays, its
** compiles) driven by a thread of its own; the search loop, the searcher,
** the results and the journal stay with the caller, on the calling
** thread. The loop hands each proposal to whichever device is free
** (loop.h: an asynchronous evaluator with a slot per device), and each
** result records the device that ran it (kt_result.device).
**
** Lua and threads: launchers, generators, comparators, metrics and Lua
** searchers are Lua callbacks, and one Lua state serves them all. Every
** thread of a tuning holds one lock (the fleet's) while it runs anything
** of the tuning, and lets go of it only while it waits for its device
** (its device process's reply, a compile): so Lua runs on one thread at a
** time, the devices run at once, and the state that the tuning shares
** (results, journal, the searcher, the task) needs no lock of its own;
** each device thread runs its callbacks on a Lua thread of its own
** (kt_fleet_set_thread_hook, which the bindings set). A task with a
** launcher of its own keeps the lock also while it waits: the launchers of
** all devices share the task's host arrays (run:read into them, host steps
** on them, and their restoring before each execution), which two launchers
** at once would overwrite under one another. Such a task is tuned a device
** at a time.
*/
#ifndef KT_FLEET_H
#define KT_FLEET_H

#include "tuner.h"

typedef struct kt_fleet kt_fleet;

/* Opens a tuner on dev; NULL: an isolated tuner (kt_tuner_new) with
** build_threads compile threads. Another opener may give devices whose
** device process lives elsewhere (another MPI rank). */
typedef kt_tuner *(*kt_fleet_open_fn)(const kt_device_info *dev, int build_threads, void *ud,
                                      kt_error *err);

/* Whether devs can be tuned together: no device twice, one model (name
** and backend) for all. Says which ones when not. */
int kt_fleet_check(const kt_device_info *devs, size_t n, kt_error *err);

/* Opens every device of devs (n >= 1, checked as above). */
kt_fleet *kt_fleet_new(const kt_device_info *devs, size_t n, int build_threads,
                       kt_fleet_open_fn open, void *ud, kt_error *err);
void kt_fleet_free(kt_fleet *f);
size_t kt_fleet_size(const kt_fleet *f);
kt_tuner *kt_fleet_tuner(kt_fleet *f, size_t i);

/* What each device thread of the next tunings runs first (starting) and
** last, under the lock: the bindings give it a Lua thread of its own. */
typedef void (*kt_fleet_thread_fn)(void *ud, size_t device, bool starting);
void kt_fleet_set_thread_hook(kt_fleet *f, kt_fleet_thread_fn fn, void *ud);

/* kt_tune over every device of the fleet: the same options, the same
** journal and resume, progress and Ctrl-C on the calling thread. The
** references are computed once (on the first device, while the others
** run their first configuration, judged once they are in); the device limits
** (the first device's: one model) and the input checks are each device's;
** fail_fast counts each device's first configurations. */
int kt_fleet_tune(kt_fleet *f, kt_task *task, const kt_tune_opts *opts, kt_results **out,
                  kt_error *err);

#endif
