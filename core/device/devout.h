/*
** devout.h: what a device process writes on its standard error.
**
** Drivers and allocators speak there ("free(): invalid next size", a
** driver's assertion) and nowhere else. The tuner keeps the read end of a
** pipe that is the device process's stderr, drains it after every call,
** and hands the text to whoever asks: the configuration that was running,
** and the tuning's summary. Nothing of it reaches the tuner's own stderr.
*/
#ifndef KT_DEVOUT_H
#define KT_DEVOUT_H

#include <stddef.h>

/* The most kept between two takes; older text gives way to newer. */
#define KT_DEVOUT_MAX (64 * 1024)

typedef struct kt_devout {
  int fd;        /* read end, non-blocking; -1 when none */
  char *text;
  size_t len, cap;
  size_t dropped; /* bytes that gave way since the last take */
} kt_devout;

void kt_devout_init(kt_devout *o);
/* A new pipe for the next device process: returns its write end (for the
** child's stderr), or -1. The old pipe's unread text is drained first. */
int kt_devout_pipe(kt_devout *o);
/* Reads what is there, without waiting. */
void kt_devout_drain(kt_devout *o);
/* The text gathered since the last take (malloc'd), or NULL when there is
** none. Clang's "N errors generated." lines are left out: compile threads
** print them beside the build log that has the errors themselves. */
char *kt_devout_take(kt_devout *o);
/* Appends ": " and the last line gathered (not taken) to the text in buf. */
void kt_devout_last_line(const kt_devout *o, char *buf, size_t size);
void kt_devout_free(kt_devout *o);

#endif
