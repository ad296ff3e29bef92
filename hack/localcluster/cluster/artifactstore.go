package cluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
)

// The local cluster's artifact store: Versity's S3 gateway (bin/versitygw,
// built by hack/build-cluster-bins.sh s3) with its posix backend, run as a
// platform team runs an in-cluster MinIO: a Deployment behind a Service, its
// root credentials in a Secret. The operator that make demo and the e2e
// specs install gets it as its default store (the chart's artifacts.s3), so
// traces outlive the runner pods there as they would on a real cluster.
const (
	// ArtifactStoreNamespace holds the store. It is not repot-system:
	// the chart's namespace is made by whoever installs the operator
	// (kubectl create namespace, which refuses one that exists), and the
	// store is no part of the operator.
	ArtifactStoreNamespace = "repot-artifacts"
	// ArtifactStoreName names the Deployment, its pods' label and the
	// Service.
	ArtifactStoreName = "repot-artifacts"
	// ArtifactStoreSecret holds the store's root credentials under the
	// keys the runners' credentialsSecret has (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY): the same Secret, copied into an evaluation's
	// namespace, is what its runners use.
	ArtifactStoreSecret = "repot-artifacts-s3"
	// ArtifactStoreBucket is the one bucket, a directory of the posix
	// backend made before the gateway starts.
	ArtifactStoreBucket = "repot-traces"
	// ArtifactStorePort is the gateway's port, in the pod and on the
	// Service alike: the runner NetworkPolicy allows the store's port, and
	// a NetworkPolicy sees the pod's port after the Service's translation.
	ArtifactStorePort = 7070

	versitygwVersion = "v1.8.0"
	// VersitygwImage is made from bin/versitygw and imported into the
	// real node (nothing is pulled).
	VersitygwImage = "localhost/repot-local/versitygw:" + versitygwVersion
	// versitygwUID runs the gateway, and owns the data directory.
	versitygwUID = 65532
)

// ArtifactStoreEndpoint is the store's Service by its full name, what the
// runners dial: the runner NetworkPolicy allows a store given by name on its
// port, while a Service's ClusterIP given as the endpoint would be allowed
// only before kube-proxy's translation to the pod.
var ArtifactStoreEndpoint = net.JoinHostPort(ArtifactStoreName+"."+ArtifactStoreNamespace+".svc.cluster.local", strconv.Itoa(ArtifactStorePort))

// EnsureVersitygwImage makes VersitygwImage from the binary when it is
// missing.
func EnsureVersitygwImage(ctx context.Context, bin string) error {
	uid := strconv.Itoa(versitygwUID)
	return BinaryImage{
		Ref: VersitygwImage, Bin: bin, Path: "/versitygw", User: uid + ":" + uid,
		Description: "Versity S3 gateway " + versitygwVersion + " built from the Go module proxy (hack/build-cluster-bins.sh s3)",
		BuildHint:   "build it with: hack/build-cluster-bins.sh s3",
	}.Ensure(ctx)
}

// ArtifactStore is the running store as its users see it.
type ArtifactStore struct {
	// Location is the bucket as the cluster's pods reach it.
	Location artifacts.Location
	// HostEndpoint is the address and port of the store's ready pod, as
	// the Service's EndpointSlice lists it: the host is on the real node's
	// bridge and reaches pods there, as the e2e specs do; it cannot
	// resolve the Service's name.
	HostEndpoint string
	Creds        artifacts.Credentials
}

