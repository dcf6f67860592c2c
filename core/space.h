/*
** space.h: tuning parameters, constraints, and the space of valid
** configurations.
**
** Parameters linked by constraints form groups (connected components of
** the constraint graph). Each group is generated on its own by a
** depth-first walk that checks a constraint as soon as its last parameter
** is bound, so the Cartesian product is never materialised; a group keeps
** only its valid tuples. The space is the product of its groups.
**
** Configuration index order: groups ordered by their first parameter,
** the first group varying slowest; within a group, tuples in lexicographic
** order of the parameters' declaration. Indices are 0-based. A space with
** no parameters has one (empty) configuration.
*/
#ifndef KT_SPACE_H
#define KT_SPACE_H

#include "kt.h"

typedef struct kt_space kt_space;

/* Returns 1 when the values satisfy the constraint, 0 when they do not,
** -1 on error (message in err). vals follow the constraint's parameter
** order. */
typedef int (*kt_constraint_fn)(const kt_value *const *vals, size_t n, void *ud,
                                kt_error *err);

typedef struct kt_param {
  char *name;
  kt_value *values;
  size_t nvalues;
} kt_param;

kt_space *kt_space_new(kt_error *err);
void kt_space_free(kt_space *s);

/* Copies the values (strings too). Names must be C identifiers, unique. */
int kt_space_add_param(kt_space *s, const char *name, const kt_value *values,
                       size_t n, kt_error *err);
/* The space owns ud from here on and frees it with ud_free (even on
** failure). */
int kt_space_add_constraint(kt_space *s, const char *const *params, size_t n,
                            kt_constraint_fn fn, void *ud, void (*ud_free)(void *),
                            kt_error *err);

size_t kt_space_nparams(const kt_space *s);
const kt_param *kt_space_param(const kt_space *s, size_t i);
int kt_space_find(const kt_space *s, const char *name); /* -1 if absent */
size_t kt_space_nconstraints(const kt_space *s);

/* Product of the parameters' value counts (before constraints). */
double kt_space_count_all(const kt_space *s);
/* Generates if needed; the number of valid configurations. */
int kt_space_generate(kt_space *s, kt_error *err);
uint64_t kt_space_count(const kt_space *s); /* after kt_space_generate */
bool kt_space_generated(const kt_space *s);

/* Makes the valid set exactly the n configurations in vi (n tuples of
** nparams value indices; repeats count once) instead of generating it: a
** recorded space. Only for a space without constraints; adding a
** parameter or a constraint afterwards drops the set. */
int kt_space_set_configs(kt_space *s, const uint32_t *vi, uint64_t n, kt_error *err);

/* index -> value index of every parameter (vi has nparams entries). */
int kt_space_config(const kt_space *s, uint64_t index, uint32_t *vi, kt_error *err);
/* value indices -> index; returns 1 when the configuration is not in the
** space (it breaks a constraint), 0 when found. */
int kt_space_index(const kt_space *s, const uint32_t *vi, uint64_t *index);

/* A copy of the parameter list (names and values), owned by the caller. */
kt_param *kt_params_clone(const kt_space *s, kt_error *err);
void kt_params_free(kt_param *p, size_t n);

#endif
