/*
** codegen.c: per-configuration sources (codegen.h).
*/
#include "codegen.h"

#include <stdlib.h>
#include <string.h>

#include "build.h"

typedef struct memo {
  char *key;  /* the configuration's #defines: what the text depends on */
  char *text; /* the generated text, or why the generator failed */
  bool failed;
} memo;

struct kt_codegen {
  kt_source_fn fn;
  kt_callback cb;
  memo memo[KT_CODEGEN_MEMO];
  size_t next; /* the ring's oldest entry, replaced next */
};

kt_codegen *kt_codegen_new(kt_source_fn fn, kt_callback cb, kt_error *err) {
  kt_codegen *g = kt_calloc(1, sizeof *g, err);
  if (!g) {
    kt_callback_clear(&cb);
    return NULL;
  }
  g->fn = fn;
  g->cb = cb;
  return g;
}

static void memo_clear(memo *m) {
  free(m->key);
  free(m->text);
  *m = (memo){NULL, NULL, false};
}

void kt_codegen_free(kt_codegen *g) {
  if (!g) return;
  for (size_t i = 0; i < KT_CODEGEN_MEMO; i++) memo_clear(&g->memo[i]);
  kt_callback_clear(&g->cb);
  free(g);
}

void kt_codegen_forget(const kt_task *t) {
  for (size_t ki = 0; ki < t->nkernels; ki++) {
    kt_codegen *g = t->kernels[ki]->gen;
    for (size_t i = 0; g && i < KT_CODEGEN_MEMO; i++) memo_clear(&g->memo[i]);
  }
}

static const memo *memo_find(const kt_codegen *g, const char *key) {
  for (size_t i = 0; i < KT_CODEGEN_MEMO; i++)
    if (g->memo[i].key && strcmp(g->memo[i].key, key) == 0) return &g->memo[i];
  return NULL;
}

/* Runs the generator and remembers what it gave; takes key. */
static const memo *generate(kt_codegen *g, const kt_config *cfg, char *key, kt_error *err) {
  char *text = NULL;
  int rc = g->fn(cfg, &text, g->cb.ud, err);
  if (rc < 0 || !text) {
    free(key);
    free(text);
    return rc < 0 ? NULL : (kt_fail(err, "out of memory"), NULL);
  }
  memo *m = &g->memo[g->next];
  g->next = (g->next + 1) % KT_CODEGEN_MEMO;
  memo_clear(m);
  *m = (memo){key, text, rc == 1};
  return m;
}

static char *concat(const char *a, const char *b, kt_error *err) {
  size_t na = strlen(a), nb = strlen(b);
  char *s = kt_alloc(na + nb + 1, err);
  if (!s) return NULL;
  memcpy(s, a, na);
  memcpy(s + na, b, nb + 1);
  return s;
}

int kt_final_source(const kt_task *t, const kt_kernel *k, const kt_config *cfg, char **source,
                    char **why, kt_error *err) {
  *source = *why = NULL;
  if (!k->gen) return (*source = kt_build_source(t, k, cfg, err)) ? 0 : -1;
  char *key = kt_build_source_body(t, k, cfg, "", err);
  if (!key) return -1;
  const memo *m = memo_find(k->gen, key);
  if (m) {
    free(key);
  } else if (!(m = generate(k->gen, cfg, key, err))) {
    return -1;
  }
  if (m->failed) return (*why = kt_strdup(m->text, err)) ? 1 : -1;
  return (*source = concat(m->key, m->text, err)) ? 0 : -1;
}
