package llama_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/tile"
)

// rawFile builds a safetensors file from a literal header and data.
func rawFile(header string, data []byte) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	out = append(out, header...)
	return append(out, data...)
}

func withLen(n uint64, rest []byte) []byte {
	return append(binary.LittleEndian.AppendUint64(nil, n), rest...)
}

var sentinels = []error{tile.ErrShape, tile.ErrDType, tile.ErrBounds, tile.ErrArgument, tile.ErrOutOfMemory, tile.ErrUnsupported}

// checkTyped fails unless err is a *tile.ArgError wrapping want (and only
// want of the sentinels), whose message names name.
func checkTyped(t *testing.T, err, want error, name string) {
	t.Helper()
	var ae *tile.ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not a *tile.ArgError", err, err)
	}
	for _, s := range sentinels {
		if errors.Is(err, s) != (s == want) {
			t.Fatalf("error %q: errors.Is(%v) = %v, want it to wrap only %v", err, s, errors.Is(err, s), want)
		}
	}
	if name != "" && !strings.Contains(err.Error(), name) {
		t.Fatalf("error %q does not name %q", err, name)
	}
}

func TestSafetensorsHostileHeaders(t *testing.T) {
	f32x2 := make([]byte, 8)
	cases := []struct {
		name string
		file []byte
		want error
		arg  string // what the error must name
	}{
		{"empty file", nil, tile.ErrBounds, "header"},
		{"short length", []byte{1, 2, 3}, tile.ErrBounds, "header"},
		{"huge header length", withLen(1<<62, []byte("{}")), tile.ErrBounds, "limit"},
		{"max uint64 header length", withLen(^uint64(0), []byte("{}")), tile.ErrBounds, "limit"},
		{"header length past EOF", withLen(100, []byte("{}")), tile.ErrBounds, "past the end"},
		{"zero header", withLen(0, nil), tile.ErrArgument, "header"},
		{"not JSON", rawFile("hello!!!", nil), tile.ErrArgument, "header"},
		{"JSON array", rawFile("[1,2,3]", nil), tile.ErrArgument, "header"},
		{"truncated JSON", rawFile(`{"a":{"dtype":"F32"`, nil), tile.ErrArgument, "header"},
		{"trailing garbage", rawFile(`{} x`, nil), tile.ErrArgument, "header"},
		{"two objects", rawFile(`{}{}`, nil), tile.ErrArgument, "header"},
		{"entry not object", rawFile(`{"a":5}`, nil), tile.ErrArgument, "argument a:"},
		{"missing dtype", rawFile(`{"a":{"shape":[2],"data_offsets":[0,8]}}`, f32x2), tile.ErrArgument, "dtype"},
		{"missing shape", rawFile(`{"a":{"dtype":"F32","data_offsets":[0,8]}}`, f32x2), tile.ErrArgument, "shape"},
		{"missing offsets", rawFile(`{"a":{"dtype":"F32","shape":[2]}}`, f32x2), tile.ErrArgument, "data_offsets"},
		{"bad UTF-8 name", rawFile("{\"a\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", f32x2), tile.ErrArgument, "UTF-8"},
		{"dtype not string", rawFile(`{"a":{"dtype":7,"shape":[2],"data_offsets":[0,8]}}`, f32x2), tile.ErrArgument, "dtype"},
		{"unknown dtype", rawFile(`{"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}}`, f32x2), tile.ErrDType, "F33"},
		{"negative dim", rawFile(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, f32x2), tile.ErrArgument, "shape"},
		{"fractional dim", rawFile(`{"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}}`, f32x2), tile.ErrArgument, "shape"},
		{"dim past int", rawFile(`{"a":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,8]}}`, f32x2), tile.ErrArgument, "shape"},
		{"one offset", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[8]}}`, f32x2), tile.ErrArgument, "data_offsets"},
		{"three offsets", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}}`, f32x2), tile.ErrArgument, "data_offsets"},
		{"begin after end", rawFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, f32x2), tile.ErrBounds, "begin exceeds end"},
		{"end past data", rawFile(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, f32x2), tile.ErrBounds, "past"},
		{"offset near max int", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[9223372036854775800,9223372036854775807]}}`, f32x2), tile.ErrBounds, "past"},
		{"size disagrees with shape", rawFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, f32x2), tile.ErrShape, "argument a:"},
		{"size disagrees with dtype", rawFile(`{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,8]}}`, f32x2), tile.ErrShape, "argument a:"},
		{"shape product overflows", rawFile(`{"a":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,8]}}`, f32x2), tile.ErrShape, "overflow"},
		{"bytes overflow", rawFile(`{"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,8]}}`, f32x2), tile.ErrShape, "overflow"},
		{"sub-byte size", rawFile(`{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}`, f32x2[:2]), tile.ErrShape, "whole bytes"},
		{"duplicate tensor", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32x2), tile.ErrArgument, `duplicate name "a"`},
		{"duplicate field", rawFile(`{"a":{"dtype":"F32","dtype":"F16","shape":[2],"data_offsets":[0,8]}}`, f32x2), tile.ErrArgument, "duplicate"},
		{"overlapping tensors", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32x2), tile.ErrArgument, "overlap"},
		{"same range twice", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, f32x2), tile.ErrArgument, "overlap"},
		{"hole between", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, make([]byte, 12)), tile.ErrArgument, "hole"},
		{"hole at start", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, f32x2), tile.ErrArgument, "hole"},
		{"trailing data", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f32x2), tile.ErrArgument, "covered exactly"},
		{"metadata not strings", rawFile(`{"__metadata__":{"a":1}}`, nil), tile.ErrArgument, "__metadata__"},
		{"metadata not object", rawFile(`{"__metadata__":[]}`, nil), tile.ErrArgument, "__metadata__"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := llama.ParseSafetensors(c.file)
			if err == nil {
				t.Fatalf("accepted: %v", f.Names())
			}
			checkTyped(t, err, c.want, c.arg)
		})
	}
}

