package llamatest

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/tile"
)

// Reference is the plain f32 forward pass of a Llama model: the oracle
// for tcrt's forward. It is written for clarity, not speed: every weight
// is decoded to float32, activations are float32, and every dot product
// and sum of squares accumulates in float64 before rounding to float32.
//
// Per layer it computes, as Hugging Face's LlamaDecoderLayer does:
//
//	h = RMSNorm(x)·input_layernorm
//	q, k, v = Wq·h (+bq), Wk·h (+bk), Wv·h (+bv)
//	q, k = RoPE(q, k) at each token's position (NeoX half split:
//	       x[i], x[i+d/2] rotated by position·invFreq[i])
//	a = softmax(q·kᵀ/√d over the visible keys)·v  per query head, key/value
//	    head = query head / (heads/kvHeads); visible: earlier or same
//	    position, within the layer's sliding window if any
//	x = x + Wo·a (+bo)
//	h = RMSNorm(x)·post_attention_layernorm
//	x = x + Wdown·(silu(Wgate·h (+bg)) ⊙ (Wup·h (+bu))) (+bd)
//
// then logits = LMHead·(RMSNorm(x)·norm), LMHead = the embedding when tied.
type Reference struct {
	cfg     llama.Config
	w       llama.WeightSet[[]float32]
	invFreq []float64
	mscale  float64 // cos and sin are multiplied by it (yarn)
}

// NewReference decodes the weights of an open checkpoint to float32 (a
// copy: the checkpoint may be closed afterwards).
func NewReference(ck *llama.Checkpoint) (*Reference, error) {
	w := ck.Weights() // nil for a nil or closed checkpoint
	if w == nil {
		return nil, tile.Errorf(tile.ErrArgument, "llama reference", "ck", "checkpoint is nil or closed")
	}
	cfg := ck.Config()
	r := &Reference{cfg: cfg, invFreq: cfg.RopeInvFreq(), mscale: cfg.RopeAttentionFactor()}
	err := llama.EachWeight(cfg, &r.w, func(name string, _ []int, dst *[]float32) error {
		t, ok := ck.Tensor(name)
		if !ok {
			return tile.Errorf(tile.ErrArgument, "llama reference", name, "missing")
		}
		v, err := t.Float32s()
		*dst = v
		return err
	})
	if err != nil {
		return nil, err
	}
	if cfg.TieWordEmbeddings {
		r.w.LMHead = r.w.Embed
	}
	return r, nil
}

// Config is the model's configuration (zero for a nil Reference).
func (r *Reference) Config() llama.Config {
	if r == nil {
		return llama.Config{}
	}
	return r.cfg
}

// Cache is a Reference's key/value cache for one sequence: the rotated
// keys and the values of every position so far, per layer.
type Cache struct {
	k, v [][]float32 // per layer: positions × kvHeads·headDim
	n    int
}

// NewCache returns an empty cache for one sequence (nil for a nil
// Reference).
func (r *Reference) NewCache() *Cache {
	if r == nil {
		return nil
	}
	return &Cache{k: make([][]float32, r.cfg.NumLayers), v: make([][]float32, r.cfg.NumLayers)}
}

// Len is the number of positions the cache holds (0 for nil).
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	return c.n
}

