/*
** energy.c: the meter of energy.h.
**
** A window: START reads the energy counter (or, without one, the power)
** and starts the sampler thread; STOP ends the thread, reads again, and
** gives the difference (or the integral of the power samples, by the
** trapezoid rule). The thread wakes once per KT_ENERGY_SAMPLE_NS on a
** condition variable, so that STOP ends it at once.
*/
#include "energy.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_lib.h"

struct kt_energy_meter {
  const kt_nvml_lib *lib;
  kt_nvml_device dev;
  char bus[64];
  bool counter;           /* the GPU keeps an energy counter */
  pthread_mutex_t lock;   /* the fields below, between the sampler and STOP */
  pthread_cond_t wake;
  pthread_t thread;
  bool running, stop;
  int64_t t0, last_ns;    /* the window's start; the last power sample's time ... */
  unsigned last_mw;       /* ... and value */
  unsigned long long e0;  /* the counter at START (mJ) */
  double area;            /* power samples integrated: mW x ns */
  double clock_sum;       /* SM clock samples (MHz) ... */
  size_t nclock;          /* ... and their count */
  kt_error fault;         /* the sampler's first failure */
  bool failed;
};

const char *kt_energy_unit(const char *metric) {
  if (strcmp(metric, "energy") == 0) return "J";
  if (strcmp(metric, "power") == 0) return "W";
  if (strcmp(metric, "sm_clock") == 0) return "MHz";
  return NULL;
}

static int nvml_fails(const kt_energy_meter *m, kt_error *err, kt_nvml_return e,
                      const char *what) {
  kt_nvml_fail(err, e, what);
  return kt_fail_prefix(err, "GPU %s: ", m->bus);
}

/* Whether the GPU keeps an energy counter; -1 when it reports neither
** energy nor power. */
static int probe(kt_energy_meter *m, kt_error *err) {
  unsigned long long mj;
  unsigned mw;
  kt_nvml_return e = m->lib->DeviceGetTotalEnergyConsumption(m->dev, &mj);
  if (e == KT_NVML_SUCCESS) return m->counter = true, 0;
  if (e != KT_NVML_ERROR_NOT_SUPPORTED)
    return nvml_fails(m, err, e, "nvmlDeviceGetTotalEnergyConsumption");
  e = m->lib->DeviceGetPowerUsage(m->dev, &mw);
  if (e == KT_NVML_SUCCESS) return 0;
  kt_nvml_fail(err, e, "nvmlDeviceGetPowerUsage");
  return kt_fail_prefix(err, "GPU %s has no energy counter, and its power cannot be read: ", m->bus);
}

kt_energy_meter *kt_energy_meter_new(const char *pci_bus_id, kt_error *err) {
  const kt_nvml_lib *lib = kt_nvml_lib_get();
  if (!lib->ok) return kt_fail(err, "%s", lib->why), NULL;
  kt_energy_meter *m = kt_calloc(1, sizeof *m, err);
  if (!m) return NULL;
  m->lib = lib;
  snprintf(m->bus, sizeof m->bus, "%s", pci_bus_id);
  kt_nvml_return e = lib->DeviceGetHandleByPciBusId_v2(pci_bus_id, &m->dev);
  if (e != KT_NVML_SUCCESS) nvml_fails(m, err, e, "nvmlDeviceGetHandleByPciBusId_v2");
  if (e != KT_NVML_SUCCESS || probe(m, err)) {
    free(m);
    return NULL;
  }
  pthread_mutex_init(&m->lock, NULL);
  pthread_cond_init(&m->wake, NULL);
  return m;
}

static void stop_thread(kt_energy_meter *m) {
  if (!m->running) return;
  pthread_mutex_lock(&m->lock);
  m->stop = true;
  pthread_cond_signal(&m->wake);
  pthread_mutex_unlock(&m->lock);
  pthread_join(m->thread, NULL);
  m->running = false;
}

