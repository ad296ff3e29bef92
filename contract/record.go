package contract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Record is one finished run: one problem solved by one method against one
// model. It is what the ledger stores (one JSON object per line) and what
// Aggregate consumes. Raw model text is never part of a Record: it lives in
// the traces. The key (Model, ProblemID, Method) identifies a run; a ledger
// that holds a key twice counts it once.
type Record struct {
	Model       string `json:"model"`
	ProblemID   string `json:"problem_id"`
	Environment string `json:"environment"`
	Complexity  int    `json:"complexity"`
	Method      string `json:"method"`

	Success bool `json:"success"`
	// StoppedReason: "goal", "invalid_move", "format_error", "max_steps",
	// "plan_exhausted", "no_plan", "program_error", "sandbox_rejected",
	// "truncated", "infra_error".
	StoppedReason string `json:"stopped_reason"`
	// Route is the adaptive route, or for repot "initial_pot_success" /
	// "suffix_repair" ("no_extra_call" with a repair budget of 0), for pot-retry "initial_pot_success" / "fresh_retry",
	// for pot "initial_pot_success" / "no_extra_call".
	Route string `json:"route"`
	// RepairUsed reports whether a suffix-repair call was made.
	RepairUsed bool `json:"repair_used,omitempty"`

	Calls            int `json:"calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens"`

	// InitialPlanLen is the number of moves the first program printed.
	InitialPlanLen int `json:"initial_plan_len"`
	// InitialPrefixPermille is the verified prefix fraction of the first plan
	// in thousandths (0 for an empty plan).
	InitialPrefixPermille int `json:"initial_prefix_permille"`
	// InitialSuccess reports whether the first call alone solved the problem.
	InitialSuccess bool `json:"initial_success"`

	// InfraError is set when an infrastructure failure (not the model) ended
	// the run after retries; such a run is reported apart and never counted as
	// a failed problem.
	InfraError string `json:"infra_error,omitempty"`
	// InfraRetries counts model-call retries that infrastructure faults caused.
	InfraRetries int `json:"infra_retries,omitempty"`

	WallMillis int64 `json:"wall_ms"`

	// StartedUnixMilli is when the run started (Unix milliseconds); with
	// WallMillis it is the span during which the run had a request in flight
	// or about to be, from which the operator derives a server's idle time.
	// 0 in records written before it existed.
	StartedUnixMilli int64 `json:"started_unix_ms,omitempty"`
	// InFlightLimit is the model calls in flight the runner's gate admitted
	// when the run was written: the adaptive concurrency controller's limit
	// then, or the fixed bound. SettledInFlight reads a shard's settled
	// concurrency from its records. 0 in records written before it existed.
	InFlightLimit int `json:"in_flight_limit,omitempty"`
	// Samples is the number of samples self-consistency drew (it stops at
	// the first that reaches the goal); 0 for the other methods.
	Samples int `json:"samples,omitempty"`
	// VEX carries the figures of a VEX run (method vex and the vex-*
	// Derail conditions); nil otherwise.
	VEX *VEXStats `json:"vex,omitempty"`
	// StepAgent carries the figures of a stateguard-rollback run; nil
	// otherwise.
	StepAgent *StepAgentStats `json:"step_agent,omitempty"`
	// Derail is set on Derail-550 records of the current protocol (schema
	// 2, REPOT.md section 7); Method is then the condition.
	Derail *DerailRecord `json:"derail,omitempty"`

	// Rounds is the repair loop round by round (Round), for runs of repot
	// with a repair budget above 1 or a noisy verifier, and of repot-vrr;
	// absent otherwise.
	Rounds []Round `json:"rounds,omitempty"`
	// Votes is the number of verifier votes cast on each committed plan
	// (the noisy-verifier ablation); 0 means one exact verdict.
	Votes int `json:"votes,omitempty"`
	// LoopStop says why the repair loop stopped (LoopAccepted, LoopBudget,
	// LoopGain, LoopGuard, LoopError); set with Rounds.
	LoopStop string `json:"loop_stop,omitempty"`
	// VRRCalibration marks a repot-vrr run of the calibration slice: it ran
	// the whole budget like fixed-R repot, and its rounds calibrate the
	// estimates of the other runs.
	VRRCalibration bool `json:"vrr_calibration,omitempty"`

	// Aborted marks an attempt stopped before the run finished (its runner
	// was stopped, e.g. on SIGTERM when a budget limit was reached). It is
	// no finished run: results, summaries (summary.Dedupe) and a resume
	// (DoneKeys) leave it out, and the run is made again. It carries the
	// calls and tokens of the attempt's model calls that returned before
	// the stop (the server reported their usage), with StartedUnixMilli
	// and WallMillis, so that a budget counts what the server spent. Its
	// key names the attempt (Key): a later record of the run, finished or
	// aborted, is another key, and the same attempt read twice counts
	// once.
	Aborted bool `json:"aborted,omitempty"`
}

