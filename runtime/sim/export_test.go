package sim

// SetHold makes the stream operations of the arch device submitted from now
// on wait until ch closes (nil: no longer).
func SetHold(arch int, ch chan struct{}) {
	drv, err := Driver(arch)
	if err != nil {
		panic(err)
	}
	if ch == nil {
		drv.(*simDriver).hold.Store(nil)
		return
	}
	drv.(*simDriver).hold.Store(&ch)
}
