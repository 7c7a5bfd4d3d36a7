// Row softmax and layernorm: one warp per row, shuffles and expf/rsqrtf.
#include <cuda_fp16.h>

__device__ __forceinline__ float wmax(float v) {
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}
__device__ __forceinline__ float wsum(float v) {
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

extern "C" __global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y, int rows, int cols) {
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x & 31;
	if (row >= rows)
		return;
	const float *xr = x + (size_t)row * cols;
	float m = -INFINITY;
	for (int c = lane; c < cols; c += 32)
		m = fmaxf(m, xr[c]);
	m = wmax(m);
	float s = 0.f;
	for (int c = lane; c < cols; c += 32)
		s += __expf(xr[c] - m);
	s = wsum(s);
	float inv = 1.f / s;
	for (int c = lane; c < cols; c += 32)
		y[(size_t)row * cols + c] = __expf(xr[c] - m) * inv;
}

extern "C" __global__ void layernorm_rows(const float *__restrict__ x, const float *__restrict__ g,
	const float *__restrict__ b, float *__restrict__ y, int rows, int cols, float eps) {
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x & 31;
	if (row >= rows)
		return;
	const float *xr = x + (size_t)row * cols;
	float s = 0.f;
	for (int c = lane; c < cols; c += 32)
		s += xr[c];
	float mean = wsum(s) / cols;
	float q = 0.f;
	for (int c = lane; c < cols; c += 32) {
		float d = xr[c] - mean;
		q += d * d;
	}
	float rstd = rsqrtf(wsum(q) / cols + eps);
	for (int c = lane; c < cols; c += 32)
		y[(size_t)row * cols + c] = (xr[c] - mean) * rstd * g[c] + b[c];
}

// Half-precision GELU (tanh form) on half2 pairs.
extern "C" __global__ void gelu_half2(const __half2 *__restrict__ x, __half2 *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float2 v = __half22float2(x[i]);
		float a = 0.5f * v.x * (1.f + tanhf(0.7978845608f * (v.x + 0.044715f * v.x * v.x * v.x)));
		float c = 0.5f * v.y * (1.f + tanhf(0.7978845608f * (v.y + 0.044715f * v.y * v.y * v.y)));
		y[i] = __floats2half2_rn(a, c);
	}
}
