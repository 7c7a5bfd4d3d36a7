// The CUDA math library in binary32 and binary64 (sinf ... tgammaf, the
// intrinsics, IEEE and fast division) and integer division and modulo by
// constants, kernel parameters and registers, 32- and 64-bit: what nvcc
// inlines for them (DFMA with constants from bank 2, HI/WIDE multiplies
// with carries, I2F.U64.RP from a uniform register).
extern "C" __global__ void mathf(const float *x, const float *y, float *o, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float a = x[i], b = y[i];
	float s, c; sincosf(a, &s, &c);
	int e; float fr = frexpf(a, &e);
	o[i*20+0] = sinf(a) + cosf(b);
	o[i*20+1] = tanf(a) + s*c;
	o[i*20+2] = expf(a) + exp2f(b) + expm1f(a);
	o[i*20+3] = logf(a) + log1pf(b) + log2f(a) + log10f(b);
	o[i*20+4] = powf(a, b);
	o[i*20+5] = erff(a) + erfcf(b) + tanhf(a);
	o[i*20+6] = sqrtf(a) + rsqrtf(b) + cbrtf(a);
	o[i*20+7] = fmodf(a, b) + remainderf(a, b);
	o[i*20+8] = fr + ldexpf(b, e);
	o[i*20+9] = __fdividef(a, b) + a / b;
	o[i*20+10] = atan2f(a, b) + asinf(a) + acosf(b) + atanf(a);
	o[i*20+11] = sinhf(a) + coshf(b) + hypotf(a, b);
	o[i*20+12] = lgammaf(a) + tgammaf(b);
	o[i*20+13] = floorf(a) + ceilf(b) + roundf(a) + truncf(b) + rintf(a);
	o[i*20+14] = fminf(a, b) + fmaxf(a, b) + fabsf(a) + copysignf(a, b);
	o[i*20+15] = __sinf(a) + __cosf(b) + __expf(a) + __logf(b) + __powf(a, b);
	o[i*20+16] = (float)(int)a + (float)(unsigned)b + (float)(long long)a;
	o[i*20+17] = normf(2, x + i) + rhypotf(a, b) + erfinvf(a);
	o[i*20+18] = __saturatef(a) + __frcp_rn(a) + __fsqrt_rn(b) + __fmaf_rz(a, b, a);
	o[i*20+19] = isnan(a) + isinf(b) + signbit(a);
}
extern "C" __global__ void mathd(const double *x, const double *y, double *o, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	double a = x[i], b = y[i];
	double s, c; sincos(a, &s, &c);
	int e; double fr = frexp(a, &e);
	o[i*16+0] = sin(a) + cos(b);
	o[i*16+1] = tan(a) + s*c;
	o[i*16+2] = exp(a) + exp2(b) + expm1(a);
	o[i*16+3] = log(a) + log1p(b) + log2(a) + log10(b);
	o[i*16+4] = pow(a, b);
	o[i*16+5] = erf(a) + erfc(b) + tanh(a);
	o[i*16+6] = sqrt(a) + rsqrt(b) + cbrt(a);
	o[i*16+7] = a * b;
	o[i*16+8] = fr + ldexp(b, e);
	o[i*16+9] = a / b + 1.0 / b;
	o[i*16+10] = atan2(a, b) + asin(a) + acos(b);
	o[i*16+11] = floor(a) + ceil(b) + round(a) + trunc(b) + rint(a);
	o[i*16+12] = fmin(a, b) + fmax(a, b) + fabs(a) + copysign(a, b);
	o[i*16+13] = (double)(long long)a + (double)(unsigned long long)b + (float)a;
	o[i*16+14] = __dadd_rn(a, b) + __dmul_rz(a, b) + __fma_rd(a, b, a) + __drcp_rn(a) + __dsqrt_rn(b);
	o[i*16+15] = lgamma(a) + sinh(b) + hypot(a, b);
}
extern "C" __global__ void intdiv(const int *x, const int *y, const unsigned long long *u, int *o, unsigned long long *o64, int d, unsigned ud, long long d64, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	int a = x[i], b = y[i];
	unsigned long long v = u[i];
	o[i*8+0] = a / 7 + a % 7 + a / -3;
	o[i*8+1] = (unsigned)a / 10u + (unsigned)a % 1000u;
	o[i*8+2] = a / d + a % d;
	o[i*8+3] = (unsigned)a / ud + (unsigned)b % ud;
	o[i*8+4] = a / b;
	o[i*8+5] = __mulhi(a, b) + __umulhi(a, b) + __mul24(a, b);
	o64[i*4+0] = v / 1000000007ull + v % 10ull;
	o64[i*4+1] = v / (unsigned long long)d64 + (long long)v % d64;
	o64[i*4+2] = (long long)v / -7ll + __umul64hi(v, v) + __mul64hi((long long)v, d64);
	o64[i*4+3] = v / ud + (v >> (a & 63)) + (v << (b & 63));
}
