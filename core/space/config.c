/*
** config.c: a configuration's values (config.h).
*/
#include "config.h"

const kt_value *kt_config_value(const kt_config *cfg, size_t param) {
  return &kt_space_param(cfg->space, param)->values[cfg->vi[param]];
}
