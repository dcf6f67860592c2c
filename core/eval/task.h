/*
** task.h: what one tuning tunes: one kernel, or a composition of kernels
** that share one parameter space, with the thread modifiers, references
** and launcher that go with it.
*/
#ifndef KT_TASK_H
#define KT_TASK_H

#include "config.h"
#include "kernel.h"
#include "space.h"

typedef enum kt_mod_op {
  KT_MOD_ADD, KT_MOD_SUB, KT_MOD_MUL, KT_MOD_DIV, KT_MOD_DIV_CEIL, KT_MOD_FN
} kt_mod_op;

/* Parses "add", "sub", "mul", "div", "div_ceil"; -1 if unknown. */
int kt_mod_op_from_name(const char *name);

typedef struct kt_modifier {
  int kernel;    /* index in the task, or -1 for every kernel */
  bool local;    /* local (work-group) size, else global size */
  int dim;       /* 0..2 */
  kt_mod_op op;
  int param;     /* operand parameter, or -1 to use constant */
  int64_t constant;
  kt_size_fn fn; /* KT_MOD_FN */
  kt_callback cb;
} kt_modifier;

/* KT_CMP_CLOSE: numpy's allclose, |got - expected| <= atol + rtol * |expected|
** (tolerance is atol); KT_CMP_KERNEL_TUNER: Kernel Tuner's default check,
** np.allclose(expected, got): |expected - got| <= atol + rtol * |got|, NaN
** matching nothing (validate_close.c). */
typedef enum kt_cmp_method {
  KT_CMP_ABSOLUTE, KT_CMP_RELATIVE, KT_CMP_SUM, KT_CMP_CLOSE, KT_CMP_KERNEL_TUNER
} kt_cmp_method;

/* Fills expected (a copy of the target's initial contents) with the
** reference output. */
typedef int (*kt_ref_fn)(kt_array *expected, void *ud, kt_error *err);
/* Returns 1 when got matches expected, 0 when not (with a reason in *why,
** malloc'd, may stay NULL), -1 on error. */
typedef int (*kt_compare_fn)(const kt_array *got, const kt_array *expected, void *ud,
                             char **why, kt_error *err);

typedef enum kt_ref_kind { KT_REF_FN, KT_REF_ARRAY, KT_REF_TASK } kt_ref_kind;

typedef struct kt_task kt_task;

typedef struct kt_reference {
  kt_array *target;     /* the output array checked */
  kt_ref_kind kind;
  kt_ref_fn fn;         /* KT_REF_FN */
  kt_callback fn_cb;
  kt_array *given;      /* KT_REF_ARRAY */
  kt_task *task;        /* KT_REF_TASK: run this task ... */
  uint32_t *task_vi;    /* ... with this configuration */
  kt_cmp_method method;
  double tolerance;
  double rtol;          /* KT_CMP_CLOSE, KT_CMP_KERNEL_TUNER */
  size_t first;         /* compare only the first N elements; 0: all */
  kt_compare_fn compare;
  kt_callback compare_cb;
  kt_array *expected;   /* computed once per tuning */
} kt_reference;

/* Runs a configuration: launches the task's kernels (see run.h). */
typedef struct kt_run kt_run;
typedef int (*kt_launcher_fn)(kt_run *run, void *ud, kt_error *err);

struct kt_task {
  int refs;
  char *name;
  kt_kernel **kernels;
  size_t nkernels;
  kt_space *space;
  kt_modifier *mods;
  size_t nmods, capmods;
  kt_reference *refs_list;
  size_t nrefs, caprefs;
  kt_launcher_fn launcher; /* NULL: launch each kernel once, in order */
  kt_callback launcher_cb;
  struct kt_prune *prune;  /* device pruning settings (prune.h); NULL: defaults */
  /* frees prune: kt_prune_free, set where prune.c makes it (prune.c is above task.c) */
  void (*prune_free)(struct kt_prune *p);
  unsigned pins;           /* tunings and runs in progress */
  unsigned online;         /* ... of which online tunings (kt_task_hold_online) */
};

kt_task *kt_task_new(const char *name, kt_kernel *const *kernels, size_t n,
                     kt_error *err);
void kt_task_retain(kt_task *t);
void kt_task_release(kt_task *t);

/* Fails when m's dimension is beyond every kernel it applies to. */
int kt_task_check_modifier(const kt_task *t, const kt_modifier *m, kt_error *err);
/* Takes ownership of m's callback (even on error). */
int kt_task_add_modifier(kt_task *t, const kt_modifier *m, kt_error *err);
/* Takes ownership of the reference's callbacks and arrays (even on error). */
int kt_task_add_reference(kt_task *t, kt_reference *r, kt_error *err);
void kt_task_set_launcher(kt_task *t, kt_launcher_fn fn, kt_callback cb);
int kt_task_kernel_index(const kt_task *t, const kt_kernel *k);

/* A task is pinned while it is tuned or run: the tuning holds pointers
** into it, its kernels and its space, and its callbacks (written in Lua)
** could reach them. A busy task (pinned, holding a kernel that another
** pinned task holds, or generating its space) must not change, nor be
** tuned or run again until it is done. */
void kt_task_pin(kt_task *t);
void kt_task_unpin(kt_task *t);
/* An online tuning pins its task for as long as it lives (also after its
** search ended: its steps run the best): counted apart, so that the error
** names what to close. */
void kt_task_hold_online(kt_task *t, bool hold);
/* Whether a busy task is held by online tunings only. */
bool kt_task_held_online(const kt_task *t);
bool kt_task_busy(const kt_task *t);
/* The error for a busy task, naming what holds it. */
int kt_task_busy_error(const kt_task *t, kt_error *err);

/* The sizes of kernel ki under a configuration, after the modifiers, in
** the kernel's own notation, and the same in work-items for a launch. */
typedef struct kt_sizes {
  int dims;
  size_t global[3], local[3]; /* as the kernel states them */
  size_t items[3];            /* global size in work-items */
} kt_sizes;

int kt_task_sizes(const kt_task *t, size_t ki, const kt_config *cfg, kt_sizes *out,
                  kt_error *err);
/* Works out s->items from s->global and s->local in the kernel's notation;
** 1 (err says why) when they, or their product, overflow a size_t. */
int kt_sizes_items(const kt_kernel *k, kt_sizes *s, kt_error *err);

#endif
