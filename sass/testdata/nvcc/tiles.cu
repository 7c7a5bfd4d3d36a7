// Tiled GEMMs and guarded divisions the way CUDA C++ code usually writes
// them: shared-memory tiles read into registers before a barrier, WMMA
// on bf16 with fragments loaded ahead of __syncthreads, and guarded loads
// beside divisions.
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;

// C[m,n] = A[m,k] B[k,n] (row-major, m, n, k multiples of 64), 16x16
// threads, each a 4x4 block, the next k-slice's tile prefetched into
// registers.
extern "C" __global__ void sgemm_tiled(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int m, int n, int k) {
	__shared__ float as[2][16][64 + 4], bs[2][16][64];
	int tx = threadIdx.x, ty = threadIdx.y, t = ty * 16 + tx;
	int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
	float acc[4][4] = {};
	float ra[4], rb[4];
	for (int q = 0; q < 4; q++) {
		int e = t + 256 * q;
		ra[q] = a[(row0 + e / 16) * k + e % 16];
		rb[q] = b[(e / 64) * n + col0 + e % 64];
	}
	int buf = 0;
	for (int kk = 0; kk < k; kk += 16) {
		for (int q = 0; q < 4; q++) {
			int e = t + 256 * q;
			as[buf][e % 16][e / 16] = ra[q];
			bs[buf][e / 64][e % 64] = rb[q];
		}
		__syncthreads();
		if (kk + 16 < k) {
			for (int q = 0; q < 4; q++) {
				int e = t + 256 * q;
				ra[q] = a[(row0 + e / 16) * k + kk + 16 + e % 16];
				rb[q] = b[(kk + 16 + e / 64) * n + col0 + e % 64];
			}
		}
#pragma unroll
		for (int p = 0; p < 16; p++) {
			float x[4], y[4];
			for (int i = 0; i < 4; i++) {
				x[i] = as[buf][p][ty * 4 + i];
				y[i] = bs[buf][p][tx * 4 + i];
			}
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					acc[i][j] += x[i] * y[j];
		}
		buf ^= 1;
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			c[(row0 + ty * 4 + i) * n + col0 + tx * 4 + j] = acc[i][j];
}

// C = A B in bf16 with float accumulation, one warp per 16x16 tile of C,
// the k-slices staged through shared memory by the whole block (4 warps).
extern "C" __global__ void wmma_bf16(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b, float *__restrict__ c, int m, int n, int k) {
	__shared__ __nv_bfloat16 as[64][16 + 8], bs[16][16 + 8];
	int warp = threadIdx.x / 32;
	int row0 = blockIdx.y * 64, col0 = blockIdx.x * 16;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
	wmma::fill_fragment(acc, 0.f);
	for (int kk = 0; kk < k; kk += 16) {
		for (int e = threadIdx.x; e < 64 * 16; e += blockDim.x)
			as[e / 16][e % 16] = a[(row0 + e / 16) * k + kk + e % 16];
		for (int e = threadIdx.x; e < 16 * 16; e += blockDim.x)
			bs[e / 16][e % 16] = b[(kk + e / 16) * n + col0 + e % 16];
		__syncthreads();
		wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
		wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
		wmma::load_matrix_sync(fa, &as[warp * 16][0], 16 + 8);
		wmma::load_matrix_sync(fb, &bs[0][0], 16 + 8);
		__syncthreads();
		wmma::mma_sync(acc, fa, fb, acc);
	}
	wmma::store_matrix_sync(c + (row0 + warp * 16) * n + col0, acc, n, wmma::mem_row_major);
}

// y[i] = p[i] ? x[i] : 1/d[i], then y[i] / e[i]: a guarded load beside a
// reciprocal into the same register, and two divisions in a row.
extern "C" __global__ void guarded_div(const int *__restrict__ p, const float *__restrict__ x, const float *__restrict__ d,
	const float *__restrict__ e, float *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v;
	if (p[i])
		v = x[i];
	else
		v = __frcp_rn(d[i]);
	y[i] = v / e[i] + x[i] / d[i];
}

// bf16x2 arithmetic with constants: y = x * 1 + 1 and a ReLU.
extern "C" __global__ void bf16_affine(const __nv_bfloat162 *__restrict__ x, __nv_bfloat162 *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		__nv_bfloat162 one = __floats2bfloat162_rn(1.f, 1.f);
		__nv_bfloat162 v = __hfma2(x[i], one, one);
		y[i] = __hmax2(v, __floats2bfloat162_rn(0.f, 0.f));
	}
}

// y[i] = x[idx[i]] with a signed 32-bit index sign-extended into a
// 64-bit address (LEA.HI.SX32) and a per-block offset from a uniform
// register.
extern "C" __global__ void gather_sx(const float *__restrict__ x, const int *__restrict__ idx, float *__restrict__ y, int n, int base) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[idx[i] + base] + x[(int)blockIdx.x * base - 7];
}
