#!/bin/sh
# Installs the Debian packages ktlua needs to build and test, if missing.
set -e
pkgs="gcc make lua5.4 liblua5.4-dev ocl-icd-opencl-dev opencl-headers pocl-opencl-icd lua-filesystem lua-busted zlib1g-dev libsqlite3-dev sqlite3 libreadline-dev tmux pkgconf groff-base bsdextrautils bsdutils libfann-dev"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "ktlua: installing$missing"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
