// fakecuda.c: a stand-in for libcuda.so.1 with the entry points tcrt's
// purego driver resolves, for testing that binding on machines without a
// GPU (runtime/cuda/fake_test.go compiles it with the system C compiler).
// Device memory is host memory; streams run everything at once; the
// context is current per thread, as with the real driver, and every call
// that needs one fails with CUDA_ERROR_INVALID_CONTEXT on a thread where
// it is not current. Modules are images starting with "FAKE"; the one
// kernel, "probe", records its launch arguments (see fake_test.go).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define CTX ((void*)0x5eed)
static __thread void* current;
static int retained;
static int calls_without_ctx;

static int need(void) {
	if (current != CTX || !retained) { calls_without_ctx++; return 201; }
	return 0;
}

static const char* names[][3] = {
	{"0", "CUDA_SUCCESS", "no error"},
	{"1", "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{"200", "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{"100", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{"201", "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{"400", "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	{"500", "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
};

static int lookup(int code, int which, const char** s) {
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (atoi(names[i][0]) == code) { *s = names[i][which]; return 0; }
	*s = 0;
	return 1;
}

CUresult cuGetErrorName(CUresult e, const char** s) { return lookup(e, 1, s); }
CUresult cuGetErrorString(CUresult e, const char** s) { return lookup(e, 2, s); }
// FAKE_CUDA_INIT, FAKE_CUDA_VERSION and FAKE_CUDA_DEVICES override cuInit's
// result, the driver version and the device count (the load-failure tests).
static int env(const char* name, int def) {
	const char* v = getenv(name);
	return v && *v ? atoi(v) : def;
}
CUresult cuInit(unsigned flags) { return flags == 0 ? env("FAKE_CUDA_INIT", 0) : 1; }
CUresult cuDriverGetVersion(int* v) { *v = env("FAKE_CUDA_VERSION", 12020); return 0; }
CUresult cuDeviceGetCount(int* n) { *n = env("FAKE_CUDA_DEVICES", 1); return 0; }
CUresult cuDeviceGet(int* d, int ordinal) { if (ordinal != 0) return 101; *d = 0; return 0; }
CUresult cuDeviceGetName(char* name, int len, int dev) {
	if (dev != 0) return 101;
	strncpy(name, "fake GPU", len);
	return 0;
}
CUresult cuDeviceTotalMem_v2(size_t* b, int dev) { *b = (size_t)1 << 30; return 0; }
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
	if (dev != 0) return 101;
	switch (attr) {
	case 75: *v = 8; break;      // major
	case 76: *v = 6; break;      // minor
	case 16: *v = 7; break;      // SMs
	case 8: *v = 49152; break;   // shared per block
	case 97: *v = 101376; break; // opt-in
	case 81: *v = 102400; break;
	case 82: *v = 65536; break;
	case 12: *v = 65536; break;
	case 1: *v = 1024; break;
	case 38: *v = 6 << 20; break;
	default: *v = attr * 1000; // clocks, bus width: recognisable values
	}
	return 0;
}
CUresult cuDevicePrimaryCtxRetain(void** c, int dev) { retained++; *c = CTX; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { if (!retained) return 201; retained--; return 0; }
CUresult cuCtxSetCurrent(void* c) { if (c != CTX && c != 0) return 201; current = c; return 0; }
CUresult cuCtxSynchronize(void) { return need(); }

CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
	if (need()) return 201;
	void* m = calloc(1, n);
	if (!m) return 2;
	*p = (CUdeviceptr)(uintptr_t)m;
	return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { if (need()) return 201; free((void*)(uintptr_t)p); return 0; }
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
	if (need()) return 201;
	memset((void*)(uintptr_t)p, v, n);
	return 0;
}
CUresult cuMemHostAlloc(void** p, size_t n, unsigned flags) {
	if (need()) return 201;
	if (flags != 1) return 1; // tcrt asks for portable memory
	*p = malloc(n);
	return *p ? 0 : 2;
}
CUresult cuMemFreeHost(void* p) { if (need()) return 201; free(p); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) { if (need()) return 201; memcpy((void*)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) { if (need()) return 201; memcpy(d, (void*)(uintptr_t)s, n); return 0; }

#define STREAM_MAGIC 0x57AEA11
typedef struct { int magic; } stream;
static int bad_stream(void* s) { return s && ((stream*)s)->magic != STREAM_MAGIC; }

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, void* st) {
	if (need()) return 201;
	if (bad_stream(st)) return 400;
	memcpy((void*)(uintptr_t)d, s, n);
	return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, void* st) {
	if (need()) return 201;
	if (bad_stream(st)) return 400;
	memcpy(d, (void*)(uintptr_t)s, n);
	return 0;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void* st) {
	if (need()) return 201;
	if (bad_stream(st)) return 400;
	memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n);
	return 0;
}

CUresult cuStreamCreate(void** s, unsigned flags) {
	if (need()) return 201;
	stream* st = malloc(sizeof *st);
	st->magic = STREAM_MAGIC;
	*s = st;
	return 0;
}
CUresult cuStreamDestroy_v2(void* s) { if (need()) return 201; if (!s || bad_stream(s)) return 400; ((stream*)s)->magic = 0; free(s); return 0; }
CUresult cuStreamSynchronize(void* s) { if (need()) return 201; return bad_stream(s) ? 400 : 0; }

#define EVENT_MAGIC 0xE7E7
typedef struct { int magic, flags, recorded; double ms; } event;
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int bad_event(void* e) { return !e || ((event*)e)->magic != EVENT_MAGIC; }

CUresult cuStreamWaitEvent(void* s, void* e, unsigned flags) { if (need()) return 201; return bad_stream(s) || bad_event(e) || flags ? 400 : 0; }
CUresult cuEventCreate(void** e, unsigned flags) {
	if (need()) return 201;
	event* ev = calloc(1, sizeof *ev);
	ev->magic = EVENT_MAGIC;
	ev->flags = flags;
	*e = ev;
	return 0;
}
CUresult cuEventDestroy_v2(void* e) { if (need()) return 201; if (bad_event(e)) return 400; ((event*)e)->magic = 0; free(e); return 0; }
CUresult cuEventRecord(void* e, void* s) {
	if (need()) return 201;
	if (bad_event(e) || bad_stream(s)) return 400;
	((event*)e)->recorded = 1;
	((event*)e)->ms = now_ms();
	return 0;
}
CUresult cuEventQuery(void* e) { if (need()) return 201; return bad_event(e) ? 400 : 0; }
CUresult cuEventSynchronize(void* e) { if (need()) return 201; return bad_event(e) ? 400 : 0; }
CUresult cuEventElapsedTime(float* ms, void* a, void* b) {
	if (need()) return 201;
	if (bad_event(a) || bad_event(b)) return 400;
	event *s = a, *t = b;
	if ((s->flags | t->flags) & 2) return 400;
	if (!s->recorded || !t->recorded) return 600;
	*ms = (float)(t->ms - s->ms);
	return 0;
}

typedef struct { int magic; } module;
typedef struct { int magic, max_dynamic; } function;
#define MODULE_MAGIC 0x30D
#define FUNC_MAGIC 0xF0C

CUresult cuModuleLoadDataEx(void** m, const void* image, unsigned n, int* opts, void** vals) {
	if (need()) return 201;
	char *info = 0, *err = 0;
	size_t info_n = 0, err_n = 0;
	for (unsigned i = 0; i < n; i++) {
		switch (opts[i]) {
		case 3: info = vals[i]; break;
		case 4: info_n = (size_t)(uintptr_t)vals[i]; break;
		case 5: err = vals[i]; break;
		case 6: err_n = (size_t)(uintptr_t)vals[i]; break;
		default: return 1;
		}
	}
	if (info && info_n) strncpy(info, "fake: info log", info_n);
	if (strncmp(image, "FAKE", 4) != 0) {
		if (err && err_n) strncpy(err, "fake: the image does not start with FAKE", err_n);
		return 200;
	}
	module* mod = malloc(sizeof *mod);
	mod->magic = MODULE_MAGIC;
	*m = mod;
	return 0;
}
CUresult cuModuleUnload(void* m) { if (need()) return 201; if (!m || ((module*)m)->magic != MODULE_MAGIC) return 400; free(m); return 0; }
CUresult cuModuleGetFunction(void** f, void* m, const char* name) {
	if (need()) return 201;
	if (!m || ((module*)m)->magic != MODULE_MAGIC) return 400;
	if (strcmp(name, "probe") != 0) return 500;
	function* fn = malloc(sizeof *fn);
	fn->magic = FUNC_MAGIC;
	fn->max_dynamic = 49152;
	*f = fn;
	return 0;
}
static int bad_func(void* f) { return !f || ((function*)f)->magic != FUNC_MAGIC; }
CUresult cuFuncGetAttribute(int* v, int attr, void* f) {
	if (need()) return 201;
	if (bad_func(f)) return 400;
	switch (attr) {
	case 4: *v = 40; return 0;  // registers
	case 8: *v = ((function*)f)->max_dynamic; return 0;
	}
	return 1;
}
CUresult cuFuncSetAttribute(void* f, int attr, int v) {
	if (need()) return 201;
	if (bad_func(f) || attr != 8 || v > 101376) return 1;
	((function*)f)->max_dynamic = v;
	return 0;
}

// probe(out *u64, a u64, b u32): out[0..7] = a, b, grid x,y,z, block x,y,z;
// out[8] = shared bytes; out[9] = 1 when the stream is a stream handle.
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned smem, void* s, void** params, void** extra) {
	if (need()) return 201;
	if (bad_func(f) || bad_stream(s) || extra) return 400;
	if ((int)smem > ((function*)f)->max_dynamic) return 1;
	if (!params) return 1;
	uint64_t* out = (uint64_t*)(uintptr_t)*(uint64_t*)params[0];
	out[0] = *(uint64_t*)params[1];
	out[1] = *(uint32_t*)params[2];
	out[2] = gx; out[3] = gy; out[4] = gz; out[5] = bx; out[6] = by; out[7] = bz;
	out[8] = smem;
	out[9] = s != 0;
	return 0;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* n, void* f, int block, size_t smem) {
	if (need()) return 201;
	if (bad_func(f) || block <= 0) return 1;
	*n = (int)(1536 / block) - (int)(smem >> 16);
	return 0;
}

// tcrt_fake_calls_without_context counts calls made on a thread where the
// context was not current (the test reads it with purego).
int tcrt_fake_calls_without_context(void) { return calls_without_ctx; }
