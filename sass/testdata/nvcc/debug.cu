// nvcc-flags: -G
// A debug build (-G): non-inlined device functions return with RET.ABS,
// atomics are fenced with MEMBAR.SC.VC, constant multiplies stay IMAD.SHL.
__device__ int scale(int v, int k) { return v * 16 + k; }

extern "C" __global__ void debug_atomics(const int *x, int *acc, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		atomicAdd(acc, scale(x[i], i));
}
