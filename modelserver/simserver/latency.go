package simserver

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// Latency is the simulated server's timing model, in simulated time: a time
// to first token (a fixed part plus prompt processing), then decoding at a
// per-sequence speed, with all in-flight sequences sharing an aggregate
// throughput cap (continuous batching). Scale multiplies every simulated
// duration into real time; 0 answers at once.
type Latency struct {
	Scale float64
	// TTFT is the fixed part of the time to first token.
	TTFT time.Duration
	// PrefillTokensPerSecond adds prompt_tokens/PrefillTokensPerSecond to
	// the time to first token (0: none).
	PrefillTokensPerSecond float64
	// DecodeTokensPerSecond is one sequence's top decode speed.
	DecodeTokensPerSecond float64
	// MaxTokensPerSecond caps the decode tokens/s of all sequences together.
	MaxTokensPerSecond float64
	// MaxNumSeqs is vLLM's --max-num-seqs: the most requests in the batch
	// (prefilling or decoding) at once. More wait in a queue, in arrival
	// order, for a place; /metrics reports the two as
	// vllm:num_requests_running and vllm:num_requests_waiting. 0: no limit.
	MaxNumSeqs int
	// KVCacheTokens is the KV cache's size in tokens: vllm:kv_cache_usage_perc
	// is the prompt and decoded tokens of the running requests over it (0:
	// DefaultKVCacheTokens). The simulation does not preempt: the batch is
	// bounded by MaxNumSeqs alone.
	KVCacheTokens int
}

// DefaultKVCacheTokens is the KV cache size when Latency gives none.
const DefaultKVCacheTokens = 262144

// DefaultLatency resembles a 20-35B model on one H100 under vLLM.
// Its batch holds vLLM's default of 256 requests, far above the 21 that
// reach its throughput cap.
var DefaultLatency = Latency{Scale: 1, TTFT: 150 * time.Millisecond, PrefillTokensPerSecond: 20000,
	DecodeTokensPerSecond: 120, MaxTokensPerSecond: 2500, MaxNumSeqs: 256}

// Validate rejects negative settings, naming the sim-server flag of each.
func (l Latency) Validate() error {
	for _, f := range []struct {
		flag string
		v    float64
	}{
		{"--latency-scale", l.Scale},
		{"--ttft", float64(l.TTFT)},
		{"--prefill-tokens-per-second", l.PrefillTokensPerSecond},
		{"--decode-tokens-per-second", l.DecodeTokensPerSecond},
		{"--max-tokens-per-second", l.MaxTokensPerSecond},
		{"--max-num-seqs", float64(l.MaxNumSeqs)},
		{"--kv-cache-tokens", float64(l.KVCacheTokens)},
	} {
		if f.v < 0 || math.IsNaN(f.v) {
			return fmt.Errorf("simserver: latency setting %s must not be negative", f.flag)
		}
	}
	return nil
}

// job is one sequence being decoded.
type job struct {
	left float64
	done chan struct{}
}

// seq is one request in the batch or waiting for a place in it.
type seq struct {
	prompt, completion int
	// j is its decoding job once its time to first token is over.
	j *job
	// admitted is closed when a waiting request gets its place.
	admitted chan struct{}
}

// decoder shares decode throughput among in-flight sequences as a
// processor-sharing queue. advance is exact arithmetic over simulated
// seconds; arrivals advance the queue to their arrival time first, and a
// goroutine wakes at each completion. Requests enter the batch (at most
// MaxNumSeqs) in arrival order; the rest wait.
type decoder struct {
	lat Latency
	now func() time.Time

	mu    sync.Mutex
	batch map[*seq]struct{}
	queue []*seq
	jobs  map[*job]struct{}
	last  time.Time
	kick  chan struct{}
	// Accounting in simulated seconds and tokens.
	decoded    float64
	activeTime float64
	running    bool
	// itl is the inter-token latency of every decoded token, in real
	// seconds (vLLM's vllm:inter_token_latency_seconds).
	itl itlHistogram
}

// itlBuckets are vLLM's buckets of vllm:inter_token_latency_seconds.
var itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}

// itlHistogram counts tokens by their inter-token latency; the counts are
// fractional tokens, rounded when exposed.
type itlHistogram struct {
	count, sum float64
	buckets    [19]float64 // cumulative at exposition: per bucket here
}

