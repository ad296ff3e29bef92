package planning

import (
	"maps"

	batchv1 "k8s.io/api/batch/v1"
)

// project returns the world as it will be once the plan's child changes
// are applied. The status describes that world, so that a pass which
// creates the children also reports them, and the next pass finds nothing
// to change. Objects are shallow-copied into new slices; w is not modified.
func project(w *World, p *Plan) *World {
	n := *w
	for _, k := range ChildKinds {
		k.Clone(&n, w)
	}
	for _, objs := range [][]Object{p.Create, p.Update} {
		for _, o := range objs {
			n.put(o)
		}
	}
	for _, a := range p.Annotate {
		o, ok := a.Object.DeepCopyObject().(Object)
		if !ok {
			continue
		}
		merged := map[string]string{}
		maps.Copy(merged, o.GetAnnotations())
		maps.Copy(merged, a.Annotations)
		o.SetAnnotations(merged)
		n.put(o)
	}
	for _, o := range p.Delete {
		if k := KindOf(o); k != nil {
			k.Remove(&n, o)
		}
	}
	// The store probe's Job is not a runner Job (SplitArtifactsProbe).
	var probe *batchv1.Job
	n.Jobs, probe = SplitArtifactsProbe(n.Jobs)
	if probe != nil {
		n.ArtifactsProbe = probe
	}
	for _, o := range p.Delete {
		if j, ok := o.(*batchv1.Job); ok && n.ArtifactsProbe != nil && j.Name == n.ArtifactsProbe.Name {
			n.ArtifactsProbe = nil
		}
	}
	return &n
}

// put adds or replaces an object of a registered kind by name.
func (w *World) put(o Object) {
	for _, k := range ChildKinds {
		if k.Put(w, o) {
			return
		}
	}
}
