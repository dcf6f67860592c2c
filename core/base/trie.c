/*
** trie.c: sorting tuples of value indices and keeping them as a prefix
** tree.
*/
#include "trie.h"

#include <stdlib.h>
#include <string.h>

unsigned kt_index_width(uint64_t n) { return n <= 256 ? 1 : n <= 65536 ? 2 : 4; }

uint32_t kt_cell_get(const void *cells, unsigned width, size_t at) {
  switch (width) {
    case 1: return ((const uint8_t *)cells)[at];
    case 2: return ((const uint16_t *)cells)[at];
    default: return ((const uint32_t *)cells)[at];
  }
}

void kt_cell_put(void *cells, unsigned width, size_t at, uint32_t v) {
  switch (width) {
    case 1: ((uint8_t *)cells)[at] = (uint8_t)v; break;
    case 2: ((uint16_t *)cells)[at] = (uint16_t)v; break;
    default: ((uint32_t *)cells)[at] = v; break;
  }
}

/* ---- sorting ---- */

typedef struct rows {
  char *data;
  unsigned width;
  size_t ncols;
  uint64_t n;
} rows;

static uint32_t row_cell(const rows *r, uint64_t row, size_t c) {
  return kt_cell_get(r->data, r->width, (size_t)row * r->ncols + c);
}

/* The first column where row a differs from row b, or ncols. */
static size_t first_difference(const rows *r, uint64_t a, uint64_t b) {
  size_t c = 0;
  while (c < r->ncols && row_cell(r, a, c) == row_cell(r, b, c)) c++;
  return c;
}

static bool sorted(const rows *r) {
  for (uint64_t i = 1; i < r->n; i++) {
    size_t c = first_difference(r, i - 1, i);
    if (c < r->ncols && row_cell(r, i - 1, c) > row_cell(r, i, c)) return false;
  }
  return true;
}

/* Least-significant-column radix sort: one stable counting pass per
** column, so time is linear in the number of rows. */
static int radix_sort(rows *r, const uint32_t *nvalues, kt_error *err) {
  if (sorted(r)) return 0;
  size_t rowbytes = r->ncols * r->width;
  uint32_t most = 0;
  for (size_t c = 0; c < r->ncols; c++)
    if (nvalues[c] > most) most = nvalues[c];
  char *tmp = kt_alloc((size_t)r->n * rowbytes, err);
  uint64_t *at = kt_alloc(((size_t)most + 1) * sizeof *at, err);
  if (!tmp || !at) {
    free(tmp);
    free(at);
    return -1;
  }
  for (size_t c = r->ncols; c-- > 0;) {
    memset(at, 0, ((size_t)nvalues[c] + 1) * sizeof *at);
    for (uint64_t i = 0; i < r->n; i++) at[row_cell(r, i, c) + 1]++;
    for (uint32_t v = 1; v <= nvalues[c]; v++) at[v] += at[v - 1];
    for (uint64_t i = 0; i < r->n; i++)
      memcpy(tmp + (size_t)at[row_cell(r, i, c)]++ * rowbytes, r->data + (size_t)i * rowbytes,
             rowbytes);
    char *t = r->data;
    r->data = tmp;
    tmp = t;
  }
  free(tmp);
  free(at);
  return 0;
}

/* ---- building ---- */

typedef struct builder {
  kt_trie *t;
  size_t *cap; /* nodes allocated per level */
  kt_error *err;
} builder;

static int level_grow(builder *b, size_t c) {
  kt_trie_level *l = &b->t->levels[c];
  if (l->n < b->cap[c]) return 0;
  if (l->n == UINT32_MAX)
    return kt_fail(b->err, "more than %u distinct prefixes of valid values in one group of "
                           "parameters", UINT32_MAX);
  size_t cap = b->cap[c] ? b->cap[c] * 2 : 256;
  if (cap > UINT32_MAX) cap = UINT32_MAX;
  bool last = c + 1 == b->t->n;
  void *vals = realloc(l->vals, cap * l->width);
  if (vals) l->vals = vals;
  void *first = last ? NULL : realloc(l->first, (cap + 1) * sizeof(uint32_t));
  if (first) l->first = first;
  void *parent = c == 0 ? NULL : realloc(l->parent, cap * sizeof(uint32_t));
  if (parent) l->parent = parent;
  if (!vals || (!last && !first) || (c > 0 && !parent))
    return kt_fail(b->err, "out of memory storing the valid configurations");
  b->cap[c] = cap;
  return 0;
}

static int push_node(builder *b, size_t c, uint32_t v) {
  if (level_grow(b, c)) return -1;
  kt_trie_level *l = &b->t->levels[c];
  kt_cell_put(l->vals, l->width, l->n, v);
  if (c > 0) kt_cell_put(l->parent, 4, l->n, b->t->levels[c - 1].n - 1);
  if (l->first) kt_cell_put(l->first, 4, l->n, b->t->levels[c + 1].n);
  l->n++;
  return 0;
}

