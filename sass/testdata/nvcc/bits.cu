// Bit manipulation and SIMD video intrinsics (__clz, __brev, __byte_perm,
// funnel shifts, __vadd4 ... __vsads4, __dp4a) and warp vote, match and
// reduce intrinsics.
extern "C" __global__ void bits(const unsigned *x, const unsigned long long *y, unsigned *o, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned a = x[i], b = x[i + 1];
	unsigned long long v = y[i];
	o[i*16+0] = __clz(a) + __clzll(v) + __ffs(a) + __ffsll(v);
	o[i*16+1] = __popc(a) + __popcll(v) + __brev(a) + (unsigned)__brevll(v);
	o[i*16+2] = __byte_perm(a, b, 0x5140) + __byte_perm(a, b, b);
	o[i*16+3] = __funnelshift_l(a, b, a) + __funnelshift_r(a, b, 7) + __funnelshift_lc(a, b, b) + __funnelshift_rc(a, b, 3);
	o[i*16+4] = __usad(a, b, 5) + __sad((int)a, (int)b, 1) + __vabs2(a) + __vabs4(b);
	o[i*16+5] = __vadd2(a, b) + __vadd4(a, b) + __vsub2(a, b) + __vsub4(a, b);
	o[i*16+6] = __vaddss4(a, b) + __vaddus2(a, b) + __vsubss2(a, b) + __vsubus4(a, b);
	o[i*16+7] = __vavgu4(a, b) + __vhaddu2(a, b) + __vmaxs4(a, b) + __vminu2(a, b);
	o[i*16+8] = __vcmpeq4(a, b) + __vcmpgeu2(a, b) + __vcmplts4(a, b) + __vsetne2(a, b);
	o[i*16+9] = __vsads4(a, b) + __vsadu2(a, b) + __vabsdiffs4(a, b) + __vneg2(a);
	o[i*16+10] = __hadd((int)a, (int)b) + __rhadd((int)a, (int)b) + __uhadd(a, b) + __urhadd(a, b);
	o[i*16+11] = __dp4a((int)a, (int)b, (int)a) + __dp2a_lo(a, b, b) + __dp2a_hi(a, b, 3u);
	o[i*16+12] = (a >> (b & 31)) | (a << 3) ^ ((int)a >> 5);
	o[i*16+13] = min(a, b) + max((int)a, (int)b) + abs((int)a) + (unsigned)llabs((long long)v);
	o[i*16+14] = __fns(a, 0, 3) + __vmaxu2(a, b) + __vseteq4(a, b);
	o[i*16+15] = (unsigned)(v * v) + (unsigned)((v * a) >> 32);
}
extern "C" __global__ void vote(const int *x, unsigned *o, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int v = i < n ? x[i] : 0;
	unsigned am = __activemask();
	unsigned b = __ballot_sync(0xffffffff, v > 0);
	int all = __all_sync(0xffffffff, v > 0), any = __any_sync(0xffffffff, v < 0);
	unsigned m = __match_any_sync(0xffffffff, v);
	int pred; unsigned ma = __match_all_sync(0xffffffff, v, &pred);
	unsigned lm; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lm));
	if (i < n) {
		o[i*4] = am + b + all + any;
		o[i*4+1] = m + ma + pred + __popc(b & lm);
		o[i*4+2] = __shfl_up_sync(0xffffffff, v, 3) + __shfl_down_sync(0xffffffff, v, 1, 16) + __shfl_xor_sync(0xffffffff, v, 5, 8);
		o[i*4+3] = __reduce_add_sync(0xffffffff, v) + __reduce_min_sync(0xffffffff, v) + __reduce_max_sync(0xffffffff, (unsigned)v) + __reduce_and_sync(0xffffffff, (unsigned)v) + __reduce_or_sync(b, (unsigned)v) + __reduce_xor_sync(0xffffffff, (unsigned)v);
	}
}
