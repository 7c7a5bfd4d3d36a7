// Package llamatest writes small random Llama checkpoints for tests and
// holds the plain f32 reference forward pass (Reference), the oracle that
// tcrt's forward is tested against. Tests never need a download.
package llamatest

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/tile"
)

// TensorData is one tensor to write into a safetensors file.
type TensorData struct {
	Name   string
	Format string // the file's dtype name: "F32", "F16", "BF16", ...
	Shape  []int
	Data   []byte // little-endian, row-major
}

// EncodeSafetensors returns a safetensors file holding tensors, laid out
// in the order given, with metadata as __metadata__ (omitted when nil).
// The header is padded with spaces to a multiple of 8 bytes, as the
// reference writer does. It checks nothing: tests use it to write hostile
// files too (a Data length that disagrees with Shape is written as is).
func EncodeSafetensors(tensors []TensorData, metadata map[string]string) []byte {
	sizes := make([]int, len(tensors))
	total := 0
	for i, t := range tensors {
		sizes[i] = len(t.Data)
		total += len(t.Data)
	}
	out := encodeHeader(tensors, sizes, metadata)
	out = slices.Grow(out, total)
	for _, t := range tensors {
		out = append(out, t.Data...)
	}
	return out
}

// encodeHeader returns the 8-byte length and the JSON header of tensors
// whose data take sizes bytes each, in order.
func encodeHeader(tensors []TensorData, sizes []int, metadata map[string]string) []byte {
	var hdr strings.Builder
	hdr.WriteByte('{')
	if metadata != nil {
		m, _ := json.Marshal(metadata)
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(m)
	}
	off := 0
	for i, t := range tensors {
		if i > 0 || metadata != nil {
			hdr.WriteByte(',')
		}
		name, _ := json.Marshal(t.Name)
		shape, _ := json.Marshal(t.Shape)
		if t.Shape == nil {
			shape = []byte("[]")
		}
		fmt.Fprintf(&hdr, `%s:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, t.Format, shape, off, off+sizes[i])
		off += sizes[i]
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(hdr.Len()))
	return append(out, hdr.String()...)
}

// Options configures WriteRandomCheckpoint. The zero value writes one
// model.safetensors file.
type Options struct {
	// Shards splits the weights over this many files named
	// model-0000i-of-0000n.safetensors, with model.safetensors.index.json;
	// 0 or 1 writes model.safetensors alone.
	Shards int
	// Skip names weights to leave out (to test a missing weight).
	Skip []string
}

// formats maps the element types a checkpoint may hold to their
// safetensors names.
var formats = map[tile.DType]string{tile.F32: "F32", tile.F16: "F16", tile.BF16: "BF16"}

// RandomWeights returns the float32 values WriteRandomCheckpoint draws for
// configuration cfg and seed, by checkpoint name: norm weights
// 1 + U(-0.1, 0.1), biases U(-0.1, 0.1), the embedding U(-1, 1), and each
// projection U(-a, a) with a = sqrt(3/in) (unit variance out for unit
// variance in). Each tensor has its own stream, seeded by seed and its
// name, so leaving one out changes no other. It holds every value in
// memory, so it refuses models of more than 2^28 parameters (an error
// wrapping tile.ErrOutOfMemory); WriteRandomCheckpoint streams instead.
func RandomWeights(cfg llama.Config, seed uint64) (map[string][]float32, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if n := cfg.NumParams(); n > 1<<28 {
		return nil, tile.Errorf(tile.ErrOutOfMemory, "llamatest", "cfg", "%d parameters are too many to hold as float32 in a test", n)
	}
	out := map[string][]float32{}
	var ws llama.WeightSet[struct{}]
	err := llama.EachWeight(cfg, &ws, func(name string, shape []int, _ *struct{}) error {
		var v []float32
		err := randomTensor(seed, name, shape, func(chunk []float32) error {
			v = append(v, chunk...)
			return nil
		})
		out[name] = v
		return err
	})
	return out, err
}

// randomChunk is how many values randomTensor hands over at a time.
const randomChunk = 1 << 16

// randomTensor draws weight name's values (see RandomWeights) and hands
// them to emit in order, randomChunk at a time.
func randomTensor(seed uint64, name string, shape []int, emit func([]float32) error) error {
	n, _ := tile.ProductSize(shape...)
	rng := rand.New(rand.NewPCG(seed, fnv64(name)))
	lo, hi := float32(-1), float32(1)
	base := float32(0)
	switch {
	case strings.HasSuffix(name, "norm.weight"):
		lo, hi, base = -0.1, 0.1, 1
	case strings.HasSuffix(name, ".bias"):
		lo, hi = -0.1, 0.1
	case name != "model.embed_tokens.weight":
		a := float32(math.Sqrt(3 / float64(shape[1])))
		lo, hi = -a, a
	}
	buf := make([]float32, min(n, randomChunk))
	for off := 0; off < n; off += len(buf) {
		m := min(len(buf), n-off)
		for i := range m {
			buf[i] = base + lo + (hi-lo)*rng.Float32()
		}
		if err := emit(buf[:m]); err != nil {
			return err
		}
	}
	return nil
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// WriteRandomCheckpoint writes a random checkpoint of configuration cfg
// into dir (created if needed): config.json and the weights of
// RandomWeights(cfg, seed), rounded to dtype (F32, F16 or BF16, to
// nearest even), in one file or opts.Shards files with an index. It
// streams: memory use does not grow with the model.
func WriteRandomCheckpoint(dir string, cfg llama.Config, dtype tile.DType, seed uint64, opts *Options) error {
	const op = "llamatest"
	format, ok := formats[dtype]
	if !ok {
		return tile.Errorf(tile.ErrDType, op, "dtype", "%v: checkpoints hold f32, f16 or bf16", dtype)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	conf, err := cfg.MarshalJSON()
	if err != nil {
		return err
	}
	skip := map[string]bool{}
	for _, s := range o.Skip {
		skip[s] = true
	}
	var tensors []TensorData // Data unset: drawn while writing
	var ws llama.WeightSet[struct{}]
	_ = llama.EachWeight(cfg, &ws, func(name string, shape []int, _ *struct{}) error {
		if !skip[name] {
			tensors = append(tensors, TensorData{Name: name, Format: format, Shape: shape})
		}
		return nil
	})
	shards := max(o.Shards, 1)
	if shards > len(tensors) {
		return tile.Errorf(tile.ErrArgument, op, "opts.Shards", "%d shards for %d tensors", shards, len(tensors))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, llama.ConfigFile), conf, 0o644); err != nil {
		return err
	}
	if shards == 1 {
		return writeRandomFile(filepath.Join(dir, llama.SingleFile), tensors, dtype, seed)
	}
	weightMap := map[string]string{}
	total := 0
	for s := range shards {
		part := tensors[s*len(tensors)/shards : (s+1)*len(tensors)/shards]
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", s+1, shards)
		for _, t := range part {
			weightMap[t.Name] = name
			n, _ := tile.ProductSize(t.Shape...)
			total += n * dtype.Size()
		}
		if err := writeRandomFile(filepath.Join(dir, name), part, dtype, seed); err != nil {
			return err
		}
	}
	index, _ := json.MarshalIndent(map[string]any{
		"metadata":   map[string]string{"total_size": strconv.Itoa(total)},
		"weight_map": weightMap,
	}, "", "  ")
	return os.WriteFile(filepath.Join(dir, llama.IndexFile), index, 0o644)
}

// writeRandomFile writes one safetensors file of tensors, drawing each
// one's values as it goes.
func writeRandomFile(path string, tensors []TensorData, dtype tile.DType, seed uint64) (err error) {
	sizes := make([]int, len(tensors))
	for i, t := range tensors {
		n, _ := tile.ProductSize(t.Shape...)
		sizes[i] = n * dtype.Size()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := w.Write(encodeHeader(tensors, sizes, map[string]string{"format": "pt"})); err != nil {
		return err
	}
	for _, t := range tensors {
		err := randomTensor(seed, t.Name, t.Shape, func(chunk []float32) error {
			_, err := w.Write(Encode(dtype, chunk))
			return err
		})
		if err != nil {
			return err
		}
	}
	return w.Flush()
}

// Encode converts v to little-endian elements of dtype (F32, F16 or BF16,
// rounding to nearest even).
func Encode(dtype tile.DType, v []float32) []byte {
	sz := dtype.Size()
	out := make([]byte, len(v)*sz)
	for i, x := range v {
		switch dtype {
		case tile.F32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		case tile.F16:
			binary.LittleEndian.PutUint16(out[2*i:], tile.F32ToF16(x))
		case tile.BF16:
			binary.LittleEndian.PutUint16(out[2*i:], tile.F32ToBF16(x))
		}
	}
	return out
}

// Round returns v rounded to dtype and back to float32: the values a
// checkpoint of that type holds.
func Round(dtype tile.DType, v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		switch dtype {
		case tile.F16:
			out[i] = tile.F16ToF32(tile.F32ToF16(x))
		case tile.BF16:
			out[i] = tile.BF16ToF32(tile.F32ToBF16(x))
		default:
			out[i] = x
		}
	}
	return out
}

// Tiny is a configuration for quick tests: 2 layers, hidden 64, 4 query
// heads over 2 KV heads of width 16, MLP 96, vocabulary 101, llama3 RoPE
// scaling.
func Tiny() llama.Config {
	return llama.Config{
		ModelType: "llama", HiddenSize: 64, NumLayers: 2, NumHeads: 4, NumKVHeads: 2, HeadDim: 16,
		IntermediateSize: 96, VocabSize: 101, MaxPositionEmbeddings: 256,
		RMSNormEps: 1e-5, RopeTheta: 500000, BOSTokenID: 1, EOSTokenIDs: []int{2, 3},
		RopeScaling: &llama.RopeScaling{Type: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 64},
	}
}

// Small is the correctness model of issue 30's tests: 2 layers, hidden
// 256, 8 query heads over 2 KV heads of width 32, MLP 688, vocabulary 1000.
func Small() llama.Config {
	return llama.Config{
		ModelType: "llama", HiddenSize: 256, NumLayers: 2, NumHeads: 8, NumKVHeads: 2, HeadDim: 32,
		IntermediateSize: 688, VocabSize: 1000, MaxPositionEmbeddings: 2048,
		RMSNormEps: 1e-5, RopeTheta: 500000, BOSTokenID: 1, EOSTokenIDs: []int{2},
	}
}

// Llama1B has the dimensions of Llama 3.2 1B (hidden 2048, 16 layers, 32
// heads over 8 KV heads, MLP 8192, vocabulary 128256, tied embeddings,
// llama3 RoPE scaling), for benchmarks with random weights.
func Llama1B() llama.Config {
	return llama.Config{
		ModelType: "llama", HiddenSize: 2048, NumLayers: 16, NumHeads: 32, NumKVHeads: 8, HeadDim: 64,
		IntermediateSize: 8192, VocabSize: 128256, MaxPositionEmbeddings: 131072,
		RMSNormEps: 1e-5, RopeTheta: 500000, TieWordEmbeddings: true,
		RopeScaling: &llama.RopeScaling{Type: "llama3", Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 8192},
		BOSTokenID:  128000, EOSTokenIDs: []int{128001, 128008, 128009},
	}
}
