/*
** task.c: tasks, thread modifiers and references.
*/
#include "task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kt_mod_op_from_name(const char *name) {
  static const char *const names[] = {"add", "sub", "mul", "div", "div_ceil"};
  for (int i = 0; i < 5; i++)
    if (strcmp(name, names[i]) == 0) return i;
  return -1;
}

kt_task *kt_task_new(const char *name, kt_kernel *const *kernels, size_t n,
                     kt_error *err) {
  if (n == 0) return kt_fail(err, "a task needs at least one kernel"), NULL;
  kt_task *t = kt_calloc(1, sizeof *t, err);
  if (!t) return NULL;
  t->refs = 1;
  t->name = kt_strdup(name, err);
  t->kernels = kt_calloc(n, sizeof *t->kernels, err);
  t->space = kt_space_new(err);
  if (!t->name || !t->kernels || !t->space) {
    kt_task_release(t);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    t->kernels[i] = kernels[i];
    kt_kernel_retain(kernels[i]);
  }
  t->nkernels = n;
  return t;
}

void kt_task_retain(kt_task *t) {
  if (t) t->refs++;
}

static void reference_clear(kt_reference *r) {
  kt_array_release(r->target);
  kt_array_release(r->given);
  kt_array_release(r->expected);
  kt_task_release(r->task);
  free(r->task_vi);
  kt_callback_clear(&r->fn_cb);
  kt_callback_clear(&r->compare_cb);
}

void kt_task_release(kt_task *t) {
  if (!t || --t->refs > 0) return;
  for (size_t i = 0; i < t->nkernels; i++) kt_kernel_release(t->kernels[i]);
  for (size_t i = 0; i < t->nmods; i++) kt_callback_clear(&t->mods[i].cb);
  for (size_t i = 0; i < t->nrefs; i++) reference_clear(&t->refs_list[i]);
  kt_callback_clear(&t->launcher_cb);
  free(t->kernels);
  free(t->mods);
  free(t->refs_list);
  kt_space_free(t->space);
  if (t->prune) t->prune_free(t->prune);
  free(t->name);
  free(t);
}

void kt_task_pin(kt_task *t) {
  t->pins++;
  for (size_t i = 0; i < t->nkernels; i++) t->kernels[i]->pins++;
}

void kt_task_unpin(kt_task *t) {
  t->pins--;
  for (size_t i = 0; i < t->nkernels; i++) t->kernels[i]->pins--;
}

bool kt_task_busy(const kt_task *t) {
  bool busy = t->pins > 0 || kt_space_generating(t->space);
  for (size_t i = 0; i < t->nkernels && !busy; i++) busy = t->kernels[i]->pins > 0;
  return busy;
}

void kt_task_hold_online(kt_task *t, bool hold) {
  if (hold) {
    kt_task_pin(t);
    t->online++;
    for (size_t i = 0; i < t->nkernels; i++) t->kernels[i]->online++;
  } else {
    kt_task_unpin(t);
    t->online--;
    for (size_t i = 0; i < t->nkernels; i++) t->kernels[i]->online--;
  }
}

/* Whether the busy task is held only by online tunings (its own, or of
** another task sharing a kernel). */
bool kt_task_held_online(const kt_task *t) {
  if (t->pins > t->online || kt_space_generating(t->space)) return false;
  for (size_t i = 0; i < t->nkernels; i++)
    if (t->kernels[i]->pins > t->kernels[i]->online) return false;
  return true;
}

int kt_task_busy_error(const kt_task *t, kt_error *err) {
  if (kt_task_held_online(t))
    return kt_fail(err, "task %s is in use by an online tuning (tuner:online), which holds it "
                        "for its steps even once its search has ended: on:close() releases it",
                   t->name);
  return kt_fail(err, "task %s is in use: it is being tuned or run, or its space generated, "
                      "and cannot change or be tuned or run until that ends", t->name);
}

int kt_task_check_modifier(const kt_task *t, const kt_modifier *m, kt_error *err) {
  if (m->dim < 0 || m->dim > 2) return kt_fail(err, "modifier dimension must be x, y or z");
  int dims = 0; /* of the kernels it applies to */
  for (size_t ki = 0; ki < t->nkernels; ki++)
    if ((m->kernel < 0 || (size_t)m->kernel == ki) && t->kernels[ki]->dims > dims)
      dims = t->kernels[ki]->dims;
  if (m->dim < dims) return 0;
  return kt_fail(err, "a modifier of dimension %c, but %s %d-dimensional", "xyz"[m->dim],
                 m->kernel < 0 && t->nkernels > 1 ? "the kernels are at most" : "the kernel is",
                 dims);
}

int kt_task_add_modifier(kt_task *t, const kt_modifier *m, kt_error *err) {
  kt_callback cb = m->cb;
  if (kt_task_check_modifier(t, m, err)) {
    kt_callback_clear(&cb);
    return -1;
  }
  if (kt_grow(&t->mods, &t->capmods, t->nmods + 1, sizeof *t->mods, err)) {
    kt_callback_clear(&cb);
    return -1;
  }
  t->mods[t->nmods++] = *m;
  return 0;
}

int kt_task_add_reference(kt_task *t, kt_reference *r, kt_error *err) {
  for (size_t i = 0; i < t->nrefs; i++)
    if (t->refs_list[i].target == r->target) {
      /* A new reference for the same output replaces the old one. */
      reference_clear(&t->refs_list[i]);
      t->refs_list[i] = *r;
      return 0;
    }
  if (kt_grow(&t->refs_list, &t->caprefs, t->nrefs + 1, sizeof *t->refs_list, err)) {
    reference_clear(r);
    return -1;
  }
  t->refs_list[t->nrefs++] = *r;
  return 0;
}

