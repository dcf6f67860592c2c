/*
** devices.c: the device list a caller gets (device.h). Listing loads the
** drivers, and a driver loaded into a process that later forks device
** processes does not survive the fork (PoCL's and CUDA's threads stay
** behind, and the child waits on them for ever): so a short-lived device
** process lists them, unless this process drives a device itself anyway.
*/
#include "device.h"
#include "remote.h"

int kt_devices(kt_device_info **list, size_t *n, char *why, size_t whysize, kt_error *err) {
  if (kt_drivers_in_process()) return kt_devices_here(list, n, why, whysize, err);
  return kt_devices_remote(list, n, why, whysize, err);
}
