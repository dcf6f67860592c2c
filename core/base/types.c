/*
** types.c: element types, struct layout and element conversions.
*/
#include "types.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Far beyond any kernel's use, and small enough that sizes never overflow. */
#define KT_STRUCT_MAX (1 << 30)

#define SCALAR(k, n, s) {-1, k, (char *)n, s, s, 0, NULL}

static const kt_type scalar_types[KT_STRUCT] = {
    SCALAR(KT_CHAR, "char", 1),     SCALAR(KT_UCHAR, "uchar", 1),
    SCALAR(KT_SHORT, "short", 2),   SCALAR(KT_USHORT, "ushort", 2),
    SCALAR(KT_INT, "int", 4),       SCALAR(KT_UINT, "uint", 4),
    SCALAR(KT_LONG, "long", 8),     SCALAR(KT_ULONG, "ulong", 8),
    SCALAR(KT_HALF, "half", 2),     SCALAR(KT_FLOAT, "float", 4),
    SCALAR(KT_DOUBLE, "double", 8),
};

const kt_type *kt_type_scalar(kt_kind kind) {
  return (unsigned)kind < KT_STRUCT ? &scalar_types[kind] : NULL;
}

const kt_type *kt_type_by_name(const char *name) {
  for (int k = 0; k < KT_STRUCT; k++)
    if (strcmp(scalar_types[k].name, name) == 0) return &scalar_types[k];
  return NULL;
}

const char *kt_kind_name(kt_kind kind) {
  return kind == KT_STRUCT ? "struct" : scalar_types[kind].name;
}

bool kt_kind_is_float(kt_kind kind) {
  return kind == KT_HALF || kind == KT_FLOAT || kind == KT_DOUBLE;
}

bool kt_kind_is_signed(kt_kind kind) {
  return kind == KT_CHAR || kind == KT_SHORT || kind == KT_INT ||
         kind == KT_LONG || kt_kind_is_float(kind);
}

static void free_struct(kt_type *t) {
  for (size_t i = 0; i < t->nfields; i++) free(t->fields[i].name);
  free(t->fields);
  free(t->name);
  free(t);
}

kt_type *kt_type_struct(const char *name, const kt_field_spec *fields,
                        size_t n, kt_error *err) {
  if (n == 0) return kt_fail(err, "struct %s has no fields", name), NULL;
  if (!kt_is_identifier(name))
    return kt_fail(err, "struct name '%s' is not a C identifier", name), NULL;
  kt_type *t = kt_calloc(1, sizeof *t, err);
  if (!t) return NULL;
  t->refs = 1;
  t->kind = KT_STRUCT;
  t->align = 1;
  t->fields = kt_calloc(n, sizeof *t->fields, err);
  t->name = kt_strdup(name, err);
  if (!t->fields || !t->name) return free_struct(t), NULL;
  size_t offset = 0;
  for (size_t i = 0; i < n; i++) {
    const kt_type *ft = kt_type_scalar(fields[i].kind);
    if (!kt_is_identifier(fields[i].name)) {
      kt_fail(err, "struct %s: field name '%s' is not a C identifier", name, fields[i].name);
      return free_struct(t), NULL;
    }
    if (!ft || fields[i].count == 0) {
      kt_fail(err, "struct %s: field '%s' must be a scalar type with a count of at least 1",
              name, fields[i].name);
      return free_struct(t), NULL;
    }
    for (size_t j = 0; j < i; j++)
      if (strcmp(t->fields[j].name, fields[i].name) == 0) {
        kt_fail(err, "struct %s: field '%s' appears twice", name, fields[i].name);
        return free_struct(t), NULL;
      }
    offset = (offset + ft->align - 1) / ft->align * ft->align;
    if (fields[i].count > (KT_STRUCT_MAX - offset) / ft->size) {
      kt_fail(err, "struct %s: field '%s' makes the struct larger than %d bytes", name,
              fields[i].name, KT_STRUCT_MAX);
      return free_struct(t), NULL;
    }
    t->fields[i] = (kt_field){kt_strdup(fields[i].name, err), fields[i].kind,
                              fields[i].count, offset};
    t->nfields = i + 1;
    if (!t->fields[i].name) return free_struct(t), NULL;
    offset += ft->size * fields[i].count;
    if (ft->align > t->align) t->align = ft->align;
  }
  t->size = (offset + t->align - 1) / t->align * t->align;
  return t;
}

