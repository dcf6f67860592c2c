/*
** result_formats.h: the results file formats around the one results
** model (result.h). Each format is a reader/writer pair of its own:
**   ktlua JSON, CSV and journals   result_io.c, result_read.c, result_csv.c
**   T4 (the community's results)   result_t4.c
**   KTT's JSON output              result_ktt.c (read only)
**   Kernel Tuner cache files       result_kt_cache.c
** A file's format is told by its content, never by its name.
**
** Files that do not number their configurations (T4, KTT, caches) give
** each record the index of its place in the file (0-based); their
** parameters' values are those recorded, sorted (numbers ascending, then
** strings), except a cache's, which lists them.
*/
#ifndef KT_RESULT_FORMATS_H
#define KT_RESULT_FORMATS_H

#include "json_read.h"
#include "result.h"

/* The results of a file's text, whatever its format; *format names it:
** "ktlua-results", "ktlua-journal", "ktlua-csv", "t4", "ktt" or
** "kernel-tuner-cache". */
kt_results *kt_results_parse(const char *text, size_t len, const char **format,
                             kt_error *err);

/* A JSON number, string or boolean as a parameter value (strings point
** into the document); -1 for anything else. */
int kt_value_from_json(const kt_jvalue *j, kt_value *v);
/* A float as Python's str() writes it: the shortest text that reads back,
** with ".0" on whole numbers (Kernel Tuner's cache keys are such texts). */
void kt_python_float(double x, char *buf, size_t size);
/* What Python's str() makes of a JSON value (None, [1, 'a'], {'k': True}):
** how a cache key writes it, and how ktlua holds a value that is no number,
** string or boolean (a string of that text). malloc'd. */
char *kt_python_str(const kt_jvalue *j, kt_error *err);
/* A parameter value in JSON, a float keeping its '.' so that it reads back
** as a float. */
void kt_json_param_value(FILE *f, const kt_value *v);
/* The index of v among p's values; -1 when it is not one of them. */
int kt_param_value_index(const kt_param *p, const kt_value *v, uint32_t *out);

/* Parameters gathered from records that name their values (T4, KTT):
** names in the order first seen, values distinct. */
typedef struct kt_param_acc {
  struct acc_param *params;
  size_t n, cap;
} kt_param_acc;

int kt_param_acc_note(kt_param_acc *a, const char *name, const kt_value *v, kt_error *err);
/* Empty results over the parameters gathered, their values sorted and
** made distinct (in a). */
kt_results *kt_param_acc_results(kt_param_acc *a, const char *task,
                                 const char *const *kernels, size_t nkernels,
                                 const char *device, kt_error *err);
void kt_param_acc_clear(kt_param_acc *a);
/* Fills r with the n records of a file, record i read by read(ud, r, i, vi,
** err) with vi as room for its value indices. Releases r and returns NULL
** when a record fails (or r is NULL: its making failed). */
typedef int (*kt_record_read)(void *ud, kt_results *r, size_t i, uint32_t *vi, kt_error *err);
kt_results *kt_results_fill(kt_results *r, size_t n, kt_record_read read, void *ud,
                            kt_error *err);
/* kt_param_value_index for the results' parameters (values sorted), in
** log n. */
int kt_sorted_value_index(const kt_param *p, const kt_value *v, uint32_t *out);

/* Timestamps as files write them ("2023-01-24 01:03:17.677311+00:00",
** "2024-04-25 20:16:20 UTC", RFC 3339) to Unix seconds; 0 (unknown) when
** text is none of them or names no time (a field out of its range). */
double kt_time_parse(const char *text);
/* Unix seconds as Kernel Tuner writes them: "2023-01-24 01:03:17.677311+00:00";
** -1 (buf unspecified) when t is no time after 1970 and before the year
** 10000, which writers then write as unknown. */
int kt_time_format(double t, char *buf, size_t size);

/* A header's (or a journal line's) device_threads into *out, left as it is
** where absent (unknown: a file written before ktlua kept it); -1 where it
** is no whole number from 0 (result_read.c). */
int kt_json_device_threads(const kt_jvalue *obj, int *out, kt_error *err);

/* T4 (result_t4.c). */
bool kt_t4_is(const kt_jvalue *root);
kt_results *kt_results_from_t4(const kt_jvalue *root, kt_error *err);
int kt_results_write_t4(const kt_results *r, const char *path, kt_error *err);

/* KTT's JSON results (result_ktt.c). */
bool kt_ktt_is(const kt_jvalue *root);
kt_results *kt_results_from_ktt(const kt_jvalue *root, kt_error *err);

/* Kernel Tuner cache files (result_kt_cache.c). */
bool kt_cache_is(const kt_jvalue *root);
kt_results *kt_results_from_cache(const kt_jvalue *root, kt_error *err);
/* problem_size: what Kernel Tuner's tune_kernel was given (it compares it
** with the cache's: a number with a number, a list item by item), a list
** of nproblem sizes or, when scalar, one number; NULL leaves it out. */
typedef struct kt_cache_opts {
  const int64_t *problem_size;
  size_t nproblem;
  bool scalar;
} kt_cache_opts;
int kt_results_write_cache(const kt_results *r, const char *path, const kt_cache_opts *o,
                           kt_error *err);

#endif
