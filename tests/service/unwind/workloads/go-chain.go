// go-chain: a Go program whose time goes to main.main -> chainA -> chainB ->
// leafWork, for whole-system recordings (Go's own unwind info: .debug_frame
// plus frame pointers). Argument: seconds to run.
package main

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func leafWork(v uint64) uint64 {
	x := v
	for i := 0; i < 20000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func chainB(v uint64) uint64 { return leafWork(v) ^ v }

//go:noinline
func chainA(v uint64) uint64 { return chainB(v+1) + 1 }

func main() {
	sec, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		os.Exit(2)
	}
	end := time.Now().Add(time.Duration(sec * float64(time.Second)))
	v := uint64(1)
	for time.Now().Before(end) {
		v = chainA(v)
	}
	sink = v
}