void kt_task_set_launcher(kt_task *t, kt_launcher_fn fn, kt_callback cb) {
  kt_callback_clear(&t->launcher_cb);
  t->launcher = fn;
  t->launcher_cb = cb;
}

int kt_task_kernel_index(const kt_task *t, const kt_kernel *k) {
  for (size_t i = 0; i < t->nkernels; i++)
    if (t->kernels[i] == k) return (int)i;
  return -1;
}

/* ---- sizes ---- */

static const char *const op_names[] = {"add", "sub", "mul", "div", "div_ceil", "function"};

static int operand(const kt_modifier *m, const kt_config *cfg, int64_t *out,
                   kt_error *err) {
  if (m->param < 0) {
    *out = m->constant;
    return 0;
  }
  const kt_value *v = kt_config_value(cfg, (size_t)m->param);
  const char *name = kt_space_param(cfg->space, (size_t)m->param)->name;
  double d;
  if (v->type == KT_VINT) {
    *out = v->u.i;
  } else if (kt_value_number(v, &d) && d == floor(d) && fabs(d) < 9e15) {
    *out = (int64_t)d;
  } else {
    return kt_fail(err, "thread modifier '%s %s': the value of %s is not an integer",
                   op_names[m->op], name, name);
  }
  return 0;
}

/* Returns 1 when the result is not a positive size. */
static int apply(const kt_modifier *m, const kt_config *cfg, size_t *size,
                 kt_error *err) {
  int64_t x = (int64_t)*size, y = 0, r;
  if (m->op == KT_MOD_FN) {
    if (m->fn(cfg, x, &r, m->cb.ud, err)) return -1;
  } else {
    if (operand(m, cfg, &y, err)) return -1;
    if ((m->op == KT_MOD_DIV || m->op == KT_MOD_DIV_CEIL) && y == 0)
      return kt_fail(err, "thread modifier '%s': division by zero", op_names[m->op]), 1;
    bool over = false;
    switch (m->op) {
      case KT_MOD_ADD: over = __builtin_add_overflow(x, y, &r); break;
      case KT_MOD_SUB: over = __builtin_sub_overflow(x, y, &r); break;
      case KT_MOD_MUL: over = __builtin_mul_overflow(x, y, &r); break;
      case KT_MOD_DIV: r = x / y; break;
      default: over = __builtin_add_overflow(x, y - 1, &r); r /= y; break;
    }
    if (over)
      return kt_fail(err, "thread modifier '%s' of %lld by %lld overflows", op_names[m->op],
                     (long long)x, (long long)y), 1;
  }
  if (r <= 0)
    return kt_fail(err, "thread modifier '%s' gives the non-positive size %lld",
                   op_names[m->op], (long long)r), 1;
  *size = (size_t)r;
  return 0;
}

static bool applies(const kt_modifier *m, size_t ki) {
  return m->kernel < 0 || (size_t)m->kernel == ki;
}

int kt_task_sizes(const kt_task *t, size_t ki, const kt_config *cfg, kt_sizes *out,
                  kt_error *err) {
  const kt_kernel *k = t->kernels[ki];
  out->dims = k->dims;
  memcpy(out->global, k->global, sizeof out->global);
  memcpy(out->local, k->local, sizeof out->local);
  bool has_local = k->local[0] > 0;
  for (size_t i = 0; i < t->nmods && !has_local; i++)
    if (applies(&t->mods[i], ki) && t->mods[i].local) has_local = true;
  if (has_local && k->local[0] == 0) out->local[0] = out->local[1] = out->local[2] = 1;
  for (size_t i = 0; i < t->nmods; i++) {
    const kt_modifier *m = &t->mods[i];
    if (!applies(m, ki)) continue;
    int rc = apply(m, cfg, m->local ? &out->local[m->dim] : &out->global[m->dim], err);
    if (rc) {
      kt_fail_prefix(err, "kernel %s, %s size %c: ", k->name, m->local ? "local" : "global",
                     "xyz"[m->dim]);
      return rc;
    }
  }
  if (k->notation == KT_NOTATION_CUDA && !has_local)
    return kt_fail(err, "kernel %s: CUDA notation needs a local (block) size", k->name);
  return kt_sizes_items(k, out, err);
}

/* "A x B x C" */
static void sizes_text(const size_t *v, int dims, char *buf, size_t size) {
  size_t n = 0;
  for (int d = 0; d < dims && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, "%s%zu", d ? " x " : "", v[d]);
}

int kt_sizes_items(const kt_kernel *k, kt_sizes *s, kt_error *err) {
  bool has_local = s->local[0] > 0, over = false;
  size_t total = 1;
  for (int d = 0; d < 3; d++) {
    s->items[d] = s->global[d];
    if (k->notation == KT_NOTATION_CUDA && has_local)
      over |= __builtin_mul_overflow(s->global[d], s->local[d], &s->items[d]);
    else if (k->round_global && has_local) { /* what runs is what results record */
      size_t up;
      over |= __builtin_add_overflow(s->global[d], s->local[d] - 1, &up);
      if (!over) s->global[d] = s->items[d] = up / s->local[d] * s->local[d];
    }
    over |= __builtin_mul_overflow(total, s->items[d], &total);
  }
  if (!over) return 0;
  char g[96], l[96];
  sizes_text(s->global, s->dims, g, sizeof g);
  sizes_text(s->local, s->dims, l, sizeof l);
  return kt_fail(err, "kernel %s: the global size %s%s%s is more work-items than a launch can "
                 "count (2^64 - 1)", k->name, g, has_local ? " with local size " : "",
                 has_local ? l : ""), 1;
}
