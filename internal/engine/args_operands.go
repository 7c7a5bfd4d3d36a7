package engine

// The operand lists of the built-in argument structs (Args): one method
// per struct, naming each buffer as errors show it and saying which ones
// the op writes and which an output may update exactly in place.

const (
	read, written = false, true
	required, opt = false, true
	notInPlace    = false
	inPlace       = true
)

// Operands lists D (written; C may be the same view), A, B, C, the bias
// and the float8 scales.
func (a *MatMulArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.Matrix("D.Buf", a.D, a.Batch, written, notInPlace, required)
	o.Matrix("A.Buf", a.A, a.Batch, read, notInPlace, required)
	o.Matrix("B.Buf", a.B, a.Batch, read, notInPlace, required)
	o.Matrix("C.Buf", a.C, a.Batch, read, inPlace, opt)
	o.Buffer("Bias", a.Bias, read, opt)
	o.Buffer("ScaleA", a.ScaleA, read, opt)
	o.Buffer("ScaleB", a.ScaleB, read, opt)
	return
}

// Operands lists O and LSE (written), Q, K and V.
func (a *AttentionArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.View("O.Buf", a.O, written)
	o.Buffer("LSE", a.LSE, written, opt)
	o.View("Q.Buf", a.Q, read)
	o.View("K.Buf", a.K, read)
	o.View("V.Buf", a.V, read)
	return
}

// Operands lists the cache's K and V (written) and the new keys and values.
func (a *KVAppendArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.View("K.Buf", a.K, written)
	o.View("V.Buf", a.V, written)
	o.View("NewK.Buf", a.NewK, read)
	o.View("NewV.Buf", a.NewV, read)
	return
}

// Operands lists Dst (written), Mem and Idx.
func (a *GatherArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.Buffer("Dst.Buf", a.Dst.Buf, written, required)
	o.Buffer("Mem", a.Mem, read, required)
	o.Buffer("Idx.Buf", a.Idx.Buf, read, required)
	return
}

// Operands lists Mem (written), Idx and Src.
func (a *ScatterArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.Buffer("Mem", a.Mem, written, required)
	o.Buffer("Idx.Buf", a.Idx.Buf, read, required)
	o.Buffer("Src.Buf", a.Src.Buf, read, required)
	return
}

// Operands lists Mem and Dst (written), Idx, Expected and Replacement.
func (a *GatherCASArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.Buffer("Mem", a.Mem, written, required)
	o.Buffer("Dst.Buf", a.Dst.Buf, written, required)
	o.Buffer("Idx.Buf", a.Idx.Buf, read, required)
	o.Buffer("Expected.Buf", a.Expected.Buf, read, required)
	o.Buffer("Replacement.Buf", a.Replacement.Buf, read, required)
	return
}

// Operands lists Q, ScaleInv and Amax (written), X and Scales.
func (a *QuantizeArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.Buffer("Q", a.Q, written, required)
	o.Buffer("ScaleInv", a.ScaleInv, written, opt)
	o.Buffer("Amax", a.Amax, written, opt)
	o.Buffer("X", a.X, read, required)
	o.Buffer("Scales", a.Scales, read, opt)
	return
}

// Operands lists Y (written), Q and ScaleInv.
func (a *DequantizeArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.Buffer("Y", a.Y, written, required)
	o.Buffer("Q", a.Q, read, required)
	o.Buffer("ScaleInv", a.ScaleInv, read, opt)
	return
}

// Operands lists Out (written) and X.
func (a *AmaxArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.Buffer("Out", a.Out, written, required)
	o.Buffer("X", a.X, read, required)
	return
}

// rows appends a light op's row view (a nil m: an unset optional one).
func (o *Operands) rows(name string, m *Matrix, written, inPlace bool) {
	if m == nil {
		o.Add(Operand{Name: name, Written: written, InPlace: inPlace, Optional: true})
		return
	}
	o.Matrix(name, *m, 1, written, inPlace, required)
}

// Operands lists Y (written; A or B may be the same view), A and B.
func (a *ActArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.rows("Y.Buf", &a.Y, written, notInPlace)
	o.rows("A.Buf", &a.A, read, inPlace)
	o.rows("B.Buf", a.B, read, inPlace)
	return
}

// Operands lists Y (written; X or Z may be the same view), X and Z.
func (a *EltArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.rows("Y.Buf", &a.Y, written, notInPlace)
	o.rows("X.Buf", &a.X, read, inPlace)
	o.rows("Z.Buf", a.Z, read, inPlace)
	return
}

// Operands lists Y and Residual (written; Y may be X), X, the weight and
// the bias.
func (a *NormArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.rows("Y.Buf", &a.Y, written, notInPlace)
	o.rows("Residual.Buf", a.Residual, written, notInPlace)
	o.rows("X.Buf", &a.X, read, inPlace)
	o.Buffer("Weight", a.Weight, read, opt)
	o.Buffer("Bias", a.Bias, read, opt)
	return
}

// Operands lists Y (written) and X.
func (a *PoolArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.rows("Y.Buf", &a.Y, written, notInPlace)
	o.rows("X.Buf", &a.X, read, notInPlace)
	return
}

// Operands lists Y (written; X may be the same view) and X.
func (a *L2NormArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.rows("Y.Buf", &a.Y, written, notInPlace)
	o.rows("X.Buf", &a.X, read, inPlace)
	return
}

// Operands lists Y (written; X may be the same view) and X.
func (a *SoftmaxArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.rows("Y.Buf", &a.Y, written, notInPlace)
	o.rows("X.Buf", &a.X, read, inPlace)
	return
}

// Operands lists QOut and KOut (written; each may be its input's view), Q,
// K and the positions.
func (a *RoPEArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.rows("QOut.Buf", &a.QOut, written, notInPlace)
	o.rows("KOut.Buf", a.KOut, written, notInPlace)
	o.rows("Q.Buf", &a.Q, read, inPlace)
	o.rows("K.Buf", a.K, read, inPlace)
	o.Buffer("Positions", a.Positions, read, opt)
	return
}

// Operands lists Out (written) and the logits.
func (a *SampleArgs) Operands() (o Operands) {
	if a == nil {
		return
	}
	o.Buffer("Out", a.Out, written, required)
	o.rows("Logits.Buf", &a.Logits, read, notInPlace)
	return
}
