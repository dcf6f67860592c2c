/*
** version.h: the version of ktlua, for the module, the executable and what
** they write (results, the database).
*/
#ifndef KTLUA_VERSION
#define KTLUA_VERSION "0.2.0"
#endif
