#!/bin/sh
# ensure-tools.sh COMMAND:PACKAGE ...
# Checks that each COMMAND is on the PATH. Missing ones are installed from
# Debian's packages when we are root with apt-get; otherwise prints one line
# that says exactly what to install, and fails.
missing_cmds=""
missing_pkgs=""
for pair in "$@"; do
  cmd=${pair%%:*}
  pkg=${pair#*:}
  if ! command -v "$cmd" >/dev/null 2>&1; then
    missing_cmds="$missing_cmds $cmd"
    missing_pkgs="$missing_pkgs $pkg"
  fi
done
[ -z "$missing_pkgs" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "  APT    installing$missing_pkgs (for$missing_cmds)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null &&
    apt-get install -y -qq --no-install-recommends $missing_pkgs >/dev/null ||
    { echo "error: apt-get install$missing_pkgs failed" >&2; exit 1; }
  exit 0
fi
echo "error: missing$missing_cmds: install them with: sudo apt-get install$missing_pkgs" >&2
exit 1
