/*
** mpi_job.c: joining and leaving the MPI job (mpi.h): MPI itself through
** mpi_wire.c, and on rank 0 the relay (mpi_relay.c), which sends through
** mpi_wire.c: above both, so that neither calls the other back.
*/
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "mpi.h"

#ifdef KT_HAVE_MPI
#include "mpi_int.h"

/* The process that joined: process-wide by nature, as MPI is. */
static pid_t joined;

/* mpirun (Open MPI's) and other PMIx launchers say so in the environment;
** a process started by hand does not join a job of one. */
static bool launched_by_mpirun(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK");
}

/* Only the process that joined: a forked child that calls exit leaves
** the job to its parent. */
static void end_at_exit(void) {
  if (getpid() == joined) kt_mpi_end();
}

int kt_mpi_start(int *argc, char ***argv, const char *version, const char *script,
                 kt_error *err) {
  kt_mpi_describe(); /* now: later, the relay thread alone may call MPI */
  kt_mpi_host();     /* now, on one thread */
  if (!launched_by_mpirun()) return 0;
  kt_mpi_self_set(version, script);
  if (mw_join(argc, argv, err)) return -1;
  if (kt_mpi_rank() == 0 && kt_mpi_size() > 1 && mr_start(err)) {
    mw_leave();
    MPI_Finalize();
    return -1;
  }
  /* Rank 0 finalizes at exit, alone in its job too (mpirun -np 1: else
  ** mpirun takes its exit for a crash); the others in kt_mpi_serve. */
  if (kt_mpi_rank() == 0) {
    joined = getpid();
    atexit(end_at_exit);
  }
  return kt_mpi_rank();
}

void kt_mpi_end(void) {
  if (!mw_leave()) return;
  if (kt_mpi_rank() == 0 && kt_mpi_size() > 1) mr_stop();
  MPI_Finalize();
}

#else /* no MPI */

/* Under mpirun every rank would run the script on its own: refused. */
int kt_mpi_start(int *argc, char ***argv, const char *version, const char *script,
                 kt_error *err) {
  (void)argc, (void)argv, (void)version, (void)script;
  const char *size = getenv("OMPI_COMM_WORLD_SIZE");
  if (size && atoi(size) > 1)
    return kt_fail(err, "this ktlua was built without MPI (no Open MPI headers), so under mpirun "
                        "each of the %s ranks would tune alone; run it without mpirun, or build "
                        "it where libopenmpi-dev is installed", size);
  return 0;
}
void kt_mpi_end(void) {}

#endif
