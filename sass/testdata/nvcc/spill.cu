// Register pressure under __launch_bounds__ and -maxrregcount: local-memory
// spills.
// nvcc-flags: -maxrregcount=32
extern "C" __global__ void __launch_bounds__(1024, 2) spill_poly(const float *__restrict__ x, float *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float a[48];
#pragma unroll
	for (int k = 0; k < 48; k++)
		a[k] = x[(i + k * 37) % n] * (k + 1);
	float s = 0.f;
#pragma unroll
	for (int r = 0; r < 4; r++) {
#pragma unroll
		for (int k = 0; k < 48; k++)
			s = s * 0.5f + a[k] * a[(k + r + 1) % 48];
	}
	y[i] = s;
}

// A local array indexed at run time: always local memory.
extern "C" __global__ void local_array(const int *__restrict__ x, int *__restrict__ y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	int h[64];
	for (int k = 0; k < 64; k++)
		h[k] = k * i;
	for (int k = 0; k < 16; k++)
		h[(x[(i + k) % n]) & 63] += k;
	long long s = 0;
	for (int k = 0; k < 64; k++)
		s += (long long)h[k] * (k + 1);
	y[i] = (int)(s ^ (s >> 32));
}
