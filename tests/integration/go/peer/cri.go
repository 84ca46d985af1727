// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	cri "nodecmtest/cri"

	"github.com/golang/protobuf/proto"
	"google.golang.org/grpc/status"
)

// criMain is the runtime side of a kubelet on one grpc-go connection: each stdin line is
// {"method": M, "req": base64 of the request the test's kubelet model built}; the request is
// decoded into the generated Go type and sent with the typed client, as the kubelet's
// remote runtime service does; the answer is one line {"ok": true, "reply": base64} or
// {"ok": false, "code": "Unknown", "message": "..."}.
func criMain(argv []string) int {
	fs := flag.NewFlagSet("cri", flag.ExitOnError)
	socket := fs.String("socket", "", "the runtime (or proxy) socket")
	mode := fs.String("dial", "unix", "bare or unix")
	fs.Parse(argv)
	conn, err := dial(*mode, *socket, 10*time.Second)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dial %s: %v\n", *socket, err)
		return 1
	}
	defer conn.Close()
	rt := cri.NewRuntimeServiceClient(conn)
	calls := map[string]func(context.Context, []byte) (proto.Message, error){
		"Version": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.VersionRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.Version(ctx, q)
		},
		"RunPodSandbox": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.RunPodSandboxRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.RunPodSandbox(ctx, q)
		},
		"StopPodSandbox": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.StopPodSandboxRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.StopPodSandbox(ctx, q)
		},
		"RemovePodSandbox": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.RemovePodSandboxRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.RemovePodSandbox(ctx, q)
		},
		"CreateContainer": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.CreateContainerRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.CreateContainer(ctx, q)
		},
		"StartContainer": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.StartContainerRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.StartContainer(ctx, q)
		},
		"StopContainer": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.StopContainerRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.StopContainer(ctx, q)
		},
		"RemoveContainer": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.RemoveContainerRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.RemoveContainer(ctx, q)
		},
		"ContainerStatus": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.ContainerStatusRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.ContainerStatus(ctx, q)
		},
		"UpdateContainerResources": func(ctx context.Context, b []byte) (proto.Message, error) {
			q := &cri.UpdateContainerResourcesRequest{}
			if err := proto.Unmarshal(b, q); err != nil {
				return nil, err
			}
			return rt.UpdateContainerResources(ctx, q)
		},
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var in struct {
			Method string `json:"method"`
			Req    string `json:"req"`
		}
		out := map[string]interface{}{}
		req, err := []byte(nil), json.Unmarshal(sc.Bytes(), &in)
		if err == nil {
			req, err = base64.StdEncoding.DecodeString(in.Req)
		}
		fn := calls[in.Method]
		if err == nil && fn == nil {
			err = fmt.Errorf("method %q not known to the Go client", in.Method)
		}
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			var rep proto.Message
			rep, err = fn(ctx, req)
			cancel()
			if err == nil {
				b, _ := proto.Marshal(rep)
				out["ok"] = true
				out["reply"] = base64.StdEncoding.EncodeToString(b)
			}
		}
		if err != nil {
			st, _ := status.FromError(err)
			out["ok"] = false
			out["code"] = st.Code().String()
			out["message"] = st.Message()
		}
		b, _ := json.Marshal(out)
		os.Stdout.Write(append(b, '\n'))
	}
	return 0
}
