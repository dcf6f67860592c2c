/*
** remote.h: device work in a child process.
**
** An isolated tuner talks to its device through kt_backend_remote, a
** backend that forwards each call to a device server: a child process,
** forked from the tuner, that owns the real backend's context. When a
** kernel runs past its time limit the tuner kills the server; when a
** kernel crashes it, the tuner sees the server gone. Either way the
** configuration gets its status (timeout, runtime_failed), a new server
** is started, and tuning goes on. Lua, the searcher, the results and the
** journal stay in the tuner's process.
**
** Drivers must not be initialised in the process that forks servers (the
** CUDA driver and some OpenCL drivers do not survive fork), so devices are
** listed by a short-lived server too. Once a process uses a driver itself
** (a tuner with isolate = false), it can no longer start servers.
*/
#ifndef KT_REMOTE_H
#define KT_REMOTE_H

#include <sys/types.h>

#include "device.h"

extern const kt_backend kt_backend_remote;
/* The remote backend that fits the device's real backend. */
const kt_backend *kt_remote_backend(const kt_device_info *dev);

/* Lists the devices of every backend from a short-lived server. The
** devices' backend fields name the real backends; their handles are NULL. */
int kt_devices_remote(kt_device_info **list, size_t *n, char *why, size_t whysize,
                      kt_error *err);
/* The same from a server on another node, reached through far (far.h;
** NULL: this process's). Their far and rank fields are left for the
** caller to set. */
struct kt_far;
int kt_devices_remote_far(const struct kt_far *far, int node, kt_device_info **list, size_t *n,
                          char *why, size_t whysize, kt_error *err);

/* Whether this process has initialised a driver itself (and so may no
** longer fork device servers), and marking that it has. */
bool kt_drivers_in_process(void);
void kt_drivers_in_process_set(void);

/* The processes above fork between kt_fork_begin and kt_fork_end (the
** parent's side), which wait until no compile thread is at work
** (kt_fork_guard_enter/leave around each compile job): a lock that a
** working thread held at the fork would stay held in the child. */
void kt_fork_begin(void);
void kt_fork_end(void);
void kt_fork_guard_enter(void);
void kt_fork_guard_leave(void);

/* Opens dev in a new device server with `channels` compile connections,
** so that that many compiles run at once. */
kt_bctx *kt_remote_open(const kt_device_info *dev, int channels, kt_error *err);
/* What is called around each wait for the server's reply (fleet.h). */
void kt_remote_set_wait(kt_bctx *c, kt_wait_hook hook);
/* With on, the requests that get no reply (launches, fills, copies) until
** the next one that does go with it in one send, so that the server reads
** them all at once and answers once: a round trip for the lot. Without,
** what is still gathered is sent now. */
void kt_remote_gather(kt_bctx *c, bool on);
/* Requests sent on the main connection so far, and of them the ones
** whose reply was waited for (round trips). */
void kt_remote_counts(const kt_bctx *c, uint64_t *requests, uint64_t *round_trips);
/* The device process's id while it runs on this host; 0 otherwise (none
** now, or one on another node). */
pid_t kt_remote_pid(const kt_bctx *c);
/* The PoCL threads its device process was started with, where ktlua chose
** them (fewer than PoCL counts, on a busy machine); 0 otherwise. */
int kt_remote_threads(const kt_bctx *c);

/* kt_nvrtc_compile in a short-lived child process, so that the CUDA
** libraries (NVRTC may bring the driver with it) never load into a process
** that forks device servers. */
struct kt_nvrtc_job;
struct kt_nvrtc_out;
int kt_nvrtc_compile_apart(const struct kt_nvrtc_job *job, struct kt_nvrtc_out *out,
                           kt_error *err);

/* In a new server, before kt_server_main: only its own connections stay
** open, so that other servers' connections reach end of file when they
** close (stdin, stdout and stderr stay too). */
void kt_server_keep_only(int main_fd, const int *compile_fds, int n);

/* The server's OP_COUNTERS_BEGIN and OP_COUNTERS_END on its backend's
** context (NULL: none open), the reply into out (remote_counters.c).
** True while a collection it started goes on, until OP_COUNTERS_END: the
** backend holds its modules meanwhile (no program may be loaded). */
struct kt_msg;
bool kt_server_counters(const kt_backend *be, kt_bctx *ctx, uint32_t op, struct kt_msg *in,
                        struct kt_msg *out);

/* The server side: serves the connections until the main one closes.
** Runs in the forked child; never returns. */
/* The server's OP_ENERGY (remote_energy.c): the request in `in`, the
** reply made in `out`. */
struct kt_msg;
void kt_server_energy(const kt_backend *be, kt_bctx *ctx, struct kt_msg *in, struct kt_msg *out);

void kt_server_main(int main_fd, const int *compile_fds, int channels, void *staging,
                    size_t staging_size) __attribute__((noreturn));

#endif
