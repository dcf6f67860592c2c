#!/bin/sh
# Installs the Debian packages ktlua needs to build and test, if missing.
set -e
# gnuplot-nox draws the plots of `ktlua report`; netpbm decodes the screenshot
# that report_spec takes with chromium, which is optional: where it cannot be
# installed, that one test is pending and says so.
pkgs="gcc make lua5.4 liblua5.4-dev ocl-icd-opencl-dev opencl-headers pocl-opencl-icd lua-filesystem lua-busted zlib1g-dev libsqlite3-dev sqlite3 libreadline-dev tmux pkgconf groff-base bsdextrautils bsdutils gnuplot-nox netpbm python3-jsonschema libfann-dev libopenmpi-dev openmpi-bin"
optional="chromium"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=""
for p in $pkgs; do installed "$p" || missing="$missing $p"; done
missing_optional=""
for p in $optional; do installed "$p" || missing_optional="$missing_optional $p"; done
[ -z "$missing$missing_optional" ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
if [ -n "$missing" ]; then
  echo "ktlua: installing$missing"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
fi
if [ -n "$missing_optional" ]; then
  echo "ktlua: installing$missing_optional (optional)"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing_optional ||
    echo "ktlua: could not install$missing_optional: the report's browser test will be pending"
fi
