//go:build shexec_pkgconfig

package shexec

// With -tags shexec_pkgconfig the flags come from an installed library's
// shexec.pc (`make install` writes it): pkg-config finds it on its own path
// or through PKG_CONFIG_PATH. Where libdir is not on the loader's path, add
// an rpath with CGO_LDFLAGS="-Wl,-rpath,$(pkg-config --variable=libdir shexec)".

/*
#cgo pkg-config: shexec
*/
import "C"
