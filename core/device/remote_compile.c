/*
** remote_compile.c: the tuner's side of the compile connections. Compile
** threads each take a connection of their own, to compile in the device
** process, to take a compiled program's binary from it, to have it load a
** binary (a program from the disk cache: program_store.h), or to have it
** compile through its own disk cache (a device of another node: OP_BUILD).
*/
#include <stdlib.h>
#include <string.h>

#include "remote_int.h"

static int take_channel(kt_bctx *c, uint64_t *gen) {
  pthread_mutex_lock(&c->lock);
  int ch = -1;
  for (;;) {
    for (int i = 0; i < c->nchannels && ch < 0; i++)
      if (!c->cbusy[i] && c->cfds[i] >= 0) ch = i;
    bool none_open = true;
    for (int i = 0; i < c->nchannels; i++)
      if (c->cfds[i] >= 0) none_open = false;
    if (ch >= 0 || none_open) break;
    pthread_cond_wait(&c->freed, &c->lock);
  }
  if (ch >= 0) {
    c->cbusy[ch] = true;
    if (c->compiling++ == 0) c->compiling_since = kt_now_ns();
  }
  *gen = c->generation;
  pthread_mutex_unlock(&c->lock);
  return ch;
}

static void give_channel(kt_bctx *c, int ch) {
  pthread_mutex_lock(&c->lock);
  c->cbusy[ch] = false;
  if (--c->compiling == 0) c->compile_ns += kt_now_ns() - c->compiling_since;
  pthread_cond_broadcast(&c->freed);
  pthread_mutex_unlock(&c->lock);
}

int64_t rm_compile_ns(kt_bctx *c) {
  pthread_mutex_lock(&c->lock);
  int64_t ns = c->compile_ns + (c->compiling ? kt_now_ns() - c->compiling_since : 0);
  pthread_mutex_unlock(&c->lock);
  return ns;
}

/* Sends out on a compile connection and receives the reply into in, past
** its status (always none on these connections). *gen is the generation
** of the server that answered; want, when not 0, the one the request is
** for. 0, or -1 with err when the server is gone or another. */
static int ask(kt_bctx *c, kt_msg *out, kt_msg *in, uint64_t *gen, uint64_t want,
               kt_error *err) {
  int ch = take_channel(c, gen);
  if (ch < 0) return kt_fail(err, "the device process is restarting");
  if (want && *gen != want) {
    give_channel(c, ch);
    return kt_fail(err, "the program belongs to a device process that is gone");
  }
  bool ok = kt_wire_send(c->cfds[ch], out) == KT_WIRE_OK &&
            kt_wire_recv(c->cfds[ch], in, 0) == KT_WIRE_OK;
  if (!ok) atomic_store(&c->gone, *gen); /* the owning thread ends it (rm_generation) */
  give_channel(c, ch);
  if (!ok) return kt_fail(err, "the device process stopped during a compile");
  kt_msg_get_u32(in);
  return 0;
}

/* What an OP_BUILD reply says after the log: whether the program came
** from the server's program cache, and why it was not kept there. */
typedef struct built {
  bool *loaded;
  char **unkept;
} built;

static void read_built(kt_msg *in, built *b) {
  *b->loaded = kt_msg_get_u32(in) != 0;
  char *why = kt_msg_get_str(in);
  if (why && !why[0]) free(why), why = NULL;
  *b->unkept = why;
}

/* A new program, made by the server from the request in out (OP_COMPILE,
** OP_PROG_LOAD or OP_BUILD with b, whose program id is put by this function). */
static kt_bprog *make(kt_bctx *c, uint32_t op, kt_msg *out, char **log, built *b,
                      kt_error *err) {
  *log = NULL;
  kt_bprog *p = kt_alloc(sizeof *p, err);
  if (!p) return NULL;
  pthread_mutex_lock(&c->lock);
  p->id = ++c->next_id;
  pthread_mutex_unlock(&c->lock);
  kt_msg head, in;
  kt_msg_init(&head);
  kt_msg_init(&in);
  kt_msg_put_u32(&head, op);
  kt_msg_put_u32(&head, p->id);
  kt_msg_put(&head, out->data, out->len);
  uint32_t made = 0;
  if (ask(c, &head, &in, &p->gen, 0, err) == 0) {
    made = kt_msg_get_u32(&in);
    *log = kt_msg_get_str(&in);
    if (b) read_built(&in, b);
    if (!made) kt_fail(err, "%s", op == OP_PROG_LOAD ? "loading failed" : "compilation failed");
  }
  kt_msg_free(&head);
  kt_msg_free(&in);
  if (made) return p;
  free(p);
  return NULL;
}

kt_bprog *rm_compile(kt_bctx *c, const char *source, const char *options, const char *name,
                     char **log, kt_error *err) {
  kt_msg out;
  kt_msg_init(&out);
  kt_msg_put_str(&out, source);
  kt_msg_put_str(&out, options);
  kt_msg_put_str(&out, name);
  kt_bprog *p = make(c, OP_COMPILE, &out, log, NULL, err);
  kt_msg_free(&out);
  return p;
}

kt_bprog *rm_prog_load(kt_bctx *c, const unsigned char *bytes, size_t size, const char *options,
                       const char *name, char **log, kt_error *err) {
  kt_msg out;
  kt_msg_init(&out);
  kt_msg_put_bytes(&out, bytes, size);
  kt_msg_put_str(&out, options);
  kt_msg_put_str(&out, name);
  kt_bprog *p = make(c, OP_PROG_LOAD, &out, log, NULL, err);
  kt_msg_free(&out);
  return p;
}

kt_bprog *rm_build_there(kt_bctx *c, const char *source, const char *options, const char *name,
                         char **log, bool *loaded, char **unkept, kt_error *err) {
  *loaded = false;
  *unkept = NULL;
  kt_msg out;
  kt_msg_init(&out);
  kt_msg_put_str(&out, source);
  kt_msg_put_str(&out, options);
  kt_msg_put_str(&out, name);
  built b = {loaded, unkept};
  kt_bprog *p = make(c, OP_BUILD, &out, log, &b, err);
  kt_msg_free(&out);
  return p;
}

int rm_prog_binary(kt_bctx *c, kt_bprog *p, unsigned char **bytes, size_t *size,
                   kt_error *err) {
  *bytes = NULL;
  *size = 0;
  kt_msg out, in;
  kt_msg_init(&out);
  kt_msg_init(&in);
  kt_msg_put_u32(&out, OP_PROG_BINARY);
  kt_msg_put_u32(&out, p->id);
  uint64_t gen;
  int rc = ask(c, &out, &in, &gen, p->gen, err);
  if (rc == 0 && kt_msg_get_u32(&in)) {
    if (!(*bytes = kt_msg_get_bytes(&in, size))) rc = kt_fail(err, "a binary reply is cut short");
  } else if (rc == 0) {
    char *why = kt_msg_get_str(&in);
    rc = kt_fail(err, "%s", why ? why : "no binary");
    free(why);
  }
  kt_msg_free(&out);
  kt_msg_free(&in);
  return rc;
}
