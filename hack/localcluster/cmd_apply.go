package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

func init() { register(newApplyCommand) }

func newApplyCommand() *cobra.Command {
	var cf clientFlags
	var files []string
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR ...",
		Short: "Server-side apply YAML manifests (what `kubectl apply --server-side` does), waiting for CRDs to be established",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, dyn, mapper, _, err := cf.clients()
			if err != nil {
				return err
			}
			objs, err := readManifests(files)
			if err != nil {
				return err
			}
			return applyAll(cmd.Context(), dyn, mapper, objs, cf.namespace, os.Stdout)
		},
	}
	cf.add(cmd)
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "manifest file or directory (*.yaml, *.yml, *.json; not recursive)")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// readManifests decodes every object of the files (directories: their YAML
// and JSON files in name order; kustomization.yaml is skipped).
func readManifests(paths []string) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || n == "kustomization.yaml" || n == "kustomization.yml" {
				continue
			}
			if ext := filepath.Ext(n); ext == ".yaml" || ext == ".yml" || ext == ".json" {
				names = append(names, filepath.Join(p, n))
			}
		}
		sort.Strings(names)
		files = append(files, names...)
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
		for i := 1; ; i++ {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				r.Close()
				return nil, fmt.Errorf("%s: document %d: %w", f, i, err)
			}
			if len(m) == 0 {
				continue
			}
			u := &unstructured.Unstructured{Object: m}
			if u.GetKind() == "" || u.GetAPIVersion() == "" {
				r.Close()
				return nil, fmt.Errorf("%s: document %d has no kind or apiVersion", f, i)
			}
			out = append(out, u)
		}
		r.Close()
	}
	return out, nil
}

// applyAll applies CRDs and namespaces first, then the rest.
func applyAll(ctx context.Context, dyn dynamic.Interface, mapper *restmapper.DeferredDiscoveryRESTMapper, objs []*unstructured.Unstructured, ns string, out io.Writer) error {
	rank := func(u *unstructured.Unstructured) int {
		switch u.GetKind() {
		case "CustomResourceDefinition":
			return 0
		case "Namespace":
			return 1
		}
		return 2
	}
	sort.SliceStable(objs, func(i, j int) bool { return rank(objs[i]) < rank(objs[j]) })
	var crds []string
	for i, u := range objs {
		if i > 0 && rank(objs[i-1]) == 0 && rank(u) > 0 {
			if err := waitEstablished(ctx, dyn, crds); err != nil {
				return err
			}
			mapper.Reset()
		}
		if err := applyOne(ctx, dyn, mapper, u, ns); err != nil {
			return err
		}
		if u.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, u.GetName())
		}
		fmt.Fprintf(out, "%s/%s serverside-applied\n", strings.ToLower(u.GetKind()), u.GetName())
	}
	if len(objs) > 0 && rank(objs[len(objs)-1]) == 0 {
		return waitEstablished(ctx, dyn, crds)
	}
	return nil
}

func applyOne(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, u *unstructured.Unstructured, ns string) error {
	gvk := u.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if u.GetNamespace() == "" {
			u.SetNamespace(ns)
		}
		ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
	}
	data, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "localcluster", Force: ptrTrue()})
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", gvk.Kind, u.GetName(), err)
	}
	return nil
}

func ptrTrue() *bool { t := true; return &t }

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func waitEstablished(ctx context.Context, dyn dynamic.Interface, names []string) error {
	deadline := time.Now().Add(time.Minute)
	for _, n := range names {
		for {
			u, err := dyn.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
			if err == nil && established(u) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not established after a minute", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