// StartArtifactStore runs the store on the real node with its data in
// dataDir (emptied first unless keep) and waits until it serves the bucket
// from the host. Its objects are in dataDir/BUCKET as plain files, to look
// at on the host.
func StartArtifactStore(ctx context.Context, cs kubernetes.Interface, dataDir string, keep bool, timeout time.Duration) (*ArtifactStore, error) {
	if !keep {
		if err := os.RemoveAll(dataDir); err != nil {
			return nil, err
		}
	}
	bucket := filepath.Join(dataDir, ArtifactStoreBucket)
	if err := os.MkdirAll(bucket, 0o700); err != nil {
		return nil, err
	}
	// The gateway runs as versitygwUID and writes its objects and their
	// metadata (extended attributes) there; nobody else on the host needs
	// to.
	for _, p := range []string{dataDir, bucket} {
		if err := os.Chown(p, versitygwUID, versitygwUID); err != nil {
			return nil, err
		}
		if err := os.Chmod(p, 0o700); err != nil {
			return nil, err
		}
	}
	labels := map[string]string{"app.kubernetes.io/name": ArtifactStoreName}
	creates := []func() error{
		func() error {
			// No Pod Security enforcement label: the data is a hostPath
			// volume, which the baseline and restricted standards refuse.
			// The pod itself runs as restricted asks (non-root, no
			// capabilities, RuntimeDefault seccomp, read-only root).
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ArtifactStoreNamespace}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().Secrets(ArtifactStoreNamespace).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: ArtifactStoreSecret},
				StringData: map[string]string{artifacts.EnvAccessKeyID: "repot-local", artifacts.EnvSecretAccessKey: rand.Text()},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().Services(ArtifactStoreNamespace).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: ArtifactStoreName, Labels: labels},
				Spec: corev1.ServiceSpec{
					Selector: labels,
					Ports:    []corev1.ServicePort{{Name: "s3", Port: ArtifactStorePort, TargetPort: intstr.FromInt32(ArtifactStorePort)}},
				},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.AppsV1().Deployments(ArtifactStoreNamespace).Create(ctx, artifactStoreDeployment(labels, dataDir), metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range creates {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("artifact store: %w", err)
		}
	}
	deadline := time.Now().Add(timeout)
	for {
		// Once the pod is ready, the probe writes, reads back and deletes
		// an object, with the credentials the runners get.
		s, err := LocalArtifactStore(ctx, cs)
		if err == nil {
			var st *s3.Store
			if st, err = s.HostStore(); err != nil {
				return nil, err
			}
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = st.Probe(pctx, "", "localcluster")
			cancel()
			if err == nil {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			why := "no pod"
			if pods, _ := cs.CoreV1().Pods(ArtifactStoreNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + ArtifactStoreName}); pods != nil && len(pods.Items) > 0 {
				p := pods.Items[0]
				why = fmt.Sprintf("pod %s is %s %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
			}
			return nil, fmt.Errorf("artifact store: s3://%s does not answer after %v: %w (%s)", ArtifactStoreBucket, timeout, err, why)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func artifactStoreDeployment(labels map[string]string, dataDir string) *appsv1.Deployment {
	fromSecret := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: ArtifactStoreSecret}, Key: key}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: ArtifactStoreName, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			// Two gateways on one directory would race on its objects.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector:                 map[string]string{RealNodeLabel: "true"},
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](versitygwUID), RunAsGroup: ptr.To[int64](versitygwUID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Volumes: []corev1.Volume{
						{Name: "data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dataDir, Type: ptr.To(corev1.HostPathDirectory)}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Gi"))}}},
					},
					Containers: []corev1.Container{{
						Name: "versitygw", Image: VersitygwImage, ImagePullPolicy: corev1.PullNever,
						Args: []string{"--port", ":" + strconv.Itoa(ArtifactStorePort), "posix", "/data"},
						Env: []corev1.EnvVar{
							{Name: "ROOT_ACCESS_KEY_ID", ValueFrom: fromSecret(artifacts.EnvAccessKeyID)},
							{Name: "ROOT_SECRET_ACCESS_KEY", ValueFrom: fromSecret(artifacts.EnvSecretAccessKey)},
						},
						Ports:        []corev1.ContainerPort{{Name: "s3", ContainerPort: ArtifactStorePort}},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "tmp", MountPath: "/tmp"}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(ArtifactStorePort)}},
							PeriodSeconds: 2,
						},
						Resources: corev1.ResourceRequirements{
							// The node has the host's cores, which the
							// runners and servers share.
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}

