/*
** lk.h: what the Lua binding's files share: metatable names, checked
** access to ktlua objects, option tables, and Lua callbacks that the core
** calls through C function pointers.
**
** Indexing: every index ktlua defines is 0-based (array elements, as the
** kernel sees them; configuration indices, as result files record them).
** Lists that ktlua returns are ordinary Lua sequences.
*/
#ifndef LK_H
#define LK_H

#include <lauxlib.h>
#include <lua.h>

#include "../core/base/array.h"
#include "../core/device/device.h"
#include "../core/eval/replay.h"
#include "../core/results/result.h"
#include "../core/search/search.h"
#include "../core/eval/task.h"
#include "../core/eval/tuner.h"
#include "version.h"

#define LK_ARRAY "ktlua.array"
#define LK_TYPE "ktlua.type"
#define LK_ARG "ktlua.arg"
#define LK_TUNER "ktlua.tuner"
#define LK_TASK "ktlua.task"
#define LK_SPACE "ktlua.space"
#define LK_RESULTS "ktlua.results"
#define LK_REPLAY "ktlua.replay"
#define LK_DB "ktlua.db"

/* Raises the core's error as a Lua error (with the caller's position). */
int lk_error(lua_State *L, const kt_error *err);

/* Userdata payloads. Each starts with a pointer to what the object holds,
** which its __gc releases and sets to NULL: __gc also runs by hand
** (getmetatable(a).__gc(a)) and on lua_close, so every access goes
** through lk_check_object or lk_test_object, which refuse a released one. */
typedef struct lk_array { kt_array *a; } lk_array;
typedef struct lk_type { kt_type *t; } lk_type;
typedef struct lk_arg { kt_arg *a; } lk_arg;
typedef struct lk_tuner {
  kt_tuner *t;             /* the (first) device's */
  struct kt_fleet *fleet;  /* a tuner over several devices (fleet.h), or NULL */
} lk_tuner;
typedef struct lk_task { kt_task *task; kt_kernel *kernel; /* NULL for a composition */ } lk_task;
typedef struct lk_results { kt_results *r; } lk_results;
typedef struct lk_replay { kt_replay *r; } lk_replay;

/* The payload of the object of class cls (LK_ARRAY, ...) at idx; raises
** an argument error when it is not one or when it has been released
** ("array has been released"). lk_test_object gives NULL when idx holds
** no object of the class, and raises the same error on a released one. */
void *lk_check_object(lua_State *L, int idx, const char *cls);
void *lk_test_object(lua_State *L, int idx, const char *cls);
/* When idx holds a released ktlua object, pushes and returns what to say
** ("array has been released"); else NULL, pushing nothing. For values
** found in tables, whose errors name where they were found. */
const char *lk_released(lua_State *L, int idx);
/* For a custom __index: pushes the method named by the key at 2, if there
** is one, without looking at the object, so that a released object's
** methods are found and say so themselves ("calling 'fill' on bad self
** (array has been released)"). */
bool lk_push_method(lua_State *L);
/* For __tostring: pushes "array (released)" and returns true when the
** object at 1 has been released. */
bool lk_push_released(lua_State *L, const char *cls);

kt_array *lk_check_array(lua_State *L, int idx);
kt_array *lk_test_array(lua_State *L, int idx);
void lk_push_array(lua_State *L, kt_array *a); /* takes a reference of its own */
lk_task *lk_check_task(lua_State *L, int idx);
/* The same, for what changes the task: raises while it is busy (tuned,
** run, or generating its space: kt_task_busy). */
lk_task *lk_check_idle_task(lua_State *L, int idx);
/* k:constraint(f[, names]) at 2 and 3 becomes k:constraint(names, g) with
** g(a, b, ...) = f{A = a, B = b, ...}. Without names, the names are all
** the parameters, and a second form at 4 and 5 checks those that f reads
** when called once: returns how many forms there are (1 or 2). */
int lk_constraint_table_form(lua_State *L, const kt_space *s);
/* An element type from a name ("float") or a struct type. */
const kt_type *lk_check_type(lua_State *L, int idx);

/* Registration helpers: a metatable with methods in __index (or a custom
** __index when index is given). */
void lk_new_class(lua_State *L, const char *name, const luaL_Reg *meta,
                  const luaL_Reg *methods);
