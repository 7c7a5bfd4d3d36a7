package runtime

import "github.com/tcrt-go/tcrt/tile"

// The sentinel errors: the same values as the tile package's (and ops'),
// so errors.Is works with any of them.
var (
	ErrNoDevice     = tile.ErrNoDevice
	ErrShape        = tile.ErrShape
	ErrDType        = tile.ErrDType
	ErrOutOfMemory  = tile.ErrOutOfMemory
	ErrClosed       = tile.ErrClosed
	ErrUnsupported  = tile.ErrUnsupported
	ErrArgument     = tile.ErrArgument
	ErrAlias        = tile.ErrAlias
	ErrBounds       = tile.ErrBounds
	ErrTileLegality = tile.ErrTileLegality
	ErrDevice       = tile.ErrDevice
)
