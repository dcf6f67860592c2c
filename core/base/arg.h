/*
** arg.h: kernel arguments: vectors (an array with an access mode and a
** placement), scalars, local-memory sizes, and CUDA symbols (the contents
** of an array or a scalar copied into a __constant__ variable). Reference counted because
** one argument may be shared by several kernels.
*/
#ifndef KT_ARG_H
#define KT_ARG_H

#include "array.h"
#include "access.h"

typedef struct kt_config kt_config;

/* A size that depends on the configuration: given the declared size in
** `in`, writes the size to use in *out. Returns 0, or -1 with err set. */
typedef int (*kt_size_fn)(const kt_config *cfg, int64_t in, int64_t *out, void *ud,
                          kt_error *err);

/* A user callback with the data it needs and how to free that data. */
typedef struct kt_callback {
  void *ud;
  void (*ud_free)(void *ud);
} kt_callback;

void kt_callback_clear(kt_callback *cb);

typedef enum kt_arg_kind { KT_ARG_VECTOR, KT_ARG_SCALAR, KT_ARG_LOCAL, KT_ARG_SYMBOL } kt_arg_kind;

typedef struct kt_arg {
  int refs;
  kt_arg_kind kind;
  /* vector; symbol holding an array's contents */
  kt_array *array;
  kt_access access;
  kt_placement placement;
  /* scalar, or symbol holding a scalar: type->size bytes */
  const kt_type *type;
  void *bytes;
  /* local memory: count elements of elem_size bytes, or count_fn */
  size_t elem_size;
  int64_t count;
  kt_size_fn count_fn;
  kt_callback count_cb;
  /* symbol: the variable's name */
  char *symbol;
} kt_arg;

kt_arg *kt_arg_vector(kt_array *array, kt_access access, kt_placement placement,
                      kt_error *err);
kt_arg *kt_arg_scalar(const kt_type *type, const void *bytes, kt_error *err);
/* count_fn may be NULL; the arg then owns nothing of cb. */
kt_arg *kt_arg_local(size_t elem_size, int64_t count, kt_size_fn count_fn,
                     kt_callback cb, kt_error *err);
/* A symbol holding value's contents: an array's (array not NULL) or a
** scalar argument's (value->kind KT_ARG_SCALAR). */
kt_arg *kt_arg_symbol(const char *name, kt_array *array, const kt_arg *value, kt_error *err);
/* The bytes a symbol argument copies. */
const void *kt_arg_symbol_bytes(const kt_arg *a, size_t *size);
void kt_arg_retain(kt_arg *a);
void kt_arg_release(kt_arg *a);
/* Bytes of a local-memory argument under a configuration. Returns -1
** when the size callback fails, 1 when the size is not positive. */
int kt_arg_local_bytes(const kt_arg *a, const kt_config *cfg, size_t *bytes,
                       kt_error *err);
const char *kt_arg_describe(const kt_arg *a, char *buf, size_t size);

#endif
