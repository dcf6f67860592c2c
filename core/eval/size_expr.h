/*
** size_expr.h: a thread size given by an expression of the parameters
** (`k:modifier("global_x", "4096 // MWG")`, T1's GlobalSize), evaluated in
** C: the device's limits check every configuration's sizes when the space
** is made (prune.c), where a Lua function per configuration cost more than
** the rest of the space.
*/
#ifndef KT_SIZE_EXPR_H
#define KT_SIZE_EXPR_H

#include "task.h"

/* Makes m a KT_MOD_FN modifier whose new size is the value of text under
** the configuration (names in consts are constants; the others must be
** parameters of space); m->cb owns the parsed expression. The error
** quotes the expression and names the character. */
int kt_size_expr_modifier(const kt_space *space, const char *text, const kt_named_value *consts,
                          size_t nconsts, kt_modifier *m, kt_error *err);

#endif
