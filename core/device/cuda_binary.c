/*
** cuda_binary.c: CUDA program binaries (cuda_binary.h).
*/
#include "cuda_binary.h"

#ifdef KT_HAVE_CUDA

#include <stdlib.h>
#include <string.h>

#include "cuda_lib.h"
#include "nvrtc.h"

int kt_cuda_binary_pack(const char *name, const char *lowered, const void *image,
                        size_t image_size, unsigned char **bytes, size_t *size, kt_error *err) {
  size_t nname = strlen(name) + 1, nlowered = strlen(lowered) + 1;
  *size = KT_CUDA_BINARY_MAGIC_LEN + nname + nlowered + image_size;
  if (!(*bytes = kt_alloc(*size, err))) return -1;
  unsigned char *p = *bytes;
  memcpy(p, KT_CUDA_BINARY_MAGIC, KT_CUDA_BINARY_MAGIC_LEN);
  memcpy(p += KT_CUDA_BINARY_MAGIC_LEN, name, nname);
  memcpy(p += nname, lowered, nlowered);
  memcpy(p + nlowered, image, image_size);
  return 0;
}

/* As backend_cuda.c's compile, whose program's bytes this gives: the same
** job (the #define lines are "parameters" in messages), the same log. */
int kt_cuda_compile_binary(const kt_device_info *dev, const char *source, const char *options,
                           const char *name, unsigned char **bytes, size_t *size, char **log,
                           kt_error *err) {
  *log = NULL;
  const char *arch = kt_device_string(dev, "arch");
  if (!arch || !arch[0]) {
    const kt_cuda_lib *lib = kt_cuda_nvrtc_get();
    return kt_fail(err, "NVRTC %d.%d cannot compile for this device", lib->nvrtc_major,
                   lib->nvrtc_minor);
  }
  kt_nvrtc_job job = {source, "parameters", options, arch, &name, 1};
  kt_nvrtc_out out;
  int rc = kt_nvrtc_compile(&job, &out, err);
  if (rc >= 0) {
    *log = out.log;
    out.log = NULL;
  }
  if (rc > 0) kt_fail(err, "NVRTC could not compile the program");
  else if (rc == 0 && out.cubin)
    rc = kt_cuda_binary_pack(name, out.lowered[0], out.cubin, out.cubin_size, bytes, size, err);
  else if (rc == 0)
    rc = kt_cuda_binary_pack(name, out.lowered[0], out.ptx, strlen(out.ptx) + 1, bytes, size, err);
  kt_nvrtc_out_clear(&out);
  return rc;
}

#endif
