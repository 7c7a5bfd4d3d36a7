// Package engine is tcrt's engine behind the public runtime package: the
// runtime objects (Runtime, Buffer, Stream, Event) that package runtime
// wraps in handles, the kernel registry and selection (Kernel, Arch,
// RegisterKernel, Select, Explain), the validated argument structs of every op
// with their operand lists, the launches (Run, Prepare, LaunchKernel,
// LaunchGPU), the host fallback, and the kernel registrations of every
// family (CPU and GPU, untagged). It lives under internal/ so that only
// this module (ops, model, bench, the kernels' tests) can use it; Handles
// turns a public handle into the engine object behind it. The user-facing
// documentation (environment, lifetimes, stream errors) is package
// runtime's.
package engine
