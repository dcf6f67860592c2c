/*
** wire.h: messages between the tuner and its device server: a growable
** buffer with typed puts and gets, and framed sends and receives on a
** socket with a deadline.
**
** A frame is a 4-byte length and that many bytes. Integers travel in the
** host's byte order (both ends are the same program on the same machine).
*/
#ifndef KT_WIRE_H
#define KT_WIRE_H

#include "kt.h"

typedef struct kt_msg {
  unsigned char *data;
  size_t len, cap;
  size_t at;  /* read position */
  bool bad;   /* a get ran past the end */
} kt_msg;

void kt_msg_init(kt_msg *m);
void kt_msg_free(kt_msg *m);
void kt_msg_reset(kt_msg *m);

int kt_msg_put(kt_msg *m, const void *p, size_t n);
int kt_msg_put_u32(kt_msg *m, uint32_t v);
int kt_msg_put_u64(kt_msg *m, uint64_t v);
int kt_msg_put_f64(kt_msg *m, double v);
int kt_msg_put_str(kt_msg *m, const char *s); /* NULL travels as NULL */
int kt_msg_put_bytes(kt_msg *m, const void *p, size_t n);

bool kt_msg_get(kt_msg *m, void *p, size_t n);
uint32_t kt_msg_get_u32(kt_msg *m);
uint64_t kt_msg_get_u64(kt_msg *m);
double kt_msg_get_f64(kt_msg *m);
/* A malloc'd copy (NULL for a NULL string, or when the message is short). */
char *kt_msg_get_str(kt_msg *m);
/* A malloc'd copy of bytes put by kt_msg_put_bytes, and their count (NULL
** when the message is short or memory is out). */
unsigned char *kt_msg_get_bytes(kt_msg *m, size_t *n);


/* Outcome of a receive. */
typedef enum kt_wire_rc { KT_WIRE_OK = 0, KT_WIRE_CLOSED, KT_WIRE_TIMEOUT, KT_WIRE_ERROR } kt_wire_rc;

kt_wire_rc kt_wire_send(int fd, const kt_msg *m);
/* Frames gathered to go in one send: kt_wire_frame appends m's frame to
** frames, kt_wire_send_frames sends them. */
int kt_wire_frame(kt_msg *frames, const kt_msg *m);
kt_wire_rc kt_wire_send_frames(int fd, const kt_msg *frames);
/* Waits until deadline (kt_now_ns clock; 0: forever) for a frame. */
kt_wire_rc kt_wire_recv(int fd, kt_msg *m, int64_t deadline_ns);
/* Waits for fd to be readable before the deadline (0: none): KT_WIRE_OK,
** KT_WIRE_TIMEOUT or KT_WIRE_ERROR. */
kt_wire_rc kt_wire_wait(int fd, int64_t deadline_ns);

#endif
