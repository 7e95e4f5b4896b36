package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The floor: what this machine can do at best for one commit's fan-out,
// with no WebSocket, GraphQL or Capstan in the way. One process accepts n
// loopback TCP connections from a second process (as the server and this
// generator are two processes) and writes one message of size bytes to
// every connection, from one goroutine per core, as a commit reaches each
// subscriber's connection with one write. The other process reads them and
// reports how long after the burst began each message arrived. Capstan's
// commit-to-client latency for one operation's subscribers can only be
// compared with this, never be below it.
//
//	go run ./cmd/capstan-load -floor -subscribers 10000

// floorRounds is how many bursts are measured.
const floorRounds = 5

// runFloor is the writing side: it starts the reading side as a child
// process, sends floorRounds bursts and prints the child's report.
func runFloor(n, size int, w io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self, "-floor-reader", ln.Addr().String(), "-subscribers", strconv.Itoa(n), "-floor-size", strconv.Itoa(size))
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		return err
	}
	if err := child.Start(); err != nil {
		return err
	}
	defer child.Wait()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for len(conns) < n {
		c, err := ln.Accept()
		if err != nil {
			_ = child.Process.Kill()
			return err
		}
		conns = append(conns, c)
	}
	msg := make([]byte, size)
	for round := 0; round < floorRounds; round++ {
		time.Sleep(500 * time.Millisecond) // let the previous burst drain
		binary.LittleEndian.PutUint64(msg, uint64(time.Now().UnixNano()))
		var wg sync.WaitGroup
		writers := runtime.GOMAXPROCS(0)
		for k := 0; k < writers; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := k; i < n; i += writers {
					if _, err := conns[i].Write(msg); err != nil {
						fmt.Fprintln(os.Stderr, "capstan-load: floor write:", err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	_, err = io.Copy(w, bufio.NewReader(out))
	return err
}

// runFloorReader is the reading side: n connections, one goroutine each,
// as the generator's subscribers; it prints each burst's arrival
// percentiles once every connection had every burst.
func runFloorReader(addr string, n, size int, w io.Writer) error {
	arrivals := make([][]time.Duration, floorRounds)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			buf := make([]byte, size)
			for round := 0; round < floorRounds; round++ {
				if _, err := io.ReadFull(c, buf); err != nil {
					fmt.Fprintln(os.Stderr, "capstan-load: floor read:", err)
					return
				}
				d := time.Since(time.Unix(0, int64(binary.LittleEndian.Uint64(buf))))
				mu.Lock()
				arrivals[round] = append(arrivals[round], d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Fprintf(w, "floor: one %d-byte write to each of %d loopback TCP connections, read by another process\n", size, n)
	for round, a := range arrivals {
		if len(a) == 0 {
			continue
		}
		slices.Sort(a)
		fmt.Fprintf(w, "burst %d: arrival p50 %s, p99 %s, max %s (%d)\n", round+1, a[len(a)/2].Round(100*time.Microsecond),
			a[min(len(a)-1, len(a)*99/100)].Round(100*time.Microsecond), a[len(a)-1].Round(100*time.Microsecond), len(a))
	}
	return nil
}