// LocalArtifactStore reads a running local cluster's store: its ready
// pod's address and its credentials Secret.
func LocalArtifactStore(ctx context.Context, cs kubernetes.Interface) (*ArtifactStore, error) {
	sec, err := cs.CoreV1().Secrets(ArtifactStoreNamespace).Get(ctx, ArtifactStoreSecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the local cluster's artifact store: %w", err)
	}
	slices, err := cs.DiscoveryV1().EndpointSlices(ArtifactStoreNamespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + ArtifactStoreName})
	if err != nil {
		return nil, fmt.Errorf("the local cluster's artifact store: %w", err)
	}
	addr := ""
	for _, sl := range slices.Items {
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready && len(e.Addresses) > 0 {
				addr = e.Addresses[0]
			}
		}
	}
	if addr == "" {
		return nil, fmt.Errorf("the local cluster's artifact store: Service %s/%s has no ready endpoint", ArtifactStoreNamespace, ArtifactStoreName)
	}
	creds := artifacts.Credentials{AccessKeyID: string(sec.Data[artifacts.EnvAccessKeyID]), SecretAccessKey: string(sec.Data[artifacts.EnvSecretAccessKey])}
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		return nil, fmt.Errorf("the local cluster's artifact store: Secret %s/%s lacks %s or %s", ArtifactStoreNamespace, ArtifactStoreSecret, artifacts.EnvAccessKeyID, artifacts.EnvSecretAccessKey)
	}
	return &ArtifactStore{
		Location:     artifacts.Location{Endpoint: ArtifactStoreEndpoint, Bucket: ArtifactStoreBucket, Insecure: true},
		HostEndpoint: net.JoinHostPort(addr, strconv.Itoa(ArtifactStorePort)),
		Creds:        creds,
	}, nil
}

// HostStore is a client of the store for the host's processes (the demo,
// the e2e specs): the same bucket at HostEndpoint.
func (s *ArtifactStore) HostStore() (*s3.Store, error) {
	loc := s.Location
	loc.Endpoint = s.HostEndpoint
	return s3.Open(loc, s.Creds, s3.Options{})
}

// ChartValues are the operator chart's values (helm --set) that make the
// store the operator's default: evaluations without spec.artifacts stream
// their traces there, with the credentials Secret of ShareCredentials.
func (s *ArtifactStore) ChartValues() []string {
	return []string{
		"artifacts.s3.endpoint=" + s.Location.Endpoint,
		"artifacts.s3.bucket=" + s.Location.Bucket,
		"artifacts.s3.insecure=" + strconv.FormatBool(s.Location.Insecure),
		"artifacts.s3.credentialsSecret=" + ArtifactStoreSecret,
	}
}

// ShareCredentials puts a copy of the credentials Secret into namespace:
// the operator looks an evaluation's credentialsSecret up in the
// evaluation's own namespace, so each namespace evaluations run in needs
// one.
func (s *ArtifactStore) ShareCredentials(ctx context.Context, cs kubernetes.Interface, namespace string) error {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: ArtifactStoreSecret, Labels: map[string]string{"app.kubernetes.io/part-of": ArtifactStoreName}},
		Data: map[string][]byte{
			artifacts.EnvAccessKeyID:     []byte(s.Creds.AccessKeyID),
			artifacts.EnvSecretAccessKey: []byte(s.Creds.SecretAccessKey),
		},
	}
	if namespace == ArtifactStoreNamespace {
		return nil
	}
	_, err := cs.CoreV1().Secrets(namespace).Create(ctx, sec, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().Secrets(namespace).Update(ctx, sec, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("copying the artifact store's credentials into %s: %w", namespace, err)
	}
	return nil
}

// Collect reads, from the host, the manifests of an evaluation's traces in
// the store: layout is the evaluation's (no prefix: the chart values above
// set none), url its status.artifacts.url, which must be this store's
// bucket and the evaluation's own keys, and shards its models' shards.
func (s *ArtifactStore) Collect(ctx context.Context, layout artifacts.Layout, url string, shards []artifacts.Shard) (*s3.Store, artifacts.Manifest, error) {
	if want := "s3://" + s.Location.Bucket + "/" + layout.EvaluationPrefix(); url != want {
		return nil, artifacts.Manifest{}, fmt.Errorf("status.artifacts.url of %s/%s is %q, not the local store's %q", layout.Namespace, layout.Evaluation, url, want)
	}
	st, err := s.HostStore()
	if err != nil {
		return nil, artifacts.Manifest{}, err
	}
	m, err := s3.Collect(ctx, st, layout, shards)
	return st, m, err
}
