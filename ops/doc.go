// Package ops is tcrt's public operator API: matmul, attention, float8
// quantisation and the scatter–gather family. Each call validates every
// argument before any memory is touched (returning an error that wraps one of
// the tile package's sentinels and names the argument and the rule), asks the
// runtime to select a kernel for the problem, and launches it on a stream.
//
// A call with a nil Stream runs synchronously on the runtime's default stream
// and returns when the result is in the output buffer; a call with a Stream
// only enqueues the work, and the caller synchronises the stream.
//
// Every op also has an Explain… function (which kernel it would select, and
// why each candidate was taken or rejected) and a …Plan function, which
// validates the call and selects its kernel once and returns a Call: Run
// launches it as often as needed (a loop that repeats a call skips the
// checks and the selection), and Explain says why its kernel was chosen.
package ops