// add records tokens decoded each seconds after the previous one.
func (h *itlHistogram) add(tokens, seconds float64) {
	h.count += tokens
	h.sum += tokens * seconds
	for i, le := range itlBuckets {
		if seconds <= le {
			h.buckets[i] += tokens
			return
		}
	}
}

// cumulative returns the counts per upper bound, as Prometheus wants them.
func (h *itlHistogram) cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(itlBuckets))
	acc := 0.0
	for i, le := range itlBuckets {
		acc += h.buckets[i]
		out[le] = uint64(math.Round(acc))
	}
	return out
}

func newDecoder(lat Latency, now func() time.Time) *decoder {
	if now == nil {
		now = time.Now
	}
	return &decoder{lat: lat, now: now, jobs: map[*job]struct{}{}, batch: map[*seq]struct{}{}, kick: make(chan struct{}, 1)}
}

// admit waits for a place in the batch. It returns ctx's error, holding
// no place, when ctx ends first.
func (d *decoder) admit(ctx context.Context, sq *seq) error {
	d.mu.Lock()
	if d.lat.MaxNumSeqs <= 0 || len(d.batch) < d.lat.MaxNumSeqs && len(d.queue) == 0 {
		d.batch[sq] = struct{}{}
		d.mu.Unlock()
		return nil
	}
	sq.admitted = make(chan struct{})
	d.queue = append(d.queue, sq)
	d.mu.Unlock()
	select {
	case <-sq.admitted:
		return nil
	case <-ctx.Done():
		d.mu.Lock()
		for i, w := range d.queue {
			if w == sq {
				d.queue = append(d.queue[:i], d.queue[i+1:]...)
				d.mu.Unlock()
				return ctx.Err()
			}
		}
		d.mu.Unlock()
		d.leave(sq) // admitted as ctx ended
		return ctx.Err()
	}
}

// leave frees sq's place in the batch for the first waiting request.
func (d *decoder) leave(sq *seq) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.batch, sq)
	for len(d.queue) > 0 && len(d.batch) < d.lat.MaxNumSeqs {
		next := d.queue[0]
		d.queue = d.queue[1:]
		d.batch[next] = struct{}{}
		close(next.admitted)
	}
}

// saturationHeadroom is the share of sequences added to the minimum that
// saturates the throughput cap, to cover the ones in their time to first
// token (not decoding yet) and the gaps between a run's calls.
const saturationHeadroom = 1.25

// SaturatingInFlight is how many requests in flight keep this server's
// decode throughput at its cap without oversubscribing it:
// MaxTokensPerSecond / DecodeTokensPerSecond sequences decode at top speed
// and together reach the cap, plus a quarter for those in their time to
// first token. More only slows every sequence, so the longest replies end
// last and alone. A batch limit (MaxNumSeqs) below that is the saturating
// count itself: requests beyond it wait. 0 when the model has no cap or no
// per-sequence speed.
func (l Latency) SaturatingInFlight() int {
	if l.MaxTokensPerSecond <= 0 || l.DecodeTokensPerSecond <= 0 {
		return l.MaxNumSeqs
	}
	n := int(math.Ceil(saturationHeadroom * l.MaxTokensPerSecond / l.DecodeTokensPerSecond))
	if l.MaxNumSeqs > 0 {
		n = min(n, l.MaxNumSeqs)
	}
	return n
}

// rate is the decode speed of each of n sequences.
func (l Latency) rate(n int) float64 {
	if n == 0 {
		return 0
	}
	r := l.DecodeTokensPerSecond
	if r <= 0 {
		r = 1e9
	}
	if l.MaxTokensPerSecond > 0 && r*float64(n) > l.MaxTokensPerSecond {
		r = l.MaxTokensPerSecond / float64(n)
	}
	return r
}

// step advances simulated time by dt seconds; the caller holds mu. Jobs that
// finish are closed and removed, and the rest speed up from that moment.
func (d *decoder) step(dt float64) {
	for dt > 0 && len(d.jobs) > 0 {
		r := d.lat.rate(len(d.jobs))
		first := math.Inf(1)
		for j := range d.jobs {
			first = math.Min(first, j.left/r)
		}
		span := math.Min(first, dt)
		for j := range d.jobs {
			got := math.Min(r*span, j.left)
			j.left -= got
			d.decoded += got
			d.itl.add(got, d.lat.Scale/r)
			if j.left <= 1e-9 {
				close(j.done)
				delete(d.jobs, j)
			}
		}
		d.activeTime += span
		dt -= span
	}
}

