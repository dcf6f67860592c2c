/*
** launch_limits.h: launches that a device refuses whatever the program,
** known from a configuration's sizes and the device's limits alone, so
** that the configuration fails before it is compiled (and its compile is
** not started ahead): more work-items than the device's address bits
** count, a grid of more blocks in a dimension than the device launches
** (CUDA: max_grid_dims, 65535 in y and z).
*/
#ifndef KT_LAUNCH_LIMITS_H
#define KT_LAUNCH_LIMITS_H

#include <stddef.h>

#include "device.h"
#include "kt.h"
#include "task.h"

/* KT_OK where kernel's launch of sizes s fits dev; else the status it
** fails with, and why (a message naming the kernel and the limit). */
kt_status kt_launch_limits(const kt_device_info *dev, const char *kernel, const kt_sizes *s,
                           char *why, size_t n);

#endif