/* The names a custom __index answers besides the methods (NULL-ended), kept
** as the metatable's "fields" list: what Tab offers after `object.`. */
void lk_class_fields(lua_State *L, const char *name, const char *const *fields);
/* More methods for a class made already: a file above the class's own
** adds the methods that need it (a:input() from lk_arg.c, tuner:online()
** from lk_online.c), rather than the class's file calling up to it. */
void lk_class_methods(lua_State *L, const char *name, const luaL_Reg *methods);

/* A zeroed userdata of size bytes that gc frees when collected: holds C
** memory across calls that may raise a Lua error. */
void *lk_new_guarded(lua_State *L, size_t size, lua_CFunction gc);

/* Pushes require(module)[field]: what the stdlib writes in Lua; returns its type. */
int lk_push_stdlib(lua_State *L, const char *module, const char *field);

/* ---- option tables ---- */

/* Raises an error naming the first key of the table at idx that is not
** in allowed (NULL-terminated). what names the table in the message. */
void lk_check_keys(lua_State *L, int idx, const char *what, const char *const *allowed);
/* Field accessors: absent (nil) fields give dflt; wrong types raise an
** error naming `what.field`. */
lua_Integer lk_opt_integer(lua_State *L, int idx, const char *what, const char *field,
                           lua_Integer dflt);
lua_Number lk_opt_number(lua_State *L, int idx, const char *what, const char *field,
                         lua_Number dflt);
const char *lk_opt_string(lua_State *L, int idx, const char *what, const char *field,
                          const char *dflt);
int lk_opt_boolean(lua_State *L, int idx, const char *what, const char *field, int dflt);
/* The string argument arg as a C string: one that holds a NUL byte (which
** would end it early, so that C reads less than Lua holds) is an error
** naming the argument and the byte's character. */
const char *lk_check_text(lua_State *L, int arg);
/* Whether the value at idx is a string with a NUL byte inside: as a C
** string (lk_to_value), it would read as less than it is. */
bool lk_has_nul(lua_State *L, int idx);
/* The value at idx as messages show it, pushed: a string quoted as JSON
** (kt_quote: NUL and control bytes escaped, so the whole of it shows),
** anything else as tostring gives it. */
const char *lk_quote(lua_State *L, int idx);
/* Pushes the field and returns its type (LUA_TNIL when absent). */
int lk_get_field(lua_State *L, int idx, const char *field);

/* ---- values and configurations ---- */

void lk_push_value(lua_State *L, const kt_value *v);
/* A parameter value from a Lua number or string; false when it is neither. */
bool lk_to_value(lua_State *L, int idx, kt_value *v);
/* A configuration as a table {NAME = value, ...}. */
void lk_push_config(lua_State *L, const kt_space *space, const uint32_t *vi);
/* Value indices from a table {NAME = value}; raises a Lua error naming
** what is missing or wrong. */
void lk_check_config(lua_State *L, int idx, const kt_space *space, uint32_t *vi);
/* The same, but a value that is not one of its parameter's is no error:
** pushes why ("WG = 48 is not one of its values (32, 64)") and returns it,
** or pushes nil and returns NULL when vi is the configuration's. */
const char *lk_to_config(lua_State *L, int idx, const kt_space *space, uint32_t *vi);
void lk_push_sizes(lua_State *L, const size_t *v, int dims);
/* A count: an integer, or a float beyond the integers (2^63 and up). */
void lk_push_count(lua_State *L, uint64_t n);

/* ---- callbacks ---- */

/* A Lua value kept alive for the core: a function, a searcher table. */
typedef struct lk_ref {
  lua_State *thread; /* where calls run; anchored in the registry */
  int ref;
} lk_ref;

/* References the value at idx; the result is a kt_callback's ud, freed
** by lk_ref_free. */
lk_ref *lk_ref_new(lua_State *L, int idx);
void lk_ref_free(void *ud);
kt_callback lk_ref_callback(lua_State *L, int idx);
/* Pushes the referenced value on the callback thread and returns it. */
lua_State *lk_ref_push(const lk_ref *r);
/* Calls with nargs arguments already pushed after the function on r's
** thread; on error writes the Lua message (with a traceback if asked)
** into err, pops, returns -1. */
/* A time limit on Lua code that waits for no device (lk_deadline.c):
** between begin and end, the code raises "<who> ran past its time limit
** (<limit> s)<where>" once limit_s have passed, not counting the time its
** thread waited for a processor (run_delay.h); fired says it did. */
typedef struct lk_deadline {
  int64_t at;
  int64_t waited; /* the thread's waits for a processor, when at was last moved */
  double limit_s;
  const char *who, *where;
  bool fired;
  lua_Hook hook; /* what was set before, restored at the end */
  int mask, count;
  void *outer; /* the limit this one hides */
} lk_deadline;
void lk_deadline_begin(lua_State *T, lk_deadline *d, double limit_s, const char *who,
                       const char *where);
