/*
** journal.h: a tuning's results appended to a file as they are produced,
** one JSON object per line, flushed line by line, so that a tuning that is
** killed loses at most the configuration in flight and can be resumed.
** The first line is the header (format "ktlua-journal": task, device,
** parameters, space); every other line is one result, as in a results
** file.
*/
#ifndef KT_JOURNAL_H
#define KT_JOURNAL_H

#include "result.h"

typedef struct kt_journal kt_journal;

/* Starts a journal (truncating the file), or with append, continues one
** whose header matches (the caller checked it) without rewriting it. */
kt_journal *kt_journal_open(const char *path, const kt_results *r, bool append,
                            kt_error *err);
int kt_journal_append(kt_journal *j, const kt_results *r, const kt_result *x, kt_error *err);
int kt_journal_close(kt_journal *j, kt_error *err);

#endif
