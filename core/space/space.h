/*
** space.h: tuning parameters, constraints, and the space of valid
** configurations.
**
** Parameters linked by constraints form groups (connected components of
** the constraint graph). Each group is generated on its own by a
** depth-first walk that checks a constraint as soon as its last parameter
** is bound, so the Cartesian product is never materialised; parameters
** are ordered so that constraints are complete as near the root as
** possible, and where the parameters left unbound fall apart into parts
** that no constraint links, each part is walked once and the parts
** combined. A group keeps only its valid tuples, as a prefix tree
** (trie.h); the space is the product of its groups, never listed. Index
** <-> configuration takes time proportional to the number of parameters.
**
** Large groups whose constraints are all pure (expressions, device
** limits) are walked on several threads, each taking subtrees in turn;
** the result is the same for any number of threads. Groups with a Lua
** constraint are walked on the calling thread only.
**
** Configuration index order: groups ordered by their first parameter,
** the first group varying slowest; within a group, tuples in lexicographic
** order of the parameters' declaration. Indices are 0-based. A space with
** no parameters has one (empty) configuration.
*/
#ifndef KT_SPACE_H
#define KT_SPACE_H

#include "expr.h"

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

/* A constraint that reads value indices: vi has one for every parameter,
** and those of the constraint's parameters are bound. For constraints on
** the configuration as a whole, such as thread sizes through modifiers. */
typedef int (*kt_constraint_vi_fn)(const kt_space *s, const uint32_t *vi, void *ud,
                                   kt_error *err);

/* Every constraint has a tag: 0 for the user's own; device pruning adds
** its constraints under tags 1 .. KT_SPACE_TAGS-1 (prune.h), so that they
** are replaced as a set and what each tag removed can be counted. */
#define KT_SPACE_TAGS 8

typedef struct kt_constraint_def {
  const char *const *params;
  size_t n;
  kt_constraint_fn fn;       /* reads the values of params, in order; or */
  kt_constraint_vi_fn vi_fn; /* reads the configuration's value indices */
  void *ud;                  /* the space owns it, also on failure */
  void (*ud_free)(void *);
  const char *label;         /* names it in errors; NULL: "constraint on A, B" */
  unsigned tag;
  bool pure;                 /* may run on several threads at once (no Lua) */
} kt_constraint_def;

int kt_space_add_constraint_def(kt_space *s, const kt_constraint_def *d, kt_error *err);
/* A constraint written as an expression (expr.h), such as
** "MWG % (MDIMC*VWM) == 0", or any value, true by Python's truth: its
** parameters are the names it reads, less those that consts gives values
** to. Parse errors name the character. */
int kt_space_add_expr(kt_space *s, const char *text, const kt_named_value *consts,
                      size_t nconsts, unsigned tag, kt_error *err);
/* Every name of e is a parameter, and those it uses as numbers have no
** string values. */
int kt_space_check_names(const kt_space *s, const kt_expr *e, kt_error *err);
/* Removes every constraint tagged first or above; returns how many. */
size_t kt_space_remove_tagged(kt_space *s, unsigned first);
/* How many configurations the constraints of tag (> 0) removed from those
** that the constraints of lower tags allow; generates and counts as
** needed, so the counts of all tags add up to what they removed together. */
int kt_space_removed(kt_space *s, unsigned tag, uint64_t *removed, kt_error *err);

/* Threads that generation may use; 0 (the default): one per online
** processor. */
void kt_space_set_threads(kt_space *s, unsigned n);
/* Bytes that the valid configurations take, after generation. */
size_t kt_space_bytes(const kt_space *s);
/* The most bytes generation may take for the valid configurations of the
** space (the tuples its walks store; sorting them into trees takes up to
** as much again for a while); past it, generation fails saying so. 0:
** KT_SPACE_MAX_BYTES. */
#define KT_SPACE_MAX_BYTES ((size_t)1 << 30)
void kt_space_set_max_bytes(kt_space *s, size_t bytes);
size_t kt_space_max_bytes(const kt_space *s);

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
/* Whether its constraints are running now (generating or counting): a
** constraint written in Lua could otherwise change or generate the space
** it is part of. Changes and generation then fail. */
bool kt_space_generating(const kt_space *s);

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

/* ---- the natural numbering (space_natural.c) ---- */

/* The space as its user defined it: the configurations that the user's
** own constraints (tag 0) allow, numbered as the space would be without
** the device's constraints. Results, seeds and k:space() count here, so
** that an index names one configuration whichever device (if any) pruned
** the space; a tuning's searcher walks the space's own numbering, which
** leaves out what the device cannot run. Where the space has no device
** constraint the two are one. A sampled space's natural numbering samples
** the same way (its indices run over combinations). */
int kt_space_natural_generate(kt_space *s, kt_error *err);
/* After kt_space_natural_generate; 0 before. */
uint64_t kt_space_natural_count(const kt_space *s);
int kt_space_natural_config(const kt_space *s, uint64_t index, uint32_t *vi, kt_error *err);
/* 1 when the configuration is not in the natural space (or it is not
** generated), 0 when found. */
int kt_space_natural_index(const kt_space *s, const uint32_t *vi, uint64_t *index);
/* Whether the device's constraints make the two numberings differ. */
bool kt_space_natural_differs(const kt_space *s);

/* ---- spaces too large to list (space_lazy.c) ---- */

/* A group of parameters whose pruned walk would bind more values than
** this is too large to list for a sampled space. */
#define KT_SPACE_WALK_STEPS ((uint64_t)1 << 24)
/* Generates as kt_space_generate does, except that a group too large to
** list (above, or its tuples past the byte limit) is sampled: its indices
** run over all its combinations, valid or not, so that a searcher draws
** them and keeps the valid ones (kt_space_valid). kt_space_count is then
** how many indices there are, not how many are valid. A space without
** such a group is generated as by kt_space_generate, index for index.
** kt_space_generate on a sampled space generates it in full. */
int kt_space_generate_sampled(kt_space *s, kt_error *err);
/* Whether the space was generated with a sampled group. */
bool kt_space_sampled(const kt_space *s);
/* vi <- the configuration at index, and whether it meets the constraints
** (1) or not (0); -1 on error. Always 1 for a space that is not sampled. */
int kt_space_valid(const kt_space *s, uint64_t index, uint32_t *vi, kt_error *err);
/* The parameters of the sampled groups, "A, B, C", for messages. */
void kt_space_sampled_names(const kt_space *s, char *buf, size_t size);
/* The number of valid configurations without listing them: exact (and
** *exact true) where each group can be walked in KT_SPACE_WALK_STEPS,
** else the fraction of `draws` random combinations of a group (seeded)
** that meet its constraints times its combinations. */
int kt_space_estimate(kt_space *s, uint64_t draws, uint64_t seed, double *count, bool *exact,
                      kt_error *err);

/* A copy of the parameter list (names and values), owned by the caller. */
kt_param *kt_params_clone(const kt_space *s, kt_error *err);
void kt_params_free(kt_param *p, size_t n);

#endif
