#!/bin/sh
# Installs the Debian packages nicc's toolchain and tests need, when they are missing.
# `setup.sh bench` also installs python3-xgboost, the peer of the distillation benchmark.
set -eu
missing=""
command -v riscv64-unknown-elf-gcc >/dev/null 2>&1 || missing="$missing gcc-riscv64-unknown-elf"
command -v qemu-riscv64 >/dev/null 2>&1 || missing="$missing qemu-user"
if [ "${1:-}" = bench ]; then
  /usr/bin/python3 -c 'import xgboost' >/dev/null 2>&1 || missing="$missing python3-xgboost"
fi
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing$missing from Debian"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
command -v riscv64-unknown-elf-gcc >/dev/null && command -v qemu-riscv64 >/dev/null
[ "${1:-}" != bench ] || /usr/bin/python3 -c 'import xgboost'
