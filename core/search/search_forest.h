/*
** search_forest.h: the forest searcher's state, shared by search_forest.c
** and search_forest_prior.c (what a prior teaches it). Not an interface:
** the searcher is made through search.h's registry.
*/
#ifndef KT_SEARCH_FOREST_H
#define KT_SEARCH_FOREST_H

#include "forest.h"
#include "indexmap.h"
#include "neighbors.h"
#include "search.h"

typedef struct cand {
  uint64_t index;
  uint64_t owner; /* the best configuration it neighbours */
  double mu, sd, acq;
  bool random;    /* drawn at random, not a neighbour of the best */
  bool prior;     /* a configuration of the prior (kept until measured) */
} cand;

typedef struct ranked {
  uint64_t index;
  double y;
  uint64_t row; /* its place among the results */
} ranked;

typedef struct fsearch {
  kt_walker w;
  uint64_t seed;
  double sample_opt, explore, refit, kappa, clip;
  unsigned sample, ntrees, leaf, top, apart, pairs, pool, ahead;
  unsigned trust;       /* the prior counts as this many fast results */
  kt_forest model;
  uint32_t *x;          /* every result's value indices, by arrival */
  double *y;            /* and its log cost, INFINITY when it failed */
  uint64_t *rowindex;   /* and its index */
  size_t caprowindex;
  double *target;       /* what a fit learns of each */
  size_t n, capx, capy, captarget, nok;
  double ybest, ymax;
  uint64_t heard;       /* results heard: a proposal's number is heard + in flight */
  size_t fitted_at;     /* results at the last fit; 0 before the first */
  unsigned nfits;
  ranked *best;         /* the best `top` successes, best first */
  size_t nbest;
  cand *cands;
  size_t ncands, capcands;
  uint32_t *cvi;        /* each candidate's value indices */
  size_t capcvi;
  kt_indexmap in_cands; /* index -> its place in cands + 1; 0 once it left */
  uint64_t *flights;
  unsigned nflights;
  size_t *picks;        /* scratch of ahead: the best candidates of a call */
  double *scratch;      /* a rebuild's predictions */
  size_t capscratch;
  /* the prior (search_forest_prior.c): trust pseudo-results, or none */
  size_t nprior;        /* pseudo-results: 0 without a prior */
  uint32_t *pvi;        /* each one's value indices (what the prior leaves out drawn) */
  double *pscore;       /* per parameter and value: the prior's weight on it (guesses) */
  size_t *pscore_at;    /* per parameter: where its values start in pscore */
  uint64_t *pindex;     /* each one's index, UINT64_MAX where the space lacks it */
} fsearch;

enum { KT_FCAND_NEAR, KT_FCAND_RANDOM, KT_FCAND_PRIOR };

/* A seed for the draws of one step, from the searcher's seed alone. */
static inline uint64_t kt_forest_mix(uint64_t seed, uint64_t k, uint64_t salt) {
  uint64_t z = seed ^ (k * 0x9E3779B97F4A7C15ull) ^ (salt * 0xD1B54A32D192ED03ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static inline bool kt_forest_in_flight(const fsearch *f, uint64_t index) {
  for (unsigned i = 0; i < f->nflights; i++)
    if (f->flights[i] == index) return true;
  return false;
}

/* search_forest_prior.c, called by search_forest.c */
/* Takes the prior (trust pseudo-results allotted by weight); nothing with
** trust 0 or no positive weight. */
int kt_forest_prior(fsearch *f, const kt_prior *p, kt_error *err);
void kt_forest_prior_clear(fsearch *f);
/* After the f->n results in x and target: the pseudo-results not measured
** yet, learnt as fast as the best; *extra gets their number. */
int kt_forest_prior_rows(fsearch *f, size_t *extra, kt_error *err);
/* A guessed configuration of the sample: of GUESS random draws not taken,
** the one the prior weighs most; 1 when there is none now. */
int kt_forest_guess(fsearch *f, uint64_t *out);

#endif
