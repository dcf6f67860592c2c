/*
** copy_wide.h: a large copy split over threads. A copy into memory just
** allocated is bound by the page faults of the fresh pages (1.9 GB/s on
** the H200 machines' host: 36 ms of a tuning's set-up for each 64 MiB
** array it keeps), which the kernel serves on several processors at once;
** one through the device process's staging area (16 MiB chunks) by one
** processor's share of the memory's bandwidth (5 to 6 GB/s there: 11 to
** 19 ms an array of 64 MiB uploaded).
*/
#ifndef KT_COPY_WIDE_H
#define KT_COPY_WIDE_H

#include <stdbool.h>
#include <stddef.h>

/* memcpy(dst, src, bytes); threads only for copies of many MiB, and none
** where they cannot start. */
void kt_copy_wide(void *dst, const void *src, size_t bytes);

/* The same copy behind the caller's back: it returns at once, the copy
** made on threads of its own until kt_copy_wide_wait (neither side may be
** written meanwhile, nor dst read); NULL when it was made before returning
** (a small one, or no memory). */
typedef struct kt_wide_copy kt_wide_copy;
kt_wide_copy *kt_copy_wide_start(void *dst, const void *src, size_t bytes);
/* Waits for c's copy and frees c; NULL waits for nothing. */
void kt_copy_wide_wait(kt_wide_copy *c);

#endif
