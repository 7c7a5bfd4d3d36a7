// Package cpufeat is the CPU feature check of every tcrt CPU kernel choice:
// cpuid's report less the features masked with an environment variable, so
// that the AVX2 and plain-Go paths can be selected, tested and benchmarked on
// a machine that has AVX-512.
//
//	TCRT_CPU=avx512|avx2|generic       a level: avx2 hides every AVX-512 (and
//	                                   AMX, AVX10) feature, generic also AVX,
//	                                   AVX2, FMA3, F16C and the other AVX
//	                                   extensions; avx512 hides nothing
//	TCRT_CPU_FEATURES=-AVX512BF16,...  hides the named features (cpuid's
//	                                   names), on top of TCRT_CPU
//
// Both are read once, when the program starts; tests change the mask with
// Set. A mask can only hide features: it never makes a kernel run on a CPU
// that lacks what it needs. Unknown names and levels are ignored, and Err
// reports them.
package cpufeat

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/klauspost/cpuid/v2"
)

// Environment variables.
const (
	EnvLevel    = "TCRT_CPU"
	EnvFeatures = "TCRT_CPU_FEATURES"
)

// maxFeature bounds the cpuid feature IDs scanned for the levels.
const maxFeature = 1024

// mask is one parsed setting.
type mask struct {
	spec   string     // as given: "TCRT_CPU=avx2 TCRT_CPU_FEATURES=-X"
	hidden featureSet // features hidden (whether or not the CPU has them)
	// usable are the features the CPU has and the mask does not hide:
	// Supports, on every kernel call, reads only this (cpuid's Supports
	// copies its whole CPUInfo each time).
	usable featureSet
	err    error    // unknown names, if any
	names  []string // hidden features the CPU has, sorted
	_      struct{} //
}

var cur atomic.Pointer[mask]

// featureSet is a set of cpuid features below maxFeature (the kernels ask
// on every call, so it is a bit set, not a map).
type featureSet [maxFeature / 64]uint64

func (s *featureSet) add(f cpuid.FeatureID) {
	if f >= 0 && f < maxFeature {
		s[f/64] |= 1 << (f % 64)
	}
}

func (s *featureSet) has(f cpuid.FeatureID) bool {
	return f >= 0 && f < maxFeature && s[f/64]&(1<<(f%64)) != 0
}

func init() {
	m, _ := parse(os.Getenv(EnvLevel), os.Getenv(EnvFeatures))
	cur.Store(m)
}

// levelHides reports whether level hides feature name.
func levelHides(level, name string) bool {
	avx512 := strings.HasPrefix(name, "AVX512") || strings.HasPrefix(name, "AMX") || strings.HasPrefix(name, "AVX10")
	switch level {
	case "avx2":
		return avx512
	case "generic":
		return avx512 || strings.HasPrefix(name, "AVX") || name == "FMA3" || name == "FMA4" || name == "F16C"
	}
	return false
}

// parse builds the mask of a level and a feature list; the error lists
// what it ignored.
func parse(level, features string) (*mask, error) {
	m := &mask{}
	var bad []string
	level = strings.ToLower(strings.TrimSpace(level))
	var spec []string
	switch level {
	case "", "avx512":
	case "avx2", "generic":
		for id := cpuid.FeatureID(1); id < maxFeature; id++ {
			if levelHides(level, id.String()) {
				m.hidden.add(id)
			}
		}
	default:
		bad = append(bad, fmt.Sprintf("%s=%q (want avx512, avx2 or generic)", EnvLevel, level))
	}
	if level != "" {
		spec = append(spec, EnvLevel+"="+level)
	}
	var fs []string
	for _, f := range strings.Split(features, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, ok := strings.CutPrefix(f, "-")
		id := cpuid.ParseFeature(name)
		if !ok || id == cpuid.UNKNOWN {
			bad = append(bad, fmt.Sprintf("%s entry %q (want -NAME with a cpuid feature name)", EnvFeatures, f))
			continue
		}
		m.hidden.add(id)
		fs = append(fs, "-"+id.String())
	}
	if len(fs) > 0 {
		spec = append(spec, EnvFeatures+"="+strings.Join(fs, ","))
	}
	m.spec = strings.Join(spec, " ")
	// cpuid's IDs run up to its unexported lastID, past which its
	// Supports indexes out of range.
	for id := cpuid.FeatureID(1); id < maxFeature; id++ {
		if n := id.String(); n == "lastID" || strings.HasPrefix(n, "FeatureID(") {
			break
		}
		switch has := cpuid.CPU.Supports(id); {
		case has && m.hidden.has(id):
			m.names = append(m.names, id.String())
		case has:
			m.usable.add(id)
		}
	}
	slices.Sort(m.names)
	if len(bad) > 0 {
		m.err = fmt.Errorf("cpufeat: ignored %s", strings.Join(bad, "; "))
	}
	return m, m.err
}

// Supports reports whether the CPU has every feature in fs and none of them
// is masked.
func Supports(fs ...cpuid.FeatureID) bool {
	m := cur.Load()
	for _, f := range fs {
		if !m.usable.has(f) {
			return false
		}
	}
	return true
}

// Masked reports whether f is hidden by the mask (whether or not the CPU
// has it).
func Masked(f cpuid.FeatureID) bool { return cur.Load().hidden.has(f) }

// Missing returns why fs are not all usable ("" when they are): the first
// feature the CPU lacks or the mask hides.
func Missing(fs ...cpuid.FeatureID) string {
	m := cur.Load()
	for _, f := range fs {
		if !cpuid.CPU.Supports(f) {
			return "CPU lacks " + f.String()
		}
		if m.hidden.has(f) {
			return f.String() + " masked (" + m.spec + ")"
		}
	}
	return ""
}

// Has reports whether Missing(fs...) is "" (the CPU has every feature and
// the mask hides none), without building the reason.
func Has(fs ...cpuid.FeatureID) bool {
	m := cur.Load()
	for _, f := range fs {
		if !cpuid.CPU.Supports(f) || m.hidden.has(f) {
			return false
		}
	}
	return true
}

// String describes the mask: "" when nothing is masked, else the setting,
// the features of this CPU it hides and what was ignored.
func String() string {
	m := cur.Load()
	var parts []string
	if m.spec != "" {
		parts = append(parts, m.spec)
	}
	if len(m.names) > 0 {
		parts = append(parts, "hides "+strings.Join(m.names, " "))
	}
	if m.err != nil {
		parts = append(parts, m.err.Error())
	}
	return strings.Join(parts, "; ")
}

// Err reports the entries of the environment variables that were ignored.
func Err() error { return cur.Load().err }

// Set replaces the mask as the two environment variables would (level, then
// features), for tests, and returns a function restoring the previous one.
// Kernels already running keep the paths they chose.
func Set(level, features string) (restore func(), err error) {
	m, err := parse(level, features)
	old := cur.Swap(m)
	return func() { cur.Store(old) }, err
}
