/*
** energy.c: the meter of energy.h.
**
** A window: START reads the energy counter (or, without one, the power)
** and starts the sampler thread; STOP ends the thread, reads again, and
** gives the window's energy. The thread wakes on a condition variable, so
** that STOP ends it at once: every KT_ENERGY_POLL_NS with a counter, to
** see when its value steps; every KT_ENERGY_SAMPLE_NS without, for the
** power, integrated by the trapezoid rule. The SM clock is sampled every
** KT_ENERGY_SAMPLE_NS either way.
**
** A counter that NVML updates in steps of tens of milliseconds (its
** period, measured once while the GPU idles) says little of a window a
** few steps long: read at its two ends, it is off by up to a step at
** each. There the window's power is taken between its first and last
** steps, where the counter was exact, and its energy is that power over
** the whole window (the runs go on back to back throughout). A counter
** seen to move at no regular period is read at the two ends.
*/
#include "energy.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_lib.h"

#define KT_ENERGY_POLL_NS 1000000
/* How long PROBE watches an idle counter for its period. */
#define PERIOD_WATCH_NS 300000000

typedef struct step { int64_t ns; unsigned long long mj; } step;

struct kt_energy_meter {
  const kt_nvml_lib *lib;
  kt_nvml_device dev;
  char bus[64];
  bool counter;           /* the GPU keeps an energy counter ... */
  double period_ns;       /* ... updated this often (0: at no regular period) */
  pthread_mutex_t lock;   /* the fields below, between the sampler and STOP */
  pthread_cond_t wake;
  pthread_t thread;
  bool running, stop;
  unsigned polls;
  int64_t t0, last_ns;    /* the window's start; the last power sample's time ... */
  unsigned last_mw;       /* ... and value */
  unsigned long long e0, seen; /* the counter at START, and at the last poll */
  step first, last;       /* its first and last steps in the window ... */
  size_t steps;           /* ... of these */
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

static int read_counter(kt_energy_meter *m, unsigned long long *mj, kt_error *err) {
  kt_nvml_return e = m->lib->DeviceGetTotalEnergyConsumption(m->dev, mj);
  return e == KT_NVML_SUCCESS ? 0 : nvml_fails(m, err, e, "nvmlDeviceGetTotalEnergyConsumption");
}

static void nap(int64_t ns) {
  struct timespec t = {0, (long)ns};
  nanosleep(&t, NULL);
}

/* The counter's period: the mean time between its steps while the GPU
** idles, over the first three seen in PERIOD_WATCH_NS; 0 when fewer. */
static int measure_period(kt_energy_meter *m, kt_error *err) {
  unsigned long long mj, was;
  int64_t start = kt_now_ns(), at[3];
  int n = 0;
  if (read_counter(m, &was, err)) return -1;
  while (n < 3 && kt_now_ns() - start < PERIOD_WATCH_NS) {
    nap(KT_ENERGY_POLL_NS / 4);
    if (read_counter(m, &mj, err)) return -1;
    if (mj != was) at[n++] = kt_now_ns();
    was = mj;
  }
  m->period_ns = n == 3 ? (double)(at[2] - at[0]) / 2 : 0;
  return 0;
}

/* Whether the GPU keeps an energy counter (and its period); -1 when it
** reports neither energy nor power. */
static int probe(kt_energy_meter *m, kt_error *err) {
  unsigned long long mj;
  unsigned mw;
  kt_nvml_return e = m->lib->DeviceGetTotalEnergyConsumption(m->dev, &mj);
  if (e == KT_NVML_SUCCESS) return m->counter = true, measure_period(m, err);
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

static void poll_counter(kt_energy_meter *m) {
  unsigned long long mj;
  kt_error err;
  if (read_counter(m, &mj, &err)) {
    if (!m->failed) m->fault = err;
    m->failed = true;
    return;
  }
  if (mj == m->seen) return;
  m->last = (step){kt_now_ns(), mj};
  if (m->steps++ == 0) m->first = m->last;
  m->seen = mj;
}

static void sample_power(kt_energy_meter *m) {
  unsigned mw;
  int64_t now = kt_now_ns();
  kt_nvml_return e = m->lib->DeviceGetPowerUsage(m->dev, &mw);
  if (e != KT_NVML_SUCCESS) return fail_once(m, e, "nvmlDeviceGetPowerUsage");
  m->area += ((double)m->last_mw + mw) / 2 * (double)(now - m->last_ns);
  m->last_ns = now;
  m->last_mw = mw;
}

static void sample_clock(kt_energy_meter *m) {
  unsigned mhz;
  kt_nvml_return e = m->lib->DeviceGetClockInfo(m->dev, KT_NVML_CLOCK_SM, &mhz);
  if (e == KT_NVML_SUCCESS) m->clock_sum += mhz, m->nclock++;
  else if (e != KT_NVML_ERROR_NOT_SUPPORTED) fail_once(m, e, "nvmlDeviceGetClockInfo");
}

/* One wake of the sampler: the counter, or the power, and now and then the clock. */
static void sample(kt_energy_meter *m) {
  unsigned every = KT_ENERGY_SAMPLE_NS / KT_ENERGY_POLL_NS;
  if (m->counter) poll_counter(m);
  else sample_power(m);
  if (!m->counter || m->polls++ % every == every - 1) sample_clock(m);
}

static void *sampler(void *arg) {
  kt_energy_meter *m = arg;
  long interval = m->counter ? KT_ENERGY_POLL_NS : KT_ENERGY_SAMPLE_NS;
  pthread_mutex_lock(&m->lock);
  while (!m->stop) {
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_nsec += interval;
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
  m->nclock = m->steps = m->polls = 0;
  m->failed = m->stop = false;
  m->t0 = m->last_ns = kt_now_ns();
  if (m->counter && read_counter(m, &m->e0, err)) return -1;
  m->seen = m->e0;
  kt_nvml_return e = m->counter ? KT_NVML_SUCCESS : m->lib->DeviceGetPowerUsage(m->dev, &m->last_mw);
  if (e != KT_NVML_SUCCESS) return nvml_fails(m, err, e, "nvmlDeviceGetPowerUsage");
  if (pthread_create(&m->thread, NULL, sampler, m) != 0)
    return kt_fail(err, "cannot start the sampling thread");
  m->running = true;
  return 0;
}

/* The window's energy in joules, from t0 to t1. */
static double window_joules(const kt_energy_meter *m, int64_t t1) {
  if (!m->counter) return m->area / 1e12;
  if (m->period_ns <= 0 || m->steps < 3) return (double)(m->seen - m->e0) / 1e3;
  double watts = (double)(m->last.mj - m->first.mj) / 1e3 / ((double)(m->last.ns - m->first.ns) / 1e9);
  return watts * (double)(t1 - m->t0) / 1e9;
}

static int stop(kt_energy_meter *m, kt_energy_reading *out, kt_error *err) {
  if (!m->running) return kt_fail(err, "no window is open");
  stop_thread(m);
  if (m->counter) poll_counter(m), sample_clock(m); /* the thread is gone: no lock needed */
  else sample(m);
  if (m->failed) return *err = m->fault, -1;
  int64_t t1 = m->counter ? kt_now_ns() : m->last_ns;
  *out = (kt_energy_reading){.joules = window_joules(m, t1),
                             .seconds = (double)(t1 - m->t0) / 1e9,
                             .sm_mhz = m->nclock ? m->clock_sum / (double)m->nclock : NAN,
                             .counter = m->counter};
  return 0;
}

int kt_energy_meter_op(kt_energy_meter *m, kt_energy_op op, kt_energy_reading *out,
                       kt_error *err) {
  switch (op) {
    case KT_ENERGY_PROBE:
      *out = (kt_energy_reading){.seconds = m->period_ns / 1e9, .sm_mhz = NAN,
                                 .counter = m->counter};
      return 0;
    case KT_ENERGY_START: return start(m, err);
    case KT_ENERGY_STOP: return stop(m, out, err);
  }
  return kt_fail(err, "unknown operation %d", (int)op);
}
