// Warp collectives under divergence: what nvcc emits around __shfl_sync
// and __syncwarp when it cannot prove the warp converged (BRA.DIV and
// BRA.CONV on a vote, WARPSYNC with a register mask, the shuffle
// subroutines), and shared memory addressed through uniform registers.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern __shared__ float dsm[];

// A shuffle in a loop whose trip count differs across the warp.
extern "C" __global__ void div_shfl(const int *__restrict__ x, int *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	int v = x[i];
	int k = x[i + n] & 7;
	for (int j = 0; j < k; j++)
		v += __shfl_xor_sync(0xffffffffu, v, 1 << (j & 3));
	y[i] = v;
}

// Shuffles among the lanes a ballot selected.
extern "C" __global__ void var_mask_loop(const int *__restrict__ x, int *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int v = i < n ? x[i] : 0;
	unsigned m = __ballot_sync(0xffffffffu, v & 1);
	if (v & 1) {
		for (int o = 1; o < 32; o <<= 1)
			v += __shfl_xor_sync(m, v, o);
		__syncwarp(m);
	}
	if (i < n)
		y[i] = v;
}

// __syncwarp inside a branch: lanes exchange through shared memory.
extern "C" __global__ void syncwarp_div(int *__restrict__ y, int n) {
	__shared__ int s[32];
	int t = threadIdx.x & 31;
	if (t < n) {
		s[t] = t * 3 + 1;
		__syncwarp();
		y[threadIdx.x] = s[(t + 1) % n];
	}
}

// A cooperative-groups warp reduction inside a bounds check.
extern "C" __global__ void cg_div(const int *__restrict__ x, int *__restrict__ out, int n) {
	cg::thread_block_tile<32> w = cg::tiled_partition<32>(cg::this_thread_block());
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		int v = x[i];
		for (int o = 16; o; o /= 2)
			v += w.shfl_xor(v, o);
		w.sync();
		if (w.thread_rank() == 0)
			out[i / 32] = v;
	}
}

// y = W x with x staged in dynamic shared memory and read by a uniform
// index.
extern "C" __global__ void smem_gemv(const float *__restrict__ w, const float *__restrict__ x, float *__restrict__ y, int k) {
	for (int j = threadIdx.x; j < k; j += blockDim.x)
		dsm[j] = x[blockIdx.x * k + j];
	__syncthreads();
	float acc = 0.f;
#pragma unroll 4
	for (int j = 0; j < k; j++)
		acc += dsm[j] * w[(size_t)j * blockDim.x + threadIdx.x];
	y[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// A 2-D shared tile at a run-time offset of the dynamic shared memory.
extern "C" __global__ void smem_offset(const float *__restrict__ x, float *__restrict__ y, int off, int n) {
	float *t = dsm + off;
	int i = threadIdx.x;
	t[i] = x[blockIdx.x * blockDim.x + i];
	t[i + 1024] = 2.f * x[blockIdx.x * blockDim.x + i];
	__syncthreads();
	float s = 0.f;
	for (int j = 0; j < n; j++)
		s += t[(i + j) % blockDim.x] + t[1024 + j];
	y[blockIdx.x * blockDim.x + i] = s;
}
