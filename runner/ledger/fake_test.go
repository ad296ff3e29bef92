package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"repot.dev/repot-operator/contract"
)

// fakeConfigMaps holds ConfigMaps and enforces resourceVersion on patches
// like the API server does.
type fakeConfigMaps struct {
	mu      sync.Mutex
	objs    map[string]*corev1.ConfigMap
	patches int
	// beforePatch runs before each patch is applied (to simulate a
	// concurrent writer); failPatch makes patches fail.
	beforePatch func(f *fakeConfigMaps)
	failPatch   error
}

var cmResource = schema.GroupResource{Resource: "configmaps"}

func newFake(name, data string) *fakeConfigMaps {
	return &fakeConfigMaps{objs: map[string]*corev1.ConfigMap{
		name: {ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Data: map[string]string{contract.LedgerRecordsKey: data}},
	}}
}

func (f *fakeConfigMaps) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cm, ok := f.objs[name]
	if !ok {
		return nil, apierrors.NewNotFound(cmResource, name)
	}
	return cm.DeepCopy(), nil
}

// write replaces the data directly (a concurrent writer) and bumps the version.
func (f *fakeConfigMaps) write(name, data string) {
	cm := f.objs[name]
	rv, _ := strconv.Atoi(cm.ResourceVersion)
	cm.ResourceVersion = strconv.Itoa(rv + 1)
	cm.Data[contract.LedgerRecordsKey] = data
}

func (f *fakeConfigMaps) Patch(_ context.Context, name string, pt types.PatchType, data []byte, _ metav1.PatchOptions, _ ...string) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.beforePatch != nil {
		f.beforePatch(f)
	}
	if f.failPatch != nil {
		return nil, f.failPatch
	}
	if pt != types.MergePatchType {
		return nil, fmt.Errorf("unexpected patch type %s", pt)
	}
	cm, ok := f.objs[name]
	if !ok {
		return nil, apierrors.NewNotFound(cmResource, name)
	}
	var p struct {
		Metadata struct {
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	if p.Metadata.ResourceVersion != "" && p.Metadata.ResourceVersion != cm.ResourceVersion {
		return nil, apierrors.NewConflict(cmResource, name, fmt.Errorf("the object has been modified"))
	}
	f.patches++
	if v, ok := p.Data[contract.LedgerRecordsKey]; ok {
		f.write(name, v)
	} else {
		f.write(name, cm.Data[contract.LedgerRecordsKey])
	}
	for k, v := range p.Metadata.Annotations {
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[k] = v
	}
	for k, v := range p.Data { // other keys (the GPU readings) as merge-patched
		if k != contract.LedgerRecordsKey {
			cm.Data[k] = v
		}
	}
	return cm.DeepCopy(), nil
}
