package ops

// The validated argument structs behind the …Plan functions, without kernel
// selection, for the tests that stage a call's arguments for a host
// reference (a forced kernel may not run those arguments).
var (
	AttentionArgs = attentionArgs
	MatMulArgs    = matMulArgs
)
