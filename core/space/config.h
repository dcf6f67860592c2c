/*
** config.h: a configuration as callbacks see it: a space and the value
** index of each of its parameters. Below the tasks and the builds that
** both read it (task.h, build.h).
*/
#ifndef KT_CONFIG_H
#define KT_CONFIG_H

#include "space.h"

struct kt_config {
  const kt_space *space;
  uint64_t index;
  const uint32_t *vi; /* value index of every parameter */
};
typedef struct kt_config kt_config;

const kt_value *kt_config_value(const kt_config *cfg, size_t param);

#endif
