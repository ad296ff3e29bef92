// Package results reads an evaluation's or a schedule's results out of the
// cluster for `repot results export` and `repot report`: the records the
// operator counts (read from the ledgers with the controller's own
// ReadLedgers and ComputeResults, so the numbers are the status's), the
// figures, and the files written by an export.
//
//   - results_source.go: ReadEvaluationResults and the report.Source of an
//     evaluation;
//   - results_schedule.go: ReadSchedule and ReadScheduleReport, a
//     RepotSchedule's history and its runs;
//   - results_export.go: ExportEvaluation and ExportSchedule, the
//     records.jsonl, summary.json and source.json written to a directory;
//   - provenance.go: the provenance facts (problem-set hash, sandbox mode,
//     each model's images, server arguments, sampling...) the export and the
//     report show.
package results
