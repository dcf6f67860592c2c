/*
** mpi.h: one tuning over the devices of several MPI ranks.
**
** Under `mpirun -np N ktlua script.lua`, rank 0 runs the script: it keeps
** the searcher, the results and the journal. Every other rank runs no Lua:
** it serves device processes (remote.h) to rank 0. A device of rank R is
** opened as any isolated device, except that its device process is forked
** on rank R, and its connections (main, compile channels, stderr) reach
** rank 0's tuner through two relays: rank 0's relay thread (mpi_relay.c),
** which alone makes MPI calls there, and rank R's serve loop (mpi_rank.c).
** Bulk data, which between a tuner and its local server goes through
** shared memory (the staging area), travels inside the messages of the
** requests that fill or read it (mpi_wire.c).
**
** A rank that stops answering (no message for KT_MPI_SILENCE_S seconds:
** ranks send a heartbeat several times a second) is taken for dead: its
** devices' connections close, so the configurations in flight there end
** as with a crashed device process, and opening its devices again fails
** with an error naming the rank. Open MPI aborts the whole job when a rank
** dies unless mpirun runs with --enable-recovery.
**
** Built only where mpi.h (Open MPI's) exists (KT_HAVE_MPI); elsewhere
** kt_mpi_start finds no job and every process runs alone.
*/
#ifndef KT_MPI_H
#define KT_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include "device.h"

#define KT_MPI_SILENCE_S 5

/* Whether this ktlua was built with MPI, and a line saying which MPI. */
bool kt_mpi_built(void);
const char *kt_mpi_describe(void);

/* Joins the MPI job when the process was started by mpirun (else does
** nothing): returns this process's rank (0 when alone), or -1 with err. On
** rank 0 the relay thread starts, every other rank says who it is, and a
** rank whose ktlua or script differs from rank 0's ends the job with err
** (kt_mpi_self_check); the job ends at exit (kt_mpi_end). version names
** this ktlua ("ktlua 0.2.0"); script is the file given to run, or NULL. */
int kt_mpi_start(int *argc, char ***argv, const char *version, const char *script,
                 kt_error *err);
/* The number of ranks (1 when alone) and this process's rank. */
int kt_mpi_size(void);
int kt_mpi_rank(void);
/* Rank 0: every other rank stops serving; the relay ends; MPI finalizes. */
void kt_mpi_end(void);
/* Ranks above 0: serves device processes to rank 0 until it says the
** job is over (or stops answering); then exits. */
void kt_mpi_serve(void) __attribute__((noreturn));

/* The way to another rank's device processes, as the device layer takes
** it (far.h): kt_mpi_link_open, kt_mpi_link_stop, kt_mpi_local_id and
** kt_mpi_rank_alive. The devices kt_mpi_devices_append adds carry it. */
struct kt_far;
extern const struct kt_far kt_mpi_far;

/* Rank 0's relay (mpi_relay.c). Starts a device server on `rank` whose
** connections are the far ends of main_fd and compile_fds[0..n-1] (and
** whose stderr goes to said_fd, or nowhere when -1); data for the staging
** area travels to and from `staging`. The descriptors are the relay's
** from then on (the caller closes its own copies). Returns the link's
** number (> 0) or -1 with err. */
int kt_mpi_link_open(int rank, int main_fd, const int *compile_fds, int n, int said_fd,
                     void *staging, size_t staging_size, kt_error *err);
/* Stops the link's device server (it may be stuck rather than dead) and
** says how it ended, as describe_exit does for a local one. */
void kt_mpi_link_stop(int link, char *why, size_t size);

/* The name this process gives its host: KTLUA_HOST where set (a name
** without blanks, for ranks of one machine that stand for several nodes),
** else the system's host name. Ranks of one name are of one node. */
#define KT_MPI_HOST_MAX 64
#define KT_MPI_HOST_SCAN "63"
const char *kt_mpi_host(void);

/* What every rank must agree on (mpi_self.c): "VERSION\nSCRIPT", SCRIPT
** being "-" (none given), "PATH SHA256" (its contents) or "PATH !why"
** (unreadable). kt_mpi_start sets this process's. */
#define KT_MPI_SELF_MAX 480
void kt_mpi_self_set(const char *version, const char *script);
const char *kt_mpi_self(void);
/* Rank 0: -1 with err naming the rank, its host and what differs when a
** rank said (its hello) another version, or a script that is not rank 0's
** or that it cannot read; 0 when it agrees (a rank without a script does). */
int kt_mpi_self_check(int rank, const char *host, const char *said, kt_error *err);

/* What a rank said of itself when it joined. */
typedef struct kt_mpi_node {
  int pid;
  int cpus;                   /* the processors it may use (cpus.h): its compile threads */
  char host[KT_MPI_HOST_MAX]; /* kt_mpi_host there */
  bool alive;                 /* whether it still answers */
} kt_mpi_node;
/* Rank 0: a rank's node (rank 0's: this process), or -1 for a rank that
** said nothing. */
int kt_mpi_peer(int rank, kt_mpi_node *out);
/* Whether rank 0 still hears from the rank (false once taken for dead). */
bool kt_mpi_rank_alive(int rank);

/* Device ids of other ranks read "mpi:R:ID", ID being the rank's own
** ("mpi:1:opencl:0:0"). The id the device has on its rank. */
const char *kt_mpi_local_id(const kt_device_info *dev);
/* Appends the devices of every other rank to a list of rank 0's, their
** ids, far (kt_mpi_far) and rank fields set, and their properties "host"
** and "host_cpus" (their node's: a tuner of such a device gets as many
** compile threads there, tuner.c); a rank that sees none adds its reason
** to why. */
int kt_mpi_devices_append(kt_device_info **list, size_t *n, char *why, size_t whysize,
                          kt_error *err);

/* How many devices of list are of the node of list[i] (by host name):
** they share its processors. */
size_t kt_mpi_node_devices(const kt_device_info *list, size_t n, size_t i);
/* Rank 0: the rank's place among the ranks of its node (those before it
** of the same host name, kt_mpi_host). */
int kt_mpi_local_rank(int rank);
/* One device per rank for one tuning over the job, rank r's into
** picked[r] (an index into list, which holds every rank's devices): of the
** rank's devices that answer `what` (as kt_device_find reads it, an id
** being the one the device has on its rank), the one at the rank's local
** rank, modulo their count when a host's ranks outnumber them. A rank
** with none is an error naming it, its host and what it sees. */
int kt_mpi_pick(const kt_device_info *list, size_t n, const char *what, int *picked,
                kt_error *err);

#endif
