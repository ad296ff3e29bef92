package cluster

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

func TestSimulatedGPUPluginAllocate(t *testing.T) {
	p := &simulatedGPUPlugin{ids: simulatedGPUIDs("n", 3)}
	resp, err := p.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"SIMULATED-GPU-n-2", "SIMULATED-GPU-n-0"}},
		{DevicesIds: []string{"SIMULATED-GPU-n-1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]string
	for _, c := range resp.ContainerResponses {
		got = append(got, c.Envs)
		if len(c.Mounts) != 0 || len(c.Devices) != 0 {
			t.Errorf("simulated devices mount nothing: %+v", c)
		}
	}
	want := []map[string]string{
		{"NVIDIA_VISIBLE_DEVICES": "SIMULATED-GPU-n-0,SIMULATED-GPU-n-2", "REPOT_SIMULATED_GPUS": "true"},
		{"NVIDIA_VISIBLE_DEVICES": "SIMULATED-GPU-n-1", "REPOT_SIMULATED_GPUS": "true"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Allocate envs (-want +got):\n%s", diff)
	}
	if _, err := p.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"GPU-real"}},
	}}); err == nil {
		t.Error("Allocate of a device the plugin never advertised succeeded")
	}
}
