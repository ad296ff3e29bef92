// Package repot is the command tree of the one repot binary, every
// subcommand in a file of its own that registers it (register, in
// commands.go), whichever process it becomes. main.go runs it; the chart
// and manifest tests check the container args they ship with ParseArgs.
//
// The operator's pod:
//   - manager.go, manager_store.go: repot manager, the controller manager,
//     its flags and its default artifact store.
//
// A runner pod:
//   - run.go, run_baselines.go, run_derail.go: repot run, the engine over a
//     suite, its methods' and Derail-550's flags; ledgerwait.go: its
//     hand-off to the ledger sidecar (--await-ledger); gpureadings.go: the
//     model server's GPU readings it records;
//   - ledger.go, ledger_restore.go, ledger_sync.go, ledger_artifacts.go,
//     ledger_readings.go: repot ledger restore|sync, the runner pod's init
//     container and sidecar;
//   - artifacts.go: repot artifacts probe|remove, the Jobs that probe an
//     evaluation's store before it starts and delete its traces after;
//   - readycheck.go: repot ready-check, the wait for a model server.
//
// A model server's pod:
//   - gputelemetry.go: repot gpu-telemetry, the parent of the vLLM process;
//     childproc.go, childreaper.go: the wrapped process and its orphans;
//   - simserver.go, simgpu.go: repot sim-server, the SIMULATED server (and
//     its simulated GPU); serve.go: serving until a signal.
//
// A user's laptop:
//   - suite.go, verify.go, sandbox.go: repot suite, verify and sandbox;
//   - report.go, report_cluster.go: repot report, of run directories or of
//     what the cluster holds (--evaluation, --schedule);
//   - results.go, results_chaintree.go: repot results export;
//   - judge.go: repot judge, the audit of an evaluation's stored traces;
//   - cluster.go: the kubeconfig flags and client of the commands that read
//     a cluster; cmd/repot/results: what they read there (an evaluation's or
//     a schedule's records, figures, provenance and traces), with
//     cmd/repot/results/exporttest checking an export against the status.
package repot
