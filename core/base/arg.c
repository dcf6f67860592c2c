/*
** arg.c: kernel arguments.
*/
#include "arg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kt_callback_clear(kt_callback *cb) {
  if (cb->ud_free) cb->ud_free(cb->ud);
  cb->ud = NULL;
  cb->ud_free = NULL;
}

const char *kt_placement_name(kt_placement p) {
  static const char *const names[KT_PLACE_COUNT] = {"device", "host", "zero_copy", "managed"};
  return (unsigned)p < KT_PLACE_COUNT ? names[p] : "unknown";
}

const char *kt_access_name(kt_access a) {
  return a == KT_READ ? "read" : a == KT_WRITE ? "write" : "read_write";
}

static kt_arg *arg_new(kt_arg_kind kind, kt_error *err) {
  kt_arg *a = kt_calloc(1, sizeof *a, err);
  if (a) {
    a->refs = 1;
    a->kind = kind;
  }
  return a;
}

kt_arg *kt_arg_vector(kt_array *array, kt_access access, kt_placement placement,
                      kt_error *err) {
  kt_arg *a = arg_new(KT_ARG_VECTOR, err);
  if (!a) return NULL;
  a->array = array;
  a->access = access;
  a->placement = placement;
  kt_array_retain(array);
  return a;
}

kt_arg *kt_arg_scalar(const kt_type *type, const void *bytes, kt_error *err) {
  kt_arg *a = arg_new(KT_ARG_SCALAR, err);
  if (!a) return NULL;
  if (!(a->bytes = kt_alloc(type->size, err))) {
    free(a);
    return NULL;
  }
  memcpy(a->bytes, bytes, type->size);
  a->type = type;
  kt_type_retain(type);
  return a;
}

kt_arg *kt_arg_local(size_t elem_size, int64_t count, kt_size_fn count_fn,
                     kt_callback cb, kt_error *err) {
  if (!count_fn && count <= 0) {
    kt_callback_clear(&cb);
    return kt_fail(err, "local memory needs a positive size, got %lld", (long long)count), NULL;
  }
  kt_arg *a = arg_new(KT_ARG_LOCAL, err);
  if (!a) {
    kt_callback_clear(&cb);
    return NULL;
  }
  a->elem_size = elem_size;
  a->count = count;
  a->count_fn = count_fn;
  a->count_cb = cb;
  return a;
}

kt_arg *kt_arg_symbol(const char *name, kt_array *array, const kt_arg *value, kt_error *err) {
  if (!array && (!value || value->kind != KT_ARG_SCALAR))
    return kt_fail(err, "a symbol holds an array or a scalar"), NULL;
  kt_arg *a = array ? kt_arg_vector(array, KT_READ, KT_PLACE_DEVICE, err)
                    : kt_arg_scalar(value->type, value->bytes, err);
  if (!a) return NULL;
  a->kind = KT_ARG_SYMBOL;
  if (!(a->symbol = kt_strdup(name, err))) {
    kt_arg_release(a);
    return NULL;
  }
  return a;
}

const void *kt_arg_symbol_bytes(const kt_arg *a, size_t *size) {
  *size = a->array ? kt_array_bytes(a->array) : a->type->size;
  return a->array ? a->array->data : a->bytes;
}

void kt_arg_retain(kt_arg *a) {
  if (a) a->refs++;
}

void kt_arg_release(kt_arg *a) {
  if (!a || --a->refs > 0) return;
  kt_array_release(a->array);
  kt_type_release(a->type);
  free(a->bytes);
  kt_callback_clear(&a->count_cb);
  free(a->symbol);
  free(a);
}

int kt_arg_local_bytes(const kt_arg *a, const kt_config *cfg, size_t *bytes,
                       kt_error *err) {
  int64_t count = a->count;
  if (a->count_fn && a->count_fn(cfg, a->count, &count, a->count_cb.ud, err))
    return kt_fail_prefix(err, "local memory size: ");
  if (count <= 0)
    return kt_fail(err, "local memory size must be positive, got %lld", (long long)count), 1;
  *bytes = (size_t)count * a->elem_size;
  return 0;
}

const char *kt_arg_describe(const kt_arg *a, char *buf, size_t size) {
  switch (a->kind) {
    case KT_ARG_VECTOR:
      snprintf(buf, size, "%s[%zu] (%s)", a->array->type->name, a->array->length,
               kt_access_name(a->access));
      break;
    case KT_ARG_SCALAR:
      snprintf(buf, size, "%s scalar", a->type->name);
      break;
    case KT_ARG_LOCAL:
      snprintf(buf, size, "local memory");
      break;
    case KT_ARG_SYMBOL:
      snprintf(buf, size, "symbol %s", a->symbol);
      break;
  }
  return buf;
}
