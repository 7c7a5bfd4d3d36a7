// Relocations in data: a __constant__ pointer initialised with the
// address of a __device__ global (.rela.nv.constant3, R_CUDA_G64 with the
// element's offset as addend), read through the constant bank.
__device__ int g[4];
__constant__ int *cp = &g[1];

// y[i] = x[i] + g[1 + (i & 1)], through cp.
extern "C" __global__ void const_ptr(const int *__restrict__ x, int *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] + cp[i & 1];
}
