/*
** validate.h: comparing a kernel's output with the reference.
*/
#ifndef KT_VALIDATE_H
#define KT_VALIDATE_H

#include "array.h"
#include "task.h"

/* Returns 1 when got matches expected under the method, 0 when not (with
** *why, malloc'd, naming the first differing element and how many differ),
** -1 when the arrays cannot be compared. first > 0 limits the comparison
** to the first elements. */
int kt_compare_arrays(const kt_array *got, const kt_array *expected, kt_cmp_method method,
                      double tolerance, size_t first, char **why, kt_error *err);

/* How many elements a comparison of got with expected covers (first, when
** nonzero and smaller, else all); -1 with err when they cannot be compared
** element by element (other sizes, structs). */
int kt_compare_extent(const kt_array *got, const kt_array *expected, size_t first, size_t *n,
                      kt_error *err);

/* The comparisons of KT_CMP_CLOSE and KT_CMP_KERNEL_TUNER (method), in
** validate_close.c: element i matches when |got - expected| <= atol + rtol *
** |expected| (close: NaN matching NaN), or <= atol + rtol * |got| (Kernel
** Tuner's np.allclose(expected, got): NaN matching nothing); an infinity
** matches only the same infinity. */
int kt_compare_close(const kt_array *got, const kt_array *expected, kt_cmp_method method,
                     double atol, double rtol, size_t first, char **why, kt_error *err);

/* got against reference r's expected contents, by r's method (any of
** them but a compare function): as kt_compare_arrays. */
int kt_compare_reference(const kt_array *got, const kt_reference *r, char **why, kt_error *err);

const char *kt_cmp_method_name(kt_cmp_method m);
int kt_cmp_method_from_name(const char *name); /* -1 if unknown */

#endif
