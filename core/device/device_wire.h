/*
** device_wire.h: a device's description (device.h) and a compiled kernel's
** usage (backend.h) on the wire (wire.h),
** as device processes list their devices to the tuner and as the tuner
** names its device to a compiler process. The backend goes by name; the
** handles stay behind (NULL on arrival).
*/
#ifndef KT_DEVICE_WIRE_H
#define KT_DEVICE_WIRE_H

#include "backend.h"
#include "device.h"
#include "wire.h"

void kt_msg_put_device(kt_msg *out, const kt_device_info *d);
/* Fills d (which the caller clears with kt_device_clear, also on failure). */
int kt_msg_get_device(kt_msg *in, kt_device_info *d, kt_error *err);
/* A compiled kernel's usage. */
int kt_usage_put(kt_msg *m, kt_kernel_usage u);
void kt_usage_get(kt_msg *m, kt_kernel_usage *u);

#endif
