/*
** prompt.h: reading the lines of ktlua's interactive prompt (prompt.c).
*/
#ifndef KT_PROMPT_H
#define KT_PROMPT_H

#include <stdbool.h>

#include <lua.h>

typedef struct prompt prompt;

/* Starts reading lines for L's prompt: with readline (history, Tab) when
** stdin and stdout are a terminal. */
prompt *prompt_open(lua_State *L);
/* Pushes the next line (without its newline) and returns true, or false
** at the end of the input. */
bool prompt_read(prompt *p, lua_State *L, const char *text);
/* Saves the history (bounded) and ends. */
void prompt_close(prompt *p);

#endif
