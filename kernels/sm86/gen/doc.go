// Package gen generates the sm86 kernels (see package sm86 for what they
// compute and their launch plans): one generator function a kernel,
// returning a sass.Program with every control word chosen by hand;
// Kernels and Cubin assemble the module that go generate embeds in
// package sm86. Only go generate and the tests link it.
package gen
