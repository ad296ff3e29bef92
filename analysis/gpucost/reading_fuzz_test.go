package gpucost

import (
	"testing"

	"repot.dev/repot-operator/contract"
)

// FuzzParseReading feeds hostile ledger lines to the parser and the sums:
// neither may panic, and sums of accepted readings stay within their inputs.
func FuzzParseReading(f *testing.F) {
	f.Add([]byte(`{"model":"m","shard":0,"phase":"start","instance":"a","at":"2026-01-01T00:00:00Z","uptime_ms":1000,"gpus":[{"index":0,"uuid":"G","energy_mj":5,"util_percent_ms":10,"sampled_ms":1,"peak_memory_bytes":7}]}`))
	f.Add([]byte(`{"instance":"a","shard":-1}`))
	f.Add([]byte(`{"instance":"a","uptime_ms":-5,"gpus":[{"uuid":"G","energy_mj":18446744073709551615,"sampled_ms":18446744073709551615,"util_percent_ms":18446744073709551615}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := contract.ParseReading(line)
		if err != nil {
			return
		}
		later := r
		later.UptimeMillis++
		c := Summarize([]contract.Reading{r, later, r})
		if c.Readings != 3 {
			t.Fatalf("readings %d", c.Readings)
		}
		if c.UtilPermille != nil && (*c.UtilPermille < 0) {
			t.Fatalf("negative utilisation %d", *c.UtilPermille)
		}
		_ = Attribute(int64(c.EnergyMillijoules/1000), []int64{int64(r.Shard), 3})
	})
}