void kt_energy_meter_free(kt_energy_meter *m) {
  if (!m) return;
  stop_thread(m);
  pthread_cond_destroy(&m->wake);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

/* ---- samples (under the lock) ---- */

static void fail_once(kt_energy_meter *m, kt_nvml_return e, const char *what) {
  if (!m->failed) nvml_fails(m, &m->fault, e, what);
  m->failed = true;
}

/* The SM clock, and without a counter the power, now. */
static void sample(kt_energy_meter *m) {
  unsigned mhz, mw;
  kt_nvml_return e = m->lib->DeviceGetClockInfo(m->dev, KT_NVML_CLOCK_SM, &mhz);
  if (e == KT_NVML_SUCCESS) m->clock_sum += mhz, m->nclock++;
  else if (e != KT_NVML_ERROR_NOT_SUPPORTED) fail_once(m, e, "nvmlDeviceGetClockInfo");
  if (m->counter) return;
  int64_t now = kt_now_ns();
  if ((e = m->lib->DeviceGetPowerUsage(m->dev, &mw)) != KT_NVML_SUCCESS)
    return fail_once(m, e, "nvmlDeviceGetPowerUsage");
  m->area += ((double)m->last_mw + mw) / 2 * (double)(now - m->last_ns);
  m->last_ns = now;
  m->last_mw = mw;
}

static void *sampler(void *arg) {
  kt_energy_meter *m = arg;
  pthread_mutex_lock(&m->lock);
  while (!m->stop) {
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_nsec += KT_ENERGY_SAMPLE_NS;
    if (at.tv_nsec >= 1000000000) at.tv_sec++, at.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&m->wake, &m->lock, &at);
    if (!m->stop) sample(m);
  }
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

/* ---- windows ---- */

static int start(kt_energy_meter *m, kt_error *err) {
  if (m->running) return kt_fail(err, "a window is open already");
  m->area = m->clock_sum = 0;
  m->nclock = 0;
  m->failed = m->stop = false;
  m->t0 = m->last_ns = kt_now_ns();
  kt_nvml_return e = m->counter ? m->lib->DeviceGetTotalEnergyConsumption(m->dev, &m->e0)
                                : m->lib->DeviceGetPowerUsage(m->dev, &m->last_mw);
  if (e != KT_NVML_SUCCESS)
    return nvml_fails(m, err, e, m->counter ? "nvmlDeviceGetTotalEnergyConsumption"
                                            : "nvmlDeviceGetPowerUsage");
  if (pthread_create(&m->thread, NULL, sampler, m) != 0)
    return kt_fail(err, "cannot start the sampling thread");
  m->running = true;
  return 0;
}

static int stop(kt_energy_meter *m, kt_energy_reading *out, kt_error *err) {
  if (!m->running) return kt_fail(err, "no window is open");
  stop_thread(m);
  sample(m); /* the thread is gone: no lock needed */
  int64_t t1 = m->counter ? kt_now_ns() : m->last_ns;
  unsigned long long e1 = 0;
  kt_nvml_return e = m->counter ? m->lib->DeviceGetTotalEnergyConsumption(m->dev, &e1)
                                : KT_NVML_SUCCESS;
  if (e != KT_NVML_SUCCESS) return nvml_fails(m, err, e, "nvmlDeviceGetTotalEnergyConsumption");
  if (m->failed) return *err = m->fault, -1;
  *out = (kt_energy_reading){
      .joules = m->counter ? (double)(e1 - m->e0) / 1e3 : m->area / 1e12,
      .seconds = (double)(t1 - m->t0) / 1e9,
      .sm_mhz = m->nclock ? m->clock_sum / (double)m->nclock : NAN,
      .counter = m->counter};
  return 0;
}

int kt_energy_meter_op(kt_energy_meter *m, kt_energy_op op, kt_energy_reading *out,
                       kt_error *err) {
  switch (op) {
    case KT_ENERGY_PROBE:
      *out = (kt_energy_reading){.sm_mhz = NAN, .counter = m->counter};
      return 0;
    case KT_ENERGY_START: return start(m, err);
    case KT_ENERGY_STOP: return stop(m, out, err);
  }
  return kt_fail(err, "unknown operation %d", (int)op);
}
