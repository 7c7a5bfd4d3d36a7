#!/usr/bin/env bash
# cuda-tools.sh — make NVIDIA's CUDA 11.8 command-line tools (ptxas, nvdisasm,
# cuobjdump), cuda.h, the stub libcuda.so and the CUDA C++ compiler nvcc (with
# cicc, cudafe++, fatbinary, nvlink, libdevice and the runtime headers)
# available in a cache folder, for machines without a GPU. None of these
# tools needs a GPU.
#
#   scripts/cuda-tools.sh [CACHE]      (default CACHE: $TCRT_CUDA_CACHE or .cache/cuda)
#
# On success it prints the cache's root; its layout is
#   CACHE/bin/{ptxas,nvdisasm,cuobjdump}
#   CACHE/include/cuda.h (and the other driver headers)
#   CACHE/lib/stubs/libcuda.so
#   CACHE/bin/nvcc (it runs CACHE/nvcc/bin/nvcc; CACHE/nvcc holds the
#   compiler's own bin/, include/ (the CUDA runtime headers) and libdevice/,
#   found through CACHE/nvcc/bin/nvcc.profile)
# and CACHE/env, a file to source (PATH, CGO_CFLAGS, CGO_LDFLAGS, TCRT_CUDA_HOME).
#
# Order of preference:
#   1. an installed CUDA toolkit (CUDA_HOME, /usr/local/cuda, or ptxas on PATH):
#      the cache then only links to it;
#   2. Debian's non-free packages nvidia-cuda-toolkit (the tools) and
#      nvidia-cuda-dev (headers and stub), fetched with `apt-get download`
#      from the mirror this machine's apt is already configured with, through a
#      private sources list and lists folder (the system's apt configuration is
#      not touched), and unpacked with dpkg-deb: only the files named above.
# A cache that is complete is reused as it is; one made before nvcc was part
# of it gets nvcc added.
#
# nvcc 11.8 accepts gcc up to 11 as its host compiler (it only preprocesses
# with it when building device code, -cubin). Debian 12 ships gcc 12: pass
# nvcc -ccbin gcc-11 where gcc-11 is installed, otherwise
# --allow-unsupported-compiler (sass/testdata/nvcc/gen.sh does this).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${1:-${TCRT_CUDA_CACHE:-$root/.cache/cuda}}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

have() { [ -x "$cache/bin/ptxas" ] && [ -x "$cache/bin/nvdisasm" ] && [ -x "$cache/bin/cuobjdump" ] &&
	[ -f "$cache/include/cuda.h" ] && [ -e "$cache/lib/stubs/libcuda.so" ]; }
have_nvcc() { [ -x "$cache/bin/nvcc" ] && [ -x "$cache/nvcc/bin/cicc" ] && [ -f "$cache/nvcc/include/cuda_runtime.h" ] &&
	[ -f "$cache/nvcc/libdevice/libdevice.10.bc" ]; }

write_env() {
	cat >"$cache/env" <<ENV
export TCRT_CUDA_HOME="$cache"
export PATH="$cache/bin:\$PATH"
export CGO_CFLAGS="-I$cache/include"
export CGO_LDFLAGS="-L$cache/lib/stubs"
ENV
}

if have && have_nvcc; then
	write_env
	echo "$cache"
	exit 0
fi

