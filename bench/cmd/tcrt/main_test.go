package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestParseFlags checks that every malformed command line is a usage error
// and that good ones select what they name.
func TestParseFlags(t *testing.T) {
	bad := [][]string{
		{"-ops", "bogus"}, {"-ops", ""}, {"-ops", "matmul,bogus"}, {"-ops", ","},
		{"-size", "huge"}, {"-size", ""}, {"-size", "Small"}, {"-size", "1e9"},
		{"-backend", "tpu"}, {"-backend", ""}, {"extra"}, {"-nope"}, {"-json=maybe"},
	}
	for _, args := range bad {
		_, err := parseFlags(args, io.Discard)
		if !errors.Is(err, errUsage) {
			t.Errorf("%q: got %v, want a usage error", args, err)
		}
	}
	if _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: got %v, want flag.ErrHelp", err)
	}
	cfg, err := parseFlags([]string{"-ops", " quantize , matmul,matmul", "-size", "small", "-backend", "CPU"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.ops, []string{"quantize", "matmul"}) || cfg.size != "small" || cfg.backend != "cpu" {
		t.Errorf("got %+v", cfg)
	}
	all, err := parseFlags(nil, io.Discard)
	if err != nil || len(all.ops) < 2 || all.size != "medium" || all.backend != "" {
		t.Errorf("defaults: %+v, %v", all, err)
	}
}

func TestErrorLine(t *testing.T) {
	for _, c := range []struct {
		ctx  string
		err  error
		want string
	}{
		{"", errors.New("tcrt: open: bad"), "tcrt: open: bad"},
		{"matmul", errors.New("tcrt: matmul: bad"), "tcrt: matmul: bad"},
		{"quantize", errors.New("unknown size"), "tcrt: quantize: unknown size"},
		{"", errors.New("boom"), "tcrt: boom"},
	} {
		got := errorLine(c.ctx, c.err)
		if got != c.want || strings.Count(got, "tcrt:") != 1 {
			t.Errorf("errorLine(%q, %q) = %q, want %q", c.ctx, c.err, got, c.want)
		}
	}
}
