/*
** ktlua_exe.h: which ktlua executable runs ktlua's own helper processes
** (compiler processes, compile_pool.h), each a fresh image of it rather
** than a fork of a process that may have loaded drivers and started
** threads: a program that embeds the core (libktlua.a, ktlua.so) may have.
**
** In order: KTLUA_EXE when it is set; this process itself when it is the
** ktlua executable; a `ktlua` near the program or library that holds
** this code (build/ktlua beside build/ktlua.so, PREFIX/bin/ktlua for
** PREFIX/lib/lua/5.4/ktlua.so); the installed one ($(PREFIX)/bin/ktlua,
** fixed in the libktlua.a that `make install` installs).
*/
#ifndef KT_KTLUA_EXE_H
#define KT_KTLUA_EXE_H

#include <stddef.h>

/* Defined (true) by the ktlua executable's main (bindings/main.c), which
** serves the helper modes; absent from other programs (a weak reference). */
extern const int kt_ktlua_executable __attribute__((weak));

/* The executable's path in path; -1 with why ("no ktlua executable ...")
** when there is none. */
int kt_ktlua_exe(char *path, size_t size, char *why, size_t whysize);

#endif