void lk_deadline_end(lua_State *T, const lk_deadline *d);

int lk_ref_call(const lk_ref *r, int nargs, int nresults, bool with_traceback,
                kt_error *err);

/* Runs body on r's thread in protected mode, with ud (a light userdata)
** as its only argument: whatever Lua error it meets (a metamethod that
** fails, memory) goes into err, with a traceback, and never unwinds the
** core's C frames. Returns 0 or -1. */
int lk_ref_protect(const lk_ref *r, lua_CFunction body, void *ud, kt_error *err);

/* The callback thread of this Lua state (created on first use). */
lua_State *lk_callback_thread(lua_State *L);
/* Callbacks made on the calling OS thread run on T from now on (NULL: on
** the callback thread again): each device thread of a tuning over several
** devices has a Lua thread of its own (lk_fleet.c). */
void lk_set_callback_thread(lua_State *T);
/* The thread callbacks made on this OS thread run on. */
lua_State *lk_running_callback_thread(lua_State *L);

/* A zeroed list of n arguments in a userdata pushed on the stack; the
** collector releases what it holds, so a Lua error while filling it
** leaks nothing. */
kt_arg **lk_scratch_args(lua_State *L, size_t n);
/* The bytes of a scalar of type t from the Lua value at idx, converted as
** array elements are; kept in a userdata pushed on the stack. */
void *lk_scalar_bytes(lua_State *L, const kt_type *t, int idx);

/* ---- each area's registration ---- */

int luaopen_ktlua(lua_State *L);
/* The stdlib modules (ktlua.report, ...) in package.preload, from their
** sources built in (bindings/ktlua.c); the executable preloads them at
** start, so that a script may require any of them first. */
void lk_preload_stdlib(lua_State *L);
/* luaopen_ktlua_<module>: a stdlib module that lua5.4 requires before
** "ktlua" (bindings/ktlua.c). */
int lk_open_embedded(lua_State *L, const char *name);
int luaopen_ktlua_spawn(lua_State *L);
int luaopen_ktlua_split_run(lua_State *L);

