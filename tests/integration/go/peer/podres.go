// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	podresv1 "nodecmtest/podresv1"
	podresv1alpha1 "nodecmtest/podresv1alpha1"
)

// podresMain runs one call as dcgm-exporter or NFD's topology updater make it and prints the
// answer as JSON (encoding/json of the generated types).
func podresMain(argv []string) int {
	fs := flag.NewFlagSet("podres", flag.ExitOnError)
	socket := fs.String("socket", "", "the pod resources socket")
	mode := fs.String("dial", "bare", "bare or unix")
	call := fs.String("call", "list", "list, get, allocatable or list-v1alpha1")
	pod := fs.String("pod", "", "get: the pod name")
	ns := fs.String("namespace", "default", "get: the pod namespace")
	fs.Parse(argv)

	conn, err := dial(*mode, *socket, 10*time.Second)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dial %s: %v\n", *socket, err)
		return 1
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var resp interface{}
	switch *call {
	case "list":
		resp, err = podresv1.NewPodResourcesListerClient(conn).List(ctx,
			&podresv1.ListPodResourcesRequest{})
	case "get":
		resp, err = podresv1.NewPodResourcesListerClient(conn).Get(ctx,
			&podresv1.GetPodResourcesRequest{PodName: *pod, PodNamespace: *ns})
	case "allocatable":
		resp, err = podresv1.NewPodResourcesListerClient(conn).GetAllocatableResources(ctx,
			&podresv1.AllocatableResourcesRequest{})
	case "list-v1alpha1":
		resp, err = podresv1alpha1.NewPodResourcesListerClient(conn).List(ctx,
			&podresv1alpha1.ListPodResourcesRequest{})
	default:
		fmt.Fprintf(os.Stderr, "-call %q: unknown\n", *call)
		return 2
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *call, err)
		return 1
	}
	b, _ := json.Marshal(resp)
	fmt.Println(string(b))
	return 0
}
