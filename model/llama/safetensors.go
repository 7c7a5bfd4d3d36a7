package llama

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/tcrt-go/tcrt/tile"
)

// MaxHeaderBytes bounds a safetensors header (100 MB, the reference
// implementation's limit).
const MaxHeaderBytes = 100_000_000

const stOp = "safetensors"

// stDType is one safetensors element type: its name in the file, its width
// in bits, and the tile type it is (Invalid where tile has none).
type stDType struct {
	bits int
	tile tile.DType
}

// stDTypes are the element types of the safetensors specification.
// Weights must be F32, F16 or BF16; the others are read (a file holding
// them is valid) but refused as weights.
var stDTypes = map[string]stDType{
	"BOOL":    {8, tile.Invalid},
	"U8":      {8, tile.U8},
	"I8":      {8, tile.S8},
	"F8_E5M2": {8, tile.E5M2},
	"F8_E4M3": {8, tile.E4M3},
	"F8_E8M0": {8, tile.Invalid},
	"I16":     {16, tile.S16},
	"U16":     {16, tile.U16},
	"F16":     {16, tile.F16},
	"BF16":    {16, tile.BF16},
	"I32":     {32, tile.S32},
	"U32":     {32, tile.U32},
	"F32":     {32, tile.F32},
	"F64":     {64, tile.F64},
	"I64":     {64, tile.S64},
	"U64":     {64, tile.U64},
	"F4":      {4, tile.Invalid},
	"F6_E2M3": {6, tile.Invalid},
	"F6_E3M2": {6, tile.Invalid},
}

// Tensor is a view of one tensor of a safetensors file.
type Tensor struct {
	// Name is the tensor's name in the file.
	Name string
	// Format is the file's dtype name ("BF16", "F32", ...).
	Format string
	// DType is the tile element type, tile.Invalid for a format tile has
	// no type for (BOOL, C64, ...).
	DType tile.DType
	// Shape is the tensor's shape (empty for a scalar).
	Shape []int
	// Data is the tensor's bytes, little-endian, row-major. It points into
	// the file's mapping: valid until the file is closed, and read-only
	// (writing to it faults).
	Data []byte
}

// Len is the number of elements.
func (t Tensor) Len() int {
	n, _ := tile.ProductSize(t.Shape...)
	return n
}

// File is an open safetensors file, memory-mapped read-only where the
// platform allows (Linux), else read into memory. As with any mapping, a
// file truncated by another process while it is mapped faults (SIGBUS) when
// the missing pages are read; the file must not change while it is open.
type File struct {
	path     string
	data     []byte // the whole file
	unmap    func([]byte) error
	mapped   bool // data is a file mapping (dropPages applies)
	tensors  map[string]Tensor
	order    []string // by offset
	metadata map[string]string
	mu       sync.Mutex
	closed   bool
}

// OpenSafetensors opens the safetensors file at path and validates it by
// ParseSafetensors's rules; errors name the file in their operation.
func OpenSafetensors(path string) (*File, error) {
	data, unmap, mapped, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	f, err := ParseSafetensors(data)
	if err != nil {
		_ = unmap(data)
		return nil, wrapPath(err, path)
	}
	f.path, f.data, f.unmap, f.mapped = path, data, unmap, mapped
	return f, nil
}

// release drops the resident pages of b, a tensor's bytes, when they lie
// in f's mapping; it does nothing for memory that is not a file mapping
// (dropping anonymous pages would zero them).
func (f *File) release(b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.mapped || f.closed || len(b) == 0 || len(f.data) == 0 {
		return
	}
	lo, p := uintptrOf(f.data), uintptrOf(b)
	if p < lo || p-lo > uintptr(len(f.data)-len(b)) {
		return
	}
	dropPages(b)
}

// wrapPath names the file in a parse error's operation.
func wrapPath(err error, path string) error {
	var ae *tile.ArgError
	if errors.As(err, &ae) {
		c := *ae
		c.Op = stOp + " " + path
		return &c
	}
	return err
}

