package fallback

import "github.com/tcrt-go/tcrt/tile"

// IndexFault returns the access fault (ErrBounds) the CPU gathers (op
// "mgather") and scatters (op "mscatter") report for an index whose raw
// bits (as tile.LoadIndex reads them from an index of type d) at valid
// coordinate (r, c) fall outside a memory of n rows (IndexRows) or elements
// (IndexElements). GPU backends use it so a fault their preflight found
// reads exactly as the CPU's.
func IndexFault(op string, mode IndexMode, raw uint64, d tile.DType, r, c, n int) error {
	return oobFault(op, mode, raw, d, r, c, n)
}
