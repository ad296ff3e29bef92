package sandbox

import (
	"context"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"repot.dev/repot-operator/runner/program"
)

// hanoiReply wraps hanoiProgram the way a model answers.
const hanoiReply = "<think>recursion</think>Here is my program:\n```python\n" + hanoiProgram + "```\n"

// childCPU is the CPU time (user + system) used so far by reaped children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportChildCPU reports the sandboxed processes' CPU per program, a figure
// that, unlike wall time, hardly depends on how busy the machine is.
func reportChildCPU(b *testing.B, since time.Duration, n int) {
	if n > 0 {
		b.ReportMetric(float64(childCPU()-since)/float64(time.Millisecond)/float64(n), "child-cpu-ms/op")
	}
}

func reportLatencies(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	b.ReportMetric(ms(d[len(d)/2]), "median-ms")
	b.ReportMetric(ms(d[(len(d)*99)/100]), "p99-ms")
}

// BenchmarkRunHanoi is the per-program cost outside the model: extract the
// code from a reply, run it in the sandbox (10-disc Hanoi, 1023 moves) and
// parse the plan. Reports median and p99 wall time per program.
func BenchmarkRunHanoi(b *testing.B) {
	sb, err := NewPython(Options{Concurrency: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("isolation: %s", sb.Mode())
	var d []time.Duration
	cpu := childCPU()
	for b.Loop() {
		start := time.Now()
		code := program.Extract(hanoiReply)
		r, err := sb.Run(context.Background(), code)
		if err != nil || r.Failure != "" {
			b.Fatalf("%v %q %s", err, r.Failure, r.Stderr)
		}
		m, err := program.ParseMoves(r.Stdout, code)
		if err != nil || len(m) != 1023 {
			b.Fatalf("%d moves, %v", len(m), err)
		}
		d = append(d, time.Since(start))
	}
	reportChildCPU(b, cpu, len(d))
	reportLatencies(b, d)
}

// BenchmarkRunHanoiConcurrent runs programs from many goroutines through
// one sandbox with the default concurrency (number of CPUs), so ns/op is
// the inverse of throughput and the latencies include queueing.
func BenchmarkRunHanoiConcurrent(b *testing.B) {
	sb, err := NewPython(Options{})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var d []time.Duration
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := time.Now()
			r, err := sb.Run(context.Background(), hanoiProgram)
			if err != nil || r.Failure != "" {
				b.Errorf("%v %q", err, r.Failure)
				return
			}
			mu.Lock()
			d = append(d, time.Since(start))
			mu.Unlock()
		}
	})
	reportLatencies(b, d)
}

// BenchmarkIsolationModes compares the cost of the namespaces against no
// isolation, for an empty program and for the Hanoi program.
func BenchmarkIsolationModes(b *testing.B) {
	for _, iso := range []Isolation{IsolationAuto, IsolationNone} {
		for _, code := range []string{"pass", hanoiProgram} {
			sb, err := NewPython(Options{Concurrency: 1, Isolation: iso})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(sb.Mode()+"/"+code[:4], func(b *testing.B) {
				var d []time.Duration
				cpu := childCPU()
				for b.Loop() {
					s := time.Now()
					if r, err := sb.Run(context.Background(), code); err != nil || r.Failure != "" {
						b.Fatalf("%v %q", err, r.Failure)
					}
					d = append(d, time.Since(s))
				}
				reportChildCPU(b, cpu, len(d))
				reportLatencies(b, d)
			})
		}
	}
}
