/*
** online_confirm.h: before an online tuning declares its best, the leading
** candidates of its search run again on later steps, several times each,
** and each one's time becomes the median of those runs. A search's single
** measurement of a microsecond kernel on one step is too noisy to pick
** the best by (online.h).
*/
#ifndef KT_ONLINE_CONFIRM_H
#define KT_ONLINE_CONFIRM_H

#include "metrics.h"
#include "result.h"

typedef struct kt_confirm {
  size_t *cands;   /* positions in the results, least cost first */
  size_t n;
  unsigned runs;   /* re-measurements of each */
  double *times;   /* n * runs */
  unsigned *got;   /* per candidate */
  size_t next;     /* the candidate the next step runs */
} kt_confirm;

/* Picks the (at most) candidates ok results of least cost, each to run
** `runs` more times. None (candidates or runs 0, or no ok result): done. */
int kt_confirm_begin(kt_confirm *c, const kt_results *r, size_t candidates, unsigned runs,
                     kt_error *err);
/* The position in the results of the candidate the next step runs, or -1
** when every one has run its times. */
long kt_confirm_next(const kt_confirm *c);
/* The next candidate's run in `ran`: ok, its time a sample of its result;
** else its result takes the failure (a configuration that fails once may
** fail again) and it runs no more. */
int kt_confirm_record(kt_confirm *c, kt_results *r, const kt_result *ran, kt_error *err);
/* Each candidate re-measured takes the median of its runs as its time
** (and its metrics again, by m when given). */
int kt_confirm_end(kt_confirm *c, kt_results *r, const kt_metrics *m, kt_error *err);
void kt_confirm_clear(kt_confirm *c);

#endif
