package tile

// maxTileElements bounds a tile's physical element count.
const maxTileElements = 1 << 40

// CheckTile is the legality check of one tile descriptor under the
// contract. It returns the resolved tile (defaults filled in) or a legality
// fault naming arg. The rules: a defined element type, packed 4-bit types
// only where the contract allows them; ValidRows and ValidCols positive (a
// zero dimension is illegal: only the physical Rows and Cols have defaults);
// the physical region contains the valid region; power-of-two physical
// dimensions where the contract requires them; a defined layout; a defined
// pad whose explicit bits fit the element width.
func (c Contract) CheckTile(arg string, t Tile) (Tile, error) {
	if !t.DType.Valid() {
		return t, c.Legality(ErrDType, arg, "element type %v is not defined", t.DType)
	}
	if t.DType.IsPacked() && !c.Packed {
		return t, c.Legality(ErrDType, arg, "packed 4-bit element type %v is rejected (no nibble selector)", t.DType)
	}
	if t.ValidCols <= 0 {
		return t, c.Legality(ErrShape, arg, "ValidCols is %d; it is required and must be positive", t.ValidCols)
	}
	if t.ValidRows <= 0 {
		return t, c.Legality(ErrShape, arg, "ValidRows is %d; it must be positive", t.ValidRows)
	}
	if t.Rows < 0 || t.Cols < 0 {
		return t, c.Legality(ErrShape, arg, "physical dimensions %dx%d are negative", t.Rows, t.Cols)
	}
	r := t.Resolved()
	if r.Rows < r.ValidRows || r.Cols < r.ValidCols {
		return t, c.Legality(ErrShape, arg, "physical region %dx%d does not contain the valid region %dx%d", r.Rows, r.Cols, r.ValidRows, r.ValidCols)
	}
	if r.Rows > maxTileElements/r.Cols {
		return t, c.Legality(ErrShape, arg, "physical region %dx%d is too large", r.Rows, r.Cols)
	}
	if c.Pow2 && (!isPow2(r.Rows) || !isPow2(r.Cols)) {
		return t, c.Legality(ErrShape, arg, "physical region %dx%d: Rows and Cols must be powers of two", r.Rows, r.Cols)
	}
	if !r.Layout.Valid() {
		return t, c.Legality(ErrArgument, arg, "unknown layout %d", r.Layout)
	}
	if r.Pad.Kind >= numPadKinds {
		return t, c.Legality(ErrArgument, arg, "unknown pad kind %d", r.Pad.Kind)
	}
	if r.Pad.Kind == PadBits && r.DType.Bits() < 64 && r.Pad.Bits>>uint(r.DType.Bits()) != 0 {
		return t, c.Legality(ErrArgument, arg, "pad bits %#x do not fit a %d-bit %v element", r.Pad.Bits, r.DType.Bits(), r.DType)
	}
	return r, nil
}

// SameValidShape checks that tile t (argument arg) has the valid region
// rows × cols.
func (c Contract) SameValidShape(arg string, t Tile, rows, cols int) error {
	if t.ValidRows != rows || t.ValidCols != cols {
		return c.Legality(ErrShape, arg, "valid region %dx%d, want %dx%d", t.ValidRows, t.ValidCols, rows, cols)
	}
	return nil
}
