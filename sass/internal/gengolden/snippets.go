package main

const header = `.version 7.8
.target sm_86
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q, .param .u32 n, .param .f32 f, .param .u32 m)
{
.reg .u32 %r<64>; .reg .u64 %rd<32>; .reg .f32 %f<64>; .reg .pred %p<8>; .reg .b16 %h<8>;
.reg .f64 %fd<8>; .reg .b32 %b<32>; .reg .s32 %s<16>; .reg .s64 %sd<8>;
.shared .align 16 .b8 sm[16384];
ld.param.u64 %rd1,[p]; ld.param.u64 %rd2,[q]; ld.param.u32 %r1,[n]; ld.param.f32 %f1,[f]; ld.param.u32 %r9,[m];
mov.u32 %r2,%tid.x; mov.u32 %r3,%ctaid.x;
cvta.to.global.u64 %rd3,%rd1; cvta.to.global.u64 %rd10,%rd2; mul.wide.u32 %rd4,%r2,16; add.u64 %rd5,%rd3,%rd4;
mov.u32 %r4, sm; shl.b32 %r5,%r2,4; add.u32 %r6,%r4,%r5;
`

// snippets returns the PTX kernels the golden corpus is assembled from.
func snippets() []string {
	var out []string
	for _, b := range bodies {
		out = append(out, header+b+"\nret;\n}\n")
	}
	return out
}

