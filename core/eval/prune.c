/*
** prune.c: the device's limits as constraints of a task's space.
*/
#include "prune.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct local_memory {
  int kernel; /* -1: every kernel */
  char *text;
  kt_named_value *consts;
  size_t nconsts;
} local_memory;

/* What the constraints in the space were made from, to tell whether they
** need replacing. */
typedef struct applied {
  char device[40];
  int64_t dims[3], group, local;
  size_t nmods, nparams;
} applied;

struct kt_prune {
  bool off[KT_PRUNE_END];
  local_memory *lm;
  size_t nlm, caplm;
  bool is_applied;
  applied last;
};

static void consts_free(kt_named_value *c, size_t n) {
  for (size_t i = 0; c && i < n; i++) {
    free((char *)c[i].name);
    if (c[i].value.type == KT_VSTRING) free(c[i].value.u.s);
  }
  free(c);
}

static void lm_clear(local_memory *l) {
  free(l->text);
  consts_free(l->consts, l->nconsts);
}

void kt_prune_free(kt_prune *p) {
  if (!p) return;
  for (size_t i = 0; i < p->nlm; i++) lm_clear(&p->lm[i]);
  free(p->lm);
  free(p);
}

/* The task's settings, made on first use; the task frees them through
** prune_free, as task.c is below this file. */
static kt_prune *attach(kt_task *t, kt_error *err) {
  if (!t->prune && (t->prune = kt_calloc(1, sizeof *t->prune, err))) t->prune_free = kt_prune_free;
  return t->prune;
}

/* The settings, about to change: the device constraints made from the old
** ones leave the space until it is pruned again. */
static kt_prune *settings(kt_task *t, kt_error *err) {
  if (attach(t, err) && t->prune->is_applied) {
    kt_space_remove_tagged(t->space, KT_PRUNE_GROUP_DIMS);
    t->prune->is_applied = false;
  }
  return t->prune;
}

int kt_task_set_pruning(kt_task *t, kt_prune_kind k, bool on, kt_error *err) {
  if (k < 1 || k >= KT_PRUNE_END) return kt_fail(err, "unknown kind of pruning %d", (int)k);
  kt_prune *p = settings(t, err);
  if (!p) return -1;
  p->off[k] = !on;
  return 0;
}

/* ---- local memory ---- */

static kt_named_value *consts_copy(const kt_named_value *c, size_t n, kt_error *err) {
  kt_named_value *out = kt_calloc(n + 1, sizeof *out, err);
  for (size_t i = 0; out && i < n; i++) {
    out[i].value = c[i].value;
    char *s = NULL;
    if (!(out[i].name = kt_strdup(c[i].name, err)) ||
        (c[i].value.type == KT_VSTRING && !(s = kt_strdup(c[i].value.u.s, err)))) {
      consts_free(out, i + 1);
      return NULL;
    }
    if (s) out[i].value.u.s = s;
  }
  return out;
}

/* The expression must read parameters and give a number. */
static int check_local_memory(const kt_task *t, const char *text, const kt_named_value *consts,
                              size_t n, kt_error *err) {
  kt_expr *e = kt_expr_parse(text, err);
  int rc = !e || kt_expr_bind(e, consts, n, err) || kt_space_check_names(t->space, e, err);
  if (rc == 0 && kt_expr_is_condition(e))
    rc = kt_fail(err, "the expression is a condition; it should give the bytes of local "
                      "memory a work-group uses");
  kt_expr_free(e);
  return rc ? kt_fail_prefix(err, "local memory '%.80s%s': ", text, strlen(text) > 80 ? "..." : "")
            : 0;
}

int kt_task_set_local_memory(kt_task *t, int kernel, const char *expr,
                             const kt_named_value *consts, size_t nconsts, kt_error *err) {
  if (kernel < -1 || kernel >= (int)t->nkernels)
    return kt_fail(err, "kernel %d is not part of task %s", kernel + 1, t->name);
  if (check_local_memory(t, expr, consts, nconsts, err)) return -1;
  kt_prune *p = settings(t, err);
  if (!p) return -1;
  size_t i = 0;
  while (i < p->nlm && p->lm[i].kernel != kernel) i++;
  if (i == p->nlm && kt_grow(&p->lm, &p->caplm, p->nlm + 1, sizeof *p->lm, err)) return -1;
  local_memory l = {kernel, kt_strdup(expr, err), consts_copy(consts, nconsts, err), nconsts};
  if (!l.text || !l.consts) {
    lm_clear(&l);
    return -1;
  }
  if (i < p->nlm) lm_clear(&p->lm[i]);
  else p->nlm++;
  p->lm[i] = l;
  return 0;
}

