/*
** neighbors.h: moving through a space, for the searchers that walk it
** (built-in ones and, through the space view, Lua ones).
**
** A walker holds what such a searcher needs besides its own state: the
** space, a seeded generator, and the explored set with the cost of each
** explored configuration (its time, or infinity when it failed).
**
** Neighbours of a configuration are the valid configurations that differ
** from it in 1 to k parameters. In the Hamming neighbourhood a changed
** parameter takes any of its other values; in the adjacent one it moves to
** the value listed just before or after. A configuration that breaks a
** constraint has no index, so it is never a neighbour.
*/
#ifndef KT_NEIGHBORS_H
#define KT_NEIGHBORS_H

#include "indexmap.h"
#include "indices.h"
#include "rng.h"
#include "space.h"

typedef struct kt_result kt_result;

typedef enum kt_neighborhood { KT_HAMMING, KT_ADJACENT } kt_neighborhood;

typedef struct kt_walker {
  const kt_space *space;
  size_t nparams;
  uint64_t count;
  kt_rng rng;
  kt_indexmap costs; /* explored index -> cost (the bits of a double) */
  uint32_t *vi, *vj; /* scratch value indices */
} kt_walker;

int kt_walker_init(kt_walker *w, const kt_space *s, uint64_t seed, kt_error *err);
void kt_walker_clear(kt_walker *w);
/* Records how a configuration went. */
int kt_walker_record(kt_walker *w, uint64_t index, const kt_result *r, kt_error *err);
/* true (and *cost, when cost is not NULL) when index has been explored. */
bool kt_walker_explored(const kt_walker *w, uint64_t index, double *cost);
uint64_t kt_walker_nexplored(const kt_walker *w);

/* Appends the neighbours of index within k changes to out: first those
** with one change, then two, ...; each once. */
int kt_neighbors(kt_walker *w, uint64_t index, unsigned k, kt_neighborhood nb,
                 kt_indices *out, kt_error *err);
/* Appends the neighbours of index with one change in an order that a
** first-improvement descent wants: round robin over the parameters (in a
** random order), each parameter's new values in a random order, so that
** every parameter is tried early whatever its number of values. */
int kt_neighbors_mixed(kt_walker *w, uint64_t index, kt_neighborhood nb, kt_indices *out,
                       kt_error *err);
/* The same, but each parameter's new values in a random order that puts
** the higher scored first: the move of parameter p to value v scores
** score[offset[p] + v] (pairwise.h), and one scored higher by d comes
** first with odds e^d to 1. */
int kt_neighbors_ranked(kt_walker *w, uint64_t index, kt_neighborhood nb, const double *score,
                        const size_t *offset, kt_indices *out, kt_error *err);
/* The same neighbours ranked across the parameters, not round robin: a
** move's key is its gain over the current value's score divided by
** temperature, less its place in kt_neighbors_ranked's order over the
** number of parameters, plus Gumbel noise; highest first. */
int kt_neighbors_across(kt_walker *w, uint64_t index, kt_neighborhood nb, const double *score,
                        const size_t *offset, double temperature, kt_indices *out,
                        kt_error *err);
/* Moves to the front of items[0..n) (neighbours of index, in an order
** kept otherwise) those that step two parameters of the same list of three
** or more values (a tile's x and y, as a rule) each to its next value up:
** a square tile's step to the next square, which neither change alone
** reaches where oblong tiles are slow. With square, only those whose two
** parameters hold the same value in index (a square tile stays square). */
int kt_neighbors_twins_first(kt_walker *w, uint64_t index, uint64_t *items, size_t n,
                             bool square, kt_error *err);
/* A random neighbour with one change (an unexplored one if asked);
** returns 1 when there is none. */
int kt_neighbor_random(kt_walker *w, uint64_t index, kt_neighborhood nb, bool unexplored,
                       uint64_t *out, kt_error *err);
/* A uniformly random unexplored configuration; 1 when all are explored. */
int kt_random_unexplored(kt_walker *w, uint64_t *out);
/* The valid configuration nearest to pos, a point with one coordinate per
** parameter in value-index units: the rounded point if valid, else its
** nearest valid one-change neighbour, else a random configuration. */
uint64_t kt_nearest(kt_walker *w, const double *pos);

#endif
