//go:build shexec_external && !shexec_pkgconfig

package shexec

// With -tags shexec_external only -lshexec is given: the header and the
// library are found where the compiler and linker look by default
// (/usr/local/include, /usr/lib, ...) or where CGO_CFLAGS="-I..." and
// CGO_LDFLAGS="-L... -Wl,-rpath,..." say.

/*
#cgo LDFLAGS: -lshexec
*/
import "C"
