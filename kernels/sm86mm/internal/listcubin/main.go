// Command listcubin prints every kernel of a cubin as a sass listing with
// control words (an instruction the model does not decode prints as its
// hex words). Used to read ptxas's schedules.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
)

func main() {
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c, err := cubin.Read(b)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, s := range c.Sections {
		if !strings.HasPrefix(s.Name, ".text.") {
			continue
		}
		fmt.Printf("// %s\n", s.Name)
		for k := 0; k+16 <= len(s.Data); k += 16 {
			i, err := sass.DecodeWord(s.Data[k : k+16])
			if err != nil {
				fmt.Printf("/*%04x*/ ?? %x\n", k, s.Data[k:k+16])
				continue
			}
			fmt.Printf("/*%04x*/ %s\n", k, i.Listing(int64(k)))
		}
	}
}
