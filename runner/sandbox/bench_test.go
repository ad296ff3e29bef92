package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/envs"
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

func reportLatencies(b *testing.B, d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	b.ReportMetric(ms(d[len(d)/2]), "median-ms")
	b.ReportMetric(ms(d[(len(d)*99)/100]), "p99-ms")
	return d[len(d)/2]
}

// BenchmarkRunHanoi is the per-program cost outside the model: extract the
// code from a reply, run it, parse the plan and replay its 1023 moves
// (10-disc Hanoi). It runs side by side, in one run: "sandbox", the hardened
// sandbox (seccomp filter in force, zygote fork per program), and
// "reference", a fresh `python3 -I` per program with no confinement at all.
// Each reports median and p99 wall time per program.
func BenchmarkRunHanoi(b *testing.B) {
	sb, err := NewPython(Options{Concurrency: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	b.Logf("sandbox mode: %s", sb.Mode())
	if !hasSeccomp(sb.confinement) {
		b.Fatalf("the seccomp filter is not in force: %s", sb.Mode())
	}
	var sandboxMedian time.Duration
	b.Run("sandbox", func(b *testing.B) {
		cpu := sb.childCPU.Load()
		defer func() {
			b.ReportMetric(float64(sb.childCPU.Load()-cpu)/1e6/float64(b.N), "program-cpu-ms/op")
		}()
		sandboxMedian = benchHanoi(b, func(code string) (string, error) {
			r, err := sb.Run(context.Background(), code)
			if err == nil && r.Failure != "" {
				err = fmt.Errorf("%s: %s", r.Failure, r.Stderr)
			}
			return r.Stdout, err
		})
	})
	b.Run("reference", func(b *testing.B) {
		median := benchHanoi(b, func(code string) (string, error) {
			cmd := exec.Command(sb.Interpreter(), "-I", "-")
			cmd.Stdin = strings.NewReader(code)
			out, err := cmd.Output()
			return string(out), err
		})
		if sandboxMedian > 0 {
			// How many times the sandbox's median fits in the reference's.
			b.ReportMetric(float64(median)/float64(sandboxMedian), "x-sandbox-median")
		}
	})
}

// benchHanoi measures run (plus extraction, parsing and replay) per program
// and returns the median.
func benchHanoi(b *testing.B, run func(code string) (string, error)) time.Duration {
	var d []time.Duration
	cpu := childCPU()
	for b.Loop() {
		start := time.Now()
		code := program.Extract(hanoiReply)
		out, err := run(code)
		if err != nil {
			b.Fatal(err)
		}
		m, err := program.ParseMoves(out, code)
		if err != nil || len(m) != 1023 {
			b.Fatalf("%d moves, %v", len(m), err)
		}
		if err := replayHanoi(m, 10); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	reportChildCPU(b, cpu, len(d))
	return reportLatencies(b, d)
}

// replayHanoi applies moves through the Hanoi verifier and checks that they
// reach the goal, as the runner's replay does.
func replayHanoi(moves []json.RawMessage, n int) error {
	e, err := envs.Lookup(envs.HanoiName)
	if err != nil {
		return err
	}
	s, goal, _ := envs.InitialAndGoal(envs.HanoiName, n)
	for i, raw := range moves {
		a, err := e.Normalize(nil, s, raw)
		if err != nil {
			return fmt.Errorf("move %d: %v", i+1, err)
		}
		st := e.Step(s, a)
		if !st.Valid {
			return fmt.Errorf("move %d: %s", i+1, st.Message)
		}
		s = st.Next
	}
	if !e.IsGoal(s, goal) {
		return fmt.Errorf("the moves do not reach the goal")
	}
	return nil
}

// BenchmarkRunHanoiConcurrent runs programs from many goroutines through
// one sandbox with the default concurrency (number of CPUs), so ns/op is
// the inverse of throughput and the latencies include queueing.
func BenchmarkRunHanoiConcurrent(b *testing.B) {
	sb, err := NewPython(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
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
			defer sb.Close()
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
