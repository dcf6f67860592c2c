/*
** space_int.h: what space.c (parameters, constraints, index mapping),
** space_plan.c (groups and their generation order) and space_walk.c (the
** pruned walk, on one thread or several) share.
*/
#ifndef KT_SPACE_INT_H
#define KT_SPACE_INT_H

#include "space.h"
#include "trie.h"

typedef struct constraint {
  size_t *params; /* parameter indices, in the constraint's own order */
  size_t n;
  kt_constraint_fn fn;
  kt_constraint_vi_fn vi_fn;
  void *ud;
  void (*ud_free)(void *);
  char *label; /* NULL: named by its parameters */
  unsigned tag;
  bool pure;
} constraint;

/* A sequence of parameters to bind, in generation order. Once split_at of
** them are bound, the rest falls apart into parts that no constraint
** links (each part's constraints read only bound parameters besides its
** own): the parts are walked one by one and their tuples combined, rather
** than walking each part once for every tuple of the others. */
typedef struct seqplan {
  size_t *params;
  size_t *depth;   /* each parameter's depth in the group's order */
  size_t n;
  size_t split_at; /* n: the sequence never splits */
  struct seqplan *parts;
  size_t nparts;
  size_t id;       /* numbers the plans of a group from 0 */
} seqplan;

typedef struct group {
  size_t *params;  /* parameter indices in declaration order */
  size_t n;
  size_t *order;   /* the same parameters in generation order */
  size_t **checks; /* per depth of the walk: constraints complete there */
  size_t *nchecks;
  seqplan plan;    /* the whole order, and how it splits */
  size_t nplans;
  bool pure;       /* every constraint may run on worker threads */
  kt_trie trie;    /* valid tuples; no levels: one free parameter */
  uint64_t count;  /* valid tuples; for a sampled group, all its combinations */
  bool sampled;    /* too large to walk: drawn from, never listed (space_lazy.c) */
} group;

struct kt_space {
  kt_param *params;
  size_t nparams, cap;
  constraint *cons;
  size_t ncons, capcons;
  unsigned threads;
  size_t max_bytes; /* 0: KT_SPACE_MAX_BYTES */
  bool generated;
  bool generating; /* its constraints are running: it must not change */
  bool sampled;    /* generated with sampled groups: indices cover invalid ones too */
  group *groups;
  size_t ngroups;
  uint64_t count;
  bool removed_known;
  uint64_t removed[KT_SPACE_TAGS];
  group *natural;   /* the groups of the user's constraints alone, where the */
  size_t nnatural;  /* device's make the space's own differ (space_natural.c) */
  uint64_t natural_count;
  bool natural_ready;
};

/* Groups over the constraints tagged up to max_tag, each with its
** generation order and the checks at each depth (nothing generated). */
int plan_groups(const kt_space *s, unsigned max_tag, group **out, size_t *n, kt_error *err);
void free_groups(group *g, size_t n);
/* A group with one parameter and no constraint needs no walk. */
bool group_is_free(const group *g);

/* Valid tuples of a group: rows of value indices in declaration order,
** `width` bytes each, in the walk's order. */
typedef struct tuples {
  void *rows;
  unsigned width;
  uint64_t n;
} tuples;

/* Walks the group; stores its tuples in out when out->rows is wanted
** (store), else only counts them into out->n. The tuples it stores may
** take at most budget bytes. */
int walk_group(const kt_space *s, const group *g, unsigned threads, bool store, size_t budget,
               tuples *out, kt_error *err);

/* Counts the group's tuples, binding at most max_steps values; returns 1
** when it would take more. */
int count_group_steps(const kt_space *s, const group *g, uint64_t max_steps, uint64_t *count,
                      kt_error *err);
/* Whether a constraint holds for vi (1, 0, or -1 naming it in err); args
** has room for its arguments. */
int check_constraint(const kt_space *s, const constraint *c, const uint32_t *vi,
                     const kt_value **args, kt_error *err);
/* Whether the group's tuple in vi (its parameters bound) meets its constraints. */
int group_accepts(const kt_space *s, const group *g, const uint32_t *vi, kt_error *err);

/* space.c, for space_lazy.c */
void space_invalidate(kt_space *s);
unsigned space_threads(const kt_space *s);
/* Walks and stores a group; left: the bytes the space's limit leaves. */
int group_fill(const kt_space *s, group *g, bool store, size_t *left, kt_error *err);

/* index <-> configuration over groups (space.c) */
int space_groups_config(const kt_space *s, const group *groups, size_t n, uint64_t count,
                        uint64_t index, uint32_t *vi, kt_error *err);
int space_groups_index(const kt_space *s, const group *groups, size_t n, const uint32_t *vi,
                       uint64_t *index);
/* Generates g as kt_space_generate would where a walk of it is short and
** its tuples fit; else samples it (space_lazy.c). */
int space_fill_or_sample(const kt_space *s, group *g, size_t *left, kt_error *err);
/* Forgets the natural numbering (space_natural.c). */
void space_natural_clear(kt_space *s);

/* space_lazy.c: a sampled group's combinations in declaration order, the
** last parameter varying fastest. */
void sampled_tuple(const kt_space *s, const group *g, uint64_t row, uint32_t *vi);
/* row of the tuple in vi; 1 when it is out of range or breaks a constraint. */
int sampled_row(const kt_space *s, const group *g, const uint32_t *vi, uint64_t *row);

#endif
