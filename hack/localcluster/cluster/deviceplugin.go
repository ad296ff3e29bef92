package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// SimulatedGPUResource is the resource the simulated device plugin
// advertises: the name NVIDIA's device plugin uses, so the operator's pods
// ask for it unchanged.
const SimulatedGPUResource = "nvidia.com/gpu"

// simulatedGPUPlugin is a SIMULATED GPU device plugin: it speaks the
// kubelet's device-plugin API (deviceplugin/v1beta1, as NVIDIA's
// k8s-device-plugin serves it) for devices that do not exist. The kubelet
// advertises them as nvidia.com/gpu capacity, the scheduler counts them, and
// Allocate hands a container its devices as NVIDIA_VISIBLE_DEVICES (and
// REPOT_SIMULATED_GPUS=true, so nothing mistakes them for real GPUs). No
// device file is mounted: there is no GPU on this host.
type simulatedGPUPlugin struct {
	pluginapi.UnimplementedDevicePluginServer
	ids    []string
	server *grpc.Server
	socket string
}

// simulatedGPUIDs names n simulated devices.
func simulatedGPUIDs(node string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("SIMULATED-GPU-%s-%d", node, i)
	}
	return ids
}

// startSimulatedGPUPlugin waits for the kubelet's registration socket
// (the kubelet empties the directory when it starts, so a socket made
// before would be gone), then serves the plugin on a socket beside it and
// registers it with the kubelet. Call it after removing a stale
// kubelet.sock and starting the kubelet.
func startSimulatedGPUPlugin(ctx context.Context, pluginDir, node string, n int) (*simulatedGPUPlugin, error) {
	kubeletSock := filepath.Join(pluginDir, "kubelet.sock")
	for {
		if c, err := net.Dial("unix", kubeletSock); err == nil {
			c.Close()
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("simulated GPU plugin: the kubelet's registration socket %s did not appear", kubeletSock)
		case <-time.After(100 * time.Millisecond):
		}
	}
	p := &simulatedGPUPlugin{ids: simulatedGPUIDs(node, n), socket: filepath.Join(pluginDir, "repot-simulated-gpu.sock")}
	_ = os.Remove(p.socket)
	ln, err := net.Listen("unix", p.socket)
	if err != nil {
		return nil, fmt.Errorf("simulated GPU plugin: %w", err)
	}
	p.server = grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(p.server, p)
	go func() { _ = p.server.Serve(ln) }()
	if err := p.register(ctx, kubeletSock); err != nil {
		p.stop()
		return nil, fmt.Errorf("simulated GPU plugin: registering with the kubelet at %s: %w", kubeletSock, err)
	}
	return p, nil
}

func (p *simulatedGPUPlugin) register(ctx context.Context, kubeletSock string) error {
	conn, err := grpc.NewClient("unix://"+kubeletSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     filepath.Base(p.socket),
		ResourceName: SimulatedGPUResource,
	})
	return err
}

func (p *simulatedGPUPlugin) stop() {
	if p == nil {
		return
	}
	p.server.Stop()
	_ = os.Remove(p.socket)
}

func (p *simulatedGPUPlugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch sends the devices once (all healthy) and keeps the stream
// open until the kubelet closes it.
func (p *simulatedGPUPlugin) ListAndWatch(_ *pluginapi.Empty, s grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	devs := make([]*pluginapi.Device, len(p.ids))
	for i, id := range p.ids {
		devs[i] = &pluginapi.Device{ID: id, Health: pluginapi.Healthy}
	}
	if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
		return err
	}
	<-s.Context().Done()
	return nil
}

// Allocate gives each container its devices as NVIDIA_VISIBLE_DEVICES, as
// NVIDIA's plugin does with its default envvar strategy.
func (p *simulatedGPUPlugin) Allocate(_ context.Context, r *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	known := map[string]bool{}
	for _, id := range p.ids {
		known[id] = true
	}
	resp := &pluginapi.AllocateResponse{}
	for _, c := range r.ContainerRequests {
		ids := append([]string(nil), c.DevicesIds...)
		for _, id := range ids {
			if !known[id] {
				return nil, fmt.Errorf("simulated GPU plugin: unknown device %q", id)
			}
		}
		sort.Strings(ids)
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{
				"NVIDIA_VISIBLE_DEVICES": strings.Join(ids, ","),
				"REPOT_SIMULATED_GPUS":   "true",
			},
		})
	}
	return resp, nil
}

func (p *simulatedGPUPlugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}
