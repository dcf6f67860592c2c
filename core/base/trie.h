/*
** trie.h: a set of tuples of value indices, kept as a prefix tree level by
** level. Tuples are ordered lexicographically (the first value varying
** slowest) and tuple i is the tree's i-th leaf, so that index -> tuple
** follows parent links up and tuple -> index follows children down: both
** take time proportional to the tuple's length. Shared prefixes are
** stored once; each node costs its value and one or two links, each 1, 2
** or 4 bytes: as narrow as the number of values or of nodes it counts.
*/
#ifndef KT_TRIE_H
#define KT_TRIE_H

#include "kt.h"

typedef struct kt_trie_level {
  void *vals;       /* the value index of each node */
  void *first;      /* node i's children in the next level are first[i] ..
                       first[i+1]-1; NULL at the last level */
  void *parent;     /* the node above, in the previous level; NULL at level 0 */
  unsigned width, first_width, parent_width; /* bytes per entry of each */
  uint32_t n;
} kt_trie_level;

typedef struct kt_trie {
  kt_trie_level *levels;
  size_t n;
} kt_trie;

/* Builds the tree from nrows distinct tuples of ncols value indices, each
** `width` bytes, in any order; value indices of column c are below
** nvalues[c]. Takes the rows (malloc'd) and frees them, also on failure. */
int kt_trie_build(kt_trie *t, void *rows, unsigned width, size_t ncols, uint64_t nrows,
                  const uint32_t *nvalues, kt_error *err);
void kt_trie_free(kt_trie *t);
uint64_t kt_trie_count(const kt_trie *t);
size_t kt_trie_bytes(const kt_trie *t);

/* Tuples are read from and written to scattered places: value c of the
** tuple is out[where[c]]. */
void kt_trie_get(const kt_trie *t, uint64_t leaf, uint32_t *out, const size_t *where);
/* 0 and the leaf when the tuple is in the set, 1 when it is not. */
int kt_trie_find(const kt_trie *t, const uint32_t *in, const size_t *where, uint64_t *leaf);

/* The bytes a value index below n takes: 1, 2 or 4. */
unsigned kt_index_width(uint64_t n);
uint32_t kt_cell_get(const void *cells, unsigned width, size_t at);
void kt_cell_put(void *cells, unsigned width, size_t at, uint32_t v);

#endif
