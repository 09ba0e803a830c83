// SPDX-License-Identifier: MIT
// A Go program without cgo: linked statically by the Go toolchain, no malloc at all. Exit 0.
package main

func main() {
	s := make([]byte, 1<<20)
	s[0] = 1
}
