// Package v1alpha1 holds the RepotEvaluation API of group repot.dev: one
// evaluation of the RePoT methods against one or more models, its defaults and
// its CEL validation.
//
// +kubebuilder:object:generate=true
// +groupName=repot.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "repot.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a scheme.
	// controller-runtime deprecates scheme.Builder for API packages (it
	// pulls controller-runtime into them); kubebuilder still scaffolds it,
	// and leaving it means changing every types file's registration.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion} //nolint:staticcheck // SA1019, see above

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