static const local_memory *lm_for(const kt_prune *p, size_t ki) {
  const local_memory *any = NULL;
  for (size_t i = 0; i < p->nlm; i++) {
    if (p->lm[i].kernel == (int)ki) return &p->lm[i];
    if (p->lm[i].kernel < 0) any = &p->lm[i];
  }
  return any;
}

static int add_local_memory(kt_task *t, size_t ki, int64_t limit, kt_error *err) {
  const local_memory *l = lm_for(t->prune, ki);
  if (!l || limit <= 0) return 0;
  char *text = kt_alloc(strlen(l->text) + 32, err);
  if (!text) return -1;
  sprintf(text, "(%s) <= %" PRId64, l->text, limit);
  int rc = kt_space_add_expr(t->space, text, l->consts, l->nconsts, KT_PRUNE_LOCAL_MEMORY, err);
  free(text);
  return rc;
}

/* ---- thread sizes ---- */

typedef struct rule {
  const kt_task *task; /* owns the space that owns the rule */
  size_t kernel;
  kt_prune_kind kind;
  int64_t limit[3];    /* GROUP_DIMS: per dimension; GROUP_SIZE: [0] */
  size_t nmods, nparams; /* when the rule was made */
} rule;

static bool within(const rule *r, const kt_sizes *z) {
  switch (r->kind) {
    case KT_PRUNE_GROUP_DIMS:
      for (int d = 0; d < z->dims; d++)
        if (r->limit[d] > 0 && z->local[d] > (size_t)r->limit[d]) return false;
      return true;
    case KT_PRUNE_GROUP_SIZE:
      return z->local[0] * z->local[1] * z->local[2] <= (size_t)r->limit[0];
    default:
      for (int d = 0; d < z->dims; d++)
        if (z->items[d] % z->local[d] != 0) return false;
      return true;
  }
}

static int size_check(const kt_space *s, const uint32_t *vi, void *ud, kt_error *err) {
  const rule *r = ud;
  /* Modifiers or parameters added since may read what the rule does not
  ** bind: leave the sizes to the launch until the task is pruned again. */
  if (r->task->nmods != r->nmods || kt_space_nparams(s) != r->nparams) return 1;
  kt_config cfg = {s, 0, vi};
  kt_sizes z;
  int rc = kt_task_sizes(r->task, r->kernel, &cfg, &z, err);
  if (rc) return rc < 0 ? -1 : 1; /* sizes the launch will report as before */
  return z.local[0] == 0 || within(r, &z);
}

/* The parameters that kernel ki's sizes read (used has room for every
** parameter); *pure is false when a function modifier, which may read any
** parameter, is among the modifiers; *local when the kernel has a
** work-group size. */
static size_t size_params_of(const kt_task *t, size_t ki, bool *used, const char **names,
                             bool *pure, bool *local) {
  size_t np = kt_space_nparams(t->space), n = 0;
  *pure = true;
  *local = t->kernels[ki]->local[0] > 0;
  for (size_t i = 0; i < t->nmods; i++) {
    const kt_modifier *m = &t->mods[i];
    if (m->kernel >= 0 && (size_t)m->kernel != ki) continue;
    *local = *local || m->local;
    if (m->op == KT_MOD_FN) *pure = false;
    else if (m->param >= 0) used[m->param] = true;
  }
  for (size_t p = 0; p < np; p++)
    if (!*pure || used[p]) names[n++] = kt_space_param(t->space, p)->name;
  return n;
}

typedef struct size_params {
  const char **names;
  size_t n;
  bool pure;
} size_params;

static int add_rule(kt_task *t, size_t ki, kt_prune_kind kind, const int64_t *limit,
                    const size_params *sp, kt_error *err) {
  static const char *const what[KT_PRUNE_END] = {
      NULL, "work-group size per dimension", "work-items per group", NULL,
      "global size a multiple of the work-group size"};
  char label[160];
  snprintf(label, sizeof label, "kernel %s: %s", t->kernels[ki]->name, what[kind]);
  rule *r = kt_alloc(sizeof *r, err);
  if (!r) return -1;
  *r = (rule){t, ki, kind, {limit[0], limit[1], limit[2]}, t->nmods, kt_space_nparams(t->space)};
  kt_constraint_def d = {sp->names, sp->n, NULL, size_check, r, free, label, kind, sp->pure};
  return kt_space_add_constraint_def(t->space, &d, err);
}