static int build_levels(kt_trie *t, const rows *r, kt_error *err) {
  size_t *cap = kt_calloc(r->ncols, sizeof *cap, err);
  if (!cap) return -1;
  builder b = {t, cap, err};
  int rc = 0;
  for (uint64_t i = 0; i < r->n && rc == 0; i++) {
    size_t from = i == 0 ? 0 : first_difference(r, i - 1, i);
    for (size_t c = from; c < r->ncols && rc == 0; c++) rc = push_node(&b, c, row_cell(r, i, c));
  }
  for (size_t c = 0; c + 1 < r->ncols && rc == 0; c++)
    if (t->levels[c].first) kt_cell_put(t->levels[c].first, 4, t->levels[c].n, t->levels[c + 1].n);
  free(cap);
  return rc;
}

/* Rewrites n 4-byte entries with `width` bytes each, in place, and gives
** back the room saved. */
static void *narrow(void *cells, size_t n, unsigned width) {
  if (!cells) return NULL;
  for (size_t i = 0; i < n; i++) kt_cell_put(cells, width, i, kt_cell_get(cells, 4, i));
  void *smaller = realloc(cells, n * width + 1);
  return smaller ? smaller : cells;
}

/* Built with 4-byte links, the levels keep them as narrow as they can. */
static void narrow_links(kt_trie *t) {
  for (size_t c = 0; c < t->n; c++) {
    kt_trie_level *l = &t->levels[c];
    l->first_width = c + 1 < t->n ? kt_index_width((uint64_t)t->levels[c + 1].n + 1) : 0;
    l->parent_width = c > 0 ? kt_index_width(t->levels[c - 1].n) : 0;
    l->first = narrow(l->first, (size_t)l->n + 1, l->first_width);
    l->parent = narrow(l->parent, l->n, l->parent_width);
  }
}

int kt_trie_build(kt_trie *t, void *data, unsigned width, size_t ncols, uint64_t nrows,
                  const uint32_t *nvalues, kt_error *err) {
  memset(t, 0, sizeof *t);
  rows r = {data, width, ncols, nrows};
  int rc = radix_sort(&r, nvalues, err);
  if (rc == 0 && !(t->levels = kt_calloc(ncols, sizeof *t->levels, err))) rc = -1;
  if (rc == 0) {
    t->n = ncols;
    for (size_t c = 0; c < ncols; c++) t->levels[c].width = kt_index_width(nvalues[c]);
    rc = build_levels(t, &r, err);
    if (rc == 0) narrow_links(t);
  }
  free(r.data);
  if (rc) kt_trie_free(t);
  return rc;
}

void kt_trie_free(kt_trie *t) {
  for (size_t c = 0; c < t->n; c++) {
    free(t->levels[c].vals);
    free(t->levels[c].first);
    free(t->levels[c].parent);
  }
  free(t->levels);
  memset(t, 0, sizeof *t);
}

uint64_t kt_trie_count(const kt_trie *t) { return t->n ? t->levels[t->n - 1].n : 0; }

size_t kt_trie_bytes(const kt_trie *t) {
  size_t bytes = 0;
  for (size_t c = 0; c < t->n; c++) {
    const kt_trie_level *l = &t->levels[c];
    bytes += (size_t)l->n * (l->width + l->parent_width) + ((size_t)l->n + 1) * l->first_width;
  }
  return bytes;
}

/* ---- lookups ---- */

void kt_trie_get(const kt_trie *t, uint64_t leaf, uint32_t *out, const size_t *where) {
  uint32_t node = (uint32_t)leaf;
  for (size_t c = t->n; c-- > 0;) {
    const kt_trie_level *l = &t->levels[c];
    out[where[c]] = kt_cell_get(l->vals, l->width, node);
    if (c > 0) node = kt_cell_get(l->parent, l->parent_width, node);
  }
}

/* Binary search for value v among nodes lo .. hi-1 of a level. */
static int find_child(const kt_trie_level *l, uint32_t lo, uint32_t hi, uint32_t v,
                      uint32_t *node) {
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2, x = kt_cell_get(l->vals, l->width, mid);
    if (x == v) {
      *node = mid;
      return 0;
    }
    if (x < v) lo = mid + 1;
    else hi = mid;
  }
  return 1;
}

int kt_trie_find(const kt_trie *t, const uint32_t *in, const size_t *where, uint64_t *leaf) {
  uint32_t lo = 0, hi = t->n ? t->levels[0].n : 0, node = 0;
  for (size_t c = 0; c < t->n; c++) {
    const kt_trie_level *l = &t->levels[c];
    if (find_child(l, lo, hi, in[where[c]], &node)) return 1;
    if (l->first) {
      lo = kt_cell_get(l->first, l->first_width, node);
      hi = kt_cell_get(l->first, l->first_width, node + 1);
    }
  }
  *leaf = node;
  return t->n ? 0 : 1;
}
