// Warp-shuffle and cooperative-groups reductions, the way CUDA C++ code
// usually writes them.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ float warp_sum(float v) {
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// Sum of x[0..n) into out[blockIdx.x], one partial per block.
extern "C" __global__ void block_sum(const float *__restrict__ x, float *__restrict__ out, int n) {
	__shared__ float part[32];
	float v = 0.f;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		v += x[i];
	v = warp_sum(v);
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	if (lane == 0)
		part[warp] = v;
	__syncthreads();
	if (warp == 0) {
		v = lane < (blockDim.x + 31) / 32 ? part[lane] : 0.f;
		v = warp_sum(v);
		if (lane == 0)
			out[blockIdx.x] = v;
	}
}

// Row maxima with a partial mask: only the first n lanes of each warp take part.
extern "C" __global__ void masked_max(const int *__restrict__ x, int *__restrict__ out, int n) {
	int lane = threadIdx.x & 31;
	if (lane < n) {
		unsigned m = __ballot_sync(0xffffffffu, 1) & ((n >= 32) ? 0xffffffffu : ((1u << n) - 1));
		int v = x[blockIdx.x * 32 + lane];
		for (int o = 16; o > 0; o >>= 1) {
			int w = __shfl_down_sync(m, v, o);
			if (lane + o < n)
				v = max(v, w);
		}
		if (lane == 0)
			out[blockIdx.x] = v;
	}
}

// Cooperative groups: tiled_partition<16> and cg::reduce.
extern "C" __global__ void cg_tile_sum(const int *__restrict__ x, int *__restrict__ out, int n) {
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int v = i < n ? x[i] : 0;
	for (int o = tile.size() / 2; o > 0; o /= 2)
		v += tile.shfl_down(v, o);
	if (tile.thread_rank() == 0)
		out[i / 16] = v;
}

extern "C" __global__ void cg_reduce(const unsigned *__restrict__ x, unsigned *__restrict__ out, int n) {
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned v = i < n ? x[i] : 0;
	unsigned s = cg::reduce(warp, v, cg::plus<unsigned>());
	unsigned m = cg::reduce(warp, v, cg::greater<unsigned>());
	if (warp.thread_rank() == 0) {
		out[2 * (i / 32)] = s;
		out[2 * (i / 32) + 1] = m;
	}
}

// Coalesced groups inside divergent code.
extern "C" __global__ void coalesced_count(const int *__restrict__ x, int *__restrict__ out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && x[i] > 0) {
		cg::coalesced_group g = cg::coalesced_threads();
		int s = g.shfl(x[i], 0);
		if (g.thread_rank() == 0)
			atomicAdd(out, (int)g.size() * s);
	}
}
