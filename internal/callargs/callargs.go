// Package callargs lets this module's tests and benchmarks reach the
// argument struct behind an ops.Call (to stage it for a host reference),
// which the ops API keeps opaque. Package ops sets Of in its init; nothing
// outside the module can import this package.
package callargs

// Of returns the argument struct of call (an *ops.Call) and whether it has
// one (a call that runs nothing, such as a gather-CAS with an empty lane
// mask, has none).
var Of func(call any) (any, bool)

// As returns call's argument struct as an *A, or false when call has none
// or its arguments are not an A: the one type check tests and benchmarks
// make on Of's result.
func As[A any](call any) (*A, bool) {
	if Of == nil {
		return nil, false
	}
	a, ok := Of(call)
	if !ok {
		return nil, false
	}
	args, ok := a.(*A)
	return args, ok && args != nil
}