static int add_size_rules(kt_task *t, size_t ki, const kt_device_info *dev, kt_error *err) {
  size_t np = kt_space_nparams(t->space);
  const char **names = kt_calloc(np + 1, sizeof *names, err);
  bool *used = kt_calloc(np + 1, sizeof *used, err);
  if (!names || !used) {
    free(names);
    free(used);
    return -1;
  }
  bool local = false;
  size_params sp = {names, 0, true};
  sp.n = size_params_of(t, ki, used, names, &sp.pure, &local);
  free(used);
  const kt_kernel *k = t->kernels[ki];
  const kt_prop *dims = kt_device_prop(dev, "max_group_dims");
  int64_t group[3] = {kt_device_int(dev, "max_group_size", 0), 0, 0}, none[3] = {0, 0, 0};
  const bool *off = t->prune->off;
  bool sized = sp.n > 0 && local;
  int rc = 0;
  if (sized && !off[KT_PRUNE_GROUP_DIMS] && dims && dims->type == KT_PROP_SIZES)
    rc = add_rule(t, ki, KT_PRUNE_GROUP_DIMS, dims->sizes, &sp, err);
  if (rc == 0 && sized && !off[KT_PRUNE_GROUP_SIZE] && group[0] > 0)
    rc = add_rule(t, ki, KT_PRUNE_GROUP_SIZE, group, &sp, err);
  if (rc == 0 && sized && !off[KT_PRUNE_DIVISIBLE] && k->notation == KT_NOTATION_OPENCL &&
      !k->round_global)
    rc = add_rule(t, ki, KT_PRUNE_DIVISIBLE, none, &sp, err);
  free(names);
  return rc;
}

/* ---- applying ---- */

static applied describe(const kt_task *t, const kt_device_info *dev) {
  applied a;
  memset(&a, 0, sizeof a); /* compared with memcmp, padding included */
  snprintf(a.device, sizeof a.device, "%s", dev->id);
  const kt_prop *dims = kt_device_prop(dev, "max_group_dims");
  for (int d = 0; dims && d < dims->nsizes; d++) a.dims[d] = dims->sizes[d];
  a.group = kt_device_int(dev, "max_group_size", 0);
  /* A CUDA kernel may opt in to more shared memory than its default
  ** (ktlua does, for dynamic shared memory): that is the real limit. */
  int64_t optin = kt_device_int(dev, "shared_per_block_optin", 0);
  a.local = optin > 0 ? optin : kt_device_int(dev, "local_memory", 0);
  a.nmods = t->nmods;
  a.nparams = kt_space_nparams(t->space);
  return a;
}

int kt_task_prune(kt_task *t, const kt_device_info *dev, kt_error *err) {
  if (!attach(t, err)) return -1;
  kt_prune *p = t->prune;
  applied a = describe(t, dev);
  if (p->is_applied && memcmp(&a, &p->last, sizeof a) == 0) return 0;
  kt_space_remove_tagged(t->space, KT_PRUNE_GROUP_DIMS);
  p->is_applied = false;
  int rc = 0;
  for (size_t ki = 0; ki < t->nkernels && rc == 0; ki++) {
    rc = add_size_rules(t, ki, dev, err);
    if (rc == 0 && !p->off[KT_PRUNE_LOCAL_MEMORY]) rc = add_local_memory(t, ki, a.local, err);
    if (rc == 0 && !p->off[KT_PRUNE_LOCAL_MEMORY]) rc = kt_prune_static_local(t, ki, dev, err);
  }
  if (rc) {
    kt_space_remove_tagged(t->space, KT_PRUNE_GROUP_DIMS);
    return kt_fail_prefix(err, "pruning for device %s: ", dev->id);
  }
  p->last = a;
  p->is_applied = true;
  return 0;
}

int kt_task_pruned(kt_task *t, kt_prune_kind k, uint64_t *removed, kt_error *err) {
  return kt_space_removed(t->space, (unsigned)k, removed, err);
}
