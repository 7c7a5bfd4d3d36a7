// Cooperative groups beyond reduce: scans, labeled and binary partitions,
// coalesced groups, dynamic tiles and tile shuffles, votes and matches.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cgall(const int *x, int *o, int n) {
	auto b = cg::this_thread_block();
	int i = b.group_index().x * b.size() + b.thread_rank();
	int v = i < n ? x[i] : 0;
	auto t32 = cg::tiled_partition<32>(b);
	auto t8 = cg::tiled_partition<8>(t32);
	int s = cg::reduce(t32, v, cg::plus<int>());
	int m = cg::reduce(t8, v, cg::greater<int>());
	int sc = cg::inclusive_scan(t32, v);
	int ex = cg::exclusive_scan(t8, v, cg::bit_xor<int>());
	auto lp = cg::labeled_partition(t32, v & 3);
	int ls = cg::reduce(lp, v, cg::plus<int>());
	int r = 0;
	if (v & 1) { auto co = cg::coalesced_threads(); r = co.thread_rank() + co.size() + cg::reduce(co, v, cg::less<int>()); co.sync(); }
	auto bp = cg::binary_partition(t32, v > 5);
	int bs = cg::reduce(bp, v, cg::plus<int>());
	auto dyn = cg::tiled_partition(b, 16);
	dyn.sync();
	t32.sync();
	int shf = t32.shfl(v, 3) + t32.shfl_down(v, 1) + t8.shfl_xor(v, 2) + t32.any(v > 3) + t32.ballot(v < 2) + t32.match_any(v);
	float fs = cg::reduce(t32, (float)v, cg::plus<float>());
	double ds = cg::reduce(t32, (double)v, cg::plus<double>());
	if (i < n) o[i] = s + m + sc + ex + ls + r + bs + shf + (int)fs + (int)ds + t8.meta_group_size();
}
