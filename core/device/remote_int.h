/*
** remote_int.h: what backend_remote.c (the tuner's side of the device
** server), remote_link.c (its main connection), remote_stage.c (bulk
** data through the staging area), remote_async.c (its asynchronous
** transfers and events between queues) and remote_compile.c (its compile
** connections) share.
*/
#ifndef KT_REMOTE_INT_H
#define KT_REMOTE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "devout.h"
#include "far.h"
#include "remote.h"
#include "remote_proto.h"
#include "run_delay.h"
#include "wire.h"

/* A read that does not block: the server reads into memory of its own,
** and the data comes over once the queue is finished (remote_async.c). */
typedef struct rm_read {
  uint32_t token;
  int queue;
  void *dst;
  size_t bytes;
  bool staged;  /* read straight into the staging area, at ... */
  size_t at;    /* ... this offset (remote_async.c) */
} rm_read;

struct kt_bctx {
  kt_device_info dev;     /* to open again after a loss */
  bool has_device;        /* false for a server that only lists devices */
  const kt_far *far;      /* the way to the node that forks the server (NULL: this process) */
  int node;               /* ... its number for far */
  pid_t pid;              /* on another node, far's link */
  int threads;            /* POCL_MAX_PTHREAD_COUNT the server was given; 0: none (pocl_threads) */
  pid_t compiler;         /* the server of this host that compiles (under lock; 0: none) */
  bool alive;
  uint64_t generation;
  int fd;                 /* the main connection (the owning thread's) */
  int nchannels;
  int *cfds;              /* compile connections, shared by compile threads */
  bool *cbusy;
  pthread_mutex_t lock;
  pthread_cond_t freed;
  unsigned char *staging;
  size_t staging_size;
  int64_t deadline;
  int64_t limit;           /* the deadline, less the time it was set at: said on a timeout */
  int64_t waited_at_set;   /* the deadline moves by this thread's waits since it was set */
  bool on_host;            /* ... by the time spent compiling ... */
  int64_t compiled_at_set; /* ... since then (rm_compile_ns then), and ... */
  pid_t delays_pid;        /* ... by the longest wait for a processor of a thread */
  kt_run_delays delays_at_set; /* of the server's, since then */
  /* Time with a compile connection at work (under lock): its sum, and how
  ** many are at work since when. */
  int64_t compile_ns, compiling_since;
  int compiling;
  kt_wait_hook wait;      /* around waits for a reply on the main connection */
  /* what a new server process runs (kt_server_main, given by backend_remote.c) */
  void (*serve)(int main_fd, const int *compile_fds, int n, void *staging, size_t staging_size);
  uint32_t next_id;
  kt_bevent **events;     /* launched, waiting for their time from a FINISH */
  size_t nevents, capevents;
  kt_msg out, in;
  kt_devout said;         /* the server's stderr */
  atomic_uint_fast64_t gone; /* the generation whose server a compile found dead, or 0 */
  rm_read *reads;         /* reads that do not block, until their queue is finished */
  size_t nreads, capreads;
  size_t nstaged;         /* ... of which staged (every one or none) */
  size_t staged_end;      /* ... the end of the part of the staging area they use */
  /* Nothing was queued on the device since a FINISH of every queue: a
  ** FINISH of every queue now has nothing to wait for nor report. */
  bool quiet;
  /* Requests that get no reply, gathered (kt_remote_gather) to go in one
  ** send with the next request that does. */
  bool gathering;
  kt_msg gathered;
  uint64_t requests, round_trips; /* on the main connection (kt_remote_counts) */
};

struct kt_bbuf { uint64_t gen; uint32_t id; };
struct kt_bprog { uint64_t gen; uint32_t id; };
struct kt_bkernel { uint64_t gen; uint32_t id; kt_kernel_usage usage; };
struct kt_bevent { uint64_t gen; uint32_t id; double ns; };

