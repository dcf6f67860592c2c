/*
** energy.h: a GPU's energy and power over a window of runs, through NVML
** (nvml_lib.h), for tunings with energy = true (measure_energy.c).
**
** A meter belongs to one device context, in the process that drives the
** device (the device process of an isolated tuner, else the tuner's): a
** backend's `energy` entry (backend.h) serves it; OpenCL has none. The
** window is read from NVML's total-energy counter where the GPU keeps one
** (Volta and later), else from its power, sampled on a thread of the
** meter's and integrated; the SM clock is sampled on that thread either
** way. Nothing is sampled outside a window: timed runs are never shared
** with it. A counter that steps at a coarse period is read between its
** steps (energy.c), and windows are made a few periods long
** (measure_energy.c).
*/
#ifndef KT_ENERGY_H
#define KT_ENERGY_H

#include "kt.h"

typedef struct kt_energy_reading {
  double joules;  /* over the window */
  double seconds; /* the window: from START's read to STOP's; PROBE: the
                  ** counter's period (0: none seen) */
  double sm_mhz;  /* mean SM clock sampled in it; NAN when none was */
  bool counter;   /* from the energy counter; false: power sampled and integrated */
} kt_energy_reading;

typedef enum kt_energy_op {
  KT_ENERGY_PROBE, /* can it measure? (out->counter: how) */
  KT_ENERGY_START, /* a window begins */
  KT_ENERGY_STOP   /* it ends: *out */
} kt_energy_op;

/* Why a backend without an `energy` entry cannot measure (static text). */
#define KT_ENERGY_NEEDS_CUDA \
  "energy is measured through NVML on NVIDIA GPUs driven by CUDA"

/* Power samples (without a counter) and SM clock samples: one per interval. */
#define KT_ENERGY_SAMPLE_NS 5000000

typedef struct kt_energy_meter kt_energy_meter;

/* A meter of the GPU at a PCI bus id (as CUDA names it, "0000:17:00.0"):
** NULL with why, when NVML is missing or knows no such GPU, or the GPU
** reports neither energy nor power. */
kt_energy_meter *kt_energy_meter_new(const char *pci_bus_id, kt_error *err);
void kt_energy_meter_free(kt_energy_meter *m);
int kt_energy_meter_op(kt_energy_meter *m, kt_energy_op op, kt_energy_reading *out,
                       kt_error *err);

/* The unit of a metric that the energy pass records (T4's measurements),
** or NULL for another name. */
const char *kt_energy_unit(const char *metric);

#endif
