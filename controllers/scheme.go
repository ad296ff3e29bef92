package controllers

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// NewScheme returns a scheme with the built-in kinds and RepotEvaluation.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := repotv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}
