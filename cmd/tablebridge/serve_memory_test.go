package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHostileBodies measures the bounds on the request body and on
// the properties of an entity body (SECURITY.md, "Limits and timeouts") on
// the real server: what one in-flight request with the 4 MiB body of 358,000
// properties costs, alone and 32 at once. It reports the peak growth of the
// Go heap (sampled every 100 µs) and of the process's resident set (VmHWM,
// reset before each burst) per request, both also as a multiple of the
// body, and the resident set left 1 s after the burst; the first burst of
// a process, which is what grows its resident set, is reported apart. Client and server
// share the process; the client sends one shared body, so it adds nothing
// per request.
//
//	go test -run '^$' -bench HostileBodies -benchtime 5x ./cmd/tablebridge
func BenchmarkHostileBodies(b *testing.B) {
	for _, conc := range []int{1, 32} {
		b.Run("inflight="+strconv.Itoa(conc), func(b *testing.B) {
			s := startLimitedServe(b, serveLimits{maxRequests: 512, maxBodyBytes: 128 << 20})
			benchmarkHostileBodies(b, s, conc)
		})
	}
}

func benchmarkHostileBodies(b *testing.B, s *limitedServer, conc int) {
	body := hostileEntityBody()
	reqs := make([]*http.Request, conc)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	send := func() {
		var wg sync.WaitGroup
		for i := range conc {
			// Signed outside the measured burst; the body reader is
			// rewound for each send.
			if reqs[i] == nil {
				reqs[i] = s.signed(b, http.MethodPost, "/limits", body)
			}
			req := reqs[i].Clone(reqs[i].Context())
			req.Body = io.NopCloser(bytes.NewReader(body))
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest {
					b.Errorf("status %d", resp.StatusCode)
				}
			}()
		}
		wg.Wait()
	}
	// The first burst, in a process that has not served one before, is
	// what grows the resident set: measure it apart, and what is left of
	// it a second later.
	runtime.GC()
	resetPeakRSS()
	coldBase := procStatusKiB("VmRSS")
	send()
	coldPeak := float64(procStatusKiB("VmHWM")-coldBase) * 1024
	time.Sleep(time.Second)
	coldAfter := float64(procStatusKiB("VmRSS")-coldBase) * 1024
	var peakHeap, peakRSS, after float64
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		baseHeap := heapObjectBytes()
		resetPeakRSS()
		baseRSS := procStatusKiB("VmRSS")
		var peak atomic.Uint64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				if h := heapObjectBytes(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Microsecond):
				}
			}
		}()
		send()
		close(stop)
		<-sampled
		peakHeap += float64(peak.Load()) - float64(baseHeap)
		peakRSS += float64(procStatusKiB("VmHWM")-baseRSS) * 1024
		b.StopTimer()
		time.Sleep(time.Second)
		after += float64(procStatusKiB("VmRSS")-baseRSS) * 1024
		b.StartTimer()
	}
	n := float64(b.N * conc)
	size := float64(len(body))
	b.ReportMetric(peakHeap/n/(1<<20), "peak-heap-MiB/req")
	b.ReportMetric(peakHeap/n/size, "peak-heap-x-body")
	b.ReportMetric(peakRSS/n/(1<<20), "peak-RSS-MiB/req")
	b.ReportMetric(peakRSS/n/size, "peak-RSS-x-body")
	b.ReportMetric(after/float64(b.N)/(1<<20), "RSS-1s-after-MiB")
	b.ReportMetric(coldPeak/float64(conc)/(1<<20), "first-burst-peak-RSS-MiB/req")
	b.ReportMetric(coldAfter/(1<<20), "first-burst-RSS-1s-after-MiB")
}

func heapObjectBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// resetPeakRSS resets VmHWM to the current resident set (Linux 4.0+).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// procStatusKiB reads a "kB" field of /proc/self/status; 0 where there is
// none (not Linux).
func procStatusKiB(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkStalledReaders measures the bound on the time to read an answer
// (SECURITY.md, "Limits and timeouts"): 100 clients ask for a
// page of 1000 entities of about 1 KiB and never read the answer. It
// reports the Go heap each stalled answer holds while it waits and what is
// left once the write timeout (1 s here) has dropped them all.
//
//	go test -run '^$' -bench StalledReaders -benchtime 1x ./cmd/tablebridge
func BenchmarkStalledReaders(b *testing.B) {
	const clients = 20
	s := startLimitedServe(b, serveLimits{maxRequests: 512, writeTimeout: time.Second})
	fillPartition(b, s, 1000, 2<<10) // 12 KiB of JSON per entity: the answer outgrows socket buffers
	var stalledHeap, afterHeap, answer float64
	for range b.N {
		runtime.GC()
		base := heapObjectBytes()
		var conns []net.Conn
		for range clients {
			conn, err := net.Dial("tcp", s.host)
			if err != nil {
				b.Fatal(err)
			}
			_ = conn.(*net.TCPConn).SetReadBuffer(4096)
			if _, err := io.WriteString(conn, rawHeader(s.signed(b, http.MethodGet, "/limits()", nil), -1)); err != nil {
				b.Fatal(err)
			}
			conns = append(conns, conn)
		}
		time.Sleep(500 * time.Millisecond)
		runtime.GC()
		stalledHeap += float64(heapObjectBytes()) - float64(base)
		time.Sleep(1500 * time.Millisecond)
		runtime.GC()
		afterHeap += float64(heapObjectBytes()) - float64(base)
		resp, err := http.ReadResponse(bufio.NewReader(conns[0]), nil)
		if err == nil {
			answer = float64(resp.ContentLength)
		}
		for _, c := range conns {
			c.Close()
		}
	}
	n := float64(b.N)
	b.ReportMetric(answer/(1<<20), "answer-MiB")
	b.ReportMetric(stalledHeap/n/clients/(1<<20), "stalled-heap-MiB/client")
	b.ReportMetric(afterHeap/n/(1<<20), "heap-after-timeout-MiB")
}
