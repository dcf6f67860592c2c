/*
** compile_pool.h: compiling in a pool of compiler processes. NVRTC and
** PoCL compile one program at a time per process, however many threads
** ask, so a tuner that compiles on every core needs as many processes.
**
** A compiler process (compile_worker.c) is a fresh image of the ktlua
** executable (`ktlua --compile-worker`, found as ktlua_exe.h says), not a
** fork: the process that starts it may have loaded drivers and started
** threads (a C program that embeds the core). It opens the device's
** compiler: NVRTC alone for CUDA (backend.h, compile_binary), a context on
** the device for OpenCL. It takes (source, options, kernel name) and gives
** the program's binary (backend.h, prog_binary) and the compiler's log,
** which the device process then loads (prog_load). Each compile thread
** takes an idle process and waits for its answer, at most the compile
** time limit (kt_compile_pool_set_timeout). A process that dies or runs
** past the limit fails only its compile ("the compiler process died of
** signal 9 (Killed)", "compile took longer than 60 s ...": KT_POOL_LOST,
** no verdict on the source, which a resumed tuning compiles again) and is
** killed and replaced at once. Processes start with the pool.
**
** Where there is no ktlua executable, or one that does not answer as
** this one's compiler, or the platform gives no program binaries (or the
** compiler cannot open in a process of its own), the pool says so once
** and tuners compile in the device process, as without a pool.
**
** Test-only: KTLUA_TEST_COMPILER_CRASH=TEXT makes a compiler process kill
** itself (SIGKILL) when it is given a source that holds TEXT, so that
** specs can watch a compiler die at a known configuration.
**
** Test-only: KTLUA_TEST_COMPILER_HANG=TEXT makes it wait for ever instead,
** as a compiler that hangs on that configuration would; with
** KTLUA_TEST_COMPILER_UNTIL=PATH, until a file PATH exists (a slow compile
** that a spec ends when it chooses), then it compiles.
**
** The wire between them: the tuner greets the process with the protocol
** (u32, KT_COMPILE_PROTOCOL) and the device (device_wire.h); it answers with
** its protocol and "" (or why it cannot serve). A request is source,
** options and name (strings);
** the answer starts with a kt_pool_outcome: KT_POOL_BUILT with the binary
** (bytes) and the log, KT_POOL_FAILED with the log (or why), KT_POOL_NO_BINARIES
** with why, KT_POOL_REFUSED with the log.
*/
#ifndef KT_COMPILE_POOL_H
#define KT_COMPILE_POOL_H

#include <sys/types.h>

#include "device.h"
#include "run_delay.h"

typedef struct kt_compile_pool kt_compile_pool;

/* One compile as it runs in a compiler process, for the thread that waits
** for another (builder.h): how long it has run, and a way to end it. The
** caller owns it (zeroed before the compile); the pool fills it under its
** lock. A compile's own time is its wall time less the longest wait of
** one of its process's threads for a processor (run_delay.h), so that a
** machine busy with other jobs does not make a compile look slow. */
typedef struct kt_pool_watch {
  pid_t pid;        /* its process, while active */
  int64_t since;    /* kt_now_ns() when the request was sent */
  kt_run_delays delays; /* the process's threads' waits then */
  bool active;      /* the request is out and not yet answered */
  bool killed;      /* kt_compile_pool_kill ended it */
  double own_ns;    /* once answered: the compile's own time (< 0: none) */
} kt_pool_watch;

/* Changes whenever the wire below does: a ktlua executable of another
** protocol is not used. */
#define KT_COMPILE_PROTOCOL 3u
/* The argument that makes the ktlua executable a compiler process, its
** connection on descriptor 3. */
#define KT_COMPILE_WORKER_ARG "--compile-worker"
/* The longest a compile may take by default, in seconds (a compile of a
** real kernel takes well under one). */
#define KT_COMPILE_TIMEOUT_DEFAULT 60.0

typedef enum kt_pool_outcome {
  KT_POOL_BUILT = 0,
  KT_POOL_FAILED,      /* the compiler did not compile it: this compile only */
  KT_POOL_NO_BINARIES, /* no binaries from this platform here: compile elsewhere */
  KT_POOL_REFUSED,     /* the compiler ran and refused the source (as it will again) */
  /* Never on the wire: its process died, ran past the time limit, answered
  ** cut short or did not start. No verdict on the source: a resumed tuning
  ** compiles it again (result.h, infrastructure). */
  KT_POOL_LOST
} kt_pool_outcome;

/* How many processes a pool gets by default: one per compile thread, at
** most one per processor this process may use (cpus.h) and one per 512
** MiB of memory (a compiler can hold hundreds of MB), each shared among
** the `devices` pools of one tuning over several devices; at least 1.
** More compilers than processors only slow each compile, and the set-up's
** compiles (references) wait longest. */
int kt_compile_pool_default_size(int build_threads, int devices);

/* A pool of `workers` compiler processes for dev (a copy is kept; its
** backend field names the real backend), started at the first compile
** (none where the disk cache holds every program). NULL only when memory
** runs out: a pool without a ktlua executable falls back at once, one
** whose processes cannot start at its first compile (kt_compile_pool_fallback). */
kt_compile_pool *kt_compile_pool_new(const kt_device_info *dev, int workers, kt_error *err);
/* The compile time limit, seconds (<= 0: none); before the first compile. */
void kt_compile_pool_set_timeout(kt_compile_pool *p, double seconds);
/* Ends the processes; no compile may be waiting. */
void kt_compile_pool_free(kt_compile_pool *p);

/* Thread-safe; blocks until a process is idle and has answered. On
** KT_POOL_BUILT, *bytes (malloc'd) is the binary; *log (malloc'd, may be
** NULL) the compiler's messages. KT_POOL_FAILED, KT_POOL_REFUSED, KT_POOL_LOST: *log says
** why. On
** KT_POOL_NO_BINARIES err says why, and every later call answers the same
** at once. Call it outside kt_fork_guard_enter: it waits long. */
kt_pool_outcome kt_compile_pool_compile(kt_compile_pool *p, const char *source,
                                        const char *options, const char *name,
                                        unsigned char **bytes, size_t *size, char **log,
                                        kt_pool_watch *watch, kt_error *err);
/* Another thread's view of a compile in progress (watch as given to
** kt_compile_pool_compile): its own time so far in ns, or -1 when its
** request is not out (the process is starting, or the compile is over). */
double kt_compile_pool_watch_ns(kt_compile_pool *p, kt_pool_watch *watch);
/* Ends the compile in progress (nobody waits for it any more): its process
** is killed, the compile comes back KT_POOL_LOST and a new process takes
** its place. Nothing happens when its request is not out: returns whether
** it killed the process. */
bool kt_compile_pool_kill(kt_compile_pool *p, kt_pool_watch *watch);

/* What the processes wrote on stderr since the last call (malloc'd), or
** NULL: as a device process's (devout.h), it reaches results, not the
** tuner's stderr. */
char *kt_compile_pool_take_output(kt_compile_pool *p);
/* The processes that have run (replacements not counted again). */
int kt_compile_pool_started(kt_compile_pool *p);
/* Why the pool gave up (KT_POOL_NO_BINARIES), or NULL. */
const char *kt_compile_pool_fallback(kt_compile_pool *p);

/* The compiler process (compile_worker.c), `ktlua --compile-worker`: it
** serves descriptor fd until the tuner closes it. */
void kt_compile_worker_main(int fd) __attribute__((noreturn));

#endif
