/*
** remote_energy.c: energy (energy.h) across the device process: the
** tuner's side sends OP_ENERGY, the server's side asks its real backend.
** The meter lives in the server, beside the context it measures.
*/
#include <math.h>
#include <string.h>

#include "energy.h"
#include "remote_int.h"

int rm_energy(kt_bctx *c, int op, kt_energy_reading *out, kt_error *err) {
  kt_fault fault;
  if (begin(c, OP_ENERGY, err) || kt_msg_put_u32(&c->out, (uint32_t)op) ||
      call(c, &fault, err))
    return -1;
  out->joules = kt_msg_get_f64(&c->in);
  out->seconds = kt_msg_get_f64(&c->in);
  out->sm_mhz = kt_msg_get_f64(&c->in);
  out->counter = kt_msg_get_u32(&c->in) != 0;
  return c->in.bad ? kt_fail(err, "the device process's reply to OP_ENERGY is cut short") : 0;
}

void kt_server_energy(const kt_backend *be, kt_bctx *ctx, kt_msg *in, kt_msg *out) {
  int op = (int)kt_msg_get_u32(in);
  kt_energy_reading r = {.sm_mhz = NAN};
  kt_error err;
  int rc = !ctx         ? kt_fail(&err, "no device is open in the device process")
           : !be->energy ? kt_fail(&err, "%s; this device's backend is %s", KT_ENERGY_NEEDS_CUDA,
                                   be->name)
                         : be->energy(ctx, op, &r, &err);
  kt_msg_reset(out);
  kt_msg_put_u32(out, rc ? KT_FAULT_FATAL : KT_FAULT_NONE);
  if (rc) {
    kt_msg_put_str(out, err.msg);
    return;
  }
  kt_msg_put_f64(out, r.joules);
  kt_msg_put_f64(out, r.seconds);
  kt_msg_put_f64(out, r.sm_mhz);
  kt_msg_put_u32(out, r.counter);
}
