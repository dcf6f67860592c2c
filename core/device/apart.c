/*
** apart.c: one job in a short-lived child process (apart.h).
*/
#define _GNU_SOURCE
#include "apart.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote.h"

int kt_apart(void (*job)(kt_msg *answer, void *ud), void *ud, int64_t deadline, kt_msg *answer) {
  kt_msg_init(answer);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  kt_fork_begin();
  pid_t pid = fork();
  if (pid == 0) {
    close(sv[0]);
    job(answer, ud);
    _exit(kt_wire_send(sv[1], answer) == KT_WIRE_OK ? 0 : 1);
  }
  kt_fork_end();
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return -1;
  }
  kt_wire_rc w = kt_wire_recv(sv[0], answer, deadline);
  close(sv[0]);
  if (w == KT_WIRE_TIMEOUT) kill(pid, SIGKILL); /* a kernel that hangs the device, say */
  int status;
  waitpid(pid, &status, 0);
  return (int)w;
}
