// A noinline device function (CALL.REL/RET), __constant__ data, and a
// function pointer table: what needs relocations.
__constant__ float coef[8];
__constant__ int lut[16];
__device__ int counter;

__device__ __noinline__ float poly(float x, int k) {
	float r = 0.f;
	for (int j = 7; j >= 0; j--)
		r = r * x + coef[j];
	return r + (float)lut[k & 15];
}

extern "C" __global__ void call_poly(const float *__restrict__ x, float *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = poly(x[i], i);
}

extern "C" __global__ void const_lut(const int *__restrict__ x, int *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = lut[x[i] & 15] + lut[i & 15];
	if (i == 0)
		atomicAdd(&counter, n);
}

__device__ __noinline__ int add3(int a, int b) { return a + 3 * b; }
__device__ __noinline__ int mul3(int a, int b) { return a * b - 3; }
typedef int (*binop)(int, int);

extern "C" __global__ void fnptr(const int *__restrict__ x, int *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	binop f = (i & 1) ? mul3 : add3;
	if (i < n)
		y[i] = f(x[i], i);
}
