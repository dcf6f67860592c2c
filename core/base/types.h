/*
** types.h: element types of arrays and scalar arguments: the OpenCL C
** scalar types, half, and user structs described once by their fields.
*/
#ifndef KT_TYPES_H
#define KT_TYPES_H

#include "kt.h"

typedef enum kt_kind {
  KT_CHAR, KT_UCHAR, KT_SHORT, KT_USHORT, KT_INT, KT_UINT,
  KT_LONG, KT_ULONG, KT_HALF, KT_FLOAT, KT_DOUBLE,
  KT_STRUCT,
  KT_KIND_COUNT
} kt_kind;

typedef struct kt_field {
  char *name;
  kt_kind kind;  /* a scalar kind */
  size_t count;  /* 1, or the length of a fixed array field */
  size_t offset;
} kt_field;

typedef struct kt_type {
  int refs;      /* -1 for the static built-in types */
  kt_kind kind;
  char *name;
  size_t size, align;
  size_t nfields;
  kt_field *fields;
} kt_type;

/* A field as the caller describes it; layout is computed by kt_type_struct. */
typedef struct kt_field_spec {
  const char *name;
  kt_kind kind;
  size_t count;
} kt_field_spec;

const kt_type *kt_type_scalar(kt_kind kind);
/* "float", "uint", ...; NULL when the name is not a scalar type. */
const kt_type *kt_type_by_name(const char *name);
const char *kt_kind_name(kt_kind kind);
/* A struct laid out as a C or OpenCL C compiler lays it out (natural
** alignment, padded to a multiple of its alignment). */
kt_type *kt_type_struct(const char *name, const kt_field_spec *fields,
                        size_t n, kt_error *err);
void kt_type_retain(const kt_type *t);
void kt_type_release(const kt_type *t);
/* Index of a field by name, or -1. */
int kt_type_field(const kt_type *t, const char *name);

bool kt_kind_is_float(kt_kind kind);
bool kt_kind_is_signed(kt_kind kind);

/* One element read as a number: integers exactly, floats as double. */
typedef struct kt_number {
  bool is_int;
  int64_t i;
  double f;
} kt_number;

kt_number kt_elem_get(kt_kind kind, const void *p);
/* Converts to the element kind (integers truncate toward zero, wrap). */
void kt_elem_set_int(kt_kind kind, void *p, int64_t v);
void kt_elem_set_float(kt_kind kind, void *p, double v);
/* v as an integer of an integer kind, clamped to int64's range (uint64's,
** in the bits of an int64, for ulong); 0 for NaN. */
int64_t kt_float_to_int(double v, kt_kind kind);
double kt_elem_as_double(kt_kind kind, const void *p);

uint16_t kt_half_from_float(float f);
float kt_half_to_float(uint16_t h);

#endif
