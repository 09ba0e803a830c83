// SPDX-License-Identifier: MIT
// A Go program with cgo (`import "C"`), so linked dynamically: it calls C's malloc and free once;
// Go's own allocation (the 1 MiB slice) never calls malloc. Exit 0.
package main

// #include <stdlib.h>
import "C"
import "unsafe"

func main() {
	p := C.malloc(100)
	C.free(unsafe.Pointer(p))
	s := make([]byte, 1<<20)
	s[0] = 1
}
