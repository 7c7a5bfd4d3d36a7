package llama

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tcrt-go/tcrt/tile"
)

// File names of a Hugging Face model directory.
const (
	ConfigFile = "config.json"
	SingleFile = "model.safetensors"
	IndexFile  = "model.safetensors.index.json"
	// GenerationConfigFile holds generation defaults; its eos_token_id,
	// when set, is what transformers' generate stops at (ReadConfig).
	GenerationConfigFile = "generation_config.json"
	maxIndexFileSize     = 64 << 20
)

const ckptOp = "llama checkpoint"

// Checkpoint is an open Hugging Face model directory: its configuration,
// its safetensors files (mapped read-only) and the Llama weights among
// their tensors. Close releases the mappings.
type Checkpoint struct {
	dir     string
	cfg     Config
	files   []*File
	tensors map[string]Tensor
	weights *Weights
	mu      sync.Mutex
	closed  bool
}

// OpenCheckpoint opens the model directory dir: config.json, then either
// model.safetensors.index.json and the shards its weight_map names, or
// model.safetensors. Every file is validated (see OpenSafetensors), no
// tensor may appear twice (each shard's tensors must be the ones the index
// places in it), and the Llama weights must all be present with the shapes
// config.json implies (in F32, F16 or BF16).
func OpenCheckpoint(dir string) (*Checkpoint, error) {
	cfg, err := ReadConfig(dir)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{dir: dir, cfg: cfg, tensors: map[string]Tensor{}}
	if err := c.openFiles(); err != nil {
		_ = c.Close()
		return nil, err
	}
	w, err := bindWeights(cfg, c.tensors)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	c.weights = w
	return c, nil
}

func (c *Checkpoint) openFiles() error {
	index, err := readIndex(filepath.Join(c.dir, IndexFile))
	if err != nil {
		return err
	}
	if index == nil {
		return c.addFile(SingleFile, nil)
	}
	for _, shard := range shardNames(index) {
		if err := c.addFile(shard, index); err != nil {
			return err
		}
	}
	for name, shard := range index {
		if _, ok := c.tensors[name]; !ok {
			return tile.Errorf(tile.ErrArgument, ckptOp, name, "the index places it in %s, which has no such tensor", shard)
		}
	}
	return nil
}

// addFile opens one safetensors file of the directory; with an index,
// each of its tensors must be placed in it by the index (so no tensor is
// in two files: the index places each in one).
func (c *Checkpoint) addFile(name string, index map[string]string) error {
	f, err := OpenSafetensors(filepath.Join(c.dir, name))
	if err != nil {
		return err
	}
	c.files = append(c.files, f)
	for _, n := range f.order {
		if index != nil && index[n] != name {
			where := "does not list it"
			if s, ok := index[n]; ok {
				where = "places it in " + s
			}
			return tile.Errorf(tile.ErrArgument, ckptOp, n, "found in %s, but the index %s", name, where)
		}
		c.tensors[n] = f.tensors[n]
	}
	return nil
}

// readIndex reads model.safetensors.index.json's weight_map (nil, nil when
// there is no index). Shard names must be plain file names in the
// directory.
func readIndex(path string) (map[string]string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, tile.Errorf(tile.ErrArgument, ckptOp, IndexFile, "stat: %v", err)
	}
	if st.Size() > maxIndexFileSize {
		return nil, tile.Errorf(tile.ErrBounds, ckptOp, IndexFile, "%d bytes exceed the limit of %d", st.Size(), maxIndexFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, tile.Errorf(tile.ErrArgument, ckptOp, IndexFile, "reading: %v", err)
	}
	return parseIndex(data)
}

// parseIndex decodes an index's weight_map strictly (no duplicate names).
func parseIndex(data []byte) (map[string]string, error) {
	keys, vals, err := objectFields(data)
	if err != nil {
		return nil, tile.Errorf(tile.ErrArgument, ckptOp, IndexFile, "not a JSON object without duplicate names: %v", err)
	}
	i := slices.Index(keys, "weight_map")
	if i < 0 {
		return nil, tile.Errorf(tile.ErrArgument, ckptOp, IndexFile, "has no weight_map")
	}
	names, shards, err := objectFields(vals[i])
	if err != nil {
		return nil, tile.Errorf(tile.ErrArgument, ckptOp, IndexFile, "weight_map is not an object without duplicate names: %v", err)
	}
	m := make(map[string]string, len(names))
	for j, n := range names {
		var s string
		if err := json.Unmarshal(shards[j], &s); err != nil {
			return nil, tile.Errorf(tile.ErrArgument, ckptOp, n, "weight_map entry is not a file name: %v", err)
		}
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\`) || s != filepath.Base(s) {
			return nil, tile.Errorf(tile.ErrArgument, ckptOp, n, "weight_map names %q; shards must be plain file names in the model directory", s)
		}
		m[n] = s
	}
	return m, nil
}

func shardNames(index map[string]string) []string {
	set := map[string]bool{}
	for _, s := range index {
		set[s] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func sortedNames(m map[string]Tensor) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// release drops the resident pages of a tensor's bytes where they lie in
// a file mapping (see dropPages).
func (c *Checkpoint) release(b []byte) {
	for _, f := range c.files {
		f.release(b)
	}
}

// Config is the checkpoint's configuration (zero for a nil Checkpoint).
func (c *Checkpoint) Config() Config {
	if c == nil {
		return Config{}
	}
	return c.cfg
}

// Weights are the checkpoint's Llama weights (nil for a nil Checkpoint);
// their views are valid until Close.
func (c *Checkpoint) Weights() *Weights {
	if c == nil {
		return nil
	}
	return c.weights
}

// Tensor returns any tensor of the checkpoint by name.
func (c *Checkpoint) Tensor(name string) (Tensor, bool) {
	if c == nil {
		return Tensor{}, false
	}
	t, ok := c.tensors[name]
	return t, ok
}

// Names returns every tensor's name, sorted.
func (c *Checkpoint) Names() []string {
	if c == nil {
		return nil
	}
	return sortedNames(c.tensors)
}

// Files returns the paths of the checkpoint's safetensors files.
func (c *Checkpoint) Files() []string {
	if c == nil {
		return nil
	}
	out := make([]string, len(c.files))
	for i, f := range c.files {
		out[i] = f.Path()
	}
	return out
}

// Close releases every file's mapping; the views of Weights and Tensor
// become invalid. It is idempotent and returns the first error; on a nil
// Checkpoint it returns an error wrapping tile.ErrArgument.
func (c *Checkpoint) Close() error {
	if c == nil {
		return tile.Errorf(tile.ErrArgument, "close", "checkpoint", "checkpoint is nil")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	var first error
	for _, f := range c.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	c.files, c.tensors, c.weights = nil, nil, nil
	return first
}
