/*
** cuda_binary.h: a CUDA program as bytes (backend.h, prog_binary), made
** where the program was loaded (backend_cuda.c) or by NVRTC alone, without
** a context, in a compiler process (compile_worker.c): NVRTC needs only the
** device's architecture.
*/
#ifndef KT_CUDA_BINARY_H
#define KT_CUDA_BINARY_H

#include "device.h"

/* The bytes start with this (its NUL included), then the name expression
** and the symbol it became, each NUL-terminated, then the image (machine
** code, or PTX with its NUL). */
#define KT_CUDA_BINARY_MAGIC "ktcuda1"
#define KT_CUDA_BINARY_MAGIC_LEN 8

int kt_cuda_binary_pack(const char *name, const char *lowered, const void *image,
                        size_t image_size, unsigned char **bytes, size_t *size, kt_error *err);

/* The backend's compile_binary: compiles for dev's architecture. */
int kt_cuda_compile_binary(const kt_device_info *dev, const char *source, const char *options,
                           const char *name, unsigned char **bytes, size_t *size, char **log,
                           kt_error *err);

#endif
