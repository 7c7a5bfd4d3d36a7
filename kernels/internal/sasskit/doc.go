// Package sasskit is the kernel-authoring kit of the hand-scheduled SASS
// kernel families (kernels/sm86/gen, kernels/sm86mm/gen,
// kernels/sm86attn/gen): the operand and instruction helpers, a program
// builder with labels and branches, stall fixing against the sass latency
// table, and the writer of a module's cubins for go generate. Only
// generators and tests import it; no library binary links it
// (internal/doccheck's TestLibrariesLinkNoGenerators).
package sasskit
