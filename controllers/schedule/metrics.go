package schedule

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

var (
	regressedGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "repot_schedule_regressed",
		Help: "1 when the last compared run of a RepotSchedule solved significantly fewer problems than the previous successful run (condition Regressed=True), else 0.",
	}, []string{"namespace", "schedule"})
	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() { metrics.Registry.MustRegister(regressedGauge) })
}

func observeMetrics(s *repotv1.RepotSchedule, st repotv1.RepotScheduleStatus) {
	v := 0.0
	if conditionTrue(st.Conditions, repotv1.ConditionRegressed) {
		v = 1
	}
	regressedGauge.WithLabelValues(s.Namespace, s.Name).Set(v)
}

func forgetMetrics(namespace, name string) {
	regressedGauge.DeleteLabelValues(namespace, name)
}