// Key identifies a run for exactly-once counting. A Derail record's key also
// names the protocol schema and the checkpoint statement, so records of the
// earlier protocol, or of the other statement, are never taken for it. An
// aborted attempt's key also names the attempt's start (Aborted).
func (r Record) Key() string {
	k := r.Model + "\x00" + r.ProblemID + "\x00" + r.Method
	if r.Derail != nil {
		k += derailKeySeparator + r.Derail.CheckpointStatement
	}
	if r.Aborted {
		k += abortedKeySeparator + strconv.FormatInt(r.StartedUnixMilli, 10)
	}
	return k
}

// derailKeySeparator sets a Derail record's key apart (Record.Key).
const derailKeySeparator = "\x00derail/v2/"

// abortedKeySeparator sets an aborted attempt's key apart from the run's
// (Record.Key): the attempt is named by its start.
const abortedKeySeparator = "\x00aborted/"

// DerailRecord marks a record of the Derail-550 protocol of REPOT.md
// section 7 (schema 2). Records of the earlier reading (a repair straight
// from the injected trajectory, methods repot, repot-no-prefix and
// repot-restart) carry none: their key differs, and Aggregate keeps them
// out of the Derail figures.
type DerailRecord struct {
	// Schema is DerailSchema.
	Schema int `json:"schema"`
	// CheckpointStatement is "paper" or "full": how the checkpoint problem
	// of repot-full and repot-no-prefix was stated (recorded on every
	// condition's records so one run's records stay together).
	CheckpointStatement string `json:"checkpoint_statement"`
	// InjectionType is legal_wrong_action or invalid_action.
	InjectionType string `json:"injection_type"`
}

// VEXStats are the figures of one VEX run, as the reference's trace
// metadata has them.
type VEXStats struct {
	// Proposer is "json" (JSON action chunks) or "code" (a Python program
	// run in the sandbox, conditioned on the verified prefix).
	Proposer string `json:"proposer"`
	// ChunkSize is K, the most moves one proposal is asked for (a JSON
	// proposal's moves beyond K are dropped; a program's are not).
	ChunkSize int `json:"chunk_size"`
	// ChunkAttempts counts proposals (one per model call).
	ChunkAttempts int `json:"chunk_attempts"`
	// Rollbacks counts proposals cut at a rejected or unreadable move.
	Rollbacks int `json:"rollbacks"`
	// Committed is the number of moves the verifier committed.
	Committed int `json:"committed"`
	// LLMCalls counts the model calls made (at most the call budget).
	LLMCalls int `json:"llm_calls"`
}

// StepAgentStats are the figures of one stateguard-rollback run.
type StepAgentStats struct {
	// Steps counts the agent's model calls that proposed an action.
	Steps int `json:"steps"`
	// Rollbacks counts proposals that were not committed (invalid, unknown
	// or blocked actions, unreadable replies, loop recoveries).
	Rollbacks int `json:"rollbacks"`
	// LoopRecoveries counts the moves refused because they would return
	// to a state already visited.
	LoopRecoveries int `json:"loop_recoveries"`
}

