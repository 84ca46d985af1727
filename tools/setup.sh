#!/bin/sh
# Install the Debian packages nodecm needs to build and test, and nothing else.
# Idempotent: when everything is present it only runs dpkg-query and exits quietly.
set -eu

PKGS="build-essential meson ninja-build pkg-config clang clang-format libclang-rt-14-dev
libjson-c-dev libyaml-dev libhwloc-dev libcmocka-dev
libprotobuf-c-dev protobuf-c-compiler libnghttp2-dev libuv1-dev
python3 python3-grpcio python3-grpc-tools python3-protobuf curl
groff-base bzip2 git hwloc-nox
containerd runc podman busybox-static
golang-go golang-google-grpc-dev golang-goprotobuf-dev protobuf-compiler
chromium fonts-dejavu-core strace"

missing=""
for p in $PKGS; do
        if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
                missing="$missing $p"
        fi
done
[ -z "$missing" ] && exit 0

echo "setup: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
        SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# An old package index fails with 404s; refresh it once and retry.
if ! $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
        $SUDO apt-get update -qq
        $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