// TestSafetensorsHostileFile runs the rules through the mapped file path:
// each error names the file, and nothing stays mapped.
func TestSafetensorsHostileFile(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"short.safetensors":   {1, 2},
		"past.safetensors":    withLen(1000, []byte("{}")),
		"overlap.safetensors": rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := llama.OpenSafetensors(p)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v does not name the file", name, err)
		}
	}
	if _, err := llama.OpenSafetensors(filepath.Join(dir, "absent.safetensors")); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := llama.OpenSafetensors(dir); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("directory: %v", err)
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	in := []llamatest.TensorData{
		{Name: "w.f32", Format: "F32", Shape: []int{7, 3}, Data: randBytes(84)},
		{Name: "w.bf16", Format: "BF16", Shape: []int{129}, Data: randBytes(258)},
		{Name: "scalar", Format: "F16", Shape: []int{}, Data: randBytes(2)},
		{Name: "empty", Format: "F32", Shape: []int{0, 5}, Data: nil},
		{Name: "ids", Format: "I64", Shape: []int{3}, Data: randBytes(24)},
		{Name: "mask", Format: "BOOL", Shape: []int{1, 1, 5}, Data: randBytes(5)},
		{Name: "fp4", Format: "F4", Shape: []int{6}, Data: randBytes(3)},
		{Name: "ünïcode name", Format: "F8_E4M3", Shape: []int{4}, Data: randBytes(4)},
	}
	meta := map[string]string{"format": "pt", "note": "x"}
	file := llamatest.EncodeSafetensors(in, meta)
	p := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	wantDT := map[string]tile.DType{"F32": tile.F32, "BF16": tile.BF16, "F16": tile.F16, "I64": tile.S64, "BOOL": tile.Invalid, "F4": tile.Invalid, "F8_E4M3": tile.E4M3}
	for _, open := range []struct {
		name string
		fn   func() (*llama.File, error)
	}{
		{"mapped", func() (*llama.File, error) { return llama.OpenSafetensors(p) }},
		{"bytes", func() (*llama.File, error) { return llama.ParseSafetensors(bytes.Clone(file)) }},
	} {
		t.Run(open.name, func(t *testing.T) {
			f, err := open.fn()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range in {
				names = append(names, d.Name)
				got, ok := f.Tensor(d.Name)
				if !ok {
					t.Fatalf("%s missing", d.Name)
				}
				if got.Format != d.Format || got.DType != wantDT[d.Format] || !reflect.DeepEqual(got.Shape, d.Shape) || !bytes.Equal(got.Data, d.Data) {
					t.Errorf("%s: got %s %v %v %d bytes", d.Name, got.Format, got.DType, got.Shape, len(got.Data))
				}
			}
			if !reflect.DeepEqual(f.Names(), names) {
				t.Errorf("names %v, want %v", f.Names(), names)
			}
			if !reflect.DeepEqual(f.Metadata(), meta) {
				t.Errorf("metadata %v", f.Metadata())
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
	var nilFile *llama.File
	if err := nilFile.Close(); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("nil Close: %v", err)
	}
	if _, ok := nilFile.Tensor("x"); ok || nilFile.Names() != nil || nilFile.Metadata() != nil {
		t.Error("nil File getters")
	}
}

// TestSafetensorsHeaderOrder: the header may list tensors in any order
// (the data section is checked by offset), and unknown fields of an entry
// are ignored.
func TestSafetensorsHeaderOrder(t *testing.T) {
	file := rawFile(`{"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8],"extra":{"x":[1]}},"__metadata__":{},"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}   `,
		[]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f, err := llama.ParseSafetensors(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Names(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("order %v", got)
	}
	if b, _ := f.Tensor("b"); !bytes.Equal(b.Data, []byte{5, 6, 7, 8}) {
		t.Fatalf("b = %v", b.Data)
	}
}

// FuzzSafetensorsHeader: no input panics; a rejected one is a typed
// error; an accepted one obeys every rule (tensors tile the data section,
// each the size its dtype and shape need).
func FuzzSafetensorsHeader(f *testing.F) {
	f.Add(llamatest.EncodeSafetensors([]llamatest.TensorData{
		{Name: "a", Format: "F32", Shape: []int{2}, Data: make([]byte, 8)},
		{Name: "b", Format: "BF16", Shape: []int{1, 3}, Data: make([]byte, 6)},
	}, map[string]string{"format": "pt"}))
	f.Add(rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)))
	f.Add(rawFile(`{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}`, make([]byte, 2)))
	f.Add(withLen(1<<40, []byte("{}")))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := llama.ParseSafetensors(data)
		if err != nil {
			var ae *tile.ArgError
			if !errors.As(err, &ae) || ae.Err == nil {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		n := binary.LittleEndian.Uint64(data)
		body := data[8+n:]
		at := 0
		for _, name := range file.Names() {
			tt, _ := file.Tensor(name)
			if len(tt.Data) > 0 && &tt.Data[0] != &body[at] {
				t.Fatalf("%s does not start where the previous tensor ends (%d)", name, at)
			}
			cnt, ok := tile.ProductSize(tt.Shape...)
			if !ok {
				t.Fatalf("%s: accepted an overflowing shape %v", name, tt.Shape)
			}
			if tt.DType.Valid() && tt.DType.Size() > 0 && cnt*tt.DType.Size() != len(tt.Data) {
				t.Fatalf("%s: %d bytes for %v of %v", name, len(tt.Data), tt.Shape, tt.DType)
			}
			at += len(tt.Data)
		}
		if at != len(body) {
			t.Fatalf("tensors cover %d of %d data bytes", at, len(body))
		}
	})
}
