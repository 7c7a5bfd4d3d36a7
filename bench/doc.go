// Package bench holds tcrt's benchmarks (go test -bench . ./bench/...), one
// per op × element type × shape × backend, each reporting its throughput with
// b.ReportMetric, and the tcrt command (bench/cmd/tcrt), which opens the
// runtime, prints the device, and for each op prints the kernel selected, its
// error against the reference and its throughput.
package bench