// Forward runs tokens through the model at positions c.Len() onward,
// appends their keys and values to c, and returns each token's logits
// (len(tokens) rows of VocabSize). A prompt is one call on an empty cache
// (prefill); decoding is one call per token. All tokens of a call go
// through each layer together, each attending to the cache and to the
// tokens before it. ctx is checked before each layer.
func (r *Reference) Forward(ctx context.Context, c *Cache, tokens []int) ([][]float32, error) {
	const op = "llama reference"
	if r == nil || r.w.Embed == nil {
		return nil, tile.Errorf(tile.ErrArgument, op, "r", "reference is nil or was not made by NewReference")
	}
	if ctx == nil {
		return nil, tile.Errorf(tile.ErrArgument, op, "ctx", "context is nil")
	}
	cfg := r.cfg
	if c == nil || len(c.k) != cfg.NumLayers {
		return nil, tile.Errorf(tile.ErrArgument, op, "cache", "not a cache of this model (use NewCache)")
	}
	for i, t := range tokens {
		if t < 0 || t >= cfg.VocabSize {
			return nil, tile.Errorf(tile.ErrBounds, op, "tokens", "token %d is %d, outside the vocabulary of %d", i, t, cfg.VocabSize)
		}
	}
	H, hd := cfg.HiddenSize, cfg.HeadDim
	qd, kvd := cfg.NumHeads*hd, cfg.NumKVHeads*hd
	group := cfg.NumHeads / cfg.NumKVHeads
	p0 := c.n
	x := make([][]float32, len(tokens))
	for i, t := range tokens {
		x[i] = append([]float32(nil), r.w.Embed[t*H:(t+1)*H]...)
	}
	for l := range cfg.NumLayers {
		if err := ctx.Err(); err != nil {
			for k := range c.k { // drop this call's partial appends
				c.k[k], c.v[k] = c.k[k][:p0*kvd], c.v[k][:p0*kvd]
			}
			return nil, err
		}
		lw := &r.w.Layers[l]
		window := cfg.LayerSlidingWindow(l)
		qs := make([][]float32, len(tokens))
		for i := range tokens {
			h := rmsNorm(x[i], lw.InputNorm, cfg.RMSNormEps)
			q := addBias(matVec(lw.Q, h, qd, H), lw.QBias)
			k := addBias(matVec(lw.K, h, kvd, H), lw.KBias)
			v := addBias(matVec(lw.V, h, kvd, H), lw.VBias)
			r.rope(q, p0+i)
			r.rope(k, p0+i)
			qs[i] = q
			c.k[l] = append(c.k[l], k...)
			c.v[l] = append(c.v[l], v...)
		}
		scale := 1 / math.Sqrt(float64(hd))
		for i := range tokens {
			pos := p0 + i
			first := 0
			if window > 0 {
				first = max(0, pos-window+1)
			}
			attn := make([]float32, qd)
			for qh := range cfg.NumHeads {
				kh := qh / group
				q := qs[i][qh*hd : (qh+1)*hd]
				scores := make([]float64, pos+1-first)
				maxS := math.Inf(-1)
				for j := first; j <= pos; j++ {
					k := c.k[l][j*kvd+kh*hd : j*kvd+(kh+1)*hd]
					s := dot(q, k) * scale
					scores[j-first] = s
					maxS = max(maxS, s)
				}
				sum := 0.0
				for j := range scores {
					scores[j] = math.Exp(scores[j] - maxS)
					sum += scores[j]
				}
				for d := range hd {
					acc := 0.0
					for j := first; j <= pos; j++ {
						acc += scores[j-first] / sum * float64(c.v[l][j*kvd+kh*hd+d])
					}
					attn[qh*hd+d] = float32(acc)
				}
			}
			o := addBias(matVec(lw.O, attn, H, qd), lw.OBias)
			for d := range H {
				x[i][d] += o[d]
			}
			h := rmsNorm(x[i], lw.PostAttentionNorm, cfg.RMSNormEps)
			I := cfg.IntermediateSize
			gate, up := addBias(matVec(lw.Gate, h, I, H), lw.GateBias), addBias(matVec(lw.Up, h, I, H), lw.UpBias)
			for j := range gate {
				g := float64(gate[j])
				gate[j] = float32(g / (1 + math.Exp(-g)) * float64(up[j]))
			}
			down := addBias(matVec(lw.Down, gate, H, I), lw.DownBias)
			for d := range H {
				x[i][d] += down[d]
			}
		}
	}
	c.n += len(tokens)
	logits := make([][]float32, len(tokens))
	for i := range tokens {
		logits[i] = matVec(r.w.LMHead, rmsNorm(x[i], r.w.Norm, cfg.RMSNormEps), cfg.VocabSize, H)
	}
	return logits, nil
}

// rope rotates each head of x in place for position pos, NeoX style
// (Hugging Face's rotate_half): element i pairs with element i+d/2.
func (r *Reference) rope(x []float32, pos int) {
	hd := r.cfg.HeadDim
	half := hd / 2
	for h := 0; h < len(x); h += hd {
		for i := range half {
			ang := float64(pos) * r.invFreq[i]
			cos, sin := r.mscale*math.Cos(ang), r.mscale*math.Sin(ang)
			a, b := float64(x[h+i]), float64(x[h+i+half])
			x[h+i] = float32(a*cos - b*sin)
			x[h+i+half] = float32(b*cos + a*sin)
		}
	}
}

// Greedy generates n tokens after prompt, each the argmax of the logits.
func (r *Reference) Greedy(ctx context.Context, prompt []int, n int) ([]int, error) {
	c := r.NewCache()
	logits, err := r.Forward(ctx, c, prompt)
	if err != nil {
		return nil, err
	}
	if len(logits) == 0 {
		return nil, tile.Errorf(tile.ErrArgument, "llama reference", "prompt", "empty")
	}
	out := make([]int, 0, n)
	last := logits[len(logits)-1]
	for range n {
		t := Argmax(last)
		out = append(out, t)
		if len(out) == n {
			break
		}
		step, err := r.Forward(ctx, c, []int{t})
		if err != nil {
			return nil, err
		}
		last = step[0]
	}
	return out, nil
}

// Argmax is the index of the largest value, the first of ties; NaN never
// wins. It returns -1 for an empty or all-NaN slice.
func Argmax(v []float32) int {
	best := -1
	for i, x := range v {
		if x == x && (best < 0 || x > v[best]) {
			best = i
		}
	}
	return best
}

func rmsNorm(x, w []float32, eps float64) []float32 {
	ss := 0.0
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	inv := 1 / math.Sqrt(ss/float64(len(x))+eps)
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(float64(v)*inv) * w[i]
	}
	return out
}

// matVec returns W·x for W [rows, cols] row-major.
func matVec(w, x []float32, rows, cols int) []float32 {
	out := make([]float32, rows)
	for r := range rows {
		out[r] = float32(dot(w[r*cols:(r+1)*cols], x))
	}
	return out
}

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func addBias(v, b []float32) []float32 {
	for i := range b {
		v[i] += b[i]
	}
	return v
}
