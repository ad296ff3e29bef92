package controllers

import (
	"context"
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// ErrKueueInstalled ends a manager that started on a cluster without Kueue
// once Kueue's Workload API is served: the manager's caches are fixed at
// start, so only a restarted operator (the Deployment restarts it) watches
// Workloads and admits queued evaluations.
var ErrKueueInstalled = errors.New("kueue.x-k8s.io/v1beta2 (Kueue's Workload API) is now served; the operator stops so that its restart watches Workloads")

// KueueWatch is a manager Runnable for an operator that started without
// Kueue: every Interval it asks Served whether the API server serves Kueue's
// Workload API, and returns ErrKueueInstalled when it does. Failed look-ups
// are logged and tried again.
type KueueWatch struct {
	// Served says whether Kueue's Workload API is served (KueueServed).
	Served func() (bool, error)
	// Interval between look-ups; default one minute.
	Interval time.Duration
}

// Start implements manager.Runnable.
func (k KueueWatch) Start(ctx context.Context) error {
	interval := k.Interval
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		ok, err := k.Served()
		switch {
		case err != nil:
			log.FromContext(ctx).Error(err, "looking for Kueue's Workload API")
		case ok:
			log.FromContext(ctx).Info("Kueue was installed after the operator started; stopping so that the restarted operator watches Workloads")
			return ErrKueueInstalled
		}
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// replica, leader or not, must restart to watch Workloads.
func (KueueWatch) NeedLeaderElection() bool { return false }
