package bench

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/tcrt-go/tcrt/runtime"
)

// Config is what the tcrt command asks of each job.
type Config struct {
	// Size is "small", "medium" or "large".
	Size string
	// Explain asks jobs to fill Result.Explain.
	Explain bool
}

// Result is one line of the tcrt command: one op on one problem.
type Result struct {
	Op      string  `json:"op"`
	Problem string  `json:"problem"` // dtype and shape, e.g. "f32 512x512x512"
	Kernel  string  `json:"kernel"`
	MaxErr  float64 `json:"max_rel_err"` // against the reference
	Tol     float64 `json:"tolerance"`
	OK      bool    `json:"ok"` // MaxErr <= Tol
	Value   float64 `json:"throughput"`
	Unit    string  `json:"unit"`    // "GFLOP/s", "GB/s", …
	Seconds float64 `json:"seconds"` // median time of one run
	Explain string  `json:"explain,omitempty"`
	// Sim is set on a simulated device: what one run executed there (GPU
	// launches and simulated instructions), reported instead of Value.
	Sim *SimCount `json:"simulated,omitempty"`
}

// Line formats the result for the terminal.
func (r Result) Line() string {
	status := "ok"
	if !r.OK {
		status = "FAIL"
	}
	if r.Sim != nil && r.Sim.Launches == 0 {
		return fmt.Sprintf("%-10s %-28s kernel %-24s max rel err %.2e (tol %.0e) %-4s ran on the host (no GPU launch)",
			r.Op, r.Problem, r.Kernel, r.MaxErr, r.Tol, status)
	}
	if r.Sim != nil {
		return fmt.Sprintf("%-10s %-28s kernel %-24s max rel err %.2e (tol %.0e) %-4s %d GPU launches, %d warp instructions (simulated)",
			r.Op, r.Problem, r.Kernel, r.MaxErr, r.Tol, status, r.Sim.Launches, r.Sim.WarpInstructions)
	}
	return fmt.Sprintf("%-10s %-28s kernel %-24s max rel err %.2e (tol %.0e) %-4s %9.2f %s",
		r.Op, r.Problem, r.Kernel, r.MaxErr, r.Tol, status, r.Value, r.Unit)
}

// Report is the tcrt command's whole output (its -json form).
type Report struct {
	Device       runtime.Device `json:"device"`
	DeviceString string         `json:"device_string"`
	Results      []Result       `json:"results"`
}

// Job is one op's part of the tcrt command.
type Job struct {
	Name  string
	Order int
	Run   func(ctx context.Context, rt *runtime.Runtime, cfg Config) ([]Result, error)
}

var jobs struct {
	mu   sync.Mutex
	list []Job
}

// RegisterJob adds an op's job to the tcrt command (from an init function).
func RegisterJob(j Job) {
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	jobs.list = append(jobs.list, j)
	sort.SliceStable(jobs.list, func(a, b int) bool { return jobs.list[a].Order < jobs.list[b].Order })
}

// Jobs returns the registered jobs in order.
func Jobs() []Job {
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	return append([]Job(nil), jobs.list...)
}

// JobNames lists the job names.
func JobNames() []string {
	var out []string
	for _, j := range Jobs() {
		out = append(out, j.Name)
	}
	return out
}