# 1. An installed toolkit.
for home in "${CUDA_HOME:-}" /usr/local/cuda "$(dirname "$(dirname "$(command -v ptxas 2>/dev/null || echo /x/x)")")"; do
	[ -n "$home" ] && [ -x "$home/bin/ptxas" ] && [ -x "$home/bin/nvdisasm" ] && [ -f "$home/include/cuda.h" ] || continue
	stub=$(ls "$home"/lib64/stubs/libcuda.so "$home"/lib/stubs/libcuda.so "$home"/targets/*/lib/stubs/libcuda.so 2>/dev/null | head -1 || true)
	[ -n "$stub" ] || continue
	mkdir -p "$cache/bin" "$cache/lib/stubs"
	for t in ptxas nvdisasm cuobjdump; do ln -sf "$home/bin/$t" "$cache/bin/$t"; done
	ln -sfn "$home/include" "$cache/include"
	ln -sf "$stub" "$cache/lib/stubs/libcuda.so"
	if [ -x "$home/bin/nvcc" ] && [ -x "$home/nvvm/bin/cicc" ]; then
		mkdir -p "$cache/nvcc/bin"
		rm -f "$cache/bin/nvcc"
		printf '#!/bin/sh\nexec "%s/bin/nvcc" "$@"\n' "$home" >"$cache/bin/nvcc"
		chmod +x "$cache/bin/nvcc"
		ln -sf "$home/nvvm/bin/cicc" "$cache/nvcc/bin/cicc"
		ln -sfn "$home/include" "$cache/nvcc/include"
		ln -sfn "$home/nvvm/libdevice" "$cache/nvcc/libdevice"
	fi
	have && have_nvcc && { write_env; echo "$cache"; exit 0; }
done

# 2. Debian's non-free packages through the configured mirror.
command -v apt-get >/dev/null || { echo "cuda-tools: no CUDA toolkit and no apt-get" >&2; exit 1; }
mirror=""
suite=""
# deb822 sources first, then one-line sources.
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	m=$(awk '/^URIs:/ {print $2; exit}' "$f")
	s=$(awk '/^Suites:/ {print $2; exit}' "$f")
	case "$m" in *security*) continue ;; esac
	grep -qi '^Types:.*deb' "$f" || continue
	[ -n "$m" ] && [ -n "$s" ] && { mirror=$m; suite=$s; break; }
done
if [ -z "$mirror" ]; then
	line=$(grep -hE '^deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -v security | head -1 || true)
	if [ -n "$line" ]; then
		mirror=$(echo "$line" | sed -E 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//' | awk '{print $1}')
		suite=$(echo "$line" | sed -E 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//' | awk '{print $2}')
	fi
fi
[ -n "$mirror" ] || { echo "cuda-tools: no Debian mirror found in the apt sources" >&2; exit 1; }
suite=${suite%%-*}

work="$cache/apt"
mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/debs"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
opt=""
[ -f "$keyring" ] && opt="[signed-by=$keyring] "
echo "deb ${opt}$mirror $suite contrib non-free" >"$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
	-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work" -o "Dir::Cache::archives=$work/archives"
	-o "APT::Architecture=amd64" -o "Debug::NoLocking=1")
echo "cuda-tools: fetching nvidia-cuda-toolkit and nvidia-cuda-dev ($suite non-free)" >&2
apt-get -q "${apt_opts[@]}" update >&2
(cd "$work/debs" && apt-get -q "${apt_opts[@]}" download nvidia-cuda-toolkit nvidia-cuda-dev >&2)

x="$work/x"
rm -rf "$x" && mkdir -p "$x"
tk=$(ls "$work"/debs/nvidia-cuda-toolkit_*.deb | head -1)
dev=$(ls "$work"/debs/nvidia-cuda-dev_*.deb | head -1)
if ! have; then
	# Only what is needed: the three tools and the driver headers and stub.
	dpkg-deb --fsys-tarfile "$tk" |
		tar -x -C "$x" --wildcards './usr/bin/ptxas' './usr/bin/nvdisasm' './usr/bin/cuobjdump' 2>/dev/null ||
		dpkg-deb --fsys-tarfile "$tk" | tar -x -C "$x" --wildcards '*bin/ptxas' '*bin/nvdisasm' '*bin/cuobjdump'
	dpkg-deb --fsys-tarfile "$dev" |
		tar -x -C "$x" --wildcards '*include/cuda.h' '*include/cudaTypedefs.h' '*include/cuda_stdint.h' '*include/cudaProfilerTypedefs.h' '*include/cudaGL*.h' '*stubs/libcuda.so*' 2>/dev/null || true

	mkdir -p "$cache/bin" "$cache/include" "$cache/lib/stubs"
	for t in ptxas nvdisasm cuobjdump; do
		p=$(find "$x" -type f -name "$t" | head -1)
		[ -n "$p" ] || { echo "cuda-tools: $t not found in nvidia-cuda-toolkit" >&2; exit 1; }
		cp "$p" "$cache/bin/$t" && chmod +x "$cache/bin/$t"
	done
	h=$(find "$x" -name cuda.h | head -1)
	[ -n "$h" ] || { echo "cuda-tools: cuda.h not found in nvidia-cuda-dev" >&2; exit 1; }
	cp "$(dirname "$h")"/*.h "$cache/include/"
	s=$(find "$x" -path '*stubs*' -name 'libcuda.so*' | head -1)
	[ -n "$s" ] || { echo "cuda-tools: stub libcuda.so not found in nvidia-cuda-dev" >&2; exit 1; }
	cp -L "$s" "$cache/lib/stubs/libcuda.so"
	ln -sf libcuda.so "$cache/lib/stubs/libcuda.so.1"
	rm -rf "$x" && mkdir -p "$x"
fi
if ! have_nvcc; then
	# nvcc and the programs it runs for device code (Debian keeps nvcc and
	# cicc in /usr/lib/nvidia-cuda-toolkit/bin, the others in /usr/bin),
	# libdevice, and the CUDA runtime headers (all of nvidia-cuda-dev's
	# /usr/include). Debian's own nvcc.profile points at /usr; the cache
	# gets one relative to itself.
	dpkg-deb --fsys-tarfile "$tk" | tar -x -C "$x" --wildcards \
		'./usr/lib/nvidia-cuda-toolkit/bin/nvcc' './usr/lib/nvidia-cuda-toolkit/bin/cicc' \
		'./usr/lib/nvidia-cuda-toolkit/bin/crt/*' './usr/lib/nvidia-cuda-toolkit/libdevice/*' \
		'./usr/bin/cudafe++' './usr/bin/fatbinary' './usr/bin/nvlink' './usr/bin/bin2c'
	dpkg-deb --fsys-tarfile "$dev" | tar -x -C "$x" --wildcards './usr/include/*'
	n="$cache/nvcc"
	rm -rf "$n" && mkdir -p "$n/bin"
	cp -r "$x"/usr/lib/nvidia-cuda-toolkit/bin/. "$n/bin/"
	for t in cudafe++ fatbinary nvlink bin2c; do cp "$x/usr/bin/$t" "$n/bin/$t"; done
	cp "$cache/bin/ptxas" "$n/bin/ptxas"
	cp -r "$x/usr/lib/nvidia-cuda-toolkit/libdevice" "$n/libdevice"
	cp -r "$x/usr/include" "$n/include"
	cat >"$n/bin/nvcc.profile" <<'PROFILE'
TOP                = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/libdevice
PATH              += $(_HERE_):
INCLUDES          +=  "-I$(TOP)/include" $(_SPACE_)
PROFILE
	# A wrapper, not a link: nvcc looks for nvcc.profile beside the path it
	# was started by.
	rm -f "$cache/bin/nvcc"
	printf '#!/bin/sh\nexec "$(dirname "$0")/../nvcc/bin/nvcc" "$@"\n' >"$cache/bin/nvcc"
	chmod +x "$cache/bin/nvcc"
fi
# Keep the cache small: the packages are not needed once unpacked.
rm -rf "$x" "$work/debs" "$work/archives"
have && have_nvcc || { echo "cuda-tools: incomplete cache at $cache" >&2; exit 1; }
write_env
echo "$cache"
