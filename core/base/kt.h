/*
** kt.h: what every part of the ktlua core shares: errors, statuses,
** parameter values, the clock and checked allocation.
**
** Convention: a function that can fail returns 0 (or a non-NULL pointer)
** on success and -1 (or NULL) on failure, with the reason written into
** the caller's kt_error. The core never prints and never exits.
*/
#ifndef KT_H
#define KT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KT_ERRMAX 2048

typedef struct kt_error {
  char msg[KT_ERRMAX];
} kt_error;

/* Formats the reason into err (when err is not NULL) and returns -1. */
int kt_fail(kt_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* kt_fail for text parsed from a string: "at character POS+1: ...". */
int kt_fail_at(kt_error *err, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes code point cp (at most 0x10FFFF) as UTF-8 at o; returns its bytes (1 to 4). */
size_t kt_utf8_put(char *o, unsigned long cp);

/* len bytes of s as a JSON string, quotes included, for messages that
** name a value or a name: a NUL byte, a control byte, a quote or a
** backslash is escaped (\u0000, \n, \"), so that the whole of it shows
** and none of it reaches the terminal as a control. Cut with "..." after
** the closing quote where it does not fit size (at least 16); returns buf. */
const char *kt_quote(const char *s, size_t len, char *buf, size_t size);

/* Prefixes an existing error message with context ("kernel vadd: ..."). */
int kt_fail_prefix(kt_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What happened to one configuration. Kept in sync with kt_status_name. */
typedef enum kt_status {
  KT_OK = 0,
  KT_COMPILE_FAILED,
  KT_LAUNCH_FAILED,
  KT_RUNTIME_FAILED,
  KT_TIMEOUT,
  KT_INVALID_OUTPUT,
  KT_TOO_MANY_THREADS,
  KT_OUT_OF_BOUNDS,    /* wrote past its buffers or into its inputs */
  KT_GENERATOR_FAILED, /* the kernel's source generator failed (codegen.h) */
  KT_TOO_MUCH_LOCAL_MEMORY, /* a work-group needs more local (shared) memory than the device has */
  KT_COMPILE_DEFERRED, /* its compile ran far beyond the others' and was not over when the
                       ** tuning stopped: not evaluated, and no verdict (loop.c) */
  KT_STATUS_COUNT
} kt_status;

const char *kt_status_name(kt_status s);
/* Returns -1 for an unknown name. */
int kt_status_from_name(const char *name);

/* A tuning parameter's value: integer, floating point or string. A
** boolean (from a file or Lua) is an integer 0 or 1 flagged as one: kernels
** see 0 or 1, files and Lua get a boolean back, and it is distinct from
** the integer (Kernel Tuner's caches may list 0, 1, False and True). */
typedef enum kt_vtype { KT_VINT, KT_VFLOAT, KT_VSTRING } kt_vtype;

typedef struct kt_value {
  kt_vtype type;
  union {
    int64_t i;
    double f;
    char *s; /* owned by whoever owns the value list */
  } u;
  bool boolean; /* KT_VINT only */
} kt_value;

/* Writes the value as it appears after #define NAME; returns bytes needed. */
int kt_value_format(const kt_value *v, char *buf, size_t size);
/* The value as messages show it: a number as kt_value_format writes it,
** a string quoted whole (kt_quote); returns buf (size at least 16). */
const char *kt_value_show(const kt_value *v, char *buf, size_t size);
bool kt_value_equal(const kt_value *a, const kt_value *b);
/* Numeric view; strings give 0 and false. */
bool kt_value_number(const kt_value *v, double *out);

/* Monotonic clock in nanoseconds. */
int64_t kt_now_ns(void);
/* The longest duration a time limit may have, in seconds and in ns (a
** clock reading plus it still fits an int64). */
#define KT_SECONDS_MAX 1e9
#define KT_NS_MAX 1e18
/* A duration in ns as an integer: 0 for NaN and below, at most KT_NS_MAX
** (a cast of a double beyond int64 would be undefined). */
int64_t kt_ns_clamp(double ns);

/* Called around a wait for the device (entering true, then false): a
** tuning over several devices lets the other devices' threads work while
** one waits (fleet.h). */
typedef struct kt_wait_hook {
  void (*fn)(void *ud, bool entering);
  void *ud;
} kt_wait_hook;

/* The time of day, in Unix seconds. */
double kt_wall_s(void);

/* Allocation that reports failure through kt_error. */
void *kt_alloc(size_t size, kt_error *err);
void *kt_calloc(size_t n, size_t size, kt_error *err);
char *kt_strdup(const char *s, kt_error *err);
/* A C identifier: what names that reach kernel sources must be. */
bool kt_is_identifier(const char *name);
/* Grows *items (of item_size bytes) so that at least need fit; doubles. */
int kt_grow(void *items, size_t *cap, size_t need, size_t item_size,
            kt_error *err);

#endif
