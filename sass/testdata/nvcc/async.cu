// Async copies (cp.async through the pipeline primitives and inline PTX)
// into dynamic shared memory, shared addressing, and tensor cores through
// WMMA and mma.sync inline PTX.
#include <cuda_pipeline.h>
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern __shared__ float dsm[];

// Tiled 1-D stencil: the tile is staged with __pipeline_memcpy_async.
extern "C" __global__ void stencil_async(const float *__restrict__ x, float *__restrict__ y, int n) {
	int base = blockIdx.x * blockDim.x;
	int t = threadIdx.x;
	if (base + t < n)
		__pipeline_memcpy_async(&dsm[t + 1], &x[base + t], sizeof(float));
	if (t == 0)
		dsm[0] = base > 0 ? x[base - 1] : 0.f;
	if (t == blockDim.x - 1)
		dsm[blockDim.x + 1] = base + t + 1 < n ? x[base + t + 1] : 0.f;
	__pipeline_commit();
	__pipeline_wait_prior(0);
	__syncthreads();
	if (base + t < n)
		y[base + t] = 0.25f * dsm[t] + 0.5f * dsm[t + 1] + 0.25f * dsm[t + 2];
}

// 16-byte cp.async with inline PTX, double-buffered over chunks.
extern "C" __global__ void copy_async16(const float4 *__restrict__ x, float4 *__restrict__ y, int chunks) {
	float4 *buf = reinterpret_cast<float4 *>(dsm);
	int t = threadIdx.x;
	for (int c = 0; c < chunks; c++) {
		const float4 *src = x + ((size_t)c * gridDim.x + blockIdx.x) * blockDim.x + t;
		unsigned dst = (unsigned)__cvta_generic_to_shared(&buf[(c & 1) * blockDim.x + t]);
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
		asm volatile("cp.async.commit_group;\n" ::);
		asm volatile("cp.async.wait_group 0;\n" ::);
		__syncthreads();
		float4 v = buf[(c & 1) * blockDim.x + (blockDim.x - 1 - t)];
		y[((size_t)c * gridDim.x + blockIdx.x) * blockDim.x + t] = v;
		__syncthreads();
	}
}

// Shared-memory transpose of a 32x32 tile (padded), dynamic shared.
extern "C" __global__ void transpose32(const float *__restrict__ x, float *__restrict__ y, int rows, int cols) {
	float(*tile)[33] = reinterpret_cast<float(*)[33]>(dsm);
	int c = blockIdx.x * 32 + threadIdx.x, r0 = blockIdx.y * 32;
	for (int j = threadIdx.y; j < 32; j += blockDim.y)
		if (r0 + j < rows && c < cols)
			tile[j][threadIdx.x] = x[(size_t)(r0 + j) * cols + c];
	__syncthreads();
	int oc = r0 + threadIdx.x, or0 = blockIdx.x * 32;
	for (int j = threadIdx.y; j < 32; j += blockDim.y)
		if (or0 + j < cols && oc < rows)
			y[(size_t)(or0 + j) * rows + oc] = tile[threadIdx.x][j];
}

// One warp computes a 16x16 tile of C = A*B (f16 in, f32 out) with WMMA.
extern "C" __global__ void wmma_gemm(const half *__restrict__ a, const half *__restrict__ b, float *__restrict__ c, int m, int n, int k) {
	int tm = blockIdx.y * 16, tn = blockIdx.x * 16;
	wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
	wmma::fill_fragment(fc, 0.f);
	for (int kk = 0; kk < k; kk += 16) {
		wmma::load_matrix_sync(fa, a + (size_t)tm * k + kk, k);
		wmma::load_matrix_sync(fb, b + (size_t)tn * k + kk, k);
		wmma::mma_sync(fc, fa, fb, fc);
	}
	wmma::store_matrix_sync(c + (size_t)tm * n + tn, fc, n, wmma::mem_row_major);
}

// mma.sync.m16n8k16 with ldmatrix from shared memory, inline PTX.
extern "C" __global__ void mma_tile(const half *__restrict__ a, const half *__restrict__ b, float *__restrict__ c) {
	__shared__ __align__(16) half sa[16 * 16];
	__shared__ __align__(16) half sb[8 * 16];
	int lane = threadIdx.x;
	for (int i = lane; i < 256; i += 32)
		sa[i] = a[i];
	for (int i = lane; i < 128; i += 32)
		sb[i] = b[i];
	__syncwarp();
	unsigned ra[4], rb[2];
	unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]);
	unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[(lane % 8) * 16 + ((lane / 8) % 2) * 8]);
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		: "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(pa));
	asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(rb[0]), "=r"(rb[1]) : "r"(pb));
	float d[4] = {0.f, 0.f, 0.f, 0.f};
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		: "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
	int g = lane / 4, t4 = lane % 4;
	c[g * 8 + 2 * t4] = d[0];
	c[g * 8 + 2 * t4 + 1] = d[1];
	c[(g + 8) * 8 + 2 * t4] = d[2];
	c[(g + 8) * 8 + 2 * t4 + 1] = d[3];
}

// Block histogram in dynamic shared memory with shared atomics.
extern "C" __global__ void histogram(const unsigned char *__restrict__ x, unsigned *__restrict__ h, int n, int bins) {
	unsigned *sh = reinterpret_cast<unsigned *>(dsm);
	for (int b = threadIdx.x; b < bins; b += blockDim.x)
		sh[b] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		atomicAdd(&sh[x[i] % bins], 1u);
	__syncthreads();
	for (int b = threadIdx.x; b < bins; b += blockDim.x)
		atomicAdd(&h[b], sh[b]);
}
