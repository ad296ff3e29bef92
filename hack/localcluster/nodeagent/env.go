package nodeagent

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// envVar is one resolved environment variable.
type envVar struct{ Name, Value string }

// envSource holds what resolving a container's environment needs.
type envSource struct {
	pod       *corev1.Pod
	podIP     string
	hostIP    string
	node      NodeSpec
	configMap func(name string) (*corev1.ConfigMap, error)
	secret    func(name string) (*corev1.Secret, error)
}

// resolveEnv returns the environment the pod spec gives container c, in
// order: envFrom sources, then env entries (later names override earlier
// ones, as in the kubelet). $(VAR) references in values are expanded against
// the variables defined before them.
func resolveEnv(src envSource, c *corev1.Container) ([]envVar, error) {
	var out []envVar
	index := map[string]int{}
	set := func(name, value string) {
		if i, ok := index[name]; ok {
			out[i].Value = value
			return
		}
		index[name] = len(out)
		out = append(out, envVar{name, value})
	}
	lookup := func(name string) (string, bool) {
		if i, ok := index[name]; ok {
			return out[i].Value, true
		}
		return "", false
	}
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm, err := src.configMap(from.ConfigMapRef.Name)
			if err != nil {
				if optional(from.ConfigMapRef.Optional) {
					continue
				}
				return nil, fmt.Errorf("envFrom configMap %q: %w", from.ConfigMapRef.Name, err)
			}
			for _, k := range sortedKeys(cm.Data) {
				set(from.Prefix+k, cm.Data[k])
			}
		case from.SecretRef != nil:
			s, err := src.secret(from.SecretRef.Name)
			if err != nil {
				if optional(from.SecretRef.Optional) {
					continue
				}
				return nil, fmt.Errorf("envFrom secret %q: %w", from.SecretRef.Name, err)
			}
			for _, k := range sortedKeys(s.Data) {
				set(from.Prefix+k, string(s.Data[k]))
			}
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, lookup))
			continue
		}
		v, skip, err := src.valueFrom(c, e.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if !skip {
			set(e.Name, v)
		}
	}
	return out, nil
}

// valueFrom resolves one env valueFrom. skip is true for an optional key
// that is absent.
func (src envSource) valueFrom(c *corev1.Container, vf *corev1.EnvVarSource) (v string, skip bool, err error) {
	switch {
	case vf.FieldRef != nil:
		v, err = fieldValue(src.pod, src.podIP, src.hostIP, vf.FieldRef.FieldPath)
		return v, false, err
	case vf.ResourceFieldRef != nil:
		v, err = resourceValue(src.pod, c, src.node, vf.ResourceFieldRef)
		return v, false, err
	case vf.ConfigMapKeyRef != nil:
		ref := vf.ConfigMapKeyRef
		cm, err := src.configMap(ref.Name)
		if err == nil {
			if val, ok := cm.Data[ref.Key]; ok {
				return val, false, nil
			}
			if val, ok := cm.BinaryData[ref.Key]; ok {
				return string(val), false, nil
			}
			err = fmt.Errorf("configMap %q has no key %q", ref.Name, ref.Key)
		}
		if optional(ref.Optional) {
			return "", true, nil
		}
		return "", false, err
	case vf.SecretKeyRef != nil:
		ref := vf.SecretKeyRef
		s, err := src.secret(ref.Name)
		if err == nil {
			if val, ok := s.Data[ref.Key]; ok {
				return string(val), false, nil
			}
			err = fmt.Errorf("secret %q has no key %q", ref.Name, ref.Key)
		}
		if optional(ref.Optional) {
			return "", true, nil
		}
		return "", false, err
	}
	return "", false, fmt.Errorf("unsupported valueFrom")
}

// fieldValue resolves a downward-API field path.
func fieldValue(pod *corev1.Pod, podIP, hostIP, path string) (string, error) {
	if k, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// subscript parses `prefix['key']`.
func subscript(path, prefix string) (string, bool) {
	if !strings.HasPrefix(path, prefix+"[") || !strings.HasSuffix(path, "]") {
		return "", false
	}
	k := path[len(prefix)+1 : len(path)-1]
	return strings.Trim(k, `'"`), true
}

// formatMap renders labels or annotations as the downward API does:
// key="value" lines, sorted.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(&b, "%s=%q\n", k, m[k])
	}
	return b.String()
}

// resourceValue resolves a resourceFieldRef; unset limits default to the
// node's capacity, as in the kubelet.
func resourceValue(pod *corev1.Pod, c *corev1.Container, node NodeSpec, ref *corev1.ResourceFieldSelector) (string, error) {
	if ref.ContainerName != "" {
		c = findContainer(pod, ref.ContainerName)
		if c == nil {
			return "", fmt.Errorf("resourceFieldRef: no container %q", ref.ContainerName)
		}
	}
	var q resource.Quantity
	var ok bool
	switch ref.Resource {
	case "limits.cpu":
		if q, ok = c.Resources.Limits[corev1.ResourceCPU]; !ok {
			q = node.CPU
		}
	case "limits.memory":
		if q, ok = c.Resources.Limits[corev1.ResourceMemory]; !ok {
			q = node.Memory
		}
	case "limits.ephemeral-storage":
		if q, ok = c.Resources.Limits[corev1.ResourceEphemeralStorage]; !ok {
			q = node.Storage
		}
	case "requests.cpu":
		q = c.Resources.Requests[corev1.ResourceCPU]
	case "requests.memory":
		q = c.Resources.Requests[corev1.ResourceMemory]
	case "requests.ephemeral-storage":
		q = c.Resources.Requests[corev1.ResourceEphemeralStorage]
	default:
		return "", fmt.Errorf("resourceFieldRef: unsupported resource %q", ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	v := math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue()))
	return fmt.Sprintf("%d", int64(v)), nil
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

func optional(b *bool) bool { return b != nil && *b }