void lk_open_device(lua_State *L);  /* kt.devices, kt.device */
void lk_open_array(lua_State *L);   /* kt.array, kt.struct */
void lk_open_arg(lua_State *L);     /* kt.scalar, kt.int, ..., kt.localmem, kt.symbol */
void lk_open_task(lua_State *L);    /* kernel and composition methods */
void lk_open_tuner(lua_State *L);   /* kt.tuner */
void lk_open_results(lua_State *L);
void lk_open_run(lua_State *L);     /* k:launcher and the run object */
void lk_open_t1(lua_State *L);      /* kt.python_list and what ktlua.t1 reads with */
void lk_open_cuda(lua_State *L);    /* kt.cuda_compile */
void lk_open_space(lua_State *L);   /* the space view's class */
void lk_open_space_def(lua_State *L); /* kt.space */
void lk_open_replay(lua_State *L);  /* kt.replay */
void lk_open_db(lua_State *L);      /* kt.db */
void lk_open_db_devices(lua_State *L); /* db:devices, db:touch, kt.compiler_version */
void lk_open_online(lua_State *L);  /* the online tuning's class (tuner:online) */
void lk_open_spawn(lua_State *L);   /* the preloaded module ktlua.spawn */
void lk_open_watch(lua_State *L);   /* the preloaded module ktlua.watch (the live view's) */
void lk_open_json(lua_State *L);    /* kt.json */
void lk_open_program_cache(lua_State *L); /* kt.program_cache, kt.program_cache_clear */
void lk_open_probe(lua_State *L);   /* kt.probe, db:probe, db:store_probe, k:sizes, k:cost, ... */
void lk_open_mpi(lua_State *L);     /* kt.mpi, kt.mpi_devices */
const char *lk_device_spec(lua_State *L, int idx, char *buf, size_t size);
/* The device list, and why backends or ranks have none (may be ""). */
const kt_device_info *lk_device_list(lua_State *L, size_t *n, const char **why);
/* Pushes the ids of the devices that each rank gives to a tuning of the
** device spec at idx (kt.mpi_devices). */
void lk_push_mpi_devices(lua_State *L, int idx);
/* Whether kt.tuner's device at idx names each rank's device: under mpirun,
** one device that is not another rank's ("mpi:R:..."). */
bool lk_mpi_spreads(lua_State *L, int idx);
void lk_open_split(lua_State *L);   /* kt.split and the preloaded module ktlua.split_run */
/* The tuner at idx, or NULL; or an error when it is none. */
kt_tuner *lk_test_tuner(lua_State *L, int idx);
kt_tuner *lk_check_tuner(lua_State *L, int idx);
/* Tune options shared by tuner:tune and tuner:online (lk_tuner.c): journal
** and resume, time_limit, and db with size (the database, or NULL). */
void lk_check_journal(lua_State *L, int opts, const char *task, kt_tune_opts *o);
void lk_check_time_limit(lua_State *L, int opts, kt_tune_opts *o);
/* tune options.pipeline (lk_pipeline.c). */
void lk_check_pipeline(lua_State *L, int opts, kt_tune_opts *o);
/* lk_energy.c: tune options.energy (after lk_check_metrics, whose metrics
** may not take its names); whether name is one it measures when on. */
void lk_check_energy(lua_State *L, int opts, kt_tune_opts *o);
bool lk_energy_metric(const char *name);
/* Appends to the list at list the metrics that energy = measures (none when off). */
void lk_energy_list(lua_State *L, int opts, int list);
/* tune options.profile: hardware counters (lk_profile.c); what it pushes
** anchors the names until the caller's return. */
void lk_check_profile(lua_State *L, int opts, kt_tune_opts *o);
/* Appends to the list at list the counters that the options collect. */
void lk_profile_list(lua_State *L, int opts, int list);
/* kt.profile_counters: the counters that search = "profile" reads. */
void lk_open_profile(lua_State *L);
struct kt_db *lk_check_db_option(lua_State *L, int opts);
/* seeds = {config, ...}: value indices, one list after another, in a
** userdata left on the stack. */
const uint32_t *lk_check_seeds(lua_State *L, int opts, kt_space *space, size_t *n);
/* prior = {{config =, weight =}, ...} (lk_prior.c): NULL when absent;
** else the prior, in a userdata left on the stack. */
const kt_prior *lk_check_prior(lua_State *L, int opts, const kt_space *space);
/* tuner:online(kernel[, options]) (lk_online.c). */
int lk_tuner_online(lua_State *L);
/* The tuned-configuration database at idx (lk_db.c), and storing the top
** configurations of results in it under the size table at size_idx. */
struct kt_db *lk_check_db(lua_State *L, int idx);
/* What the results do not say: the names of a peer's recording (NULL: the
** results'), the compiler and what re-runs the tuning (NULL: ""). */
typedef struct lk_db_extra {
  const char *kernel, *device, *backend, *compiler, *origin;
} lk_db_extra;
/* The same for a database given as an option: the error names it (what),
** not a position on the stack. */
struct kt_db *lk_check_db_named(lua_State *L, int idx, const char *what);
/* An online tuning holds the database it will store into open
** (db:close() is an error until it lets go). */
void lk_db_hold(lua_State *L, int idx, bool hold);
void lk_db_store(lua_State *L, struct kt_db *db, const kt_results *r, int size_idx,
                 lua_Integer top, const lk_db_extra *x);
/* How many of a tuning's best tuner:tune and tuner:online store: more than
** the best alone, for what they teach a tuning elsewhere (transfer.md). */
#define LK_DB_TUNE_TOP 10
/* ... of a tuning on the device whose table is at device_idx: with its
** compiler, and its properties kept in the database's devices. */
void lk_db_store_tuner(lua_State *L, struct kt_db *db, const kt_results *r, int size_idx,
                       int device_idx, lua_Integer top, const char *origin);
