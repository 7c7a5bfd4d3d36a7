// Atomics of every type and space: f32/f64 atomicAdd, a 64-bit CAS loop,
// shared-memory atomics, atomicInc/Dec, block and system scopes.
__device__ double atomicAddD(double *a, double v) {
	unsigned long long *p = (unsigned long long *)a, old = *p, assumed;
	do { assumed = old; old = atomicCAS(p, assumed, __double_as_longlong(v + __longlong_as_double(assumed))); } while (assumed != old);
	return __longlong_as_double(old);
}
extern "C" __global__ void atoms(float *f, double *d, int *ii, unsigned *u, unsigned long long *ull, long long *ll, int n) {
	__shared__ float sf[64];
	__shared__ int si[64];
	__shared__ unsigned long long sl[64];
	__shared__ double sd[64];
	int t = threadIdx.x;
	if (t < 64) { sf[t] = 0; si[t] = 0; sl[t] = 0; sd[t] = 0; }
	__syncthreads();
	int i = blockIdx.x * blockDim.x + t;
	if (i < n) {
		atomicAdd(f, 1.5f); atomicAdd(d, 2.5); atomicAdd(ii, i); atomicAdd(u, 3u); atomicAdd(ull, 5ull);
		atomicSub(ii + 1, i); atomicExch(ii + 2, i); atomicExch(f + 1, 1.0f); atomicExch(ull + 1, (unsigned long long)i);
		atomicMin(ii + 3, i); atomicMax(u + 1, (unsigned)i); atomicMin(ll, (long long)-i); atomicMax(ull + 2, (unsigned long long)i);
		atomicInc(u + 2, 100u); atomicDec(u + 3, 50u);
		atomicAnd(ii + 4, ~i); atomicOr(u + 4, 1u << (i & 31)); atomicXor(ull + 3, (unsigned long long)i);
		atomicCAS(ii + 5, 0, i); atomicCAS(ull + 4, 0ull, (unsigned long long)i);
		atomicAddD(d + 1, 1.0);
		atomicAdd_block(ii + 6, 1); atomicAdd_system(ii + 7, 1); atomicMax_system(u + 5, i); atomicCAS_block(u + 6, 0u, 1u);
		atomicAdd(&sf[t & 63], 1.0f); atomicAdd(&si[t & 63], 2); atomicAdd(&sl[t & 63], 3ull); atomicAdd(&sd[t & 63], 1.0);
		atomicMax(&si[(t + 1) & 63], i); atomicCAS(&si[(t + 2) & 63], 0, i); atomicExch(&sl[(t + 3) & 63], 9ull); atomicInc((unsigned *)&si[t & 7], 9u);
		atomicAnd(&si[t & 15], 7); atomicCAS(&sl[t & 15], 1ull, 2ull); atomicMin(&si[t & 3], -i);
	}
	__syncthreads();
	if (t < 64) { f[2 + t] = sf[t]; ii[8 + t] = si[t]; ull[5 + t] = sl[t]; d[2 + t] = sd[t]; }
	int old = atomicAdd(ii + 100, 1);
	u[100] = old;
}
