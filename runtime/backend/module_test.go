package backend

import (
	"errors"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

func TestSelect(t *testing.T) {
	m := &Module{Name: "f8", PTX: []byte("ptx"), PTXTarget: 80, Cubins: map[int][]byte{86: {86}, 89: {89}}}
	for _, c := range []struct {
		sm   int
		kind ImageKind
		img  int
	}{
		{80, KindPTX, 80}, {86, KindCubin, 86}, {87, KindCubin, 86}, {89, KindCubin, 89},
		{90, KindPTX, 80}, {100, KindPTX, 80}, {120, KindPTX, 80},
	} {
		img, err := m.Select(c.sm)
		if err != nil {
			t.Errorf("sm_%d: %v", c.sm, err)
			continue
		}
		if img.Kind != c.kind || img.SM != c.img || len(img.Data) == 0 || img.Reason == "" {
			t.Errorf("sm_%d: %s sm_%d (%q), want %s sm_%d", c.sm, img.Kind, img.SM, img.Reason, c.kind, c.img)
		}
	}
	if _, err := m.Select(75); !errors.Is(err, tile.ErrUnsupported) {
		t.Errorf("sm_75: %v, want ErrUnsupported", err)
	}
	cubinOnly := &Module{Name: "x", Cubins: map[int][]byte{86: {1}}}
	if _, err := cubinOnly.Select(90); !errors.Is(err, tile.ErrUnsupported) {
		t.Errorf("cubin-only on sm_90: %v, want ErrUnsupported", err)
	}
	for _, c := range []struct {
		cubin, dev int
		ok         bool
	}{{86, 86, true}, {86, 89, true}, {89, 86, false}, {86, 90, false}, {80, 86, true}, {90, 89, false}} {
		if got := CubinRuns(c.cubin, c.dev); got != c.ok {
			t.Errorf("CubinRuns(%d, %d) = %v", c.cubin, c.dev, got)
		}
	}
}
