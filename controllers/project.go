package controllers

import "sigs.k8s.io/controller-runtime/pkg/client"

// project returns the world as it will be once the plan's child changes
// are applied. The status describes that world, so that a pass which
// creates the children also reports them, and the next pass finds nothing
// to change. Objects are shallow-copied into new slices; w is not modified.
func project(w *world, p *plan) *world {
	n := *w
	for _, k := range childKinds {
		k.clone(&n, w)
	}
	for _, objs := range [][]client.Object{p.Create, p.Update} {
		for _, o := range objs {
			n.put(o)
		}
	}
	for _, o := range p.Delete {
		if k := kindOf(o); k != nil {
			k.remove(&n, o)
		}
	}
	return &n
}

// put adds or replaces an object of a registered kind by name.
func (w *world) put(o client.Object) {
	for _, k := range childKinds {
		if k.put(w, o) {
			return
		}
	}
}
