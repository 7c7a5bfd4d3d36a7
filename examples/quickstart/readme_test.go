package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEMatchesFile checks that the README prints this program exactly.
func TestREADMEMatchesFile(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- begin examples/quickstart/main.go -->\n```go\n", "```\n<!-- end examples/quickstart/main.go -->"
	_, rest, ok := strings.Cut(string(readme), begin)
	block, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatal("README.md lacks the marked copy of examples/quickstart/main.go")
	}
	if block != string(src) {
		t.Fatal("README.md's copy of examples/quickstart/main.go differs from the file; paste the file into the README")
	}
}
