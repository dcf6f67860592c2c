#!/bin/sh
# ktlua from a bundle made by `make bundle`: the executable, Lua modules and
# libraries beside this script come first, so that it runs on a machine
# with no Lua installed.
here=$(cd "$(dirname "$0")" && pwd)
LUA_PATH="$here/share/lua/?.lua;$here/share/lua/?/init.lua;;"
LUA_CPATH="$here/lib/lua/?.so;;"
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LUA_PATH LUA_CPATH LD_LIBRARY_PATH
exec "$here/bin/ktlua" "$@"
