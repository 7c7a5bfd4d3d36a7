// Command tcrt opens the tcrt runtime on the best backend available, prints
// the device and, for each op, the kernel selected, the result's error
// against the reference on random data, and its throughput.
//
//	go run ./bench/cmd/tcrt [-ops matmul,...] [-size small|medium|large] [-backend auto|cpu|sim|cuda] [-json] [-explain]
//
// The default build is CGO-free and loads the CUDA driver (libcuda.so.1, or
// TCRT_CUDA_LIB) at run time: with -backend auto (the default when neither
// the flag nor TCRT_BACKEND names a backend; the flag wins) it runs on
// the GPU when the driver and a device are usable and on the CPU
// otherwise; -explain prints, first, one line saying which backend opened
// and why (on the CPU: why the GPU was not used). -backend cuda fails, with
// the driver's reason, when CUDA cannot open.
//
// Exit status: 0 when every result is within tolerance, 1 when a run fails
// (or the backend asked for does not open), 2 for a usage error (an
// unknown flag, op, size or backend).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/runtime"
)

// The accepted values of -size and -backend.
var (
	sizes    = []string{"small", "medium", "large"}
	backends = []runtime.BackendKind{runtime.BackendAuto, runtime.BackendCPU, runtime.BackendSim, runtime.BackendCUDA}
)

// config is the parsed command line.
type config struct {
	ops     []string // job names, in the registry's order
	size    string
	backend runtime.BackendKind
	json    bool
	explain bool
}

// errUsage marks command-line mistakes (exit status 2).
var errUsage = errors.New("usage")

func main() {
	if len(os.Args) > 1 {
		if cmd, ok := subcommands[os.Args[1]]; ok { // model.go
			os.Exit(cmd(os.Args[2:], os.Stdout, os.Stderr))
		}
	}
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	os.Exit(run(cfg, os.Stdout, os.Stderr))
}

// parseFlags parses args; it reports a usage error (with the usage text) on
// stderr and returns an error wrapping errUsage or flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("tcrt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opsFlag := fs.String("ops", "all", "comma-separated ops to run ("+strings.Join(bench.JobNames(), ", ")+") or all")
	size := fs.String("size", "medium", "problem sizes: "+strings.Join(sizes, ", "))
	asJSON := fs.Bool("json", false, "print the results as JSON")
	explain := fs.Bool("explain", false, "print the kernel selection for each line")
	backend := fs.String("backend", "", "backend: auto, cpu, sim (the simulated SM86/SM89 GPU) or cuda (libcuda.so.1 loaded at run time; TCRT_CUDA_LIB names another path); unset: TCRT_BACKEND, else auto")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, err
		}
		return config{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	fail := func(format string, a ...any) (config, error) {
		msg := fmt.Sprintf(format, a...)
		fmt.Fprintf(stderr, "tcrt: %s\n", msg)
		fs.Usage()
		return config{}, fmt.Errorf("%w: %s", errUsage, msg)
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments %q", fs.Args())
	}
	cfg := config{size: *size, backend: runtime.BackendKind(strings.ToLower(*backend)), json: *asJSON, explain: *explain}
	if !slices.Contains(sizes, cfg.size) {
		return fail("-size %q: want one of %s", cfg.size, strings.Join(sizes, ", "))
	}
	set := false // an unset -backend leaves the choice to TCRT_BACKEND
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "backend" })
	if set && !slices.Contains(backends, cfg.backend) {
		return fail("-backend %q: want auto, cpu, sim or cuda", *backend)
	}
	names := bench.JobNames()
	if strings.TrimSpace(*opsFlag) == "all" {
		cfg.ops = names
		return cfg, nil
	}
	for _, o := range strings.Split(*opsFlag, ",") {
		o = strings.TrimSpace(o)
		if !slices.Contains(names, o) {
			return fail("-ops: unknown op %q: want all or some of %s", o, strings.Join(names, ", "))
		}
		if !slices.Contains(cfg.ops, o) {
			cfg.ops = append(cfg.ops, o)
		}
	}
	return cfg, nil
}

// errorLine formats err for stderr with one "tcrt: " prefix: the library's
// errors carry it (and name their op) already; others get it and context.
func errorLine(context string, err error) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "tcrt:"):
		return msg
	case context != "":
		return "tcrt: " + context + ": " + msg
	}
	return "tcrt: " + msg
}

// run executes the jobs cfg selects and returns the exit status.
func run(cfg config, stdout, stderr io.Writer) int {
	rt, err := runtime.Open(runtime.Options{Backend: cfg.backend})
	if err != nil {
		fmt.Fprintln(stderr, errorLine("", err))
		return 1
	}
	defer rt.Close()
	bcfg := bench.Config{Size: cfg.size, Explain: cfg.explain}
	report := bench.Report{Device: rt.Device(), DeviceString: rt.Device().String()}
	if !cfg.json {
		fmt.Fprintln(stdout, "device:", report.DeviceString)
	}
	if cfg.explain {
		w := stdout
		if cfg.json {
			w = stderr // stdout holds only the JSON
		}
		fmt.Fprintln(w, "backend:", rt.BackendReason())
	}
	failed := false
	for _, job := range bench.Jobs() {
		if !slices.Contains(cfg.ops, job.Name) {
			continue
		}
		results, err := job.Run(context.Background(), rt, bcfg)
		if err != nil {
			fmt.Fprintln(stderr, errorLine(job.Name, err))
			failed = true
		}
		for _, r := range results {
			if !r.OK {
				failed = true
			}
			report.Results = append(report.Results, r)
			if !cfg.json {
				fmt.Fprintln(stdout, r.Line())
				if cfg.explain && r.Explain != "" {
					fmt.Fprint(stdout, r.Explain)
				}
			}
		}
	}
	if cfg.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			fmt.Fprintln(stderr, errorLine("", err))
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
}
