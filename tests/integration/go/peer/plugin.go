// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	dp "nodecmtest/dp"

	"google.golang.org/grpc"
)

// resource is one resource the plugin serves, on its own socket (as generic-device-plugin
// and the SR-IOV plugin serve several).
type resource struct {
	name    string
	socket  string // file name in the plugin directory
	mu      sync.Mutex
	devices []*dp.Device
	srv     *grpc.Server
	watch   []chan struct{}
}

type plugin struct {
	dir       string
	mode      string
	preferred bool
	preStart  bool
	res       []*resource
}

// parseDevices reads "id:numa[,numa]:health;..." ("-" for no NUMA node).
func parseDevices(spec string) []*dp.Device {
	var out []*dp.Device
	for _, item := range strings.Split(spec, ";") {
		if item == "" {
			continue
		}
		p := strings.Split(item, ":")
		d := &dp.Device{ID: p[0], Health: "Healthy"}
		if len(p) > 1 && p[1] != "-" {
			d.Topology = &dp.TopologyInfo{}
			for _, n := range strings.Split(p[1], ",") {
				id, _ := strconv.ParseInt(n, 10, 64)
				d.Topology.Nodes = append(d.Topology.Nodes, &dp.NUMANode{ID: id})
			}
		}
		if len(p) > 2 {
			d.Health = p[2]
		}
		out = append(out, d)
	}
	return out
}

func (r *resource) kick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.watch {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// ---- the DevicePlugin service of one resource ----

type service struct {
	p *plugin
	r *resource
}

func (s *service) GetDevicePluginOptions(ctx context.Context, e *dp.Empty) (*dp.DevicePluginOptions, error) {
	emit("options", map[string]interface{}{"resource": s.r.name})
	return &dp.DevicePluginOptions{PreStartRequired: s.p.preStart,
		GetPreferredAllocationAvailable: s.p.preferred}, nil
}

func (s *service) ListAndWatch(e *dp.Empty, stream dp.DevicePlugin_ListAndWatchServer) error {
	c := make(chan struct{}, 1)
	c <- struct{}{}
	s.r.mu.Lock()
	s.r.watch = append(s.r.watch, c)
	s.r.mu.Unlock()
	defer func() {
		s.r.mu.Lock()
		for i, w := range s.r.watch {
			if w == c {
				s.r.watch = append(s.r.watch[:i], s.r.watch[i+1:]...)
				break
			}
		}
		s.r.mu.Unlock()
	}()
	emit("listandwatch", map[string]interface{}{"resource": s.r.name})
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case <-c:
		}
		s.r.mu.Lock()
		resp := &dp.ListAndWatchResponse{Devices: s.r.devices}
		healthy := 0
		for _, d := range s.r.devices {
			if d.Health == "Healthy" {
				healthy++
			}
		}
		s.r.mu.Unlock()
		if err := stream.Send(resp); err != nil {
			return err
		}
		emit("sent", map[string]interface{}{"resource": s.r.name, "devices": len(resp.Devices),
			"healthy": healthy})
	}
}

// GetPreferredAllocation prefers the highest ids: a choice the kubelet's own order would not
// make, so that the test sees it was asked.
func (s *service) GetPreferredAllocation(ctx context.Context, req *dp.PreferredAllocationRequest) (*dp.PreferredAllocationResponse, error) {
	out := &dp.PreferredAllocationResponse{}
	for _, cr := range req.ContainerRequests {
		pick := append([]string{}, cr.MustIncludeDeviceIDs...)
		avail := append([]string{}, cr.AvailableDeviceIDs...)
		sort.Sort(sort.Reverse(sort.StringSlice(avail)))
		for _, d := range avail {
			if int32(len(pick)) >= cr.AllocationSize {
				break
			}
			dup := false
			for _, q := range pick {
				dup = dup || q == d
			}
			if !dup {
				pick = append(pick, d)
			}
		}
		sort.Strings(pick)
		emit("preferred", map[string]interface{}{"resource": s.r.name,
			"available": cr.AvailableDeviceIDs, "size": cr.AllocationSize, "answer": pick})
		out.ContainerResponses = append(out.ContainerResponses,
			&dp.ContainerPreferredAllocationResponse{DeviceIDs: pick})
	}
	return out, nil
}

func (s *service) Allocate(ctx context.Context, req *dp.AllocateRequest) (*dp.AllocateResponse, error) {
	out := &dp.AllocateResponse{}
	for _, cr := range req.ContainerRequests {
		ids := cr.DevicesIds
		emit("allocate", map[string]interface{}{"resource": s.r.name, "ids": ids})
		env := strings.ToUpper(strings.NewReplacer(".", "_", "/", "_", "-", "_").Replace(s.r.name))
		c := &dp.ContainerAllocateResponse{
			Envs:        map[string]string{env: strings.Join(ids, ",")},
			Annotations: map[string]string{s.r.name: strings.Join(ids, ",")},
			Mounts: []*dp.Mount{{ContainerPath: "/var/run/" + filepath.Base(s.r.name),
				HostPath: "/tmp", ReadOnly: true}},
		}
		for _, id := range ids {
			c.Devices = append(c.Devices, &dp.DeviceSpec{ContainerPath: "/dev/" + id,
				HostPath: "/dev/null", Permissions: "rw"})
			c.CdiDevices = append(c.CdiDevices, &dp.CDIDevice{Name: s.r.name + "=" + id})
		}
		out.ContainerResponses = append(out.ContainerResponses, c)
	}
	return out, nil
}

