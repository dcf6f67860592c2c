/*
** validate_device.h: comparing an output with its reference on the device.
**
** Read back and compared on the host, an output of millions of elements
** costs milliseconds per configuration in transfers alone. On the device
** a comparison kernel reads the output where it lies and the expected
** values (uploaded once per tuning) and leaves two numbers: how many
** elements differ and where the first is. It runs on queue 0 after the
** warm-up, before the timed runs queued behind it, and computes in double
** precision exactly as the host does (validate.c), so that the verdict is
** the same. A configuration it finds wrong runs once more and its output
** is compared on the host, for the message that names the element.
**
** Only the element-wise methods (absolute, relative) on float and double
** outputs qualify, on devices with double precision.
*/
#ifndef KT_VALIDATE_DEVICE_H
#define KT_VALIDATE_DEVICE_H

#include "tuner_int.h"

typedef struct kt_devcheck kt_devcheck;

/* Where outputs are compared (tune options.validate_on). */
typedef enum kt_validate_on {
  KT_VALIDATE_AUTO,   /* on a GPU, outputs of KT_DEVCHECK_AUTO_MIN elements or more */
  KT_VALIDATE_HOST,
  KT_VALIDATE_DEVICE  /* where the method and type allow */
} kt_validate_on;

#define KT_DEVCHECK_AUTO_MIN ((size_t)1 << 16)

/* Starts compiling the comparison kernels that task's references may use
** under `where`, at the start of its tuning: beside the first
** configurations' compiles, so that the set-up waits for none of its own.
** What does not compile says so when the kernel is asked for. */
void kt_devcheck_prefetch(kt_tuner *t, const kt_task *task, kt_validate_on where);
/* For the references of a task on t (kt_devcheck_prefetch started their
** kernels' compiles). */
kt_devcheck *kt_devcheck_new(kt_tuner *t, size_t nrefs, kt_error *err);
/* Frees its device copies too. */
void kt_devcheck_free(kt_devcheck *d);

/* Whether reference r is compared on the device under `where`. */
bool kt_devcheck_suits(const kt_tuner *t, const kt_reference *r, kt_validate_on where);

/* Makes sure the comparison kernel for r is built: 0 when it is, 1 when
** it does not compile on this device (with *why, malloc'd, for the
** results' device log; every later call says 1), -1 on a fatal error. */
int kt_devcheck_ready(kt_devcheck *d, const kt_reference *r, char **why, kt_error *err);
/* Queues the comparison of reference i's output as run left it: 0, or 1
** (nothing queued) as kt_devcheck_ready says. */
int kt_devcheck_enqueue(kt_devcheck *d, size_t i, const kt_reference *r, char **why,
                        kt_error *err);
/* Forgets the comparisons queued (their run failed otherwise). */
void kt_devcheck_discard(kt_devcheck *d);
/* Whether output i's comparison was queued and its outcome not yet taken. */
bool kt_devcheck_queued(const kt_devcheck *d, size_t i);
/* Its outcome, once queue 0 was finished since it was queued (the counts
** are read behind the comparison without waiting, where that does not
** hold the queue back): 1 when the output matched, 0 when *ndiff
** elements differed, the first at *at; -1 on error. Adds the comparison's
** device time to the tuner's. */
int kt_devcheck_result(kt_devcheck *d, size_t i, size_t *ndiff, size_t *at, kt_error *err);

#endif