/* The compiler of the device table at idx, as the database keeps it (pushed;
** lk_db_devices.c). */
const char *lk_device_compiler(lua_State *L, int idx);
/* lk_db.c's readers of names, sizes and stored JSON, for lk_db_devices.c:
** a name given for a stored one (refused where it holds a NUL byte); a
** size table as canonical JSON text (pushed); a number as a size's;
** stored JSON text of an object pushed as a table (false with why, nothing
** pushed); today's date and time (UTC, ISO 8601). */
const char *lk_db_check_name(lua_State *L, int idx, const char *what);
const char *lk_db_push_size(lua_State *L, int idx, const char *what);
void lk_db_write_number(FILE *f, lua_State *L, int idx);
bool lk_db_push_json(lua_State *L, const char *text, char *why, size_t size);
void lk_db_today(char *buf, size_t size);
/* A device table for the device at idx (string, table, nil); pushes
** nothing, fills *out (caller clears). */
void lk_check_device(lua_State *L, int idx, kt_device_info *out);
/* "all" and "gpu:all" into out (at most max), and how many (lk_device.c). */
size_t lk_devices_all(lua_State *L, const char *what, kt_device_info *out, size_t max);
size_t lk_devices_count(lua_State *L);
/* kt.tuner over several devices: whether the argument names several
** (a list, "all", "gpu:all"), and the tuner over them (lk_fleet.c). */
bool lk_is_device_set(lua_State *L, int idx);
int lk_push_fleet_tuner(lua_State *L, int idx, int threads, size_t growth, bool cache,
                        int workers);
void lk_push_tuner_devices(lua_State *L, const lk_tuner *ut);
/* A tuner's devices: how many, and the tuner of device i (the one of a
** single-device tuner, or each of a fleet's). */
size_t lk_tuner_count(const lk_tuner *ut);
kt_tuner *lk_tuner_at(const lk_tuner *ut, size_t i);
/* A tuner object that owns f (made by kt_fleet_new with an opener of the
** caller's: devices of MPI ranks, say). */
struct kt_fleet;
void lk_push_fleet(lua_State *L, struct kt_fleet *f);
/* kt_fleet_tune with a Lua thread per device for its callbacks. */
int lk_fleet_tune(lua_State *L, struct kt_fleet *f, kt_task *task, const kt_tune_opts *o,
                  kt_results **out, kt_error *err);
void lk_push_device(lua_State *L, const kt_device_info *d);
void lk_push_results(lua_State *L, kt_results *r); /* takes a reference of its own */
void lk_push_result(lua_State *L, const kt_results *rs, const kt_result *r);
/* The `search` field of tune options -> searcher (caller frees); seed is
** the default seed. owner_idx is the kernel or replay a Lua searcher
** explores. */
kt_searcher *lk_check_searcher(lua_State *L, int opts_idx, int owner_idx, lua_Integer seed,
                               const kt_stop *stop);
/* The `stop` field of tune options. */
void lk_check_stop(lua_State *L, int opts_idx, kt_stop *stop);

/* ---- the space view ---- */

typedef struct lk_space lk_space;
/* Pushes a view of the space of the kernel, composition or replay at
** owner_idx; seed seeds its random helpers. */
lk_space *lk_push_space_view(lua_State *L, int owner_idx, uint64_t seed, bool device);
/* A searcher's view: starts with nothing explored, then hears of each
** configuration evaluated. */
int lk_space_view_reset(lk_space *v, uint64_t seed, kt_error *err);
int lk_space_view_record(lk_space *v, uint64_t index, const kt_result *r, kt_error *err);
/* The replay at idx, or NULL. */
kt_replay *lk_test_replay(lua_State *L, int idx);

/* ---- what every tuning shares (lk_tuner.c: tuner:tune, rec:tune) ---- */

/* What a tuning holds, freed by the collector if a Lua error cuts it short. */
typedef struct lk_tune_hold {
  kt_searcher *searcher;
  lk_ref *progress;
  bool meter; /* progress is ktlua.report's meter, ended with the tuning */
  kt_results *results;
  bool written; /* the files of the output field (lk_tune_write) */
  /* What is tuned, held here too: a callback may release its Lua object. */
  kt_task *task;
  kt_replay *replay;
  /* tune option live (lk_live.c): ktlua.live's session, and the progress
  ** hook it comes before */
  lk_ref *live;
  kt_progress_fn progress_fn;
} lk_tune_hold;

/* A registry field that main.c sets to true while it runs a script: then
** a tuning on a terminal shows the meter unless its progress says no. */
#define LK_PROGRESS_DEFAULT "ktlua.progress_default"

