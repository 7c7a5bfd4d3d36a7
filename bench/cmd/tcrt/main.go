// Command tcrt opens the tcrt runtime on the best backend available, prints
// the device and, for each op, the kernel selected, the result's error
// against the reference on random data, and its throughput.
//
//	go run ./bench/cmd/tcrt [-ops matmul,...] [-size small|medium|large] [-json] [-explain]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/runtime"
)

func main() {
	opsFlag := flag.String("ops", "all", "comma-separated ops to run ("+strings.Join(bench.JobNames(), ", ")+") or all")
	size := flag.String("size", "medium", "problem sizes: small, medium or large")
	asJSON := flag.Bool("json", false, "print the results as JSON")
	explain := flag.Bool("explain", false, "print the kernel selection for each line")
	backend := flag.String("backend", "auto", "backend: auto, cpu, sim (the simulated SM86/SM89 GPU) or cuda (-tags cuda); TCRT_BACKEND overrides it")
	flag.Parse()

	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendKind(*backend)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "tcrt:", err)
		os.Exit(1)
	}
	defer rt.Close()
	cfg := bench.Config{Size: *size, Explain: *explain}
	report := bench.Report{Device: rt.Device(), DeviceString: rt.Device().String()}
	if !*asJSON {
		fmt.Println("device:", report.DeviceString)
	}
	failed := false
	for _, job := range bench.Jobs() {
		if *opsFlag != "all" && !contains(strings.Split(*opsFlag, ","), job.Name) {
			continue
		}
		results, err := job.Run(context.Background(), rt, cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "tcrt: %s: %v\n", job.Name, err)
			failed = true
		}
		for _, r := range results {
			if !r.OK {
				failed = true
			}
			report.Results = append(report.Results, r)
			if !*asJSON {
				fmt.Println(r.Line())
				if *explain && r.Explain != "" {
					fmt.Print(r.Explain)
				}
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			fmt.Fprintln(os.Stderr, "tcrt:", err)
			os.Exit(1)
		}
	}
	if failed {
		os.Exit(1)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}
