// Package llamatest writes small random Llama checkpoints for tests and
// holds the plain f32 reference forward pass (Reference), the oracle that
// tcrt's forward is tested against. Tests never need a download.
package llamatest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
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
		fmt.Fprintf(&hdr, `%s:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, t.Format, shape, off, off+len(t.Data))
		off += len(t.Data)
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	out := make([]byte, 8, 8+hdr.Len()+off)
	binary.LittleEndian.PutUint64(out, uint64(hdr.Len()))
	out = append(out, hdr.String()...)
	for _, t := range tensors {
		out = append(out, t.Data...)
	}
	return out
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
// name, so leaving one out changes no other.
func RandomWeights(cfg llama.Config, seed uint64) (map[string][]float32, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	out := map[string][]float32{}
	var ws llama.WeightSet[struct{}]
	err := llama.EachWeight(cfg, &ws, func(name string, shape []int, _ *struct{}) error {
		n, _ := tile.ProductSize(shape...)
		if _, ok := tile.MulSize(n, 4); !ok || n > 1<<30 {
			return tile.Errorf(tile.ErrOutOfMemory, "llamatest", name, "%v is too large for a test checkpoint", shape)
		}
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
		v := make([]float32, n)
		for i := range v {
			v[i] = base + lo + (hi-lo)*rng.Float32()
		}
		out[name] = v
		return nil
	})
	return out, err
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
// nearest even), in one file or opts.Shards files with an index.
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
	vals, err := RandomWeights(cfg, seed)
	if err != nil {
		return err
	}
	conf, err := cfg.MarshalJSON()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, llama.ConfigFile), conf, 0o644); err != nil {
		return err
	}
	skip := map[string]bool{}
	for _, s := range o.Skip {
		skip[s] = true
	}
	var tensors []TensorData
	var ws llama.WeightSet[struct{}]
	_ = llama.EachWeight(cfg, &ws, func(name string, shape []int, _ *struct{}) error {
		if !skip[name] {
			tensors = append(tensors, TensorData{Name: name, Format: format, Shape: shape, Data: Encode(dtype, vals[name])})
		}
		return nil
	})
	shards := max(o.Shards, 1)
	if shards == 1 {
		return os.WriteFile(filepath.Join(dir, llama.SingleFile), EncodeSafetensors(tensors, map[string]string{"format": "pt"}), 0o644)
	}
	if shards > len(tensors) {
		return tile.Errorf(tile.ErrArgument, op, "opts.Shards", "%d shards for %d tensors", shards, len(tensors))
	}
	weightMap := map[string]string{}
	total := 0
	for s := range shards {
		part := tensors[s*len(tensors)/shards : (s+1)*len(tensors)/shards]
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", s+1, shards)
		for _, t := range part {
			weightMap[t.Name] = name
			total += len(t.Data)
		}
		if err := os.WriteFile(filepath.Join(dir, name), EncodeSafetensors(part, map[string]string{"format": "pt"}), 0o644); err != nil {
			return err
		}
	}
	index, _ := json.MarshalIndent(map[string]any{
		"metadata":   map[string]string{"total_size": strconv.Itoa(total)},
		"weight_map": weightMap,
	}, "", "  ")
	return os.WriteFile(filepath.Join(dir, llama.IndexFile), index, 0o644)
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
