#!/bin/sh
# Installs the reference tools of `deno task bench` from Debian/Ubuntu packages when absent:
# wrk (HTTP/1.1 load), nginx (the canned KServe v2 server), h2load (gRPC, nghttp2-client) and
# Open MPI's mpirun (the mpi case).
# The bench starts its own nginx from a generated config; the distribution's service is not used
# (on a systemd machine the package starts it on port 80: `systemctl disable --now nginx` if unwanted).
# Never run by CI or the test suite.
set -eu

missing=""
command -v wrk >/dev/null 2>&1 || missing="$missing wrk"
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$missing nginx"
command -v h2load >/dev/null 2>&1 || missing="$missing nghttp2-client"
command -v mpirun >/dev/null 2>&1 || missing="$missing openmpi-bin libopenmpi3"

if [ -z "$missing" ]; then
  echo "wrk, nginx, h2load and mpirun are installed"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing:$missing"
$sudo apt-get update
# shellcheck disable=SC2086 # word splitting of the package list is intended
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
