/*
** interrupt.h: Ctrl-C during a tuning. The first SIGINT lets the
** configuration in flight finish and stops the tuning (its results are
** written); a second one exits at once, the journal being complete up to
** the last finished configuration.
*/
#ifndef KT_INTERRUPT_H
#define KT_INTERRUPT_H

#include <signal.h>
#include <stdbool.h>

typedef struct kt_interrupt_guard {
  struct sigaction saved;
  bool armed;
} kt_interrupt_guard;

/* Installs the handler for the length of a tuning (nested guards are fine). */
void kt_interrupt_arm(kt_interrupt_guard *g);
void kt_interrupt_disarm(kt_interrupt_guard *g);
bool kt_interrupted(void);

#endif
