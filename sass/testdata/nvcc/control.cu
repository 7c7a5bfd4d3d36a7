// Control flow nvcc builds: a switch with a jump table, recursion and a
// non-inlined device function (CALL.REL, RET, the stack), printf and
// assert (CALL.ABS to vprintf and __assertfail, relocated).
#include <cstdio>
#include <cassert>
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ float poly(float x, const float *c, int k) { float s = 0; for (int j = 0; j < k; j++) s = s * x + c[j]; return s; }
extern "C" __global__ void jump(const int *x, int *o, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	int v = x[i], r;
	switch (v & 15) {
	case 0: r = v * 3; break;
	case 1: r = v + 17; break;
	case 2: r = v ^ 0x55; break;
	case 3: r = v >> 2; break;
	case 4: r = v * v; break;
	case 5: r = -v; break;
	case 6: r = v | 0x100; break;
	case 7: r = v - 99; break;
	case 8: r = v / 3; break;
	case 9: r = v << 4; break;
	case 10: r = ~v; break;
	case 11: r = v & 0xff; break;
	default: r = 0;
	}
	o[i] = r;
}
extern "C" __global__ void recur(const int *x, int *o, const float *c, float *of, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	o[i] = fib(x[i] & 15);
	of[i] = poly((float)i, c, x[i] & 7);
}
extern "C" __global__ void prints(const int *x, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) printf("thread %d value %d %f\n", i, x[i], (double)x[i] * 0.5);
	assert(x[i] >= 0);
}
