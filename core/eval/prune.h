/*
** prune.h: constraints that come from the device (after Erdem). A
** configuration whose work-group is larger than the device allows, per
** dimension or in all, whose local memory (an expression the user gives,
** or the static local memory its source declares: prune_shared.c) is more
** than the device has, or whose global size is not a multiple of
** its work-group size where the API requires it, cannot run. Pruning takes
** such configurations out of the space before tuning, so that they are
** never proposed; each kind can be switched off, and the space counts
** what each one removed.
**
** Thread sizes come from kt_task_sizes, the one place that applies thread
** modifiers, so a kernel's size constraints read the parameters its
** modifiers read. A modifier given as a function may read any parameter:
** its kernel's size constraints read them all, and run on the calling
** thread. Sizes that a modifier cannot compute (division by zero, a
** non-positive size) are left to the launch, which reports them as before.
*/
#ifndef KT_PRUNE_H
#define KT_PRUNE_H

#include "device.h"
#include "prune_kind.h"
#include "task.h"

/* A task's pruning settings (every kind on, no local-memory expression,
** by default); the task owns them. */
typedef struct kt_prune kt_prune;
void kt_prune_free(kt_prune *p);

int kt_task_set_pruning(kt_task *t, kt_prune_kind k, bool on, kt_error *err);
/* The bytes of local memory a work-group of the task's kernel (an index,
** or -1 for every kernel) uses, as an expression over parameters and
** consts; replaces an earlier one for the same kernel. */
int kt_task_set_local_memory(kt_task *t, int kernel, const char *expr,
                             const kt_named_value *consts, size_t nconsts, kt_error *err);

/* The static local (CUDA: shared) memory that kernel ki's source declares,
** as a constraint of kind KT_PRUNE_LOCAL_MEMORY: at most the device's limit
** (prune_shared.c). */
int kt_prune_static_local(kt_task *t, size_t ki, const kt_device_info *dev, kt_error *err);

/* Replaces the device constraints in the task's space by those for dev;
** nothing changes (and nothing regenerates) when they would be the same. */
int kt_task_prune(kt_task *t, const kt_device_info *dev, kt_error *err);
/* How many configurations kind k removed (0 when it is off or does not
** apply); generates and counts as needed. */
int kt_task_pruned(kt_task *t, kt_prune_kind k, uint64_t *removed, kt_error *err);

#endif
