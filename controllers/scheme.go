package controllers

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// NewScheme returns a scheme with the built-in kinds, RepotEvaluation and
// Kueue's v1beta2 types.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := repotv1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := kueue.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}
