/*
** remote_stage.c: bulk data through the staging area, a chunk at a time
** (remote_int.h). The area is used in two halves: while the server moves
** one chunk (to the device, or out of its own memory), the tuner fills the
** other half with the next chunk, or empties the chunk before, so that the
** tuner's copy and the server's overlap. Never more than one chunk's
** request is in flight once the tuner's copy is done, so a failure leaves
** at most one reply to wait for. A server on another node sees the area
** only as its transport carries it (far.h), from the start and one request
** at a time: there each chunk takes the whole area and waits for the last.
*/

#include "copy_wide.h"
#include "remote_int.h"

static size_t slots_of(const kt_bctx *c) { return c->far ? 1 : 2; }

static size_t least(size_t a, size_t b) { return a < b ? a : b; }

/* Asks for the chunk [done, done + chunk) of the move, staged at `at`. */
static int ask(kt_bctx *c, const rm_move *m, size_t done, size_t chunk, size_t at,
               kt_error *err) {
  if (begin(c, m->op, err)) return -1;
  kt_msg_put_u32(&c->out, m->id);
  if (m->queue >= 0) kt_msg_put_u32(&c->out, (uint32_t)m->queue);
  kt_msg_put_u64(&c->out, m->off + done);
  kt_msg_put_u64(&c->out, chunk);
  kt_msg_put_u64(&c->out, at);
  return post_replied(c, err);
}

/* Waits for the reply to the request in flight, if one is. */
static int settle(kt_bctx *c, bool *pending, kt_error *err) {
  kt_fault fault;
  if (!*pending) return 0;
  *pending = false;
  return rm_reply(c, &fault, err);
}

int rm_stage_write(kt_bctx *c, const rm_move *m, const unsigned char *src, size_t bytes,
                   kt_error *err) {
  size_t slots = slots_of(c), slot = c->staging_size / slots;
  bool pending = false;
  for (size_t done = 0, i = 0; done < bytes; i++) {
    size_t chunk = least(bytes - done, slot), at = (i % slots) * slot;
    if (slots == 1 && settle(c, &pending, err)) return -1; /* the one slot is in use */
    kt_copy_wide(c->staging + at, src + done, chunk);
    if (settle(c, &pending, err) || ask(c, m, done, chunk, at, err)) return -1;
    pending = true;
    done += chunk;
  }
  return settle(c, &pending, err);
}

int rm_copy_out(void *dst, size_t done, const unsigned char *chunk, size_t bytes) {
  kt_copy_wide((unsigned char *)dst + done, chunk, bytes);
  return 0;
}

int rm_stage_read(kt_bctx *c, const rm_move *m, size_t bytes, rm_take_fn take, void *ud,
                  kt_error *err) {
  size_t slots = slots_of(c), slot = c->staging_size / slots;
  bool pending = bytes > 0;
  if (pending && ask(c, m, 0, least(bytes, slot), 0, err)) return -1;
  for (size_t done = 0, i = 0; done < bytes; i++) {
    size_t chunk = least(bytes - done, slot), at = (i % slots) * slot, next = done + chunk;
    size_t after = (i + 1) % slots * slot;
    if (settle(c, &pending, err)) return -1;
    /* With two halves the next chunk comes while this one is taken. */
    if (slots > 1 && next < bytes) {
      if (ask(c, m, next, least(bytes - next, slot), after, err)) return -1;
      pending = true;
    }
    if (take(ud, done, c->staging + at, chunk)) return settle(c, &pending, err) ? -1 : 1;
    if (!pending && next < bytes) {
      if (ask(c, m, next, least(bytes - next, slot), after, err)) return -1;
      pending = true;
    }
    done = next;
  }
  return 0;
}
