/*
** dynlib.c: opening a library that is loaded at run time (dynlib.h).
*/
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *kt_dynlib_open(const char *env, const char *const *names, const char *what, char *why,
                     size_t size, char *opened, size_t opened_size) {
  const char *given = getenv(env);
  if (given && given[0]) {
    void *h = dlopen(given, RTLD_NOW | RTLD_LOCAL);
    if (!h) snprintf(why, size, "%s cannot be loaded from %s=%s: %s", what, env, given, dlerror());
    if (h && opened) snprintf(opened, opened_size, "%s=%s", env, given);
    return h;
  }
  char first[256] = "";
  for (int i = 0; names[i]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h && opened) snprintf(opened, opened_size, "%s", names[i]);
    if (h) return h;
    if (i == 0) snprintf(first, sizeof first, "%s", dlerror());
  }
  snprintf(why, size, "%s cannot be loaded: %s (set %s to its path)", what, first, env);
  return NULL;
}
