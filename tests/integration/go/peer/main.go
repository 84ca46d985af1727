// SPDX-License-Identifier: Apache-2.0

// nodecm-go-peer: the Go (grpc-go) peers of nodecmd's integration tests, one program with a
// subcommand per peer, built at test time from Debian's golang packages against stubs that
// protoc-gen-go generates from lib/api (tests/integration/golib.py):
//
//	plugin   a device plugin as the field writes them (one socket per resource, Register on
//	         kubelet.sock, ListAndWatch, GetPreferredAllocation, Allocate, PreStartContainer,
//	         health changes, a restart, registering again when its socket or kubelet.sock is
//	         replaced)
//	podres   a pod resources client (List, Get, GetAllocatableResources; v1alpha1 List)
//	cri      a CRI client that sends what the test's kubelet model hands it, as grpc-go does
//
// Each dials the way real programs do: -dial bare (the socket path as the target with a unix
// dialer: the kubelet's sample plugin, most device plugins and pod-resources consumers; grpc-go
// before 1.57 then sends the path as :authority) or -dial unix ("unix://" + path, grpc-go's
// resolver; :authority "localhost"). Events are JSON lines on stdout.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
)

var outMu sync.Mutex

// emit writes one JSON event line on stdout.
func emit(event string, kv map[string]interface{}) {
	if kv == nil {
		kv = map[string]interface{}{}
	}
	kv["event"] = event
	b, _ := json.Marshal(kv)
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

// dial connects to the unix socket PATH as MODE says ("bare" or "unix"), blocking until the
// connection is up or the timeout passes, as plugins dial kubelet.sock.
func dial(mode, path string, timeout time.Duration) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch mode {
	case "bare":
		return grpc.DialContext(ctx, path, grpc.WithInsecure(), grpc.WithBlock(),
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", addr)
			}))
	case "unix":
		return grpc.DialContext(ctx, "unix://"+path, grpc.WithInsecure(), grpc.WithBlock())
	}
	return nil, fmt.Errorf("-dial %q: want bare or unix", mode)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: nodecm-go-peer plugin|podres|cri [OPTIONS] (-h for each)")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "plugin":
		os.Exit(pluginMain(args))
	case "podres":
		os.Exit(podresMain(args))
	case "cri":
		os.Exit(criMain(args))
	}
	usage()
}
