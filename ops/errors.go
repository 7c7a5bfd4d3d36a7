package ops

import "github.com/tcrt-go/tcrt/tile"

// The sentinel errors ops returns (the tile package's values).
var (
	ErrShape        = tile.ErrShape
	ErrDType        = tile.ErrDType
	ErrClosed       = tile.ErrClosed
	ErrUnsupported  = tile.ErrUnsupported
	ErrArgument     = tile.ErrArgument
	ErrAlias        = tile.ErrAlias
	ErrBounds       = tile.ErrBounds
	ErrTileLegality = tile.ErrTileLegality
	ErrOutOfMemory  = tile.ErrOutOfMemory
)
