package mma

import (
	_ "embed"

	"github.com/tcrt-go/tcrt/runtime/backend"
)

//go:generate go run ./internal/genptx

//go:embed mma.ptx
var modulePTX []byte

//go:embed cubin/mma.sm_80.cubin
var cubinSM80 []byte

//go:embed cubin/mma.sm_86.cubin
var cubinSM86 []byte

//go:embed cubin/mma.sm_90.cubin
var cubinSM90 []byte

// CubinSMs are the compute capabilities the module embeds cubins for:
// sm_80 (A100; also runs on sm_80..sm_89 parts that lack a newer cubin,
// though sm_86 and sm_89 get their own), sm_86 (the simulator's target)
// and sm_90 (H100/H200). Every other GPU from sm_80 on JIT-compiles the
// PTX.
var CubinSMs = []int{80, 86, 90}

// ModuleName is the module's name (the runtime loads it once per device).
const ModuleName = "mma"

// Module returns the embedded module: every kernel of Variants, as PTX for
// sm_80 and later plus cubins for CubinSMs. Unverified on a GPU.
func Module() *backend.Module {
	return &backend.Module{Name: ModuleName, PTX: modulePTX, PTXTarget: PTXTarget,
		Cubins: map[int][]byte{80: cubinSM80, 86: cubinSM86, 90: cubinSM90}}
}
