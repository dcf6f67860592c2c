/*
** log_append.h: a log that stops growing: build logs, device processes'
** output, the inputs' checks (result.h keeps such logs; compile_pool.c
** and the tuning write them).
*/
#ifndef KT_LOG_APPEND_H
#define KT_LOG_APPEND_H

/* Appends text to *log (a malloc'd string, NULL when empty), within
** KT_RESULT_LOG_MAX bytes (the rest is left out, and the log says so). */
#define KT_RESULT_LOG_MAX (64 * 1024)
void kt_log_append(char **log, const char *text);

#endif
