/*
** interrupt.c: the SIGINT handler. Signals are process-wide, so the count
** of interrupts is the core's one piece of global state.
*/
#define _POSIX_C_SOURCE 200809L
#include "interrupt.h"

#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t interrupts;
static volatile sig_atomic_t depth;

static void say(const char *msg) {
  ssize_t rc = write(STDERR_FILENO, msg, strlen(msg));
  (void)rc;
}

static void on_sigint(int sig) {
  (void)sig;
  if (++interrupts >= 2) {
    say("\nktlua: interrupted again: exiting now (the journal holds every finished configuration)\n");
    _exit(130);
  }
  say("\nktlua: interrupted: finishing the configuration in flight (Ctrl-C again to exit now)\n");
}

void kt_interrupt_arm(kt_interrupt_guard *g) {
  g->armed = depth++ == 0;
  if (!g->armed) return;
  interrupts = 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g->saved);
}

void kt_interrupt_disarm(kt_interrupt_guard *g) {
  depth--;
  if (g->armed) sigaction(SIGINT, &g->saved, NULL);
}

bool kt_interrupted(void) { return interrupts > 0; }
