package cpufeat

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

func TestLevels(t *testing.T) {
	for _, c := range []struct {
		level, features string
		hidden, kept    []cpuid.FeatureID
		bad             bool
	}{
		{"", "", nil, []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX2}, false},
		{"avx512", "", nil, []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX512BF16}, false},
		{"avx2", "", []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX512BF16, cpuid.AVX512BW, cpuid.AVX512FP16, cpuid.AMXBF16}, []cpuid.FeatureID{cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.AVX}, false},
		{"generic", "", []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.AVX}, []cpuid.FeatureID{cpuid.SSE2, cpuid.SSE4}, false},
		{"", "-AVX512BF16", []cpuid.FeatureID{cpuid.AVX512BF16}, []cpuid.FeatureID{cpuid.AVX512F}, false},
		{"AVX2", " -AVX512BF16 , -FMA3", []cpuid.FeatureID{cpuid.AVX512F, cpuid.FMA3}, []cpuid.FeatureID{cpuid.AVX2}, false},
		{"sse", "", nil, []cpuid.FeatureID{cpuid.AVX512F}, true},
		{"", "-NOSUCHFEATURE,AVX2", nil, []cpuid.FeatureID{cpuid.AVX2}, true},
	} {
		restore, err := Set(c.level, c.features)
		if (err != nil) != c.bad || (Err() != nil) != c.bad {
			t.Errorf("%q %q: error %v", c.level, c.features, err)
		}
		for _, f := range c.hidden {
			if !Masked(f) || Supports(f) {
				t.Errorf("%q %q: %v not hidden", c.level, c.features, f)
			}
			if cpuid.CPU.Supports(f) && !strings.Contains(Missing(f), "masked") {
				t.Errorf("%q %q: Missing(%v) = %q", c.level, c.features, f, Missing(f))
			}
		}
		for _, f := range c.kept {
			if Masked(f) || Supports(f) != cpuid.CPU.Supports(f) {
				t.Errorf("%q %q: %v hidden", c.level, c.features, f)
			}
		}
		if s := String(); (c.level != "" || c.features != "") != (s != "") {
			t.Errorf("%q %q: String() = %q", c.level, c.features, s)
		}
		restore()
	}
	if String() != "" && os.Getenv(EnvLevel) == "" && os.Getenv(EnvFeatures) == "" {
		t.Errorf("restored mask is %q", String())
	}
}

// TestEnv checks that the environment variables are read at start-up, in
// a child process.
func TestEnv(t *testing.T) {
	if os.Getenv("CPUFEAT_CHILD") != "" {
		if !Masked(cpuid.AVX512F) || !Masked(cpuid.AVX512BF16) || Masked(cpuid.AVX2) || !Masked(cpuid.FMA3) {
			t.Fatalf("child: mask %q", String())
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEnv$")
	cmd.Env = append(os.Environ(), "CPUFEAT_CHILD=1", EnvLevel+"=avx2", EnvFeatures+"=-FMA3")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestSupportsMatchesCPUID checks Supports, which reads a bit set made
// when the mask is set, against cpuid's own answer less the mask, for
// every feature cpuid names, under each level and a feature list.
func TestSupportsMatchesCPUID(t *testing.T) {
	for _, c := range [][2]string{{"", ""}, {"avx2", ""}, {"generic", ""}, {"", "-AVX512BF16,-AVX2"}} {
		restore, err := Set(c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for id := cpuid.FeatureID(1); ; id++ {
			if n := id.String(); n == "lastID" || strings.HasPrefix(n, "FeatureID(") {
				break
			}
			want := cpuid.CPU.Supports(id) && !Masked(id)
			if got := Supports(id); got != want {
				t.Errorf("%q %q: Supports(%v) = %v, want %v", c[0], c[1], id, got, want)
			}
			if got := Missing(id) == ""; got != want {
				t.Errorf("%q %q: Missing(%v) says usable %v, want %v", c[0], c[1], id, got, want)
			}
			checked++
		}
		restore()
		if checked < 100 {
			t.Fatalf("checked %d features, want cpuid's whole list", checked)
		}
	}
	if Supports(cpuid.FeatureID(maxFeature+5)) || Supports(cpuid.UNKNOWN) {
		t.Fatal("an unknown feature is supported")
	}
}