// untilNext is the simulated seconds until the next completion; the caller
// holds mu.
func (d *decoder) untilNext() float64 {
	r := d.lat.rate(len(d.jobs))
	first := math.Inf(1)
	for j := range d.jobs {
		first = math.Min(first, j.left/r)
	}
	return first
}

// advance brings the queue to real time t; the caller holds mu.
func (d *decoder) advance(t time.Time) {
	if dt := t.Sub(d.last).Seconds(); dt > 0 && d.lat.Scale > 0 {
		d.step(dt / d.lat.Scale)
	}
	d.last = t
}

// ttft is the simulated time to first token for a prompt.
func (l Latency) ttft(promptTokens int) time.Duration {
	t := l.TTFT
	if l.PrefillTokensPerSecond > 0 {
		t += time.Duration(float64(promptTokens) / l.PrefillTokensPerSecond * float64(time.Second))
	}
	return t
}

// real converts a simulated duration to real time.
func (l Latency) real(d time.Duration) time.Duration { return time.Duration(float64(d) * l.Scale) }

// generate waits out the time to first token and the decoding of
// completion tokens, in real time scaled by Scale. It returns early with
// ctx's error.
func (d *decoder) generate(ctx context.Context, promptTokens, completionTokens int) error {
	if d.lat.Scale <= 0 {
		d.mu.Lock()
		d.decoded += float64(completionTokens)
		d.mu.Unlock()
		return nil
	}
	sq := &seq{prompt: promptTokens, completion: completionTokens}
	if err := d.admit(ctx, sq); err != nil {
		return err
	}
	defer d.leave(sq)
	t := time.NewTimer(d.lat.real(d.lat.ttft(promptTokens)))
	select {
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	case <-t.C:
	}
	if completionTokens <= 0 {
		return nil
	}
	j := &job{left: float64(completionTokens), done: make(chan struct{})}
	d.mu.Lock()
	d.advance(d.now())
	sq.j = j
	d.jobs[j] = struct{}{}
	if !d.running {
		d.running = true
		go d.loop()
	}
	d.mu.Unlock()
	select {
	case d.kick <- struct{}{}:
	default:
	}
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
		d.mu.Lock()
		if _, ok := d.jobs[j]; ok {
			d.advance(d.now())
			delete(d.jobs, j)
		}
		d.mu.Unlock()
		return ctx.Err()
	}
}

// maxWake bounds the real time between the loop's wake-ups.
const maxWake = 50 * time.Millisecond

// loop wakes at each completion (or arrival) while sequences are in flight.
func (d *decoder) loop() {
	for {
		d.mu.Lock()
		d.advance(d.now())
		if len(d.jobs) == 0 {
			d.running = false
			d.mu.Unlock()
			return
		}
		wait := time.Duration(d.untilNext() * d.lat.Scale * float64(time.Second))
		d.mu.Unlock()
		wait = min(max(wait, 100*time.Microsecond), maxWake)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-d.kick:
			t.Stop()
		}
	}
}

// stats returns decoded tokens, simulated seconds with work in flight, and
// the sequences decoding now.
func (d *decoder) stats() (decoded, active float64, inflight int) {
	st := d.batchStats()
	return st.decoded, st.active, st.decoding
}

// decoderStats is the decoder's accounting and its batch now.
type decoderStats struct {
	decoded, active float64
	// decoding counts sequences decoding; running those in the batch
	// (prefilling or decoding), waiting those queued for a place.
	decoding, running, waiting int
	// kvTokens is the prompt and decoded tokens of the batch.
	kvTokens float64
	// itl is the inter-token latency histogram.
	itl itlHistogram
}

func (d *decoder) batchStats() decoderStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running {
		d.advance(d.now())
	}
	st := decoderStats{decoded: d.decoded, active: d.activeTime, decoding: len(d.jobs), running: len(d.batch), waiting: len(d.queue), itl: d.itl}
	for sq := range d.batch {
		st.kvTokens += float64(sq.prompt)
		if sq.j != nil {
			st.kvTokens += float64(sq.completion) - sq.j.left
		}
	}
	return st
}

// kvUsage is the fraction of the KV cache the batch holds.
func (l Latency) kvUsage(tokens float64) float64 {
	size := l.KVCacheTokens
	if size <= 0 {
		size = DefaultKVCacheTokens
	}
	return min(1, tokens/float64(size))
}
