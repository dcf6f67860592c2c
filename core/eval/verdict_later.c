/*
** verdict_later.c: a configuration run before the references are in (the
** other devices of a fleet, while the first device computes them:
** fleet.c). Its outputs are kept where the comparison reads them, once the
** warm-up is over (measure.c), and compared here when the references come; until then it
** has no verdict, and its result is given to nobody. A wrong output found
** so is judged as one found at once (it loses its samples; the guard runs
** it again before the verdict stands).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune_int.h"
#include "validate.h"

/* 1 when output i matches its reference, 0 when not (*why may say why). */
static int matches(tuning *tu, size_t i, char **why, kt_error *err) {
  kt_reference *r = &tu->task->refs_list[i];
  int same = r->compare ? r->compare(tu->scratch[i], r->expected, r->compare_cb.ud, why, err)
                        : kt_compare_reference(tu->scratch[i], r, why, err);
  return same < 0 ? kt_fail_prefix(err, "comparing output %zu: ", i + 1) : same;
}

static void invalid(kt_result *res, char *why) {
  res->status = KT_INVALID_OUTPUT;
  free(res->error);
  res->error = why ? why : strdup("the output differs from the reference");
  res->time_ns = NAN;
  res->nsamples = 0;
  res->cut_short = false;
}

int tune_judge_kept(tuning *tu, kt_result *res, kt_error *err) {
  int64_t t0 = kt_now_ns();
  for (size_t i = 0; i < tu->task->nrefs && res->status == KT_OK; i++) {
    char *why = NULL;
    int same = matches(tu, i, &why, err);
    if (same < 0 || same) free(why);
    if (same < 0) return -1;
    if (!same) invalid(res, why);
  }
  double ns = (double)(kt_now_ns() - t0);
  res->over.validation += ns;
  res->over.total += ns;
  return 0;
}
