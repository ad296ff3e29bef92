package nodeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// volumeWriter materialises a pod's volumes as directories of the process
// node.
type volumeWriter struct {
	client kubernetes.Interface
	pod    *corev1.Pod
	podIP  string
	hostIP string
	node   NodeSpec
	now    time.Time
}

// mountedVolume is a volume as a local directory.
type mountedVolume struct {
	Dir string
	// Token is the path of a service-account token in the volume ("" if
	// none); CA the path of a projected kube-root-ca.crt ca.crt.
	Token, CA string
	// RefreshAt is when the token should be requested again.
	RefreshAt time.Time
}

// materialise writes every volume of the pod under dir/volumes and returns
// them by name.
func (vw volumeWriter) materialise(ctx context.Context, dir string) (map[string]*mountedVolume, error) {
	out := map[string]*mountedVolume{}
	for i := range vw.pod.Spec.Volumes {
		v := &vw.pod.Spec.Volumes[i]
		mv, err := vw.volume(ctx, dir, v)
		if err != nil {
			return nil, fmt.Errorf("volume %q: %w", v.Name, err)
		}
		out[v.Name] = mv
	}
	return out, nil
}

func (vw volumeWriter) volume(ctx context.Context, dir string, v *corev1.Volume) (*mountedVolume, error) {
	vdir := filepath.Join(dir, "volumes", v.Name)
	mv := &mountedVolume{Dir: vdir}
	switch {
	case v.EmptyDir != nil:
		return mv, os.MkdirAll(vdir, 0o777)
	case v.HostPath != nil:
		if t := v.HostPath.Type; t != nil && *t == corev1.HostPathDirectoryOrCreate {
			if err := os.MkdirAll(v.HostPath.Path, 0o755); err != nil {
				return nil, err
			}
		}
		if _, err := os.Stat(v.HostPath.Path); err != nil {
			return nil, err
		}
		mv.Dir = v.HostPath.Path
		return mv, nil
	case v.PersistentVolumeClaim != nil:
		p, err := vw.claimPath(ctx, v.PersistentVolumeClaim.ClaimName)
		if err != nil {
			return nil, err
		}
		mv.Dir = p
		return mv, nil
	}
	files := map[string]fileContent{}
	var err error
	switch {
	case v.ConfigMap != nil:
		err = vw.configMapFiles(ctx, files, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, mode(v.ConfigMap.DefaultMode))
	case v.Secret != nil:
		err = vw.secretFiles(ctx, files, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, mode(v.Secret.DefaultMode))
	case v.DownwardAPI != nil:
		err = vw.downwardFiles(files, v.DownwardAPI.Items, mode(v.DownwardAPI.DefaultMode))
	case v.Projected != nil:
		def := mode(v.Projected.DefaultMode)
		for _, s := range v.Projected.Sources {
			switch {
			case s.ConfigMap != nil:
				err = vw.configMapFiles(ctx, files, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, def)
				if err == nil && s.ConfigMap.Name == "kube-root-ca.crt" {
					mv.CA = filepath.Join(vdir, itemPath(s.ConfigMap.Items, "ca.crt"))
				}
			case s.Secret != nil:
				err = vw.secretFiles(ctx, files, s.Secret.Name, s.Secret.Items, s.Secret.Optional, def)
			case s.DownwardAPI != nil:
				err = vw.downwardFiles(files, s.DownwardAPI.Items, def)
			case s.ServiceAccountToken != nil:
				var tok string
				tok, mv.RefreshAt, err = vw.token(ctx, s.ServiceAccountToken)
				files[s.ServiceAccountToken.Path] = fileContent{[]byte(tok), 0o600}
				mv.Token = filepath.Join(vdir, s.ServiceAccountToken.Path)
			default:
				err = fmt.Errorf("projected source not supported on a process node")
			}
			if err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("volume type not supported on a process node")
	}
	if err != nil {
		return nil, err
	}
	return mv, writeFiles(vdir, files)
}

type fileContent struct {
	data []byte
	mode os.FileMode
}

func mode(m *int32) os.FileMode {
	if m == nil {
		return 0o644
	}
	return os.FileMode(*m)
}

func itemPath(items []corev1.KeyToPath, key string) string {
	for _, it := range items {
		if it.Key == key {
			return it.Path
		}
	}
	return key
}

func addItems(files map[string]fileContent, data map[string][]byte, items []corev1.KeyToPath, def os.FileMode, what string) error {
	if len(items) == 0 {
		for k, v := range data {
			files[k] = fileContent{v, def}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("%s has no key %q", what, it.Key)
		}
		m := def
		if it.Mode != nil {
			m = os.FileMode(*it.Mode)
		}
		files[it.Path] = fileContent{v, m}
	}
	return nil
}

func (vw volumeWriter) configMapFiles(ctx context.Context, files map[string]fileContent, name string, items []corev1.KeyToPath, opt *bool, def os.FileMode) error {
	cm, err := vw.client.CoreV1().ConfigMaps(vw.pod.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if optional(opt) {
			return nil
		}
		return fmt.Errorf("configMap %q: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return addItems(files, data, items, def, "configMap "+name)
}

func (vw volumeWriter) secretFiles(ctx context.Context, files map[string]fileContent, name string, items []corev1.KeyToPath, opt *bool, def os.FileMode) error {
	s, err := vw.client.CoreV1().Secrets(vw.pod.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if optional(opt) {
			return nil
		}
		return fmt.Errorf("secret %q: %w", name, err)
	}
	return addItems(files, s.Data, items, def, "secret "+name)
}

func (vw volumeWriter) downwardFiles(files map[string]fileContent, items []corev1.DownwardAPIVolumeFile, def os.FileMode) error {
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = fieldValue(vw.pod, vw.podIP, vw.hostIP, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = resourceValue(vw.pod, nil, vw.node, it.ResourceFieldRef)
		}
		if err != nil {
			return err
		}
		m := def
		if it.Mode != nil {
			m = os.FileMode(*it.Mode)
		}
		files[it.Path] = fileContent{[]byte(v), m}
	}
	return nil
}

// token requests a service-account token bound to the pod, as the kubelet
// does for projected serviceAccountToken sources.
func (vw volumeWriter) token(ctx context.Context, p *corev1.ServiceAccountTokenProjection) (string, time.Time, error) {
	exp := int64(3600)
	if p.ExpirationSeconds != nil {
		exp = *p.ExpirationSeconds
	}
	var aud []string
	if p.Audience != "" {
		aud = []string{p.Audience}
	}
	sa := vw.pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         aud,
		ExpirationSeconds: ptr.To(exp),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: vw.pod.Name, UID: vw.pod.UID},
	}}
	got, err := vw.client.CoreV1().ServiceAccounts(vw.pod.Namespace).CreateToken(ctx, sa, tr, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token for service account %q: %w", sa, err)
	}
	// Refresh at 80% of the lifetime, as the kubelet.
	return got.Status.Token, vw.now.Add(time.Duration(exp) * time.Second * 8 / 10), nil
}

// claimPath finds the directory behind a PersistentVolumeClaim: its bound
// volume must be a hostPath or local volume.
func (vw volumeWriter) claimPath(ctx context.Context, claim string) (string, error) {
	pvc, err := vw.client.CoreV1().PersistentVolumeClaims(vw.pod.Namespace).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("claim %q: %w", claim, err)
	}
	if pvc.Spec.VolumeName == "" {
		return "", fmt.Errorf("claim %q is not bound", claim)
	}
	pv, err := vw.client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path, os.MkdirAll(pv.Spec.HostPath.Path, 0o777)
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path, nil
	}
	return "", fmt.Errorf("volume %q of claim %q is neither hostPath nor local; a process node cannot mount it", pv.Name, claim)
}

// writeFiles writes files (relative paths) under dir; each file is written
// to a temporary name and renamed, so readers never see half a file.
func writeFiles(dir string, files map[string]fileContent) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, rel := range sortedKeys(files) {
		clean := filepath.Clean(rel)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("file path %q leaves the volume", rel)
		}
		p := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f := files[rel]
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			return err
		}
		if err := os.Chmod(tmp, f.mode&0o777|0o400); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	return nil
}
