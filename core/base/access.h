/*
** access.h: how a kernel argument's buffer is used and where it lies.
** Arguments (arg.h) name them below the backends (backend.h), which
** allocate and move the buffers.
*/
#ifndef KT_ACCESS_H
#define KT_ACCESS_H

typedef enum kt_access { KT_READ = 1, KT_WRITE = 2, KT_READ_WRITE = 3 } kt_access;

typedef enum kt_placement {
  KT_PLACE_DEVICE,    /* device memory */
  KT_PLACE_HOST,      /* pinned host memory that the device reads over the bus */
  KT_PLACE_ZERO_COPY, /* host memory mapped into the device's address space */
  KT_PLACE_MANAGED,   /* unified memory migrated on demand (CUDA) */
  KT_PLACE_COUNT
} kt_placement;

const char *kt_placement_name(kt_placement p);
const char *kt_access_name(kt_access a);

#endif
