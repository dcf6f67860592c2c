/*
** stats.h: the statistics of timing samples.
*/
#ifndef KT_STATS_H
#define KT_STATS_H

#include <stddef.h>

double kt_median(const double *x, size_t n);
double kt_mean(const double *x, size_t n);
/* Relative standard error of the mean: (s / sqrt(n)) / mean; infinite
** for fewer than two samples or a zero mean. */
double kt_rse(const double *x, size_t n);

#endif