/* The search, seed, stop and progress fields of the tune options at opts
** into o, after checking that the files of its output field can be
** written; pushes the hold that keeps the searcher and the callback.
** owner is the kernel or replay a Lua searcher explores. */
lk_tune_hold *lk_check_tune(lua_State *L, int opts, int owner, bool progress_default,
                            kt_loop_opts *o);
/* Writes the tuning's results to the files of the output field, once, if
** a configuration ran: a tuning refused or failed before its first leaves
** the files as they were. */
void lk_tune_write(lua_State *L, int opts, lk_tune_hold *h);
/* Each file of the tune option output can be written (lk_tune_output.c). */
void lk_check_outputs(lua_State *L, int opts);
/* Pushes the tuning's results (if any), writes them (lk_tune_write), and
** raises the tuning's error when rc is not 0. */
int lk_tune_return(lua_State *L, int opts, lk_tune_hold *h, int rc, const kt_error *err);

/* ---- the live view (lk_live.c) ---- */

/* The tune option live at opts (a page): ktlua.live checks the page can be
** written and drawn and writes its first, before the tuning; where
** *journal is NULL the tuning gets one of its own (kept by the session). */
void lk_live_check(lua_State *L, int opts, lk_tune_hold *h, const char *task, const char *device,
                   const char **journal);
/* Puts the session's hook before the tuning's progress hook (*fn, *ud). */
void lk_live_progress(lk_tune_hold *h, kt_progress_fn *fn, void **ud);
/* After the tuning: the finished report from the results at index results
** (or nil); err: the tuning's error, which a failing page does not hide. */
void lk_live_finish(lua_State *L, lk_tune_hold *h, int results, const kt_error *err);

void lk_push_task(lua_State *L, kt_task *task, kt_kernel *kernel); /* takes ownership */
int lk_new_kernel(lua_State *L, int idx);
kt_arg *lk_to_arg(lua_State *L, int idx, const char *what);
int lk_results_write(lua_State *L, kt_results *r, const char *path, const char *format);
/* "csv" or "json" from a path's extension, or NULL. */
const char *lk_results_format(const char *path);
/* An optional kernel of the composition at idx: sets *kernel to its index
** (-1 when idx is not a kernel) and returns the next argument's index. */
int lk_opt_kernel(lua_State *L, const lk_task *ut, int idx, int *kernel);

/* ---- metrics and objectives (lk_metrics.c) ---- */

struct kt_metrics;
/* The metrics =, objective = and maximize = of the tune options at opts
** (pushing what owns them); *host: objective = "kernel+host"; recorded:
** the records whose numbers an objective may name too (a replay's), or NULL;
** measured: whether the options' energy = and profile = (tuner:tune's)
** give metrics an objective may name. */
struct kt_metrics *lk_check_metrics(lua_State *L, int opts, const kt_stop *stop, bool *host,
                                    const kt_results *recorded, bool measured);
/* ...and for recorded results (lk_results.c): */
void lk_push_metrics(lua_State *L, const kt_result *r); /* {name = value, ...} */
void lk_check_objective(lua_State *L, int idx, const char *what, const kt_results *rec,
                        const char **name, bool *maximize);

/* ---- kernel sources written per configuration (lk_codegen.c) ---- */

/* Whether the kernel definition at idx has a source or prelude function. */
bool lk_codegen_wanted(lua_State *L, int idx);
/* A kernel whose source its definition's functions write per configuration
** (file_text: the file's text, standing for a source string). */
kt_kernel *lk_codegen_kernel(lua_State *L, int idx, const char *name, const char *file_text,
                             kt_error *err);

/* ---- expressions and device pruning (lk_prune.c) ---- */

/* The table of constants at idx ({N = 4096, T = "float"}, or nil) as named
** values; they live as long as the table, and one value is pushed. */
const kt_named_value *lk_check_constants(lua_State *L, int idx, size_t *n);
int lk_task_local_memory(lua_State *L); /* k:local_memory([kernel,] expr[, constants]) */
int lk_task_prune(lua_State *L);        /* k:prune(options) */
/* {group_dims = n, group_size = n, local_memory = n, divisible = n} */
void lk_push_pruned(lua_State *L, kt_task *task);
/* {group_dims = n, ...} from counts indexed by kt_prune_kind - 1. */
void lk_push_prune_counts(lua_State *L, const uint64_t *removed);

#endif
