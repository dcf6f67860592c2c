/*
** far.h: the way to a device process on another node, as a table of
** functions (scripts/layers.lua: the device layer calls nothing above it).
**
** A device server is a child process whose connections are socket pairs
** (remote.h). For a device of this process, the tuner forks the server
** itself. For a device of another node, the layer that owns the transport
** between nodes (MPI: kt_mpi_far, core/multi/mpi_devices.c) gives this table with the
** devices it lists there (kt_device_info.far, and .rank the node's number
** for it), as Lua's lua_Alloc is given to lua_newstate: the tuner's side
** then makes its socket pairs as ever and hands their far ends to `open`,
** which has the node fork the server and carries the frames both ways; the
** device layer knows nothing of how.
*/
#ifndef KT_FAR_H
#define KT_FAR_H

#include <stdbool.h>
#include <stddef.h>

#include "kt.h"

struct kt_device_info;

typedef struct kt_far {
  /* Starts a device server on node `node` whose connections are the far
  ** ends of main_fd and compile_fds[0..n-1] (and whose stderr goes to
  ** said_fd, or nowhere when -1); data for the staging area travels to and
  ** from `staging` inside the requests and replies that use it (there is
  ** no shared memory between nodes). The descriptors are the transport's
  ** from then on (the caller closes its own copies). Returns the link's
  ** number (> 0), or -1 with err. */
  int (*open)(int node, int main_fd, const int *compile_fds, int n, int said_fd, void *staging,
              size_t staging_size, kt_error *err);
  /* Stops the link's server (it may be stuck rather than dead; a node that
  ** is gone stops them all) and says how it ended. */
  void (*stop)(int link, char *why, size_t size);
  /* The id the device has on its own node, which its server opens. */
  const char *(*local_id)(const struct kt_device_info *dev);
  /* Whether the node still answers (false once taken for dead: its
  ** devices are gone for good). */
  bool (*alive)(int node);
} kt_far;

#endif
