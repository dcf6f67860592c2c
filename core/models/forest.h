/*
** forest.h: a random forest that predicts a number from a configuration's
** value indices, and how sure it is: the surrogate of the forest searcher
** (search_forest.c), as in SMAC, ytopt and BaCO.
**
** Each of `ntrees` regression trees learns from its own bootstrap resample
** of the points (Breiman's bagging), of at most `resample` of them (so that
** a fit costs at most a bounded amount however many points there are). A node splits on one parameter,
** "value index <= s" to the left, choosing among `mtry` parameters drawn at
** random the split that most reduces the squared error (found from each
** parameter's histogram of the node's points: one pass over them, whatever
** the number of thresholds); it becomes a leaf with fewer than 2 *
** `min_leaf` points, at depth KT_FOREST_DEPTH, or where no split leaves
** `min_leaf` points on each side. Value indices are ordered, so a numeric
** parameter listed in order splits by size; an unordered one (a method's
** name) needs more splits to isolate a value, which deep trees make.
**
** The prediction is the mean of the trees' leaves; the spread, their
** standard deviation (how much resamples of the data disagree: large away
** from what was measured). A fit replaces the trees; it is seeded, so a
** seed gives the same forest on every machine.
*/
#ifndef KT_FOREST_H
#define KT_FOREST_H

#include "rng.h"
#include "space.h"

#define KT_FOREST_DEPTH 24

/* 16 bytes, so that a prediction's walk touches few cache lines. */
typedef struct kt_forest_node {
  uint32_t param;  /* the parameter split on */
  uint32_t split;  /* value indices <= split go left */
  uint32_t left;   /* the left child (the right one follows it); 0 in a leaf */
  float value;     /* a leaf's mean */
} kt_forest_node;

typedef struct kt_forest {
  size_t nparams;
  uint32_t *nvalues;      /* per parameter */
  uint32_t *splittable;   /* the parameters of two or more values */
  size_t nsplittable;
  unsigned ntrees, min_leaf, mtry;
  size_t resample;        /* the most points a tree learns from; 0: n */
  kt_forest_node *nodes;  /* every tree's, each tree's root first */
  size_t nnodes, capnodes;
  uint32_t *roots;        /* per tree; ntrees of them once fitted */
  bool fitted;
  /* scratch of a fit */
  uint32_t *rows;         /* the resample, partitioned node by node */
  size_t caprows;
  double *hsum;           /* per value of one parameter: summed targets */
  uint32_t *hcount;       /* and counts */
  struct kt_forest_task *stack;
  size_t capstack;
} kt_forest;

/* mtry_share: the share of the splittable parameters drawn at each node
** (at least one). */
int kt_forest_init(kt_forest *f, const kt_space *s, unsigned ntrees, unsigned min_leaf,
                   double mtry_share, kt_error *err);
void kt_forest_clear(kt_forest *f);
/* Learns y from x (n rows of nparams value indices), replacing the trees;
** n >= 1. */
int kt_forest_fit(kt_forest *f, const uint32_t *x, const double *y, size_t n, uint64_t seed,
                  kt_error *err);
/* The mean prediction for vi, and in *sd the trees' standard deviation. */
double kt_forest_predict(const kt_forest *f, const uint32_t *vi, double *sd);
/* The same for n points (vi: n rows of nparams), tree by tree (each tree's
** nodes stay in cache): means into mean, deviations into sd. */
void kt_forest_predict_many(const kt_forest *f, const uint32_t *vi, size_t n, double *mean,
                            double *sd);

#endif
