// Package tile holds the vocabulary every other tcrt package speaks: element
// types (f32, f16, bf16, e4m3, e5m2 and the integers) with their conversions,
// tensor descriptors (shape, strides, leading dimensions), tile descriptors
// (valid versus physical region, pad value, layout), the sentinel errors of the
// runtime, and the contract that every gather, scatter and atomic op obeys on
// every backend: legality is checked first, every address is preflighted before
// the first effect, and nothing is written unless the whole op succeeds.
//
// Inside tcrt the package depends only on internal/cpufeat (a leaf: the CPU
// feature mask its float8 codecs dispatch on); everything else builds on it.
package tile
