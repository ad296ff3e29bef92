package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"repot.dev/repot-operator/analysis/report"
	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
)

// ExportEvaluation writes records.jsonl, summary.json and source.json into
// dir. It refuses a directory that already holds records, as repot run does.
func ExportEvaluation(dir string, res *EvaluationResults) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	recPath := filepath.Join(dir, contract.RecordsFile)
	if st, err := os.Stat(recPath); err == nil && st.Size() > 0 {
		return fmt.Errorf("%s already holds records: choose another --out", recPath)
	}
	var b bytes.Buffer
	for _, r := range res.Records {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := writeFileAtomic(recPath, b.Bytes()); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(dir, contract.SummaryFile), summary.Aggregate(res.Records)); err != nil {
		return err
	}
	return writeJSONFile(filepath.Join(dir, report.SourceFile), res.Meta(report.OriginExported))
}

// ExportSchedule writes the history and one directory per run.
func ExportSchedule(dir string, sched *report.Schedule, runs []*EvaluationResults) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, r := range runs {
		if err := ExportEvaluation(filepath.Join(dir, r.Evaluation.Name), r); err != nil {
			return err
		}
	}
	return writeJSONFile(filepath.Join(dir, report.ScheduleFile), sched)
}

// writeJSONFile writes v indented and newline-terminated, as repot run
// writes summary.json.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func writeFileAtomic(path string, b []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
