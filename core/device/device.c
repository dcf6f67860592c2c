/*
** device.c: devices' properties (listing the devices across the backends
** and choosing one by a short string are backends.c's).
*/
#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
