package sass

import "errors"

// Sentinel errors. Every error the package returns wraps one of them, so
// callers test with errors.Is.
var (
	// ErrInvalid: an instruction or operand that cannot be encoded (a
	// register, immediate or field out of range, a modifier the form lacks).
	ErrInvalid = errors.New("sass: invalid instruction")
	// ErrNoForm: no encoding form of the opcode takes these operands and
	// modifiers.
	ErrNoForm = errors.New("sass: no form for operands")
	// ErrUnknownOp: the opcode is not in the model.
	ErrUnknownOp = errors.New("sass: unknown opcode")
	// ErrUnmodeled: a word the decoder cannot explain bit for bit (an
	// opcode or a field value outside the model).
	ErrUnmodeled = errors.New("sass: word not in the model")
	// ErrUnsupported: a word of an instruction family the model refuses
	// by name (the texture and surface units); such errors also wrap
	// ErrUnmodeled.
	ErrUnsupported = errors.New("sass: instruction family not supported")
	// ErrSyntax: text the parser cannot read.
	ErrSyntax = errors.New("sass: syntax error")
	// ErrLength: a byte slice whose length is not a multiple of 16.
	ErrLength = errors.New("sass: length not a multiple of 16")
)
