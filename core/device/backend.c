/*
** backend.c: what the backends share beside their table.
*/
#include "backend.h"

int kt_backend_finish(kt_bctx *ctx, int q, int nqueues, kt_finish_fn one, kt_fault *fault,
                      kt_error *err) {
  *fault = KT_FAULT_NONE;
  if (q >= nqueues) return kt_fail(err, "queue %d is out of range (0 to %d)", q, nqueues - 1);
  if (q >= 0) return one(ctx, q, fault, err);
  int rc = 0;
  for (int i = 0; i < nqueues; i++)
    if (one(ctx, i, fault, rc ? NULL : err)) rc = -1;
  return rc;
}
