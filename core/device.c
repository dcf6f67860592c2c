/*
** device.c: device lists across backends, properties, and choosing a
** device by a short string.
*/
#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kt_backend *const backends[] = {&kt_backend_opencl, &kt_backend_cuda};
#define NBACKENDS (sizeof backends / sizeof backends[0])

const kt_backend *kt_backend_named(const char *name) {
  for (size_t b = 0; b < NBACKENDS; b++)
    if (strcmp(backends[b]->name, name) == 0) return backends[b];
  return NULL;
}

int kt_devices_here(kt_device_info **list, size_t *n, char *why, size_t whysize,
                    kt_error *err) {
  size_t cap = 0;
  *list = NULL;
  *n = 0;
  if (why && whysize) why[0] = '\0';
  for (size_t b = 0; b < NBACKENDS; b++) {
    const char *reason = NULL;
    if (backends[b]->enumerate(list, n, &cap, &reason, err) != 0) {
      kt_devices_free(*list, *n);
      *list = NULL;
      *n = 0;
      return -1;
    }
    if (reason && why) {
      size_t used = strlen(why);
      snprintf(why + used, whysize - used, "%s%s: %s", used ? "; " : "",
               backends[b]->name, reason);
    }
  }
  return 0;
}

void kt_device_clear(kt_device_info *d) {
  for (size_t i = 0; i < d->nprops; i++) free(d->props[i].s);
  free(d->props);
  d->props = NULL;
  d->nprops = d->cap = 0;
}

void kt_devices_free(kt_device_info *list, size_t n) {
  for (size_t i = 0; i < n; i++) kt_device_clear(&list[i]);
  free(list);
}

int kt_device_copy(kt_device_info *dst, const kt_device_info *src, kt_error *err) {
  *dst = *src;
  dst->props = kt_calloc(src->nprops, sizeof *dst->props, err);
  if (!dst->props) return -1;
  dst->cap = src->nprops;
  for (size_t i = 0; i < src->nprops; i++) {
    dst->props[i] = src->props[i];
    if (src->props[i].s && !(dst->props[i].s = kt_strdup(src->props[i].s, err))) {
      dst->nprops = i;
      kt_device_clear(dst);
      return -1;
    }
  }
  return 0;
}

static kt_prop *prop_slot(kt_device_info *d, const char *key, kt_error *err) {
  for (size_t i = 0; i < d->nprops; i++)
    if (strcmp(d->props[i].key, key) == 0) {
      free(d->props[i].s);
      d->props[i].s = NULL;
      return &d->props[i];
    }
  if (kt_grow(&d->props, &d->cap, d->nprops + 1, sizeof *d->props, err)) return NULL;
  kt_prop *p = &d->props[d->nprops++];
  memset(p, 0, sizeof *p);
  snprintf(p->key, sizeof p->key, "%s", key);
  return p;
}

int kt_device_set_int(kt_device_info *d, const char *key, int64_t v, kt_error *err) {
  kt_prop *p = prop_slot(d, key, err);
  if (!p) return -1;
  p->type = KT_PROP_INT;
  p->i = v;
  return 0;
}

int kt_device_set_string(kt_device_info *d, const char *key, const char *v,
                         kt_error *err) {
  kt_prop *p = prop_slot(d, key, err);
  if (!p) return -1;
  p->type = KT_PROP_STRING;
  p->s = kt_strdup(v, err);
  return p->s ? 0 : -1;
}

int kt_device_set_sizes(kt_device_info *d, const char *key, const int64_t *v,
                        int n, kt_error *err) {
  kt_prop *p = prop_slot(d, key, err);
  if (!p) return -1;
  p->type = KT_PROP_SIZES;
  p->nsizes = n > 3 ? 3 : n;
  for (int i = 0; i < p->nsizes; i++) p->sizes[i] = v[i];
  return 0;
}

const kt_prop *kt_device_prop(const kt_device_info *d, const char *key) {
  for (size_t i = 0; i < d->nprops; i++)
    if (strcmp(d->props[i].key, key) == 0) return &d->props[i];
  return NULL;
}

int64_t kt_device_int(const kt_device_info *d, const char *key, int64_t dflt) {
  const kt_prop *p = kt_device_prop(d, key);
  return p && p->type == KT_PROP_INT ? p->i : dflt;
}

const char *kt_device_string(const kt_device_info *d, const char *key) {
  const kt_prop *p = kt_device_prop(d, key);
  return p && p->type == KT_PROP_STRING ? p->s : "";
}

static int first_of_type(const kt_device_info *list, size_t n, const char *type) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(kt_device_string(&list[i], "type"), type) == 0) return (int)i;
  return -1;
}

static int first_of_backend(const kt_device_info *list, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i].backend->name, name) == 0) return (int)i;
  return -1;
}

/* What `what` asked for, said so that the message cannot name as missing
** what it then lists as there. */
static void asked_for(const char *what, char *buf, size_t size) {
  if (strcmp(what, "gpu") == 0 || strcmp(what, "cpu") == 0 || strcmp(what, "accelerator") == 0)
    snprintf(buf, size, "no device of type %s is here", what);
  else if (strcmp(what, "default") == 0)
    snprintf(buf, size, "no device is here");
  else if (kt_backend_named(what))
    snprintf(buf, size, "no device of the %s backend is here", what);
  else if (!strchr(what, ':'))
    snprintf(buf, size, "it is no device id, backend (opencl, cuda), type (gpu, cpu, "
             "accelerator) or 'default'");
  else snprintf(buf, size, "no device has that id");
}

static int not_found(const kt_device_info *list, size_t n, const char *what,
                     kt_error *err) {
  char have[1024] = "", why[160];
  size_t used = 0;
  for (size_t i = 0; i < n && used < sizeof have; i++)
    used += (size_t)snprintf(have + used, sizeof have - used, "%s%s (%s, %s)",
                             i ? ", " : "", list[i].id,
                             kt_device_string(&list[i], "name"),
                             kt_device_string(&list[i], "type"));
  asked_for(what, why, sizeof why);
  return kt_fail(err, "no device '%s': %s; the devices here: %s", what, why,
                 n ? have : "none");
}

int kt_device_find(const kt_device_info *list, size_t n, const char *what,
                   kt_error *err) {
  int found = -1;
  if (strcmp(what, "default") == 0) {
    found = first_of_type(list, n, "gpu");
    if (found < 0 && n > 0) found = 0;
  } else if (strcmp(what, "gpu") == 0 || strcmp(what, "cpu") == 0 ||
             strcmp(what, "accelerator") == 0) {
    found = first_of_type(list, n, what);
  } else if (!strchr(what, ':')) {
    found = first_of_backend(list, n, what);
  } else {
    for (size_t i = 0; i < n && found < 0; i++)
      if (strcmp(list[i].id, what) == 0) found = (int)i;
  }
  return found >= 0 ? found : not_found(list, n, what, err);
}
