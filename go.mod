module github.com/tcrt-go/tcrt

go 1.26

require (
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/google/uuid v1.1.1 // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/sys v0.41.0 // indirect
	gorgonia.org/cu v0.9.6 // indirect
)