// Round is the committed plan of a run after one round of its repair loop:
// Rounds[0] is the first plan, Rounds[k] the plan committed after repair
// call k. It is kept small (short keys, zero values left out): a ledger
// holds one per round of every run that records rounds.
type Round struct {
	// Valid is the truth: the committed plan reaches the goal under exact
	// replay, whatever the (possibly noisy) verdict said.
	Valid bool `json:"v,omitempty"`
	// Prefix is the committed plan's verified prefix length.
	Prefix int `json:"p,omitempty"`
	// Accepts counts the verifier votes (of Record.Votes) that accepted the
	// committed plan; the observed verdict is a strict majority.
	Accepts int `json:"a,omitempty"`
	// Tokens are the prompt and completion tokens of the round's call.
	Tokens int `json:"t,omitempty"`
	// Kept reports that VRR-Guard kept its incumbent over the round's
	// candidate.
	Kept bool `json:"kept,omitempty"`
	// NoCall reports a round that made no repair call: the verdict that
	// opened it accepted the committed plan, which the round only
	// verified again (a noisy loop keeps verifying until its budget).
	NoCall bool `json:"n,omitempty"`
}

// Accepted reports whether the observed verdict on the round's plan, from
// votes votes (0 means 1), accepted it: a strict majority of accepting
// votes.
func (r Round) Accepted(votes int) bool { return 2*r.Accepts > max(votes, 1) }

// MaxRecordLine bounds one JSONL line of records, in records.jsonl and in a
// ledger alike (a record is about 500 bytes; a ledger holds at most 1 MiB).
const MaxRecordLine = 1 << 20

// errNoKey is the error of a record that could not be keyed.
var errNoKey = errors.New("record lacks model, problem_id or method")

// ParseRecord parses one JSONL line into a record. A line without a model,
// problem_id or method is an error: it could not be keyed. It is the one
// parser of records: the runner's resume, the ledger sidecar, the operator
// and the schedule controller all read records through it.
func ParseRecord(line []byte) (Record, error) {
	var r Record
	if len(line) > MaxRecordLine {
		return r, fmt.Errorf("longer than %d bytes", MaxRecordLine)
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, err
	}
	if r.Model == "" || r.ProblemID == "" || r.Method == "" {
		return r, errNoKey
	}
	return r, nil
}

// ScanRecords calls fn with each non-blank line of records JSONL text (its
// 1-based number, the trimmed line, and the record or the error of
// ParseRecord), in order.
func ScanRecords(text string, fn func(line int, raw string, rec Record, err error)) {
	n := 0
	for l := range strings.Lines(text) {
		n++
		raw := strings.TrimSpace(l)
		if raw == "" {
			continue
		}
		rec, err := ParseRecord([]byte(raw))
		fn(n, raw, rec, err)
	}
}

// Supersedes reports whether rec replaces kept, a record of the same key
// met before it: a finished run replaces an infra error, and otherwise the
// first record stays. It is the one rule of deduplication (Dedupe, and the
// ledger's merge).
func Supersedes(kept, rec Record) bool { return rec.InfraError == "" && kept.InfraError != "" }

// ReadRecords reads records JSONL. Blank lines are skipped. A last line
// without its newline that does not parse is a run cut off mid-write: it is
// left out and reported through partial (its byte length), so the caller can
// cut it off before appending. Any other bad line is an error naming its line
// number.
func ReadRecords(r io.Reader) (recs []Record, partial int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("records line %d: %w", n, err)
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		if len(line) > MaxRecordLine {
			return nil, 0, fmt.Errorf("records line %d: longer than %d bytes", n, MaxRecordLine)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			rec, perr := ParseRecord(t)
			if perr != nil && !complete && !json.Valid(t) {
				return recs, len(line), nil // a run cut off mid-write
			}
			if perr != nil {
				return nil, 0, fmt.Errorf("records line %d: %v", n, perr)
			}
			recs = append(recs, rec)
		}
		if err == io.EOF {
			return recs, 0, nil
		}
	}
}

// DoneKeys returns the keys of the records a resume skips: every key with a
// record that is not an infra error nor an aborted attempt.
func DoneKeys(recs []Record) map[string]bool {
	done := make(map[string]bool, len(recs))
	for _, r := range recs {
		if r.InfraError == "" && !r.Aborted {
			done[r.Key()] = true
		}
	}
	return done
}
