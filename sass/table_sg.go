package sass

// Encoding forms the scatter-gather kernels (kernels/sm86 sg.go) need
// beyond table.go, in table.go's notation (see def). Each was learnt from
// ptxas -arch=sm_86 output under nvdisasm -b SM86, varying one field.
var tablesSG = []string{
	// vote.sync.{any,all,uni}.pred and .ballot: ptxas 11.8 prints VOTE.ANY
	// R, PT, P; the mode (72:2, ALL 0, ANY 1, EQ 2) and the predicate
	// result (81:3) from nvdisasm -b SM86 on those words with one field
	// changed.
	`VOTE 806 72:2{ALL,ANY,EQ} | >R@16, >P@81, P@87~90`,
}
