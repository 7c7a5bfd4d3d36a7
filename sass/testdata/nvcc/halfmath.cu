// cuda_fp16 and cuda_bf16 intrinsics and math functions on half, half2,
// bfloat16 and bfloat162 (__hfma2, h2exp, hrsqrt, comparisons with
// constants, conversions).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void halfops(const __half2 *x, const __half2 *y, __half2 *o, const __half *hx, __half *ho, float *of, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	__half2 a = x[i], b = y[i];
	o[i*8+0] = __hfma2(a, b, a) + __hmax2(a, b) + __hmin2(a, b);
	o[i*8+1] = __hadd2_sat(a, b) + __hmul2_rn(a, b) + __h2div(a, b) + __habs2(a) + __hneg2(b);
	o[i*8+2] = h2exp(a) + h2log(b) + h2sqrt(a) + h2rsqrt(b) + h2rcp(a) + h2sin(a) + h2cos(b) + h2exp2(a) + h2log2(b) + h2exp10(a) + h2log10(b);
	o[i*8+3] = __hfma2_relu(a, b, a) + __hmax2_nan(a, b) + h2floor(a) + h2ceil(b) + h2trunc(a) + h2rint(b);
	o[i*8+4] = __hge2(a, b) + __hltu2(a, b) + __hisnan2(a) + __lows2half2(a, b) + __highs2half2(a, b) + __lowhigh2highlow(a);
	__half h = hx[i], g = hx[i + 1];
	ho[i*4+0] = __hadd_rn(h, g) + __hfma(h, g, h) + hexp(h) + hrsqrt(g) + __hdiv(h, g) + hsqrt(h) + hrcp(g);
	ho[i*4+1] = __float2half_rz((float)i) + __int2half_rn(i) + __uint2half_rd(i) + __short2half_ru((short)i) + __ll2half_rn(i);
	ho[i*4+2] = __hmax(h, g) + __hmin_nan(h, g) + __habs(h) + __hneg(g);
	of[i*6+0] = __half2float(h) + __low2float(a) + __high2float(b) + __half2int_rz(g) + __half2uint_rd(h) + __half2ll_rn(g);
	float2 f2 = __half22float2(a);
	of[i*6+1] = f2.x + f2.y + __hgt(h, g) + __hbeq2(a, b) + __hble2(a, b);
	of[i*6+2] = __half2short_rn(h) + __half2ushort_rz(g) + __half_as_short(h) + __half2ull_rd(g);
}
extern "C" __global__ void bf16ops(const __nv_bfloat162 *x, const __nv_bfloat162 *y, __nv_bfloat162 *o, const __nv_bfloat16 *hx, __nv_bfloat16 *ho, float *of, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	__nv_bfloat162 a = x[i], b = y[i];
	o[i*4+0] = __hfma2(a, b, a) + __hmax2(a, b) + __hmin2(a, b) + __hmul2(a, b) + __hsub2(a, b);
	o[i*4+1] = h2exp(a) + h2log(b) + h2sqrt(a) + h2rsqrt(b) + h2rcp(a) + h2sin(a) + h2cos(b) + __h2div(a, b);
	o[i*4+2] = __hfma2_relu(a, b, a) + __habs2(a) + __hneg2(b) + __hadd2_sat(a, b) + h2floor(a) + h2rint(b);
	__nv_bfloat16 h = hx[i], g = hx[i + 1];
	ho[i*3+0] = __hadd(h, g) + __hfma(h, g, h) + hexp(h) + hrsqrt(g) + __hdiv(h, g) + __hmax(h, g);
	ho[i*3+1] = __float2bfloat16_rz((float)i) + __int2bfloat16_rn(i) + __float2bfloat16((float)i * 0.3f) + __uint2bfloat16_rd(i);
	of[i*3+0] = __bfloat162float(h) + __low2float(a) + __high2float(b) + __bfloat162int_rz(g) + __bfloat162uint_rd(h);
	float2 f2 = __bfloat1622float2(a);
	of[i*3+1] = f2.x + f2.y + __hgt(h, g) + __hbeq2(a, b);
	__nv_bfloat162 c = __floats2bfloat162_rn(of[i], of[i + 1]);
	o[i*4+3] = c;
}
