/*
** sha256.h: SHA-256 (FIPS 180-4), for keys that name a file's contents:
** the program cache keys a program by the headers its compile reads, and a
** header changed by a user must never look unchanged, as a short checksum
** may.
*/
#ifndef KT_SHA256_H
#define KT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define KT_SHA256_HEX 65 /* 64 hexadecimal digits and the NUL */

typedef struct kt_sha256 {
  uint32_t h[8];
  uint64_t bytes;          /* hashed so far */
  unsigned char block[64]; /* the part of a block not hashed yet */
} kt_sha256;

void kt_sha256_init(kt_sha256 *s);
void kt_sha256_add(kt_sha256 *s, const void *data, size_t n);
/* The digest in lower-case hexadecimal; s is spent. */
void kt_sha256_hex(kt_sha256 *s, char out[KT_SHA256_HEX]);

#endif
