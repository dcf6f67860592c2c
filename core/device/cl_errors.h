/*
** cl_errors.h: the names of OpenCL's error codes.
*/
#ifndef KT_CL_ERRORS_H
#define KT_CL_ERRORS_H

/* The name of an OpenCL error code ("CL_MEM_COPY_OVERLAP" for -8), also
** of codes newer than the headers ktlua builds against name; "unknown
** OpenCL error" for any other. */
const char *kt_cl_error_name(int code);

#endif
