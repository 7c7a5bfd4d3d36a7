package sass

// Encoding forms the mma.sync kernels (kernels/mma, ptxas's sm_86 build)
// need beyond table.go, in table.go's notation (see def). Each was learnt
// from ptxas -arch=sm_86 output under nvdisasm -b SM86, flipping one bit
// of a word ptxas printed at a time (testdata/golden_mma_sm86.txt holds
// the words).
var tablesMMA = []string{
	// P2R Rd, PR, Ra, mask: the predicate file ANDed with a 32-bit mask
	// (32, printed signed) into byte 76:2 of Rd; Ra at 24 (ptxas: RZ).
	`P2R 803 76:2{_,B1,B2,B3} | >R@16, PR@0, R@24, I@32:32`,
	// SGXT Rd, Ra, width: zero (.U32, bit 73 clear) or sign extension
	// from the low width bits; 75 .W (wrap the width); width at 32:32.
	`SGXT 81a 75:1{_,W} 73:1{U32,_} | >R@16, R@24, U@32:32`,
	// HMUL2 by an f16x2 immediate: bits 32..63 hold the pair, H0 low;
	// nvdisasm prints H1 first (ptxas's mul.f16x2 by 0x40003C00 prints
	// HMUL2 R5, R0, 2, 1).
	`HMUL2 832 | >R@16, R@24, H@48:16, H@32:16`,
	// DEPBAR.LE SBn, count, {set}: also waits for the scoreboards of the
	// 6-bit set at 32 (bit n: SBn), printed highest first.
	`DEPBAR 91a 47:1{?,LE} | SB@44, U@38:6, SBS@32:6`,
	// LDGSTS .ZFILL (bit 82): cp.async with a register source size. The
	// predicate at 87 (false: all 16 bytes zero) and the source address's
	// low 4 bits the number of trailing bytes zero-filled; ptxas builds the
	// address as src + (16-size)&15 and the predicate as size != 0.
	`LDGSTS fae 0:0{E} =70:1:1 =76:1:1 =91:1:1 81:1{BYPASS,_} 71:2{_,LTC64B,LTC128B} 73:3{?,?,?,?,_,64,128} 84:3{1=} 82:1{?,ZFILL} 77:4{0=} | MX@16+44:20, MG@24+32:12/64, P@87~90`,
}
