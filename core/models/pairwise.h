/*
** pairwise.h: which new value of a parameter is likely to make a
** configuration fast, judged from the explored ones. The fastest 15% of
** them are "fast", the rest (failures too) "slow"; moving parameter p of a
** configuration c to value v scores the sum over the other parameters q
** of log(fast / slow) of the explored configurations with p = v and c's
** value of q. Pairs, not single parameters, because kernel parameters
** interact: a value good on average (a method that wins with small tiles)
** can be the wrong move where the others are set otherwise. A density
** ratio of good to bad, as in the tree-structured Parzen estimator, but
** per pair of parameters and only to order moves.
**
** The counts live in one table per pair of parameters, updated as results
** come, so that scoring costs the same however much is explored. Spaces
** whose tables would exceed KT_PAIRWISE_MAX_CELLS have no model.
*/
#ifndef KT_PAIRWISE_H
#define KT_PAIRWISE_H

#include "space.h"

#define KT_PAIRWISE_MAX_CELLS (1u << 20)

typedef struct kt_pairwise_cell {
  uint32_t fast, slow;
  double known;  /* fast counts learnt elsewhere (kt_pairwise_prior) */
  double weight; /* log((fast + known + smooth) / (slow + smooth)) */
} kt_pairwise_cell;

typedef struct kt_pairwise_rank {
  double cost;
  size_t seq;  /* arrival */
  bool fast;   /* counted fast in the tables */
} kt_pairwise_rank;

typedef struct kt_pairwise {
  size_t nparams;
  size_t *offset;     /* per parameter: where its values start; offset[nparams] = all */
  uint32_t *nvalues;  /* per parameter */
  size_t *pairbase;   /* per (p, q), p < q: where the pair's cells start */
  kt_pairwise_cell *cells;
  uint32_t *vi;       /* the explored configurations' value indices, by arrival */
  kt_pairwise_rank *ranks; /* the explored, fastest first (failed last) */
  size_t n, capvi, capranks;
  double *score;      /* per value: the scores of the last kt_pairwise_score */
} kt_pairwise;

/* 1 (and no model) when the space's pairs of values are too many. */
int kt_pairwise_init(kt_pairwise *m, const kt_space *s, kt_error *err);
void kt_pairwise_clear(kt_pairwise *m);
/* Adds an explored configuration; cost is its time, infinite if it failed. */
int kt_pairwise_add(kt_pairwise *m, const uint32_t *vi, double cost, kt_error *err);
/* Counts a configuration that did well elsewhere (another device or
** size: search.h's kt_prior) as `weight` fast configurations of this
** space, in every pair of its values: a prior that this space's own
** results outweigh as they come. A value past its parameter's (search.h's
** KT_PRIOR_ANY: the prior does not say it) counts in no pair. */
void kt_pairwise_prior(kt_pairwise *m, const uint32_t *vi, double weight);
/* Scores the one-change moves from vi into m->score: parameter p to value
** v at m->score[m->offset[p] + v], higher for the more promising (only
** scores of the same parameter compare). All 0 before anything is added. */
void kt_pairwise_score(kt_pairwise *m, const uint32_t *vi);
/* How promising a whole configuration is: the sum of log(fast / slow) over
** its pairs of values (0 for pairs never explored; comparable between
** configurations of one space). */
double kt_pairwise_config_score(const kt_pairwise *m, const uint32_t *vi);

#endif
