// Integer and float division, modulo, 64-bit arithmetic: the slow paths
// nvcc calls (FCHK, the division subroutines).
extern "C" __global__ void vec_add(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

extern "C" __global__ void divmod_i32(const int *__restrict__ a, const int *__restrict__ b, int *__restrict__ q, int *__restrict__ r, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		q[i] = a[i] / b[i];
		r[i] = a[i] % b[i];
	}
}

extern "C" __global__ void divmod_u32(const unsigned *__restrict__ a, unsigned d, unsigned *__restrict__ q, unsigned *__restrict__ r, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		q[i] = a[i] / d;
		r[i] = a[i] % d;
	}
}

extern "C" __global__ void divmod_i64(const long long *__restrict__ a, const long long *__restrict__ b, long long *__restrict__ q, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		q[i] = a[i] / b[i] + a[i] % (b[i] | 1);
}

extern "C" __global__ void fdiv_vec(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] / b[i] + sqrtf(fabsf(a[i]));
}

extern "C" __global__ void fdiv_scalar(const float *__restrict__ a, float d, float *__restrict__ c, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] / d - d / (a[i] + 1.f);
}

// Index arithmetic of a 2-D strided copy: the row and column of a flat index.
extern "C" __global__ void index2d(const float *__restrict__ a, float *__restrict__ c, int rows, int cols, int ld) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < rows * cols) {
		int r = i / cols, k = i % cols;
		c[i] = a[(size_t)r * ld + k];
	}
}

extern "C" __global__ void atomics(const int *__restrict__ x, int *__restrict__ acc, float *__restrict__ facc, unsigned *__restrict__ bits, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		int v = x[i];
		atomicAdd(&acc[0], v);
		atomicMax(&acc[1], v);
		atomicMin(&acc[2], v);
		atomicAdd(&facc[0], (float)v * 0.5f);
		atomicOr(&bits[0], 1u << (v & 31));
		atomicXor(&bits[1], (unsigned)v);
		atomicAnd(&bits[2], ~(1u << (i & 31)));
		int old = atomicCAS(&acc[3], 0, v);
		acc[4 + (i & 3)] = old;
		atomicInc(&bits[3], 1000u);
		atomicExch(&acc[8], v);
	}
}
