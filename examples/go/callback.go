package shexec

// This file holds the one Go function C calls. A file with an //export may
// only declare C in its preamble (it is copied into two C files), so the C
// trampoline that calls it lives in session.go.

/*
#include <stddef.h>
#include <stdint.h>
#include <shexec.h>
*/
import "C"

import (
	"io"
	"runtime/cgo"
	"unsafe"
)

// sink is where a command's output callback delivers: the Go side of one
// shexec_output_fn registration. C holds only its cgo.Handle (an integer),
// never a Go pointer; the handle is deleted once C can no longer call with
// it (after the run or task is freed).
type sink struct {
	stdout io.Writer
	stderr io.Writer
	fn     func(Stream, []byte)
	run    *C.shexec_run // cancelled when delivering fails

	err      error       // the first error a writer returned
	panicked bool        // a callback panicked: value is re-raised once the command ended
	value    interface{} // what it panicked with
}

// deliver hands one chunk to the callback and the writers. Nothing may
// unwind into the library's loop: a panic is recovered and, like a
// writer's error, stops the command (shexec_run_cancel, allowed from a
// callback); the panic is raised again by Run or Task.Wait once the command
// has ended and the library is back in a consistent state.
func (k *sink) deliver(stream Stream, data []byte) {
	if k.err != nil || k.panicked {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			k.panicked, k.value = true, p
			C.shexec_run_cancel(k.run)
		}
	}()
	if k.fn != nil {
		k.fn(stream, data)
	}
	w := k.stdout
	if stream == Stderr {
		w = k.stderr
	}
	if w == nil {
		return
	}
	n, err := w.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		k.err = err
		C.shexec_run_cancel(k.run)
	}
}

//export shexecGoOutput
func shexecGoOutput(handle C.uintptr_t, stream C.int, data *C.char, n C.size_t) {
	k, ok := cgo.Handle(handle).Value().(*sink)
	if !ok {
		return
	}
	// data is valid only during this call: the chunk is copied, so a
	// callback may keep the slice it is given.
	b := make([]byte, int(n))
	if n > 0 {
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(data)), int(n)))
	}
	k.deliver(Stream(stream), b)
}
