/*
** json_read.h: a small JSON reader. A whole text becomes a tree of values
** owned by one document and freed at once, for recorded spaces (Kernel
** Tuner cache files, ktlua's own result files) and, later, journals.
**
** Files may be gzip-compressed or plain: the reader tells them apart.
*/
#ifndef KT_JSON_READ_H
#define KT_JSON_READ_H

#include "kt.h"

/* KT_JNONFINITE: Infinity, -Infinity or NaN (u.num.f), as Python's json
** writes and reads them; only kt_json_parse_results reads them, and only
** where a reader asks for one (kt_json_real) are they a number: everywhere
** else they are no KT_JNUMBER, so that no time, size or count becomes one. */
typedef enum kt_jtype {
  KT_JNULL, KT_JBOOL, KT_JNUMBER, KT_JSTRING, KT_JARRAY, KT_JOBJECT, KT_JNONFINITE
} kt_jtype;

typedef struct kt_jvalue kt_jvalue;
typedef struct kt_jmember kt_jmember;

struct kt_jvalue {
  kt_jtype type;
  bool integer; /* a number written without fraction or exponent that fits int64 */
  size_t n;     /* bytes of a string, items of an array, members of an object */
  union {
    bool b;
    struct {
      double f;
      int64_t i; /* when integer */
    } num;
    const char *str; /* NUL-terminated */
    const kt_jvalue *items;
    const kt_jmember *members;
  } u;
};

struct kt_jmember {
  const char *key; /* NUL-terminated, but "\u0000" may put a NUL inside: */
  kt_jvalue value;
  size_t keylen;   /* its bytes */
};

typedef struct kt_jdoc kt_jdoc;

/* Parses len bytes of text; errors give the line and column. */
kt_jdoc *kt_json_parse(const char *text, size_t len, kt_error *err);
/* kt_json_parse for the results files of every format: their names and
** strings become C strings, so a member name or a string holding a NUL
** byte ("\u0000") is an error at its place, for a C string would end there
** (two names could become one, a value another); and Python's Infinity,
** -Infinity and NaN are read (KT_JNONFINITE), as metrics may be those. */
kt_jdoc *kt_json_parse_results(const char *text, size_t len, kt_error *err);
/* The most bytes a file read whole may hold (gunzipped): a stated bound
** on what reading a file takes. */
#define KT_FILE_MAX ((size_t)1 << 30)

/* A text file's bytes (NUL-terminated; *len without it), gunzipped when
** it is gzip-compressed; malloc'd. More than max bytes (0: KT_FILE_MAX),
** or a NUL byte, is an error found before more is read. */
char *kt_read_file(const char *path, size_t max, size_t *len, kt_error *err);
/* Reads and parses a file, gzip-compressed or not. */
kt_jdoc *kt_json_read_file(const char *path, kt_error *err);
void kt_json_free(kt_jdoc *d);
const kt_jvalue *kt_json_root(const kt_jdoc *d);

/* The member named key of an object (the whole key: "a\u0000b" is not
** "a"); NULL when absent or not an object. */
const kt_jvalue *kt_json_get(const kt_jvalue *obj, const char *key);
/* The same, NULL also when the member is not of the given type. */
const kt_jvalue *kt_json_get_type(const kt_jvalue *obj, const char *key, kt_jtype type);
/* Whether v is a number, finite or not (KT_JNUMBER, KT_JNONFINITE), with
** its value: where a file may hold an infinite metric or a NaN. */
bool kt_json_real(const kt_jvalue *v, double *out);

#endif
