/*
** device_wire.c: a device's description on the wire (device_wire.h).
*/
#include "device_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kt_msg_put_device(kt_msg *out, const kt_device_info *d) {
  kt_msg_put_str(out, d->id);
  kt_msg_put_str(out, d->backend->name);
  kt_msg_put_u32(out, (uint32_t)d->platform);
  kt_msg_put_u32(out, (uint32_t)d->index);
  kt_msg_put_u32(out, (uint32_t)d->nprops);
  for (size_t i = 0; i < d->nprops; i++) {
    const kt_prop *p = &d->props[i];
    kt_msg_put_str(out, p->key);
    kt_msg_put_u32(out, (uint32_t)p->type);
    kt_msg_put_u64(out, (uint64_t)p->i);
    kt_msg_put_str(out, p->s);
    kt_msg_put_u32(out, (uint32_t)p->nsizes);
    for (int k = 0; k < 3; k++) kt_msg_put_u64(out, (uint64_t)p->sizes[k]);
  }
}

int kt_msg_get_device(kt_msg *in, kt_device_info *d, kt_error *err) {
  char *id = kt_msg_get_str(in), *backend = kt_msg_get_str(in);
  memset(d, 0, sizeof *d);
  snprintf(d->id, sizeof d->id, "%s", id ? id : "");
  d->backend = backend ? kt_backend_named(backend) : NULL;
  free(id);
  free(backend);
  d->platform = (int)kt_msg_get_u32(in);
  d->index = (int)kt_msg_get_u32(in);
  uint32_t n = kt_msg_get_u32(in);
  int rc = d->backend ? 0 : kt_fail(err, "a device description names an unknown backend");
  for (uint32_t i = 0; i < n && rc == 0 && !in->bad; i++) {
    char *key = kt_msg_get_str(in), *s;
    kt_prop_type type = (kt_prop_type)kt_msg_get_u32(in);
    int64_t v = (int64_t)kt_msg_get_u64(in), sizes[3];
    s = kt_msg_get_str(in);
    int nsizes = (int)kt_msg_get_u32(in);
    for (int k = 0; k < 3; k++) sizes[k] = (int64_t)kt_msg_get_u64(in);
    if (!key) rc = kt_fail(err, "a device description is cut short");
    else if (type == KT_PROP_INT) rc = kt_device_set_int(d, key, v, err);
    else if (type == KT_PROP_STRING) rc = kt_device_set_string(d, key, s ? s : "", err);
    else rc = kt_device_set_sizes(d, key, sizes, nsizes, err);
    free(key);
    free(s);
  }
  if (rc == 0 && in->bad) rc = kt_fail(err, "a device description is cut short");
  return rc;
}

int kt_usage_put(kt_msg *m, kt_kernel_usage u) {
  int64_t v[5] = {u.registers, u.shared_bytes, u.local_bytes, u.constant_bytes, u.max_threads};
  return kt_msg_put(m, v, sizeof v);
}

void kt_usage_get(kt_msg *m, kt_kernel_usage *u) {
  int64_t v[5];
  kt_msg_get(m, v, sizeof v);
  *u = (kt_kernel_usage){v[0], v[1], v[2], v[3], v[4]};
}