var bodies = []string{
	// special registers, S2R, CS2R
	`mov.u32 %r10,%tid.y; mov.u32 %r11,%tid.z; mov.u32 %r12,%ctaid.y; mov.u32 %r13,%ctaid.z; mov.u32 %r14,%laneid;
mov.u32 %r15,%clock; mov.u32 %r16,%globaltimer_lo; mov.u32 %r17,%globaltimer_hi; mov.u64 %rd6,%clock64;
mov.u32 %r18,%ntid.x; mov.u32 %r19,%nctaid.x; mov.u32 %r20,%warpid; mov.u32 %r21, %smid;
add.u32 %r22,%r10,%r11; add.u32 %r22,%r22,%r12; add.u32 %r22,%r22,%r13; add.u32 %r22,%r22,%r14; add.u32 %r22,%r22,%r15;
add.u32 %r22,%r22,%r16; add.u32 %r22,%r22,%r17; add.u32 %r22,%r22,%r18; add.u32 %r22,%r22,%r19; add.u32 %r22,%r22,%r20; add.u32 %r22,%r22,%r21;
st.global.u32 [%rd5],%r22; st.global.u64 [%rd5+8],%rd6;`,
	// global loads/stores of every width
	`ld.global.v4.f32 {%f2,%f3,%f4,%f5},[%rd5]; ld.global.v2.f32 {%f6,%f7},[%rd5+32];
ld.global.u8 %r10,[%rd5+48]; ld.global.s8 %r11,[%rd5+49]; ld.global.u16 %r12,[%rd5+50]; ld.global.s16 %r13,[%rd5+52]; ld.global.u32 %r14,[%rd5+-4];
ld.global.nc.f32 %f8,[%rd5+64]; ld.global.cg.f32 %f9,[%rd5+68]; ld.global.cs.f32 %f10,[%rd5+72]; ld.global.ca.v4.u32 {%r15,%r16,%r17,%r18},[%rd5+128];
ld.global.nc.v4.f32 {%f11,%f12,%f13,%f14},[%rd5+256]; ld.global.lu.f32 %f15,[%rd5+76];
st.global.v4.f32 [%rd5+512],{%f2,%f3,%f4,%f5}; st.global.v2.f32 [%rd5+544],{%f6,%f7}; st.global.u8 [%rd5+560],%r10; st.global.u16 [%rd5+562],%r11;
st.global.u32 [%rd5+564],%r12; st.global.u32 [%rd5+568],%r13; st.global.u32 [%rd5+572],%r14; st.global.f32 [%rd5+576],%f8; st.global.cs.f32 [%rd5+580],%f9;
st.global.wt.f32 [%rd5+584],%f10; st.global.v4.u32 [%rd5+1024],{%r15,%r16,%r17,%r18}; st.global.v4.f32 [%rd5+2048],{%f11,%f12,%f13,%f14}; st.global.f32 [%rd5+588],%f15;
ld.global.u64 %rd6,[%rd5+600]; st.global.u64 [%rd5+608],%rd6;`,
	// float arithmetic with modifiers
	`ld.global.v4.f32 {%f2,%f3,%f4,%f5},[%rd5];
fma.rn.ftz.f32 %f8,%f2,%f3,%f4; fma.rm.f32 %f9,%f8,%f3,%f5; fma.rp.sat.f32 %f10,%f9,%f8,%f1; fma.rz.f32 %f11,%f10,%f9,0f3F800000;
fma.rn.ftz.sat.f32 %f12,%f11,%f10,%f9; neg.f32 %f13,%f12; fma.rn.f32 %f14,%f13,%f12,%f11; fma.rn.f32 %f15,%f14,0f40490FDB,%f13; fma.rn.f32 %f16,%f15,%f1,%f14;
add.ftz.sat.f32 %f17,%f16,%f15; sub.f32 %f18,%f17,%f16; sub.rm.f32 %f19,%f18,%f17; add.rp.ftz.f32 %f20,%f19,%f18; add.rz.f32 %f21,%f20,0f3F000000; add.f32 %f22,%f21,%f1;
mul.f32 %f23,%f22,%f21; mul.rz.f32 %f24,%f23,%f22; mul.rm.ftz.f32 %f25,%f24,%f23; mul.sat.f32 %f26,%f25,%f24; mul.f32 %f27,%f26,0fC0000000; mul.rp.f32 %f28,%f27,%f1;
abs.f32 %f29,%f28; add.f32 %f30,%f29,%f27; abs.ftz.f32 %f31,%f30; sub.f32 %f32,%f31,%f29; neg.f32 %f33,%f32; mul.f32 %f34,%f33,%f32; abs.f32 %f35,%f34; fma.rn.f32 %f36,%f35,%f34,%f33;
max.f32 %f37,%f36,%f35; min.f32 %f38,%f37,%f1; max.ftz.f32 %f39,%f38,0f42C80000; min.ftz.f32 %f40,%f39,%f38; max.f32 %f41,%f40,%f1;
st.global.v4.f32 [%rd5],{%f37,%f38,%f39,%f40}; st.global.v4.f32 [%rd5+16],{%f41,%f36,%f28,%f20};`,
	// MUFU
	`ld.global.v4.f32 {%f2,%f3,%f4,%f5},[%rd5];
ex2.approx.ftz.f32 %f6,%f2; rcp.approx.ftz.f32 %f7,%f3; rsqrt.approx.ftz.f32 %f8,%f4; lg2.approx.ftz.f32 %f9,%f5; sin.approx.ftz.f32 %f10,%f6; cos.approx.ftz.f32 %f11,%f7;
sqrt.approx.ftz.f32 %f12,%f8; tanh.approx.f32 %f13,%f9; ex2.approx.f32 %f14,%f10; rcp.approx.ftz.f64 %fd1,%fd2;
add.f32 %f15,%f6,%f7; add.f32 %f16,%f8,%f9; add.f32 %f17,%f10,%f11; add.f32 %f18,%f12,%f13; add.f32 %f19,%f14,%f15;
st.global.v4.f32 [%rd5],{%f15,%f16,%f17,%f18}; st.global.f32 [%rd5+16],%f19;`,
	// packs and half conversions
	`ld.global.v4.f32 {%f2,%f3,%f4,%f5},[%rd5];
cvt.rn.f16x2.f32 %b1,%f2,%f3; cvt.rn.bf16x2.f32 %b2,%f4,%f5; cvt.rn.relu.f16x2.f32 %b3,%f3,%f2; cvt.rn.relu.bf16x2.f32 %b4,%f5,%f4;
cvt.rn.f16.f32 %h1,%f2; cvt.f32.f16 %f6,%h1; cvt.rn.bf16.f32 %h2,%f3; 
mov.b32 {%h3,%h4},%b1; cvt.f32.f16 %f7,%h4;
fma.rn.f16x2 %b5,%b1,%b2,%b3; add.f16x2 %b6,%b5,%b4; mul.f16x2 %b7,%b6,%b5; fma.rn.bf16x2 %b8,%b7,%b6,%b5; 
st.global.v4.b32 [%rd5],{%b1,%b2,%b3,%b4}; st.global.v4.b32 [%rd5+16],{%b5,%b6,%b7,%b8}; st.global.f32 [%rd5+32],%f6; st.global.f32 [%rd5+36],%f7; st.global.b16 [%rd5+40],%h2;`,
	// integer ALU
	`ld.global.v4.u32 {%r10,%r11,%r12,%r13},[%rd5];
add.u32 %r14,%r10,%r11; sub.u32 %r15,%r14,%r12; add.u32 %r16,%r15,100; sub.u32 %r17,%r16,%r1; shr.u32 %r18,%r17,3; shr.s32 %r19,%r18,5; shl.b32 %r20,%r19,7;
shr.u32 %r21,%r20,%r13; shl.b32 %r22,%r21,%r12; shr.s32 %r23,%r22,%r11; xor.b32 %r24,%r23,%r10; and.b32 %r25,%r24,0xff00; or.b32 %r26,%r25,%r14; not.b32 %r27,%r26;
and.b32 %r28,%r27,%r1; xor.b32 %r29,%r28,0x55; lop3.b32 %r30,%r29,%r28,%r27,0xe8; lop3.b32 %r31,%r30,%r1,%r29,0x96;
mad.lo.u32 %r32,%r31,%r30,%r29; mad.lo.u32 %r33,%r32,12345,%r31; mul.lo.u32 %r34,%r33,%r1; mul.hi.u32 %r35,%r34,%r33; mul.hi.s32 %r36,%r35,%r34; mad.hi.u32 %r37,%r36,%r35,%r34;
mul.wide.s32 %rd6,%r37,%r36; mad.wide.u32 %rd7,%r37,%r35,%rd6; mul.wide.u32 %rd8,%r36,%r1; add.u64 %rd9,%rd7,%rd8; add.u64 %rd11,%rd9,%rd5; mul.lo.u64 %rd12,%rd11,%rd9;
max.s32 %r38,%r37,%r36; min.u32 %r39,%r38,%r1; max.u32 %r40,%r39,%r35; min.s32 %r41,%r40,-7; prmt.b32 %r42,%r41,%r40,0x1044; prmt.b32 %r43,%r42,%r41,0x3244;
prmt.b32 %r44,%r43,%r1,0x7654; shf.l.wrap.b32 %r45,%r44,%r43,%r42; shf.r.clamp.b32 %r46,%r45,%r44,13; shf.l.clamp.b32 %r47,%r46,%r45,%r1;
bfe.u32 %r48,%r47,4,8; brev.b32 %r49,%r48; popc.b32 %r50,%r49; clz.b32 %r51,%r50; neg.s32 %r52,%r51; abs.s32 %r53,%r52;
shr.u64 %rd13,%rd12,%r53; shl.b64 %rd14,%rd13,17; shr.s64 %rd15,%rd14,3;
st.global.v4.u32 [%rd5],{%r38,%r39,%r40,%r41}; st.global.v4.u32 [%rd5+16],{%r42,%r43,%r44,%r45}; st.global.v4.u32 [%rd5+32],{%r46,%r47,%r48,%r49};
st.global.v4.u32 [%rd5+48],{%r50,%r51,%r52,%r53}; st.global.u64 [%rd5+64],%rd12; st.global.u64 [%rd5+72],%rd15;`,
	// conversions
	`ld.global.v4.u32 {%r10,%r11,%r12,%r13},[%rd5]; ld.global.v2.f32 {%f2,%f3},[%rd5+16]; ld.global.u64 %rd6,[%rd5+24]; ld.global.f64 %fd1,[%rd5+32];
cvt.rn.f32.s32 %f4,%r10; cvt.rn.f32.u32 %f5,%r11; cvt.rzi.s32.f32 %r14,%f2; cvt.rni.u32.f32 %r15,%f3; cvt.rmi.s32.f32 %r16,%f2; cvt.rpi.s32.f32 %r17,%f3;
cvt.rn.f32.s64 %f6,%rd6; cvt.rn.f32.u64 %f7,%rd6; cvt.rzi.s64.f32 %rd7,%f2; cvt.f64.f32 %fd2,%f3; cvt.rn.f32.f64 %f8,%fd1; cvt.rn.f64.s32 %fd3,%r12;
cvt.rzi.s32.f64 %r18,%fd1; add.f64 %fd4,%fd2,%fd3; mul.f64 %fd5,%fd4,%fd1; fma.rn.f64 %fd6,%fd5,%fd4,%fd3; cvt.rm.f32.s32 %f9, %r13; cvt.rz.f32.u32 %f10,%r12;
cvt.rni.f32.f32 %f11,%f2; cvt.rzi.f32.f32 %f12,%f3; cvt.rmi.f32.f32 %f13,%f4; cvt.rpi.ftz.f32.f32 %f14,%f5;
cvt.u8.u32 %r19,%r13; cvt.s8.s32 %r20,%r12; cvt.u16.u32 %r21,%r11; cvt.s16.s32 %r22,%r10;
st.global.v4.f32 [%rd5],{%f4,%f5,%f6,%f7}; st.global.v4.u32 [%rd5+16],{%r14,%r15,%r16,%r17}; st.global.v2.f64 [%rd5+32],{%fd6,%fd2};
st.global.v4.f32 [%rd5+48],{%f8,%f9,%f10,%f11}; st.global.v4.f32 [%rd5+64],{%f12,%f13,%f14,%f14}; st.global.v4.u32 [%rd5+80],{%r18,%r19,%r20,%r21}; st.global.u32 [%rd5+96],%r22; st.global.u64 [%rd5+104],%rd7;`,
	// comparisons, selects
	`ld.global.v4.u32 {%r10,%r11,%r12,%r13},[%rd5]; ld.global.v4.f32 {%f2,%f3,%f4,%f5},[%rd5+16]; ld.global.v2.u64 {%rd6,%rd7},[%rd5+32];
setp.lt.s32 %p1,%r10,%r11; setp.le.s32 %p2,%r11,%r12; setp.gt.s32 %p3,%r12,%r13; setp.ge.s32 %p4,%r13,%r1; setp.eq.s32 %p5,%r10,7; setp.ne.s32 %p6,%r11,%r9;
selp.b32 %r14,%r10,%r11,%p1; selp.b32 %r15,%r12,%r13,%p2; selp.b32 %r16,%r14,%r15,%p3; selp.b32 %r17,%r15,%r16,%p4; selp.b32 %r18,%r16,%r17,%p5; selp.b32 %r19,%r17,%r18,%p6;
setp.lt.u32 %p1,%r14,%r15; setp.le.u32 %p2,%r15,100; setp.gt.u32 %p3,%r16,%r17; setp.ge.u32 %p4,%r17,%r1; setp.lt.and.s32 %p5,%r18,%r19,%p1; setp.gt.or.u32 %p6,%r19,%r10,%p2; setp.ne.xor.s32 %p7,%r11,%r12,%p3;
selp.b32 %r20,%r10,%r11,%p1; selp.b32 %r21,%r12,%r13,%p2; selp.b32 %r22,%r14,%r15,%p3; selp.b32 %r23,%r15,%r16,%p4; selp.b32 %r24,%r16,%r17,%p5; selp.b32 %r25,%r17,%r18,%p6; selp.b32 %r26,%r19,5,%p7;
setp.lt.u64 %p1,%rd6,%rd7; setp.gt.s64 %p2,%rd6,%rd7; setp.eq.u64 %p3,%rd6,%rd5; selp.b32 %r27,%r20,%r21,%p1; selp.b32 %r28,%r22,%r23,%p2; selp.b32 %r29,%r24,%r25,%p3;
setp.lt.f32 %p1,%f2,%f3; setp.gtu.f32 %p2,%f3,%f4; setp.equ.f32 %p3,%f4,0f3F800000; setp.nan.f32 %p4,%f5,%f2; setp.num.f32 %p5,%f2,%f3; setp.neu.f32 %p6,%f3,%f1; setp.ge.ftz.f32 %p7,%f4,%f5;
selp.f32 %f6,%f2,%f3,%p1; selp.f32 %f7,%f3,%f4,%p2; selp.f32 %f8,%f4,%f5,%p3; selp.f32 %f9,%f5,%f2,%p4; selp.f32 %f10,%f6,%f7,%p5; selp.f32 %f11,%f8,%f9,%p6; selp.f32 %f12,%f10,2.0,%p7;
setp.le.f32 %p1,%f12,%f11; setp.leu.f32 %p2,%f11,%f10; setp.ltu.f32 %p3,%f10,%f9; setp.eq.and.f32 %p4,%f9,%f8,%p1; setp.gt.or.f32 %p5, %f8, %f7, %p2;
selp.f32 %f13,%f6,%f7,%p1; selp.f32 %f14,%f7,%f8,%p2; selp.f32 %f15,%f8,%f9,%p3; selp.f32 %f16,%f9,%f10,%p4; selp.f32 %f17,%f10,%f11,%p5;
st.global.v4.u32 [%rd5],{%r26,%r27,%r28,%r29}; st.global.v4.f32 [%rd5+16],{%f12,%f13,%f14,%f15}; st.global.v2.f32 [%rd5+32],{%f16,%f17};`,
	// async copies, barriers, ldmatrix, mma, shared memory
	`cp.async.cg.shared.global [%r6], [%rd5], 16; cp.async.cg.shared.global [%r6+256], [%rd5+512], 16;
cp.async.ca.shared.global [%r6+1024], [%rd5+16], 16; cp.async.ca.shared.global [%r6+2048], [%rd5+32], 8; cp.async.ca.shared.global [%r6+3072], [%rd5+48], 4;
cp.async.cg.shared.global.L2::128B [%r6+4096], [%rd5+1024], 16;
cp.async.commit_group; cp.async.wait_group 1; cp.async.commit_group; cp.async.wait_group 3; cp.async.wait_all;
bar.sync 0;
ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%b1,%b2,%b3,%b4}, [%r6]; ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%b5,%b6}, [%r6+512];
ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%b7}, [%r6+1024]; ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%b8,%b9,%b10,%b11}, [%r6+64];
ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%b12,%b13}, [%r6+128]; ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%b14}, [%r6+192];
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f2,%f3,%f4,%f5},{%b1,%b2,%b3,%b4},{%b5,%b6},{%f1,%f1,%f1,%f1};
mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f6,%f7,%f8,%f9},{%b8,%b9,%b10,%b11},{%b7,%b12},{%f2,%f3,%f4,%f5};
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f10,%f11,%f12,%f13},{%b1,%b2,%b3,%b4},{%b13,%b14},{%f6,%f7,%f8,%f9};
mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f14,%f15,%f16,%f17},{%b1,%b2},{%b14},{%f10,%f11,%f12,%f13};
ld.shared.v4.f32 {%f20,%f21,%f22,%f23},[%r6+16]; ld.shared.v2.f32 {%f24,%f25},[%r6+32]; ld.shared.f32 %f26,[%r6+48]; ld.shared.u8 %r10,[%r6+52]; ld.shared.s16 %r11,[%r6+54];
add.f32 %f27,%f20,%f21; add.f32 %f28,%f22,%f23; add.f32 %f29,%f24,%f25;
st.shared.v4.f32 [%r6+4096], {%f14,%f15,%f16,%f17}; st.shared.v2.f32 [%r6+4112], {%f27,%f28}; st.shared.f32 [%r6+4128], %f29; st.shared.u8 [%r6+4132], %r10; st.shared.u16 [%r6+4134], %r11;
bar.sync 1, 128; bar.arrive 2, 64; bar.sync %r1, 256; bar.sync 3, %r1; bar.red.popc.u32 %r12, 0, %p1; barrier.sync 5;
ld.shared.f32 %f30,[%r2]; shl.b32 %r13,%r2,2; ld.shared.f32 %f31,[%r13+8]; ld.shared.f32 %f32,[sm+64]; st.shared.f32 [%r13+12],%f30; add.f32 %f33,%f31,%f32;
st.global.v4.f32 [%rd5],{%f26,%f33,%f14,%f15}; st.global.u32 [%rd5+16],%r12;`,
	// shuffles, reductions, atomics
	`ld.global.v4.u32 {%r10,%r11,%r12,%r13},[%rd5]; ld.global.f32 %f2,[%rd5+16]; ld.global.b32 %b1,[%rd5+20]; ld.global.u64 %rd6,[%rd5+24];
shfl.sync.idx.b32 %r14, %r10, %r11, 31, -1; shfl.sync.up.b32 %r15, %r14, 2, 0, -1; shfl.sync.down.b32 %r16, %r15, %r12, %r13, -1;
shfl.sync.bfly.b32 %r17, %r16, 16, 31, -1; shfl.sync.idx.b32 %r18, %r17, 5, %r13, -1; shfl.sync.down.b32 %r19, %r18, 4, 0x1f, %r9; shfl.sync.bfly.b32 %r20, %r19, %r1, 0x1c1f, -1;
shfl.sync.up.b32 %r21|%p1, %r20, 1, 0, -1; selp.b32 %r22, %r21, 0, %p1;
red.global.add.f32 [%rd5+8], %f2; red.global.add.noftz.f16x2 [%rd5+12], %b1; red.global.add.s32 [%rd5+20],%r22; red.global.add.u32 [%rd5+24],%r21; red.global.add.u64 [%rd5+32],%rd6;
red.global.min.s32 [%rd5+40],%r20; red.global.max.u32 [%rd5+44],%r19; red.global.or.b32 [%rd5+48],%r18; red.global.and.b32 [%rd5+52],%r17; red.global.xor.b32 [%rd5+56],%r16; red.global.inc.u32 [%rd5+60],%r15;
atom.global.cas.b32 %r23, [%rd5+28], %r22, %r21; atom.global.cas.b64 %rd7, [%rd5+32], %rd6, %rd4; atom.global.add.u32 %r24, [%rd5+40], %r23; atom.global.add.u64 %rd8, [%rd5+48], %rd7;
atom.global.add.f32 %f3, [%rd5+56], %f2; atom.global.exch.b32 %r25, [%rd5+64], %r24; atom.global.max.s32 %r26, [%rd5+68], %r25; atom.global.min.u32 %r27,[%rd5+72],%r26;
atom.shared.add.u32 %r28, [%r6], %r27; atom.shared.cas.b32 %r29, [%r6+4], %r28, %r27; red.shared.add.u32 [%r6+8], %r29; atom.global.add.f64 %fd1, [%rd5+80], %fd2;
add.u32 %r30,%r23,%r24; cvt.u32.u64 %r31, %rd8; add.u32 %r32,%r30,%r31; add.u32 %r33,%r32,%r25; add.u32 %r34,%r33,%r26; add.u32 %r35,%r34,%r27; add.u32 %r36,%r35,%r28; add.u32 %r37,%r36,%r29;
cvt.rn.f32.u32 %f4, %r37; add.f32 %f5,%f4,%f3; st.global.f32 [%rd5], %f5; st.global.u32 [%rd5+4],%r14; st.global.f64 [%rd5+88],%fd1;`,
	// branches and loops
	`mov.u32 %r10, 0; mov.f32 %f2, 0f00000000;
LOOP: ld.global.f32 %f3, [%rd5]; add.f32 %f2, %f2, %f3; add.u64 %rd5, %rd5, 4; add.u32 %r10, %r10, 1; setp.lt.u32 %p1, %r10, %r1; @%p1 bra LOOP;
setp.gt.f32 %p2, %f2, 0f00000000; @!%p2 bra SKIP; st.global.f32 [%rd3], %f2; 
SKIP: setp.eq.s32 %p3, %r2, 0; @%p3 bra.uni DONE; st.global.f32 [%rd3+4], %f2;
DONE: membar.gl; fence.acq_rel.gpu; fence.sc.cta; activemask.b32 %r11; vote.sync.ballot.b32 %r12, %p1, -1; vote.sync.any.pred %p4, %p2, -1; selp.b32 %r13,1,0,%p4; 
add.u32 %r14,%r11,%r12; add.u32 %r14,%r14,%r13; st.global.u32 [%rd3+8],%r14; nanosleep.u32 100; trap;`,
	// 64-bit address math, lea, imad.x, iadd3 carries
	`ld.global.v4.u32 {%r10,%r11,%r12,%r13},[%rd5];
mul.wide.s32 %rd6, %r10, 4; add.s64 %rd7, %rd10, %rd6; ld.global.f32 %f2, [%rd7]; mul.wide.u32 %rd8, %r11, 8; add.s64 %rd9, %rd10, %rd8; ld.global.f32 %f3, [%rd9+4];
cvt.u64.u32 %rd11, %r12; shl.b64 %rd12, %rd11, 2; add.s64 %rd13, %rd10, %rd12; ld.global.f32 %f4, [%rd13+12];
cvt.s64.s32 %rd14, %r13; shl.b64 %rd15, %rd14, 3; add.s64 %rd16, %rd10, %rd15; ld.global.f32 %f5, [%rd16+16]; add.s64 %rd17, %rd16, %rd7; sub.s64 %rd18, %rd17, %rd9;
mad.wide.s32 %rd19, %r10, %r11, %rd18; mul.lo.s64 %rd20, %rd19, 40; add.s64 %rd21, %rd20, 12345678901; setp.lt.u64 %p1, %rd21, %rd19;
shl.b32 %r14, %r10, 3; add.u32 %r15, %r14, %r11; shl.b32 %r16, %r12, 5; add.u32 %r17, %r16, %r1; 
add.f32 %f6,%f2,%f3; add.f32 %f7,%f4,%f5; selp.f32 %f8,%f6,%f7,%p1; st.global.f32 [%rd5], %f8; st.global.u64 [%rd5+8], %rd21; st.global.v2.u32 [%rd5+16], {%r15,%r17};`,
}
