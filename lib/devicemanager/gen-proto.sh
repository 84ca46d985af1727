#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Generate protobuf-c code for a .proto: gen-proto.sh PROTOC_C PROTO OUTDIR
# protoc-c names the C member of an rpc called Register "register", which is a C keyword;
# the header is patched to "register_" so that it compiles.
set -eu
protoc_c=$1
proto=$2
outdir=$3
base=$(basename "$proto" .proto)
"$protoc_c" --proto_path="$(dirname "$proto")" --c_out="$outdir" "$proto"
sed -i 's/(\*register)(/(*register_)(/' "$outdir/$base.pb-c.h"
