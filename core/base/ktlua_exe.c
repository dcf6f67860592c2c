/*
** ktlua_exe.c: finding the ktlua executable (ktlua_exe.h).
*/
#define _GNU_SOURCE /* dladdr */
#include "ktlua_exe.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KT_BINDIR
#define KT_BINDIR "/usr/local/bin"
#endif

static int runnable(const char *path) { return path[0] == '/' && access(path, X_OK) == 0; }

/* Where a ktlua may be, from the folder of a program or library of ktlua:
** beside it (build/), in ../bin (lib/libktlua.so), ../../../bin
** (lib/lua/5.4/ktlua.so). */
static const char *const near[] = {"", "/../bin", "/../../../bin"};

/* A ktlua near the file that holds this code (an executable or a shared
** library); 0 when there is one. where: that file's folder. */
static int beside_this(char *path, size_t size, char *where, size_t wsize) {
  Dl_info info;
  char real[PATH_MAX], found[PATH_MAX], resolved[PATH_MAX];
  if (!dladdr((void *)kt_ktlua_exe, &info) || !info.dli_fname ||
      !realpath(info.dli_fname, real))
    return -1;
  *strrchr(real, '/') = '\0';
  snprintf(where, wsize, "%s", real);
  for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
    snprintf(found, sizeof found, "%.*s%s/ktlua", PATH_MAX - 32, real, near[i]);
    if (runnable(found) && realpath(found, resolved) && strlen(resolved) < size)
      return snprintf(path, size, "%s", resolved), 0;
  }
  return -1;
}

int kt_ktlua_exe(char *path, size_t size, char *why, size_t whysize) {
  const char *given = getenv("KTLUA_EXE");
  if (given && given[0]) {
    snprintf(path, size, "%s", given);
    if (runnable(given) && strlen(given) < size) return 0;
    snprintf(why, whysize, "KTLUA_EXE=%s is no executable file (an absolute path)", given);
    return -1;
  }
  if (&kt_ktlua_executable && kt_ktlua_executable) {
    ssize_t n = readlink("/proc/self/exe", path, size - 1);
    if (n > 0 && (size_t)n < size - 1) return path[n] = '\0', 0;
  }
  char where[PATH_MAX] = "";
  if (beside_this(path, size, where, sizeof where) == 0) return 0;
  snprintf(path, size, "%s/ktlua", KT_BINDIR);
  if (runnable(path)) return 0;
  snprintf(why, whysize, "no ktlua executable found (none near %s, none in %s; KTLUA_EXE "
           "names one)", where[0] ? where : "this program", KT_BINDIR);
  return -1;
}
