package v1alpha1

// ModelProvenance records what produced a model's figures: the images that
// ran, the server's arguments and model revision, what the server said of
// itself, the sampling in force and the repot builds of the runner and of
// the operator that created the server.
type ModelProvenance struct {
	// images are the resolved images of the model's server and runner
	// containers, from the pods' status (containerStatuses[].imageID),
	// one per pod role and container name; the latest pod that reported a
	// container wins. Kept after the pods are gone.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Images []ContainerImage `json:"images,omitempty"`

	// serverArgs is the server command of the model's server as its
	// Deployment was created: `vllm serve MODEL ...` (spec args included)
	// for vLLM servers, the `repot sim-server` command for simulated ones.
	// It is read from the server Deployment while that exists and kept
	// after it is gone, so that an operator upgrade that renders servers
	// differently does not rewrite it. Unset for endpoint models and until
	// the server is created.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	ServerArgs []string `json:"serverArgs,omitempty"`

	// revision is the model revision requested in
	// spec.models[].vllm.revision; unset when none was requested (the
	// server then loads the repository's default branch).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Revision string `json:"revision,omitempty"`

	// servedModels is what the server reported of itself on /v1/models
	// when a runner started (id, root, max_model_len), as the runner wrote
	// it into its ledger; unset until a runner reported.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	ServedModels []ServedModel `json:"servedModels,omitempty"`

	// serverReportError is why a runner could not read /v1/models (the
	// runner still ran); empty otherwise.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ServerReportError string `json:"serverReportError,omitempty"`

	// sampling are the request parameters the runners send with every
	// call (temperature, max_tokens or max_completion_tokens), and the
	// system-prompt prefix when one is sent; parameters not listed are not
	// sent (top_p, seed: the server's defaults apply).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Sampling []NameValue `json:"sampling,omitempty"`

	// chatTemplateKwargs are the chat_template_kwargs the runners send
	// (enable_thinking=false when thinking is disabled); unset when none
	// are sent.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	ChatTemplateKwargs []NameValue `json:"chatTemplateKwargs,omitempty"`

	// operatorVersion is the version of the operator that created the
	// model's server (for an endpoint model, its runner Job), as the
	// operator's repot binary reports it (its link-time or module version,
	// "(devel)" for a source build). It is recorded when that object is
	// created and does not change with later operator upgrades; unset when
	// the object was created by an operator that did not record it.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	OperatorVersion string `json:"operatorVersion,omitempty"`

	// operatorCommit is the VCS revision the operator that created the
	// model's server (or runner Job) was built from, recorded with
	// operatorVersion; unset when its build did not record one.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	OperatorCommit string `json:"operatorCommit,omitempty"`

	// repotVersion is the version of the repot binary in the runner, as
	// the runner reported it (its module version, "(devel)" for a source
	// build); unset until a runner reported.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	RepotVersion string `json:"repotVersion,omitempty"`

	// repotCommit is the VCS revision the runner's repot binary was built
	// from (with "-dirty" when the tree had changes); unset when the build
	// did not record one.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	RepotCommit string `json:"repotCommit,omitempty"`
}

// ContainerImage is one container's image as the kubelet resolved it.
type ContainerImage struct {
	// pod is the pod's role: server or runner.
	// +required
	// +kubebuilder:validation:Enum=server;runner
	Pod string `json:"pod"`

	// container is the container's name (init containers included).
	// +required
	// +kubebuilder:validation:MaxLength=63
	Container string `json:"container"`

	// image is the image the pod spec named.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// imageID is the resolved image the container ran, usually
	// "<repository>@sha256:<digest>"; its form is the container runtime's.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ImageID string `json:"imageID,omitempty"`
}

// ServedModel is one model a server listed on /v1/models.
type ServedModel struct {
	// id is the model id requests name.
	// +required
	// +kubebuilder:validation:MaxLength=256
	ID string `json:"id"`

	// root is the model the id serves (vLLM: the weights' path or
	// repository); empty when the server does not say.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Root string `json:"root,omitempty"`

	// maxModelLen is the context length the server reported; unset when it
	// does not say.
	// +optional
	MaxModelLen *int64 `json:"maxModelLen,omitempty"`
}

// NameValue is one named value.
type NameValue struct {
	// name is the parameter's name.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`

	// value is its value as sent, JSON-encoded for non-strings.
	// +required
	// +kubebuilder:validation:MaxLength=256
	Value string `json:"value"`
}
