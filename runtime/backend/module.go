package backend

import (
	"fmt"
	"sort"

	"github.com/tcrt-go/tcrt/tile"
)

// The module type of the device seam: what a kernel package ships (PTX and
// cubins) and the driver's rule for which form loads on a device. Kernel
// packages (kernels/…) build Modules; backends load what Select picks.

// Module is one GPU module in the forms tcrt ships it.
type Module struct {
	// Name identifies the module (the PTX file's base name).
	Name string
	// PTX is the module's PTX source, nil if it ships none.
	PTX []byte
	// PTXTarget is the PTX's .target, as 80 for sm_80: the driver can compile
	// it for that compute capability and any later one.
	PTXTarget int
	// Cubins holds SASS by compute capability (86 for sm_86). A cubin runs
	// on devices of the same major version and an equal or higher minor one.
	Cubins map[int][]byte
}

// ImageKind says what a module image is.
type ImageKind string

// Image kinds.
const (
	KindCubin ImageKind = "cubin"
	KindPTX   ImageKind = "ptx"
)

// Image is the form of a module chosen for one device.
type Image struct {
	Kind ImageKind
	// SM is the cubin's compute capability, or the PTX's target.
	SM   int
	Data []byte
	// Reason says why this image was chosen.
	Reason string
}

// CubinRuns reports whether a cubin built for compute capability cubin runs
// on a device of compute capability dev (both as 86 for 8.6).
func CubinRuns(cubin, dev int) bool {
	return cubin/10 == dev/10 && cubin%10 <= dev%10
}

// Select returns the image to load on a device of compute capability sm:
// the cubin for the newest compute capability the device can run, else the
// PTX when the device is at least its target. The error wraps
// tile.ErrUnsupported and says why neither fits.
func (m *Module) Select(sm int) (Image, error) {
	var sms []int
	for s := range m.Cubins {
		sms = append(sms, s)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(sms)))
	for _, s := range sms {
		if CubinRuns(s, sm) {
			return Image{Kind: KindCubin, SM: s, Data: m.Cubins[s],
				Reason: fmt.Sprintf("sm_%d cubin runs on sm_%d", s, sm)}, nil
		}
	}
	if m.PTX != nil && sm >= m.PTXTarget {
		why := "no cubin"
		if len(sms) > 0 {
			why = fmt.Sprintf("no cubin for sm_%d (have %v)", sm, smList(sms))
		}
		return Image{Kind: KindPTX, SM: m.PTXTarget, Data: m.PTX,
			Reason: fmt.Sprintf("%s; PTX for sm_%d, compiled by the driver", why, m.PTXTarget)}, nil
	}
	return Image{}, fmt.Errorf("tcrt: module %s: no cubin runs on sm_%d (have %v) and the PTX needs sm_%d: %w",
		m.Name, sm, smList(sms), m.PTXTarget, tile.ErrUnsupported)
}

func smList(sms []int) []string {
	out := make([]string, len(sms))
	for i, s := range sms {
		out[i] = fmt.Sprintf("sm_%d", s)
	}
	return out
}
