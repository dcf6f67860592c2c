/*
** backends.c: the backends of this process, by name, the devices of all
** of them, and choosing a device by a short string (device.h). Above the
** backends, whose listers describe devices through device.c.
*/
#include "device.h"

#include <stdio.h>
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
    size_t before = *n;
    if (backends[b]->enumerate(list, n, &cap, &reason, err) != 0) {
      kt_devices_free(*list, *n);
      *list = NULL;
      *n = 0;
      return -1;
    }
    /* set here: a backend's lister need not name its own table (cuda_devices.c) */
    for (size_t i = before; i < *n; i++) (*list)[i].backend = backends[b];
    if (reason && why) {
      size_t used = strlen(why);
      snprintf(why + used, whysize - used, "%s%s: %s", used ? "; " : "",
               backends[b]->name, reason);
    }
  }
  return 0;
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