// Path is the file's path.
func (f *File) Path() string {
	if f == nil {
		return ""
	}
	return f.path
}

// Names returns the tensors' names in the order of their data.
func (f *File) Names() []string {
	if f == nil {
		return nil
	}
	return slices.Clone(f.order)
}

// Tensor returns the named tensor's view.
func (f *File) Tensor(name string) (Tensor, bool) {
	if f == nil {
		return Tensor{}, false
	}
	t, ok := f.tensors[name]
	return t, ok
}

// Metadata returns the header's __metadata__ (nil when it has none).
func (f *File) Metadata() map[string]string {
	if f == nil {
		return nil
	}
	return f.metadata
}

// Close releases the file's mapping; every Tensor view of it becomes
// invalid. Close is idempotent; on a nil File it returns an error wrapping
// tile.ErrArgument.
func (f *File) Close() error {
	if f == nil {
		return tile.Errorf(tile.ErrArgument, "close", "file", "safetensors file is nil")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.unmap == nil {
		f.closed = true
		return nil
	}
	f.closed = true
	err := f.unmap(f.data)
	f.data, f.tensors, f.order = nil, nil, nil
	if err != nil {
		return tile.Errorf(tile.ErrArgument, "close", f.path, "releasing the mapping: %v", err)
	}
	return nil
}

// readFile reads the whole file into memory: the path for platforms
// without a mapping.
func readFile(path string) ([]byte, func([]byte) error, bool, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, nil, false, tile.Errorf(tile.ErrArgument, stOp, path, "opening: %v", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, nil, false, tile.Errorf(tile.ErrArgument, stOp, path, "stat: %v", err)
	}
	if !st.Mode().IsRegular() {
		return nil, nil, false, tile.Errorf(tile.ErrArgument, stOp, path, "not a regular file")
	}
	size := st.Size()
	if size < 8 || size > int64(maxInt) {
		return nil, nil, false, tile.Errorf(tile.ErrBounds, stOp, path, "a file of %d bytes cannot hold an 8-byte header length and a header", size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(fd, data); err != nil {
		return nil, nil, false, tile.Errorf(tile.ErrArgument, stOp, path, "reading: %v", err)
	}
	return data, func([]byte) error { return nil }, false, nil
}

const maxInt = int(^uint(0) >> 1)

// headerEntry is one tensor of the JSON header, decoded strictly.
type headerEntry struct {
	name   string
	format string
	dt     stDType
	shape  []int
	begin  int
	end    int
}

// ParseSafetensors validates a whole safetensors file held in data (for
// example an embedded file) and returns its tensors as views of data,
// which must stay unchanged while they are used. Close on the result
// releases nothing.
//
// The safetensors format: an 8-byte little-endian header length N, N bytes
// of JSON — {"name": {"dtype": "BF16", "shape": [..], "data_offsets":
// [begin, end]}, ..., "__metadata__": {"key": "value"}} — then the data
// section, to which the offsets are relative.
//
// The reader checks the specification's rules and is stricter where the
// specification leaves room for ambiguity:
//   - N is at most MaxHeaderBytes and 8+N at most the file's size;
//   - the header is one JSON object in UTF-8, starting with '{' (trailing
//     spaces allowed: writers pad it for alignment); no name appears twice,
//     in the object or in a tensor entry (encoding/json would keep the last
//     silently); every tensor has a known dtype, a shape of non-negative
//     integers and two integer offsets (other fields are ignored);
//   - begin <= end <= the data section's length, and end-begin is the
//     dtype's size times the product of the shape (overflow-checked);
//   - the tensors, taken by offset, tile the data section exactly: no
//     overlaps and no holes, and the last ends at the end of the file. The
//     specification forbids holes (they would let a file carry hidden
//     content, a polyglot); this reader refuses them rather than skip them.
//
// Each broken rule is a *tile.ArgError naming the tensor (or "header") and
// the rule, wrapping tile.ErrBounds (lengths and offsets), tile.ErrArgument
// (malformed JSON, duplicates, holes and overlaps), tile.ErrDType (an
// unknown dtype) or tile.ErrShape (a size that disagrees with the shape).
func ParseSafetensors(data []byte) (*File, error) {
	if len(data) < 8 {
		return nil, tile.Errorf(tile.ErrBounds, stOp, "header", "the file has %d bytes, fewer than the 8 of the header length", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > MaxHeaderBytes {
		return nil, tile.Errorf(tile.ErrBounds, stOp, "header", "header length %d exceeds the limit of %d bytes", n, MaxHeaderBytes)
	}
	if n > uint64(len(data)-8) {
		return nil, tile.Errorf(tile.ErrBounds, stOp, "header", "header length %d runs past the end of a %d-byte file", n, len(data))
	}
	hdr := data[8 : 8+n]
	body := data[8+n:]
	entries, meta, err := parseHeader(hdr)
	if err != nil {
		return nil, err
	}
	// Bounds and sizes, then the tiling of the data section.
	for _, e := range entries {
		if e.begin > e.end {
			return nil, tile.Errorf(tile.ErrBounds, stOp, e.name, "data_offsets [%d, %d]: begin exceeds end", e.begin, e.end)
		}
		if e.end > len(body) {
			return nil, tile.Errorf(tile.ErrBounds, stOp, e.name, "data_offsets [%d, %d] run past the %d-byte data section", e.begin, e.end, len(body))
		}
		cnt, ok := tile.ProductSize(e.shape...)
		var bits int
		if ok {
			bits, ok = tile.MulSize(cnt, e.dt.bits)
		}
		if !ok || bits%8 != 0 || bits/8 != e.end-e.begin {
			want := "an overflowing size"
			if ok {
				want = strconv.Itoa(bits/8) + " bytes"
				if bits%8 != 0 {
					want = strconv.Itoa(bits) + " bits, not whole bytes"
				}
			}
			return nil, tile.Errorf(tile.ErrShape, stOp, e.name, "%d bytes at data_offsets [%d, %d], but %s of shape %v need %s",
				e.end-e.begin, e.begin, e.end, e.format, e.shape, want)
		}
	}
	byOffset := slices.Clone(entries)
	slices.SortStableFunc(byOffset, func(a, b headerEntry) int {
		if a.begin != b.begin {
			return a.begin - b.begin
		}
		return a.end - b.end
	})
	at, prev := 0, ""
	for _, e := range byOffset {
		switch {
		case e.begin < at:
			return nil, tile.Errorf(tile.ErrArgument, stOp, e.name, "data_offsets [%d, %d] overlap tensor %q, which ends at %d", e.begin, e.end, prev, at)
		case e.begin > at:
			return nil, tile.Errorf(tile.ErrArgument, stOp, e.name, "data_offsets [%d, %d] leave a hole of %d bytes before it; the data section must be covered exactly", e.begin, e.end, e.begin-at)
		}
		at, prev = e.end, e.name
	}
	if at != len(body) {
		return nil, tile.Errorf(tile.ErrArgument, stOp, "header", "the tensors end at byte %d of a %d-byte data section; the data section must be covered exactly", at, len(body))
	}
	f := &File{tensors: make(map[string]Tensor, len(entries)), metadata: meta}
	for _, e := range byOffset {
		f.order = append(f.order, e.name)
		f.tensors[e.name] = Tensor{Name: e.name, Format: e.format, DType: e.dt.tile, Shape: e.shape,
			Data: body[e.begin:e.end:e.end]}
	}
	return f, nil
}

// parseHeader decodes the JSON header: the tensors in file order and the
// metadata.
func parseHeader(hdr []byte) ([]headerEntry, map[string]string, error) {
	if len(hdr) == 0 || hdr[0] != '{' {
		return nil, nil, tile.Errorf(tile.ErrArgument, stOp, "header", "the header must be a JSON object starting with '{'")
	}
	if !utf8.Valid(hdr) { // encoding/json would replace bad bytes in names silently
		return nil, nil, tile.Errorf(tile.ErrArgument, stOp, "header", "the header is not valid UTF-8")
	}
	keys, vals, err := objectFields(hdr)
	if err != nil {
		return nil, nil, tile.Errorf(tile.ErrArgument, stOp, "header", "not a JSON object without duplicate names: %v", err)
	}
	var meta map[string]string
	entries := make([]headerEntry, 0, len(keys))
	for i, k := range keys {
		if k == "__metadata__" {
			if err := json.Unmarshal(vals[i], &meta); err != nil {
				return nil, nil, tile.Errorf(tile.ErrArgument, stOp, "__metadata__", "must map strings to strings: %v", err)
			}
			continue
		}
		e, err := parseEntry(k, vals[i])
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	return entries, meta, nil
}

// parseEntry decodes one tensor's {"dtype", "shape", "data_offsets"}.
func parseEntry(name string, raw json.RawMessage) (headerEntry, error) {
	e := headerEntry{name: name}
	keys, vals, err := objectFields(raw)
	if err != nil {
		return e, tile.Errorf(tile.ErrArgument, stOp, name, "the entry is not a JSON object without duplicate names: %v", err)
	}
	var have [3]bool
	for i, k := range keys {
		switch k {
		case "dtype":
			if err := json.Unmarshal(vals[i], &e.format); err != nil {
				return e, tile.Errorf(tile.ErrArgument, stOp, name, "dtype is not a string: %v", err)
			}
			dt, ok := stDTypes[e.format]
			if !ok {
				return e, tile.Errorf(tile.ErrDType, stOp, name, "unknown dtype %q", e.format)
			}
			e.dt = dt
			have[0] = true
		case "shape":
			dims, err := uints(vals[i])
			if err != nil {
				return e, tile.Errorf(tile.ErrArgument, stOp, name, "shape: %v", err)
			}
			e.shape = dims
			have[1] = true
		case "data_offsets":
			offs, err := uints(vals[i])
			if err != nil || len(offs) != 2 {
				return e, tile.Errorf(tile.ErrArgument, stOp, name, "data_offsets must be two non-negative integers [begin, end]")
			}
			e.begin, e.end = offs[0], offs[1]
			have[2] = true
		}
	}
	for i, f := range [3]string{"dtype", "shape", "data_offsets"} {
		if !have[i] {
			return e, tile.Errorf(tile.ErrArgument, stOp, name, "the entry has no %s", f)
		}
	}
	if e.shape == nil {
		e.shape = []int{}
	}
	return e, nil
}

// uints decodes a JSON array of integers, each in [0, maxInt].
func uints(raw json.RawMessage) ([]int, error) {
	var nums []json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&nums); err != nil {
		return nil, errors.New("not an array of integers")
	}
	out := make([]int, len(nums))
	for i, n := range nums {
		v, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil || v > uint64(maxInt) {
			return nil, errors.New("element " + strconv.Itoa(i) + " (" + string(n) + ") is not an integer in [0, 2^63)")
		}
		out[i] = int(v)
	}
	return out, nil
}

// objectFields splits one JSON object into its names and raw values, in
// order, refusing duplicate names and anything after the object but
// whitespace (encoding/json keeps the last of duplicates silently).
func objectFields(data []byte) ([]string, []json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	tok, err := d.Token()
	if err != nil {
		return nil, nil, err
	}
	if tok != json.Delim('{') {
		return nil, nil, errors.New("not an object")
	}
	var keys []string
	var vals []json.RawMessage
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, errors.New("a name is not a string")
		}
		if seen[k] {
			return nil, nil, errors.New("duplicate name " + strconv.Quote(k))
		}
		seen[k] = true
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	if _, err := d.Token(); err != nil { // the closing '}'
		return nil, nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, nil, errors.New("data after the object")
	}
	return keys, vals, nil
}
