/*
** journal.h: a tuning's results appended to a file as they are produced,
** one JSON object per line, so that a tuning that is killed loses at most
** the configuration in flight and can be resumed. The first line is the
** header (format "ktlua-journal": task, device, parameters, space and the
** task's identity, journal_id.h; and the PoCL threads the device process
** was given, device_threads, as the tuning began); every other line is one
** result, as in a results file, the first one after a device process
** started again with other threads led by them ("device_threads": n, 0 for
** none), so that the journal reads back with the tuning's last count.
**
** A journal is locked (an advisory lock, flock) while a tuning holds it:
** a second tuning on it is refused. Each line is written in one write(),
** so a kill leaves at most the last line cut short; a resumed journal's
** cut line is removed before anything is appended.
*/
#ifndef KT_JOURNAL_H
#define KT_JOURNAL_H

#include "journal_id.h"
#include "result.h"

typedef struct kt_journal kt_journal;

/* Opens (creating) and locks the file, leaving its contents as they are;
** fails when another tuning holds it. */
kt_journal *kt_journal_open(const char *path, kt_error *err);
/* The results a journal holds, checking that they are of the same
** parameters (space's) and the same task (id): a journal of another task
** is refused unless force, and then *changed (malloc'd) says how it
** differs. Returns 1 when the journal holds nothing (it is empty, or was
** cut before its header was whole), -1 on error. */
int kt_journal_read(kt_journal *j, const kt_space *space, const kt_journal_id *id, bool force,
                    kt_results **prior, char **changed, kt_error *err);
/* Before the first append: fresh, empties the file and writes the header;
** else (after kt_journal_read) removes a line a kill cut short. */
int kt_journal_start(kt_journal *j, const kt_results *r, const kt_journal_id *id, bool fresh,
                     kt_error *err);
/* Instead of kt_journal_start, after kt_journal_read: replaces the file
** whole (a kill leaves the old journal or the new one) by a header of r and
** the results of prior, as they are now indexed. */
int kt_journal_rewrite(kt_journal *j, const kt_results *r, const kt_journal_id *id,
                       const kt_results *prior, kt_error *err);
int kt_journal_append(kt_journal *j, const kt_results *r, const kt_result *x, kt_error *err);
/* Unlocks and closes (NULL is fine). */
int kt_journal_close(kt_journal *j, kt_error *err);

/* Whether a tuning holds the journal at path now (its lock is taken), as
** Linux's /proc/locks lists it: looking takes no lock, so a tuning that
** opens the journal meanwhile is never refused. -1 (err) when path cannot
** be read or /proc/locks is not there. */
int kt_journal_held(const char *path, bool *held, kt_error *err);

#endif
