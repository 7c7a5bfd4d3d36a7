package sm86attn

import (
	_ "embed"

	"github.com/tcrt-go/tcrt/runtime/backend"
)

//go:generate go run ./internal/gencubin

//go:embed cubin/sm86attn.sm_86.cubin
var cubinSM86 []byte

//go:embed cubin/sm86attn.sm_89.cubin
var cubinSM89 []byte

// ModuleName is the module's name (the runtime loads it once per device).
const ModuleName = "sm86attn"

// Module is the embedded module: every kernel of Variants and
// CombineVariants in one cubin for
// sm_86 and one for sm_89 (the same code built for each target). No PTX:
// these kernels exist only as SASS. Unverified on a GPU.
func Module() *backend.Module {
	return &backend.Module{Name: ModuleName, Cubins: map[int][]byte{86: cubinSM86, 89: cubinSM89}}
}
