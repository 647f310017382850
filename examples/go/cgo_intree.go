//go:build !shexec_pkgconfig && !shexec_external

package shexec

// The default: the header and the library of the source tree this package
// sits in (include/ and build/, as `make` leaves them), with an rpath so a
// test or program finds build/libshexec.so.1 without LD_LIBRARY_PATH.
// CGO_CFLAGS and CGO_LDFLAGS come before these flags on the compiler's and
// linker's command lines, so directories given there are searched first.
// Build with -tags shexec_pkgconfig (cgo_pkgconfig.go) or -tags
// shexec_external (cgo_external.go) to leave the tree out entirely.

/*
#cgo CFLAGS: -I${SRCDIR}/../../include
#cgo LDFLAGS: -L${SRCDIR}/../../build -lshexec -Wl,-rpath,${SRCDIR}/../../build
*/
import "C"