/* remote_link.c: the server's life. rm_spawn forks one (with a device,
** opened there); rm_stop_server stops it and says how it ended; rm_lose
** ends it and every object it held (the generation counts up), saying
** why in err with the fault. */
int rm_spawn(kt_bctx *c, kt_error *err);
void rm_stop_server(kt_bctx *c, char *how, size_t size);
int rm_lose(kt_bctx *c, kt_fault fault, kt_fault *out, kt_error *err, const char *why);
/* A request on the main connection, the server started if needed. */
int begin(kt_bctx *c, uint32_t op, kt_error *err);
/* Sends the request and waits for its status (a reply in c->in). */
int call(kt_bctx *c, kt_fault *fault, kt_error *err);
/* Sends a request that gets no reply (or gathers it: kt_remote_gather) ... */
int post(kt_bctx *c, kt_error *err);
/* ... or one whose reply rm_reply waits for, sent at once. */
int post_replied(kt_bctx *c, kt_error *err);
int rm_reply(kt_bctx *c, kt_fault *fault, kt_error *err);
/* remote_compile.c: the time the compile connections were at work, summed
** over the moments when at least one was. */
int64_t rm_compile_ns(kt_bctx *c);
/* Fails for an object of an earlier server. */
int stale(kt_bctx *c, uint64_t gen, kt_fault *fault, kt_error *err);

/* remote_stage.c: a transfer through the staging area, a chunk at a time.
** Each chunk's request is op, id, queue (where >= 0), off + where the chunk
** starts, its bytes, and where it lies in the staging area. */
typedef struct rm_move {
  uint32_t op;
  uint32_t id;  /* buffer (a token for OP_READ_TAKE) */
  int queue;    /* -1: none in the request */
  size_t off;
} rm_move;
/* Takes a chunk read (done: where it starts); nonzero stops the read. */
typedef int (*rm_take_fn)(void *ud, size_t done, const unsigned char *chunk, size_t bytes);
int rm_stage_write(kt_bctx *c, const rm_move *m, const unsigned char *src, size_t bytes,
                   kt_error *err);
/* A take that copies each chunk to dst. */
int rm_copy_out(void *dst, size_t done, const unsigned char *chunk, size_t bytes);
/* 0 once every chunk was taken, 1 when take stopped it, -1 on failure. */
int rm_stage_read(kt_bctx *c, const rm_move *m, size_t bytes, rm_take_fn take, void *ud,
                  kt_error *err);

/* remote_async.c */
int rm_write_async(kt_bctx *c, int q, kt_bbuf *b, size_t off, size_t bytes, const void *src,
                   kt_error *err);
int rm_read_async(kt_bctx *c, int q, kt_bbuf *b, size_t off, size_t bytes, void *dst,
                  kt_error *err);
/* After a FINISH of queue q (-1: all): the data of its reads. */
int rm_take_reads(kt_bctx *c, int q, kt_error *err);
/* Before the staging area is used: staged reads pending are waited for
** (every queue finished) and taken. */
int rm_unstage(kt_bctx *c, kt_error *err);
/* remote_compile.c: the compile connections, from compile threads. */
kt_bprog *rm_compile(kt_bctx *c, const char *source, const char *options, const char *name,
                     char **log, kt_error *err);
int rm_prog_binary(kt_bctx *c, kt_bprog *p, unsigned char **bytes, size_t *size, kt_error *err);
/* OP_BUILD: a compile through the server's own program cache (backend.h, build_there). */
kt_bprog *rm_build_there(kt_bctx *c, const char *source, const char *options, const char *name,
                         char **log, bool *loaded, char **unkept, kt_error *err);
kt_bprog *rm_prog_load(kt_bctx *c, const unsigned char *bytes, size_t size, const char *options,
                       const char *name, char **log, kt_error *err);
/* The backend's finish (remote_async.c) and its events (backend_remote.c). */
int rm_finish_queue(kt_bctx *c, int q, kt_fault *fault, kt_error *err);
int rm_marker(kt_bctx *c, int q, kt_bevent **ev, kt_error *err);
int rm_queue_wait(kt_bctx *c, int q, kt_bevent *ev, kt_error *err);
/* remote_energy.c: the backend's energy (energy.h). */
int rm_energy(kt_bctx *c, int op, struct kt_energy_reading *out, kt_error *err);
/* remote_counters.c: the backend's hardware counters. */
int rm_counters_begin(kt_bctx *c, const char *const *names, size_t n, unsigned *passes,
                      kt_error *err);
int rm_counters_end(kt_bctx *c, double *values, size_t n, unsigned *ranges, kt_error *err);

#endif
