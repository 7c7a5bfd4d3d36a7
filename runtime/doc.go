// Package runtime is what tcrt's ops run on: Open picks the backend (CUDA
// when the driver and a usable GPU are present, else the CPU; the reason is
// Runtime.BackendReason; "sim" is the simulated SM86/SM89 GPU), and the
// runtime gives out buffers, streams and events. The ops themselves are
// package ops; every op call selects one of the kernels registered for it
// (SM86/SM89 SASS, PTX, CPU), deterministically, and ops' Explain
// functions say why.
//
// # Environment
//
// The first five variables supply defaults for Open: each is read only
// when the Options field it stands for (in brackets) is zero, so a field a
// program sets wins.
//
//	TCRT_BACKEND=auto|cpu|cuda|sim
//	                             (Backend) auto, the default, tries CUDA,
//	                             then opens the CPU and keeps why
//	                             (BackendReason, Explain); cuda returns the
//	                             driver's typed error when it cannot open;
//	                             sim is the simulated SM86/SM89 GPU: the
//	                             CUDA backend over a simulator driver
//	TCRT_SIM_ARCH=86|89          (SimArch) the compute capability the
//	                             simulated GPU models (86: an A10, the
//	                             default; 89: an L4)
//	TCRT_CUDA_LIB=path           (CUDALib) the CUDA driver library to load
//	                             (default libcuda.so.1, found by the
//	                             dynamic loader)
//	TCRT_KERNEL=name[,op=name]   (Kernel) force a named kernel, for every op
//	                             it implements or for the named op; a forced
//	                             kernel that cannot run the call is an error
//	TCRT_THREADS=n               (Threads) CPU worker goroutines
//	TCRT_CPU=avx512|avx2|generic hide CPU features from every CPU kernel choice:
//	                             avx2 hides AVX-512, generic also AVX/AVX2/FMA
//	TCRT_CPU_FEATURES=-NAME,...  hide named cpuid features (-AVX512BF16); both
//	                             are read at start-up, Explain shows the mask
//
// The default build is pure Go (CGO_ENABLED=0 works) and includes the CUDA
// backend, which loads the driver at run time (package runtime/cuda/driver,
// purego). The cuda build tag swaps in gorgonia.org/cu (cgo, linked at
// build time; its init exits the process without a working driver).
package runtime