func (s *service) PreStartContainer(ctx context.Context, req *dp.PreStartContainerRequest) (*dp.PreStartContainerResponse, error) {
	ids := append([]string{}, req.DevicesIds...)
	sort.Strings(ids)
	emit("prestart", map[string]interface{}{"resource": s.r.name, "ids": ids})
	return &dp.PreStartContainerResponse{}, nil
}

// ---- serving and registering ----

func (p *plugin) serve(r *resource) error {
	path := filepath.Join(p.dir, r.socket)
	os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	r.srv = grpc.NewServer()
	dp.RegisterDevicePluginServer(r.srv, &service{p, r})
	go r.srv.Serve(l)
	return nil
}

// register calls Register on kubelet.sock as the kubelet's sample plugin does: a blocking dial,
// then one unary call; its error is what grpc-go reports.
func (p *plugin) register(r *resource) error {
	conn, err := dial(p.mode, filepath.Join(p.dir, "kubelet.sock"), 10*time.Second)
	if err != nil {
		emit("register-failed", map[string]interface{}{"resource": r.name, "error": err.Error()})
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = dp.NewRegistrationClient(conn).Register(ctx, &dp.RegisterRequest{
		Version: "v1beta1", Endpoint: r.socket, ResourceName: r.name,
		Options: &dp.DevicePluginOptions{PreStartRequired: p.preStart,
			GetPreferredAllocationAvailable: p.preferred}})
	if err != nil {
		emit("register-failed", map[string]interface{}{"resource": r.name, "error": err.Error()})
		return err
	}
	emit("registered", map[string]interface{}{"resource": r.name})
	return nil
}

// restart stops the resource's server and serves and registers anew, as a plugin does when
// its socket is gone (the kubelet wiped the directory at its start).
func (p *plugin) restart(r *resource) {
	if r.srv != nil {
		r.srv.Stop()
	}
	if err := p.serve(r); err != nil {
		emit("serve-failed", map[string]interface{}{"resource": r.name, "error": err.Error()})
		return
	}
	p.register(r)
}

func ident(path string) string {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return ""
	}
	// tmpfs hands a freed inode number out again at once: the change time tells
	return fmt.Sprintf("%d:%d:%d.%d", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}

// watch registers again the way plugins in the field do: "own" when the plugin's socket
// disappears (generic-device-plugin, the kubelet's sample), "kubelet" when kubelet.sock is
// created anew (NVIDIA's); polling, as a stand-in for fsnotify that Debian's Go lacks here.
func (p *plugin) watch(how string) {
	kubelet := filepath.Join(p.dir, "kubelet.sock")
	last := ident(kubelet)
	for {
		time.Sleep(50 * time.Millisecond)
		if how == "kubelet" || how == "both" {
			if now := ident(kubelet); now != "" && now != last {
				last = now
				emit("kubelet-restarted", nil)
				for _, r := range p.res {
					p.restart(r)
				}
				continue
			}
		}
		if how == "own" || how == "both" {
			for _, r := range p.res {
				if _, err := os.Stat(filepath.Join(p.dir, r.socket)); os.IsNotExist(err) {
					emit("socket-deleted", map[string]interface{}{"resource": r.name})
					p.restart(r)
				}
			}
			last = ident(kubelet)
		}
	}
}

func (p *plugin) find(name string) *resource {
	for _, r := range p.res {
		if r.name == name {
			return r
		}
	}
	return nil
}

// commands on stdin: "health RESOURCE ID STATE", "restart", "exit"
func (p *plugin) commands() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 4 && f[0] == "health":
			if r := p.find(f[1]); r != nil {
				r.mu.Lock()
				for _, d := range r.devices {
					if d.ID == f[2] {
						d.Health = f[3]
					}
				}
				r.mu.Unlock()
				r.kick()
			}
		case len(f) == 1 && f[0] == "restart":
			for _, r := range p.res {
				p.restart(r)
			}
		case len(f) == 1 && f[0] == "exit":
			for _, r := range p.res {
				r.srv.Stop()
			}
			os.Exit(0)
		}
	}
	os.Exit(0)
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, " ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func pluginMain(argv []string) int {
	fs := flag.NewFlagSet("plugin", flag.ExitOnError)
	var res multi
	p := &plugin{}
	fs.StringVar(&p.dir, "dir", "/var/lib/kubelet/device-plugins", "the device plugin directory")
	fs.StringVar(&p.mode, "dial", "bare", "how to dial kubelet.sock: bare or unix")
	fs.BoolVar(&p.preferred, "preferred", false, "offer GetPreferredAllocation")
	fs.BoolVar(&p.preStart, "pre-start", false, "ask for PreStartContainer")
	watch := fs.String("watch", "own", "register again when: own (socket deleted), kubelet (kubelet.sock re-created), both, none")
	fs.Var(&res, "resource", "NAME=SOCKET=DEVICES (repeatable)")
	fs.Parse(argv)
	for _, spec := range res {
		f := strings.SplitN(spec, "=", 3)
		if len(f) != 3 {
			fmt.Fprintf(os.Stderr, "-resource %q: want NAME=SOCKET=DEVICES\n", spec)
			return 2
		}
		p.res = append(p.res, &resource{name: f[0], socket: f[1], devices: parseDevices(f[2])})
	}
	for _, r := range p.res {
		if err := p.serve(r); err != nil {
			fmt.Fprintf(os.Stderr, "serve %s: %v\n", r.socket, err)
			return 1
		}
		p.register(r)
	}
	if *watch != "none" {
		go p.watch(*watch)
	}
	p.commands()
	return 0
}
