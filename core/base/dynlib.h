/*
** dynlib.h: opening a library that is loaded at run time (the CUDA driver,
** NVRTC, NVML): the one an environment variable names, else the first of
** a list that loads.
*/
#ifndef KT_DYNLIB_H
#define KT_DYNLIB_H

#include <stddef.h>

/* The library that env names, else the first of names (NULL-terminated)
** that loads, opened RTLD_NOW | RTLD_LOCAL, with opened (opened_size
** bytes, unless NULL) saying which ("KTLUA_LIBCUDA=/x/libcuda.so", or
** the name), for a message about what it holds; NULL with why (size
** bytes) saying what failed, what being the library as a user knows it. */
void *kt_dynlib_open(const char *env, const char *const *names, const char *what, char *why,
                     size_t size, char *opened, size_t opened_size);

#endif
