package sass

import "testing"

// TestGoldenMMA: the forms the mma.sync kernels need, on ptxas's words and their
// one-field variants.
func TestGoldenMMA(t *testing.T) { testGolden(t, "testdata/golden_mma_sm86.txt", 44) }