void kt_type_retain(const kt_type *t) {
  if (t && t->refs > 0) ((kt_type *)t)->refs++;
}

void kt_type_release(const kt_type *t) {
  if (t && t->refs > 0 && --((kt_type *)t)->refs == 0) free_struct((kt_type *)t);
}

int kt_type_field(const kt_type *t, const char *name) {
  for (size_t i = 0; i < t->nfields; i++)
    if (strcmp(t->fields[i].name, name) == 0) return (int)i;
  return -1;
}

/* IEEE 754 binary16 conversion, rounding to nearest even. */
uint16_t kt_half_from_float(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (exp == 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  int e = (int)exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    int shift = 14 - e;
    uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) half++;
    return sign | (uint16_t)half;
  }
  uint32_t half = ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;
  return sign | (uint16_t)half;
}

float kt_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff, x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      float f = ldexpf((float)mant, -24);
      return sign ? -f : f;
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000 | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

#define GET(T) do { T v; memcpy(&v, p, sizeof v); n.i = (int64_t)v; } while (0)

kt_number kt_elem_get(kt_kind kind, const void *p) {
  kt_number n = {true, 0, 0};
  switch (kind) {
    case KT_CHAR: GET(int8_t); break;
    case KT_UCHAR: GET(uint8_t); break;
    case KT_SHORT: GET(int16_t); break;
    case KT_USHORT: GET(uint16_t); break;
    case KT_INT: GET(int32_t); break;
    case KT_UINT: GET(uint32_t); break;
    case KT_LONG: GET(int64_t); break;
    case KT_ULONG: GET(uint64_t); break;
    case KT_HALF: {
      uint16_t h;
      memcpy(&h, p, 2);
      n.is_int = false;
      n.f = kt_half_to_float(h);
      break;
    }
    case KT_FLOAT: {
      float f;
      memcpy(&f, p, 4);
      n.is_int = false;
      n.f = f;
      break;
    }
    case KT_DOUBLE:
      memcpy(&n.f, p, 8);
      n.is_int = false;
      break;
    default: break;
  }
  if (n.is_int) n.f = (double)n.i;
  return n;
}

double kt_elem_as_double(kt_kind kind, const void *p) {
  if (kind == KT_ULONG) {
    uint64_t v;
    memcpy(&v, p, 8);
    return (double)v;
  }
  return kt_elem_get(kind, p).f;
}

#define PUT(T, v) do { T t = (T)(v); memcpy(p, &t, sizeof t); } while (0)

void kt_elem_set_int(kt_kind kind, void *p, int64_t v) {
  switch (kind) {
    case KT_CHAR: PUT(int8_t, v); break;
    case KT_UCHAR: PUT(uint8_t, v); break;
    case KT_SHORT: PUT(int16_t, v); break;
    case KT_USHORT: PUT(uint16_t, v); break;
    case KT_INT: PUT(int32_t, v); break;
    case KT_UINT: PUT(uint32_t, v); break;
    case KT_LONG: PUT(int64_t, v); break;
    case KT_ULONG: PUT(uint64_t, v); break;
    default: kt_elem_set_float(kind, p, (double)v); break;
  }
}

/* Out-of-range floats stored into integers are clamped rather than left to
** the undefined behaviour of a C conversion. */
int64_t kt_float_to_int(double v, kt_kind kind) {
  if (isnan(v)) return 0;
  double lo = kt_kind_is_signed(kind) ? -9223372036854775808.0 : 0.0;
  if (v <= lo) return (int64_t)lo;
  if (kind == KT_ULONG) {
    if (v >= 18446744073709551616.0) return -1;
    return v >= 9223372036854775808.0 ? (int64_t)(uint64_t)v : (int64_t)v;
  }
  if (v >= 9223372036854775807.0) return INT64_MAX;
  return (int64_t)v;
}

void kt_elem_set_float(kt_kind kind, void *p, double v) {
  switch (kind) {
    case KT_HALF: {
      uint16_t h = kt_half_from_float((float)v);
      memcpy(p, &h, 2);
      break;
    }
    case KT_FLOAT: PUT(float, v); break;
    case KT_DOUBLE: PUT(double, v); break;
    default: kt_elem_set_int(kind, p, kt_float_to_int(v, kind)); break;
  }
}
