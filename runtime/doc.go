// Package runtime owns what tcrt's ops run on: the backend chosen at Open
// (CUDA when built with -tags cuda and a usable GPU is present, else the CPU),
// its device description, buffers, streams and events, and the kernel
// registry that every implementation of every op — SM86/SM89 SASS, PTX and
// CPU — registers with. Selection is deterministic and explainable: Explain
// lists every candidate for a call and why each was taken or rejected.
//
// # Environment
//
//	TCRT_BACKEND=cpu|cuda|auto   force a backend (overrides Options.Backend)
//	TCRT_KERNEL=name[,op=name]   force a named kernel, for every op it
//	                             implements or for the named op; a forced
//	                             kernel that cannot run the call is an error
//	TCRT_THREADS=n               CPU worker goroutines (overrides Options.Threads)
//	TCRT_CPU=avx512|avx2|generic hide CPU features from every CPU kernel choice:
//	                             avx2 hides AVX-512, generic also AVX/AVX2/FMA
//	TCRT_CPU_FEATURES=-NAME,...  hide named cpuid features (-AVX512BF16); both
//	                             are read at start-up, Explain shows the mask
//
// The default build is pure Go (CGO_ENABLED=0 works). The CUDA backend lives
// behind the cuda build tag.
package runtime
