/*
** remote_process.c: what is true of the whole process that forks device
** servers (remote.h): whether it has loaded a driver itself, and the
** guard that keeps forks away from working compile threads, and what a
** forked server keeps open.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>

#include "remote.h"

/* ---- the process-wide rule about drivers ---- */

/* Process-wide by nature: it is a fact about this process's memory. */
static int drivers_loaded;

bool kt_drivers_in_process(void) { return drivers_loaded != 0; }
void kt_drivers_in_process_set(void) { drivers_loaded = 1; }

/* ---- forking while other threads work ---- */

/* A child gets a copy of every lock as it was at the fork: one that another
** thread held (an allocator's, while a compile thread allocates) stays held
** there forever. So compile threads work inside this, shared, and forks
** wait, alone, until none is inside; waiting forks go first. Process-wide,
** like fork itself. (The child keeps it held: it forks no more.) */
static pthread_rwlock_t fork_guard = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

void kt_fork_guard_enter(void) { pthread_rwlock_rdlock(&fork_guard); }
void kt_fork_guard_leave(void) { pthread_rwlock_unlock(&fork_guard); }
void kt_fork_begin(void) { pthread_rwlock_wrlock(&fork_guard); }
void kt_fork_end(void) { pthread_rwlock_unlock(&fork_guard); }

/* ---- in a new server ---- */

void kt_server_keep_only(int main_fd, const int *compile_fds, int n) {
  long most = sysconf(_SC_OPEN_MAX);
  for (int fd = 3; fd < (most > 0 && most < 65536 ? most : 65536); fd++) {
    bool keep = fd == main_fd;
    for (int i = 0; i < n && !keep; i++) keep = fd == compile_fds[i];
    if (!keep) close(fd);
  }
}
