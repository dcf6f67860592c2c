/*
** spawn.c: runs a helper program with posix_spawn (no shell: arguments
** reach it as they are, whatever they hold) and waits for it at most a
** given time. It runs in a process group of its own, so that a timeout
** kills whatever it started too. kt_spawn_start and kt_spawn_background
** start one and leave it running.
*/
#define _GNU_SOURCE /* posix_spawn_file_actions_addclosefrom_np */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int redirect(posix_spawn_file_actions_t *fa, int fd, const char *path, int flags) {
  return posix_spawn_file_actions_addopen(fa, fd, path ? path : "/dev/null", flags, 0644);
}

static int start(const char *const *argv, const kt_spawn_opts *o, pid_t *pid, kt_error *err) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int rc = posix_spawn_file_actions_init(&fa);
  if (rc) return kt_fail(err, "cannot run %s: %s", argv[0], strerror(rc));
  if ((rc = posix_spawnattr_init(&attr))) {
    posix_spawn_file_actions_destroy(&fa);
    return kt_fail(err, "cannot run %s: %s", argv[0], strerror(rc));
  }
  const int wr = O_WRONLY | O_CREAT | O_TRUNC;
  if (!(rc = redirect(&fa, 0, o->in, O_RDONLY)) && !(rc = redirect(&fa, 1, o->out, wr)) &&
      !(rc = redirect(&fa, 2, o->errs, wr)) &&
      !(rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP)) &&
      !(rc = posix_spawnattr_setpgroup(&attr, 0)))
    rc = posix_spawnp(pid, argv[0], &fa, &attr, (char *const *)argv, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  return rc ? kt_fail(err, "cannot run %s: %s", argv[0], strerror(rc)) : 0;
}

static void pause_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  while (nanosleep(&t, &t) && errno == EINTR) {}
}

/* Its wait status, waiting at most timeout_s (<= 0: for ever); -1 when
** time ran out (it is then killed and reaped). */
static int wait_for(pid_t pid, double timeout_s, int *status) {
  int64_t end = kt_now_ns() + kt_ns_clamp(timeout_s * 1e9);
  long ms = 1;
  for (;;) {
    pid_t got = waitpid(pid, status, timeout_s > 0 ? WNOHANG : 0);
    if (got == pid) return 0;
    if (got < 0 && errno != EINTR) return *status = 0, 0; /* reaped elsewhere */
    if (timeout_s > 0 && kt_now_ns() >= end) break;
    if (got == 0) pause_ms(ms < 50 ? ms++ : ms);
  }
  kill(-pid, SIGKILL);
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
  return -1;
}

int kt_spawn_run(const char *const *argv, const kt_spawn_opts *o, kt_error *err) {
  if (!argv || !argv[0] || !argv[0][0]) return kt_fail(err, "no program to run");
  if (o->in && access(o->in, R_OK))
    return kt_fail(err, "cannot run %s: cannot read %s: %s", argv[0], o->in, strerror(errno));
  pid_t pid;
  if (start(argv, o, &pid, err)) return -1;
  int status = 0;
  if (wait_for(pid, o->timeout_s, &status))
    return kt_fail(err, "%s did not finish within %g s (killed)", argv[0], o->timeout_s);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

/* ---- starting without waiting ---- */

/* A source descriptor below nfds would be overwritten by an earlier
** dup2 of the file actions: moved above first (*moved: to close after). */
static int lift(const int *fds, int nfds, int *src, int *moved) {
  for (int i = 0; i < nfds; i++) moved[i] = -1;
  for (int i = 0; i < nfds; i++) {
    src[i] = fds[i];
    if (fds[i] >= 0 && fds[i] < nfds) {
      if ((moved[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, nfds)) < 0) return errno;
      src[i] = moved[i];
    }
  }
  return 0;
}

static int fill_actions(posix_spawn_file_actions_t *fa, const int *src, int nfds) {
  int rc = 0;
  for (int i = 0; i < nfds && !rc; i++)
    rc = src[i] < 0 ? redirect(fa, i, NULL, i ? O_WRONLY : O_RDONLY)
                    : posix_spawn_file_actions_adddup2(fa, src[i], i);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  if (!rc) rc = posix_spawn_file_actions_addclosefrom_np(fa, nfds);
#endif
  return rc;
}

int kt_spawn_start(const char *const *argv, const int *fds, int nfds, pid_t *pid,
                   kt_error *err) {
  int src[8] = {0}, moved[8];
  if (nfds > 8) return kt_fail(err, "cannot run %s: too many descriptors", argv[0]);
  posix_spawn_file_actions_t fa;
  int rc = lift(fds, nfds, src, moved);
  if (!rc && !(rc = posix_spawn_file_actions_init(&fa))) {
    if (!(rc = fill_actions(&fa, src, nfds)))
      rc = posix_spawn(pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
  }
  for (int i = 0; i < nfds; i++)
    if (moved[i] >= 0) close(moved[i]);
  return rc ? kt_fail(err, "cannot run %s: %s", argv[0], strerror(rc)) : 0;
}

int kt_spawn_background(const char *const *argv, int in_fd, pid_t *pid, kt_error *err) {
  int src[3] = {-1, -1, -1}, moved[3] = {-1, -1, -1}, fds[3] = {in_fd, STDOUT_FILENO, STDERR_FILENO};
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int rc = lift(fds, 3, src, moved);
  if (!rc && !(rc = posix_spawn_file_actions_init(&fa))) {
    if (!(rc = posix_spawnattr_init(&attr))) {
      if (!(rc = fill_actions(&fa, src, 3)) &&
          !(rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP)) &&
          !(rc = posix_spawnattr_setpgroup(&attr, 0)))
        rc = posix_spawn(pid, argv[0], &fa, &attr, (char *const *)argv, environ);
      posix_spawnattr_destroy(&attr);
    }
    posix_spawn_file_actions_destroy(&fa);
  }
  for (int i = 0; i < 3; i++)
    if (moved[i] >= 0) close(moved[i]);
  if (rc) return kt_fail(err, "cannot run %s: %s", argv[0], strerror(rc));
  /* Linux's nice is per thread: the new image has one, and what it starts
  ** (gnuplot) inherits it. A failure costs only the priority. */
  (void)setpriority(PRIO_PROCESS, (id_t)*pid, 19);
  return 0;
}

int kt_spawn_wait(pid_t pid, double timeout_s) {
  int status = 0;
  if (wait_for(pid, timeout_s, &status)) return -1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}
