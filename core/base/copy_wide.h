/*
** copy_wide.h: a large copy into memory just allocated, split over
** threads. Such a copy is bound by the page faults of the fresh pages
** (1.9 GB/s on the H200 machines' host: 36 ms of a tuning's set-up for
** each 64 MiB array it keeps), which the kernel serves on several
** processors at once.
*/
#ifndef KT_COPY_WIDE_H
#define KT_COPY_WIDE_H

#include <stddef.h>

/* memcpy(dst, src, bytes); threads only for copies of many MiB, and none
** where they cannot start. */
void kt_copy_wide(void *dst, const void *src, size_t bytes);

#endif
