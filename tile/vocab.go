package tile

import (
	"fmt"
	"math"
)

// The vocabulary of the ops, defined once here and used by every layer:
// the CPU kernels (package fallback), the runtime, the GPU kernels' launch
// plans and the public API (package ops, which re-exports them).

// Activation is the element-wise function of the matmul epilogue.
type Activation uint8

// Activations.
const (
	ActNone Activation = iota
	ActReLU            // max(x, 0)
	ActGELU            // tanh approximation: 0.5x(1+tanh(√(2/π)(x+0.044715x³)))
	ActSiLU            // x·sigmoid(x)
	numActivations
)

var activationNames = [numActivations]string{"none", "relu", "gelu", "silu"}

// String names the activation.
func (a Activation) String() string {
	if a >= numActivations {
		return "activation(?)"
	}
	return activationNames[a]
}

// Valid reports whether a is a defined activation.
func (a Activation) Valid() bool { return a < numActivations }

// Apply evaluates the activation in float64.
func (a Activation) Apply(x float64) float64 {
	switch a {
	case ActReLU:
		return math.Max(x, 0)
	case ActGELU:
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	case ActSiLU:
		return x / (1 + math.Exp(-x))
	}
	return x
}

// IndexMode says what an index of a gather or scatter selects.
type IndexMode uint8

// Index modes.
const (
	// IndexRows: index tile element r selects a whole row of a table
	// (dst[r, :] = table[idx[r], :]).
	IndexRows IndexMode = iota
	// IndexElements: index tile element (r, c) selects one element of a flat
	// memory (dst[r, c] = mem[idx[r, c]]).
	IndexElements
	numIndexModes
)

// String names the mode.
func (m IndexMode) String() string {
	switch m {
	case IndexRows:
		return "rows"
	case IndexElements:
		return "elements"
	}
	return "mode(?)"
}

// Valid reports whether m is a defined mode.
func (m IndexMode) Valid() bool { return m < numIndexModes }

// ScatterOp is what a scatter does with each value it sends.
type ScatterOp uint8

// Scatter operations.
const (
	// ScatterStore writes the value (plain scatter).
	ScatterStore ScatterOp = iota
	// ScatterAdd adds it (f32, f16, bf16, f64, s32, u32).
	ScatterAdd
	// ScatterMax keeps the larger (s32, u32, f32).
	ScatterMax
	// ScatterMin keeps the smaller (s32, u32, f32).
	ScatterMin
	numScatterOps
)

// String names the operation.
func (o ScatterOp) String() string {
	switch o {
	case ScatterStore:
		return "store"
	case ScatterAdd:
		return "add"
	case ScatterMax:
		return "max"
	case ScatterMin:
		return "min"
	}
	return "scatterop(?)"
}

// Valid reports whether o is a defined operation.
func (o ScatterOp) Valid() bool { return o < numScatterOps }

// Granularity is how a float8 quantisation shares scales. The input is seen
// as a Rows×Cols matrix (its last dimension the columns, all others
// flattened into rows); it is cut into blocks of BlockRows×BlockCols, each
// with one scale. Partial last blocks (when Rows or Cols is not a multiple of
// the block size) are allowed: they hold the remaining rows or columns and
// get their own scale, computed from the values they hold.
type Granularity uint8

// Granularities.
const (
	PerTensor    Granularity = iota // one scale
	PerRow                          // one scale per row (per token)
	PerColumn                       // one scale per column (per channel)
	Block1x128                      // one scale per 1×128 run of a row (activations)
	Block128x128                    // one scale per 128×128 tile (weights)
	MX                              // OCP MX: one E8M0 power-of-two scale per 32 consecutive values of a row
	numGranularities
)

var granularityNames = [numGranularities]string{"tensor", "row", "column", "1x128", "128x128", "mx"}

// String names the granularity ("tensor", "row", "column", "1x128",
// "128x128", "mx").
func (g Granularity) String() string {
	if g >= numGranularities {
		return fmt.Sprintf("granularity(%d)", uint8(g))
	}
	return granularityNames[g]
}

// Valid reports whether g is defined.
func (g Granularity) Valid() bool { return g < numGranularities }

// Block returns the block shape for a rows×cols input.
func (g Granularity) Block(rows, cols int) (br, bc int) {
	switch g {
	case PerRow:
		return 1, cols
	case PerColumn:
		return rows, 1
	case Block1x128:
		return 1, 128
	case Block128x128:
		return 128, 128
	case MX:
		return 1, MXBlock
	}
	return rows, cols
}

// ScaleGrid returns the number of block rows and block columns (the shape
// of the scales tensor) for a rows×cols input: ⌈rows/br⌉ × ⌈cols/bc⌉, and
// 0 for a dimension whose block is empty (a block as wide as an empty
// dimension).
func (g Granularity) ScaleGrid(rows, cols int) (sr, sc int) {
	br, bc := g.Block(rows, cols)
	if br != 0 {
		sr = (rows + br - 1) / br
	}
	if bc != 0 {
		sc = (cols + bc - 1) / bc
	}
	return sr, sc
}

// MXBlock is the OCP MX block size.
const MXBlock = 32
