package controllers

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/planning"
)

// pendingTTL bounds how long a write is assumed to be on its way to the
// cache. Watch events normally arrive in milliseconds; past this, the cache
// is believed again (the object was, say, deleted by someone else at once).
const pendingTTL = 15 * time.Second

// pendingWrites remembers the writes of this reconciler that the informer
// cache has not shown yet: the children it created or deleted, and the
// status it wrote. The pass that a write's own watch event brings often
// runs before the cache holds the other writes of the same pass; without
// this memory it would plan the same creations again (each an
// AlreadyExists round trip to the API server) and patch the same status
// again, or compute the next status patch against a status the server no
// longer holds. This is the "expectations" of the Kubernetes ReplicaSet
// controller, kept per evaluation.
type pendingWrites struct {
	mu    sync.Mutex
	evals map[types.NamespacedName]*evalWrites
}

type evalWrites struct {
	// uid is the UID of the evaluation the writes were made for: an
	// evaluation re-created under the same name starts with none.
	uid types.UID
	// children are the last write of each child: its creation or deletion.
	children map[childKey]pendingChild
	// status is the last status written, statusRV the resourceVersion the
	// write gave the evaluation, statusAt when.
	status   *repotv1.RepotEvaluationStatus
	statusRV string
	statusAt time.Time
}

// childKey names a child: its Go type and its name.
type childKey struct{ kind, name string }

type pendingChild struct {
	obj planning.Object
	at  time.Time
	// gone is a deletion; otherwise obj was created.
	gone bool
}

func keyOf(o planning.Object) childKey { return childKey{fmt.Sprintf("%T", o), o.GetName()} }

func newPendingWrites() *pendingWrites {
	return &pendingWrites{evals: map[types.NamespacedName]*evalWrites{}}
}

func (p *pendingWrites) of(e types.NamespacedName) *evalWrites {
	ew := p.evals[e]
	if ew == nil {
		ew = &evalWrites{children: map[childKey]pendingChild{}}
		p.evals[e] = ew
	}
	return ew
}

// observe records that the evaluation named e now has the given UID, and
// forgets the writes made for an earlier evaluation of the same name (its
// children and status are not this one's). It says whether it forgot any.
func (p *pendingWrites) observe(e types.NamespacedName, uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ew := p.of(e)
	if ew.uid == uid {
		return false
	}
	earlier := ew.uid != ""
	*ew = evalWrites{uid: uid, children: map[childKey]pendingChild{}}
	return earlier
}

// created records a child the API server accepted (obj as it returned it).
func (p *pendingWrites) created(e types.NamespacedName, obj planning.Object, now time.Time) {
	p.wroteChild(e, pendingChild{obj: obj, at: now})
}

// deleted records a child the API server deleted (or is deleting).
func (p *pendingWrites) deleted(e types.NamespacedName, obj planning.Object, now time.Time) {
	p.wroteChild(e, pendingChild{obj: obj, at: now, gone: true})
}

func (p *pendingWrites) wroteChild(e types.NamespacedName, c pendingChild) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.of(e).children[keyOf(c.obj)] = c
}

// overlay brings w, read from the cache, up to date with the pending
// writes: a created child the cache lacks is added, a deleted one it still
// holds is removed. Writes the cache shows, or older than pendingTTL, are
// forgotten.
func (p *pendingWrites) overlay(e types.NamespacedName, w *planning.World) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ew := p.evals[e]
	if ew == nil {
		return
	}
	for k, c := range ew.children {
		kd := planning.KindOf(c.obj)
		if kd == nil || kd.Has(w, k.name) != c.gone || w.Now.Sub(c.at) > pendingTTL {
			delete(ew.children, k) // the cache shows it, or it is too old
			continue
		}
		if c.gone {
			kd.Remove(w, c.obj)
		} else {
			kd.Put(w, c.obj)
		}
	}
}

// wroteStatus records the status this reconciler wrote at now, and the
// resourceVersion the API server gave the evaluation with it.
func (p *pendingWrites) wroteStatus(e types.NamespacedName, st repotv1.RepotEvaluationStatus, resourceVersion string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ew := p.of(e)
	ew.status, ew.statusRV, ew.statusAt = st.DeepCopy(), resourceVersion, now
}

// storedStatus is e's status as the API server stores it: what this
// reconciler last wrote, until the cache shows that write (no one else
// writes the status), or e's status as the cache holds it. A merge patch
// computed against it changes exactly the fields that differ on the server.
func (p *pendingWrites) storedStatus(e *repotv1.RepotEvaluation, now time.Time) repotv1.RepotEvaluationStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	ew := p.evals[planning.NamespacedName(e)]
	if ew == nil || ew.status == nil {
		return e.Status
	}
	if e.ResourceVersion == ew.statusRV || now.Sub(ew.statusAt) > pendingTTL {
		ew.status = nil
		return e.Status
	}
	return *ew.status.DeepCopy()
}

// forget drops what is remembered of e (it is gone).
func (p *pendingWrites) forget(e types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.evals, e)
}
