package repot

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/runner/sandbox"
)

func init() { register(newSandboxCommand) }

// newSandboxCommand is `repot sandbox`, with `repot sandbox run`.
func newSandboxCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run model programs in the sandbox the runner uses",
	}
	cmd.AddCommand(newSandboxRunCommand())
	return cmd
}

// sandboxRunFlags are the flags of `repot sandbox run`.
type sandboxRunFlags struct {
	isolation, landlock, min string
	timeout                  time.Duration
}

// sandboxRunLine is what `repot sandbox run` prints per file.
type sandboxRunLine struct {
	File       string            `json:"file"`
	Mode       string            `json:"mode"`
	Failure    string            `json:"failure"`
	ExitCode   int               `json:"exit_code"`
	Stdout     string            `json:"stdout"`
	Stderr     string            `json:"stderr"`
	Moves      []json.RawMessage `json:"moves"`
	ParseError string            `json:"parse_error"`
	MS         int64             `json:"ms"`
}

func newSandboxRunCommand() *cobra.Command {
	f := sandboxRunFlags{}
	cmd := &cobra.Command{
		Use:   "run [flags] FILE...",
		Short: "Run each file as the runner runs a model's program; print one JSON line per file",
		Long: "Run each FILE (a model reply or a bare Python program) exactly as the runner does: extract the\n" +
			"program, run it in the sandbox, parse its moves. Prints one JSON line per file:\n" +
			"{\"file\",\"mode\",\"failure\",\"exit_code\",\"stdout\",\"stderr\",\"moves\",\"parse_error\",\"ms\"}.\n" +
			"--isolation and --landlock force weaker settings, to see what a program does in the weakest pod.\n" +
			"It fails, without running anything, when the seccomp filter cannot be installed (see --sandbox-min).",
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, files []string) error { return f.run(c, files) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.isolation, "isolation", "auto", "namespaces: auto (strongest available), namespaces (required) or none")
	fl.StringVar(&f.landlock, "landlock", "auto", "Landlock: auto (where the kernel has it) or off")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "wall-clock limit per program")
	fl.StringVar(&f.min, "sandbox-min", string(sandbox.MinSeccomp), "least confinement to run with: seccomp, seccomp+landlock, seccomp+namespaces or none")
	return cmd
}

// options turns the flags into sandbox options.
func (f *sandboxRunFlags) options() (sandbox.Options, error) {
	o := sandbox.Options{Timeout: f.timeout, Concurrency: 1}
	switch f.isolation {
	case "auto":
	case "namespaces", "none":
		o.Isolation = sandbox.Isolation(f.isolation)
	default:
		return o, fmt.Errorf("--isolation %q: want auto, namespaces or none", f.isolation)
	}
	switch f.landlock {
	case "auto":
	case "off":
		o.Landlock = sandbox.LandlockOff
	default:
		return o, fmt.Errorf("--landlock %q: want auto or off", f.landlock)
	}
	if f.timeout <= 0 {
		return o, fmt.Errorf("--timeout must be positive, got %v", f.timeout)
	}
	m, err := sandbox.ParseMinimum(f.min)
	if err != nil {
		return o, fmt.Errorf("--sandbox-min: %w", err)
	}
	o.Min = m
	return o, nil
}

func (f *sandboxRunFlags) run(c *cobra.Command, files []string) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	if err := sandbox.ProtectRunner(); err != nil {
		return fmt.Errorf("sandbox: protect this process (prctl PR_SET_DUMPABLE): %w", err)
	}
	sb, err := sandbox.NewPython(opts)
	if err != nil {
		return err
	}
	defer sb.Close()
	enc := json.NewEncoder(c.OutOrStdout())
	enc.SetEscapeHTML(false)
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		code := program.Extract(string(text))
		start := time.Now()
		r, err := sb.Run(c.Context(), code)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		line := sandboxRunLine{File: file, Mode: sb.Mode(), Failure: r.Failure, ExitCode: r.ExitCode,
			Stdout: r.Stdout, Stderr: r.Stderr, Moves: []json.RawMessage{}, MS: time.Since(start).Milliseconds()}
		if moves, err := program.ParseMoves(r.Stdout, code); err != nil {
			line.ParseError = err.Error()
		} else {
			line.Moves = moves
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}
