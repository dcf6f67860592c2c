/*
** device.h: the devices of every backend, described by a flat list of
** named properties so that a script sees them as a plain table.
*/
#ifndef KT_DEVICE_H
#define KT_DEVICE_H

#include "backend.h"

typedef enum kt_prop_type { KT_PROP_INT, KT_PROP_STRING, KT_PROP_SIZES } kt_prop_type;

typedef struct kt_prop {
  char key[40];
  kt_prop_type type;
  int64_t i;          /* KT_PROP_INT */
  char *s;            /* KT_PROP_STRING */
  int64_t sizes[3];   /* KT_PROP_SIZES */
  int nsizes;
} kt_prop;

struct kt_device_info {
  char id[40];               /* "opencl:0:1", "cuda:0" */
  const kt_backend *backend;
  int platform, index;       /* platform index (OpenCL), device index */
  const struct kt_far *far;  /* how to reach its node's device processes (far.h); NULL: this
                             ** process's own device */
  int rank;                  /* its node's number for far (an MPI rank); 0: this process's */
  void *handle;              /* the backend's own device handle */
  void *platform_handle;
  kt_prop *props;
  size_t nprops, cap;
};

/* Every device of every backend, in a list the caller frees with
** kt_devices_free. Backends with no library contribute nothing; their
** reasons are joined into *why (may be NULL). The devices are listed by a
** short-lived device process (remote.h), so that no driver loads into the
** caller, whose isolated tuners (kt_tuner_new) then start their device
** processes safely; in a process that drives a device itself (a tuner
** with isolate false) they are listed in place, with their handles. */
int kt_devices(kt_device_info **list, size_t *n, char *why, size_t whysize,
               kt_error *err);
/* The same, listed in this process: loads every driver into it. For
** device processes, and processes that drive devices themselves. */
int kt_devices_here(kt_device_info **list, size_t *n, char *why, size_t whysize,
                    kt_error *err);
void kt_devices_free(kt_device_info *list, size_t n);
/* The backend of that name ("opencl", "cuda"), or NULL. */
const kt_backend *kt_backend_named(const char *name);
int kt_device_copy(kt_device_info *dst, const kt_device_info *src, kt_error *err);
void kt_device_clear(kt_device_info *dev);

/* Chooses by id ("opencl:0:0", "cuda:1"), backend ("opencl", "cuda"),
** type ("gpu", "cpu") or "default" (first GPU, else first device).
** Returns the list index or -1 with a message naming what exists. */
int kt_device_find(const kt_device_info *list, size_t n, const char *what,
                   kt_error *err);

int kt_device_set_int(kt_device_info *d, const char *key, int64_t v, kt_error *err);
int kt_device_set_string(kt_device_info *d, const char *key, const char *v,
                         kt_error *err);
int kt_device_set_sizes(kt_device_info *d, const char *key, const int64_t *v,
                        int n, kt_error *err);
const kt_prop *kt_device_prop(const kt_device_info *d, const char *key);
int64_t kt_device_int(const kt_device_info *d, const char *key, int64_t dflt);
const char *kt_device_string(const kt_device_info *d, const char *key);

#endif
