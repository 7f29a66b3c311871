package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// chromium is headless Chromium driven over the DevTools protocol on
// --remote-debugging-pipe: JSON messages ending in a NUL byte, commands on
// the child's fd 3, answers and events on its fd 4. No websocket, no port.
type chromium struct {
	t       *testing.T
	cmd     *exec.Cmd
	toChild *os.File
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpAnswer
	session string
}

type cdpAnswer struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// startChromium starts Chromium with one page of width×height.
func startChromium(t *testing.T, path string, width, height int) *chromium {
	t.Helper()
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, ansW} // fd 3 and fd 4
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	cmdR.Close()
	ansW.Close()
	c := &chromium{t: t, cmd: cmd, toChild: cmdW, waiting: map[int]chan cdpAnswer{}}
	done := make(chan struct{})
	go c.read(ansR, done)
	t.Cleanup(func() {
		cmdW.Close()
		cancel()
		_ = cmd.Wait()
		<-done
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", tail(stderr.String(), 3000))
		}
	})
	var target struct{ TargetID string }
	c.call("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct{ SessionID string }
	c.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	c.session = attached.SessionID
	c.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return c
}

func (c *chromium) read(r *os.File, done chan struct{}) {
	defer close(done)
	br := bufio.NewReader(r)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var a cdpAnswer
		if json.Unmarshal(msg[:len(msg)-1], &a) != nil || a.ID == 0 {
			continue // an event
		}
		c.mu.Lock()
		ch := c.waiting[a.ID]
		delete(c.waiting, a.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- a
		}
	}
}

// call sends one command (to the page once attached) and decodes its result.
func (c *chromium) call(method string, params any, result any) {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan cdpAnswer, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if c.session != "" {
		msg["sessionId"] = c.session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.toChild.Write(append(b, 0)); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	select {
	case a := <-ch:
		if a.Error != nil {
			c.t.Fatalf("%s: %s", method, a.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(a.Result, result); err != nil {
				c.t.Fatalf("%s: %v", method, err)
			}
		}
	case <-time.After(60 * time.Second):
		c.t.Fatalf("%s: no answer from chromium", method)
	}
}

// eval evaluates a JavaScript expression in the page, awaiting a promise,
// and decodes its value into out (nil: ignored).
func (c *chromium) eval(expr string, out any) {
	c.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	c.call("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		c.t.Fatalf("page: %s %s\nin: %s", res.ExceptionDetails.Text, res.ExceptionDetails.Exception.Description, expr)
	}
	if out != nil {
		if err := json.Unmarshal(res.Result.Value, out); err != nil {
			c.t.Fatalf("page value %s: %v", res.Result.Value, err)
		}
	}
}

// waitFor waits until the expression is truthy in the page. The bound is
// for a page that never gets there, not a measure of speed.
func (c *chromium) waitFor(cond string) {
	c.t.Helper()
	c.eval(fmt.Sprintf(`new Promise((resolve, reject) => {
		const t0 = Date.now();
		(function poll() {
			let ok = false;
			try { ok = !!(%s); } catch (e) {}
			if (ok) return resolve(true);
			if (Date.now() - t0 > 20000) return reject(new Error('waited in vain for: ' + %q + '; status: ' + (document.getElementById('status') || {}).textContent));
			setTimeout(poll, 25);
		})();
	})`, cond, cond), nil)
}

func (c *chromium) navigate(url string) {
	c.t.Helper()
	c.call("Page.navigate", map[string]any{"url": url}, nil)
}

// screenshot returns a PNG of the page.
func (c *chromium) screenshot() []byte {
	c.t.Helper()
	var res struct{ Data string }
	c.call("Page.captureScreenshot", map[string]any{"format": "png"}, &res)
	b, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
