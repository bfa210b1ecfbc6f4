package report

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testdeps"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
)

// The browser test loads reports from disk in headless Chromium (Debian's
// chromium package; hack/test.sh installs it) with the network off, through the
// DevTools protocol: no console errors, no request but the file itself, one
// bar per request, the page's script works (zoom, sort, read-out), and no
// hostile string ran as script. A missing browser fails the test: install
// it with `apt-get install chromium`, or point WATCHCACHE_CHROMIUM at one.
// WATCHCACHE_REPORT_SCREENSHOTS=DIR keeps a screenshot of each report there.

// browserDeadline bounds every exchange with the browser, so a browser that
// hangs fails the test instead of blocking it; it is no assertion on speed.
const browserDeadline = 2 * time.Minute

// TestMain fails the package at once when no browser is installed.
func TestMain(m *testing.M) {
	if code := testdeps.Main(testdeps.Chromium()); code != 0 {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func chromiumPath(t *testing.T) string {
	t.Helper()
	p, err := testdeps.Chromium().Path()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// browser is a headless Chromium driven through the DevTools protocol.
type browser struct {
	t      *testing.T
	cmd    *exec.Cmd
	ws     *websocket.Conn
	next   int
	events []cdpMessage
}

type cdpMessage struct {
	ID     int             `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startBrowser starts Chromium with the network off and opens its first page.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	cmd := exec.Command(chromiumPath(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-default-apps", "--disable-extensions", "--no-default-browser-check", "--mute-audio",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--hide-scrollbars",
		"--window-size=1280,1400", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--remote-allow-origins=http://127.0.0.1",
		"about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers are stopped with it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	b := &browser{t: t, cmd: cmd}
	t.Cleanup(b.stop)
	// Chromium says where DevTools listens on stderr; the rest of stderr is drained.
	endpoint := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		found := false
		for sc.Scan() {
			if line := sc.Text(); !found && strings.HasPrefix(line, "DevTools listening on ") {
				found = true
				endpoint <- strings.TrimPrefix(line, "DevTools listening on ")
			}
		}
		if !found {
			close(endpoint)
		}
	}()
	var browserURL string
	select {
	case u, ok := <-endpoint:
		if !ok {
			t.Fatalf("%s exited without opening DevTools", cmd.Path)
		}
		browserURL = u
	case <-time.After(browserDeadline):
		t.Fatal("Chromium did not open DevTools")
	}
	// The page target's socket, from the browser's own HTTP endpoint on loopback.
	host := strings.TrimPrefix(browserURL, "ws://")
	host = host[:strings.Index(host, "/")]
	client := http.Client{Timeout: browserDeadline}
	resp, err := client.Get("http://" + host + "/json/list")
	if err != nil {
		t.Fatalf("listing DevTools targets: %v", err)
	}
	defer resp.Body.Close()
	var targets []struct{ Type, WebSocketDebuggerURL string }
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		t.Fatalf("listing DevTools targets: %v", err)
	}
	for _, tg := range targets {
		if tg.Type == "page" {
			b.ws, err = websocket.Dial(tg.WebSocketDebuggerURL, "", "http://127.0.0.1")
			if err != nil {
				t.Fatalf("connecting to the page: %v", err)
			}
			b.ws.MaxPayloadBytes = 256 << 20 // screenshots
			break
		}
	}
	if b.ws == nil {
		t.Fatalf("no page target among %+v", targets)
	}
	for _, m := range []string{"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"} {
		b.call(m, nil, nil)
	}
	b.call("Network.emulateNetworkConditions", map[string]any{"offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}, nil)
	return b
}

func (b *browser) stop() {
	if b.ws != nil {
		_ = b.ws.Close()
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	_ = b.cmd.Wait()
}

func (b *browser) receive() cdpMessage {
	b.t.Helper()
	if err := b.ws.SetReadDeadline(time.Now().Add(browserDeadline)); err != nil {
		b.t.Fatal(err)
	}
	var m cdpMessage
	if err := websocket.JSON.Receive(b.ws, &m); err != nil {
		b.t.Fatalf("reading from the browser: %v", err)
	}
	return m
}

// call sends a command and waits for its answer, keeping the events that come first.
func (b *browser) call(method string, params, result any) {
	b.t.Helper()
	b.next++
	msg := map[string]any{"id": b.next, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := websocket.JSON.Send(b.ws, msg); err != nil {
		b.t.Fatalf("%s: %v", method, err)
	}
	for {
		m := b.receive()
		if m.ID != b.next {
			if m.Method != "" {
				b.events = append(b.events, m)
			}
			continue
		}
		if m.Error != nil {
			b.t.Fatalf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				b.t.Fatalf("%s: %v", method, err)
			}
		}
		return
	}
}

// waitFor returns the first event of that method, received or to come.
func (b *browser) waitFor(method string) cdpMessage {
	b.t.Helper()
	for i, e := range b.events {
		if e.Method == method {
			b.events = append(b.events[:i:i], b.events[i+1:]...)
			return e
		}
	}
	for {
		m := b.receive()
		if m.Method == method {
			return m
		}
		if m.Method != "" {
			b.events = append(b.events, m)
		}
	}
}

// eval evaluates a JavaScript expression and decodes its JSON value into v.
func (b *browser) eval(expr string, v any) {
	b.t.Helper()
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
	b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res)
	if res.ExceptionDetails != nil {
		b.t.Fatalf("evaluating %q: %s %s", expr, res.ExceptionDetails.Text, res.ExceptionDetails.Exception.Description)
	}
	if v != nil {
		if err := json.Unmarshal(res.Result.Value, v); err != nil {
			b.t.Fatalf("evaluating %q: %v (%s)", expr, err, res.Result.Value)
		}
	}
}

// problems are the console errors, exceptions, CSP reports and requests other
// than file: and data: URLs seen since the last call.
func (b *browser) problems() []string {
	var out []string
	for _, e := range b.events {
		var p struct {
			Type  string `json:"type"`
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
			Args             []struct{ Value any } `json:"args"`
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
			Request struct{ URL string } `json:"request"`
		}
		_ = json.Unmarshal(e.Params, &p)
		switch e.Method {
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+p.ExceptionDetails.Text+" "+p.ExceptionDetails.Exception.Description)
		case "Runtime.consoleAPICalled":
			if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
				out = append(out, fmt.Sprintf("console.%s: %v", p.Type, p.Args))
			}
		case "Log.entryAdded":
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				out = append(out, fmt.Sprintf("log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL))
			}
		case "Network.requestWillBeSent":
			if u := p.Request.URL; !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") {
				out = append(out, "the page requested "+u)
			}
		}
	}
	b.events = nil
	return out
}

// open loads a file and waits for its load event.
func (b *browser) open(path string) {
	b.t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		b.t.Fatal(err)
	}
	b.events = nil
	b.call("Page.navigate", map[string]any{"url": "file://" + abs}, nil)
	b.waitFor("Page.loadEventFired")
}

func (b *browser) mouse(typ string, x, y float64, clicks int) {
	b.t.Helper()
	p := map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": clicks}
	if typ == "mouseMoved" {
		p["button"] = "none"
		if clicks > 0 {
			p["button"], p["buttons"] = "left", 1
		}
		p["clickCount"] = 0
	}
	b.call("Input.dispatchMouseEvent", p, nil)
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	var shot struct{ Data string }
	b.call("Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || len(png) < 1000 || string(png[1:4]) != "PNG" {
		b.t.Fatalf("screenshot: got %d bytes (%v), want a PNG", len(png), err)
	}
	dir := os.Getenv("WATCHCACHE_REPORT_SCREENSHOTS")
	if dir == "" {
		dir = b.t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// pageState is what the test reads from a loaded report.
type pageState struct {
	Ready    string `json:"ready"`
	Bars     int    `json:"bars"`
	Rows     int    `json:"rows"`
	Title    string `json:"title"`
	Pwned    string `json:"pwned"`
	Images   int    `json:"images"`
	Scripts  int    `json:"scripts"`
	Timeline int    `json:"timelines"`
	// Tools and ToolsNoJS count the timelines' zoom buttons and hints
	// shown, and shown as a page without its script has them (no data-ready).
	Tools     int `json:"tools"`
	ToolsNoJS int `json:"toolsNoJS"`
}

const readState = `(() => ({
	ready: document.documentElement.getAttribute("data-ready") || "",
	bars: document.querySelectorAll("svg.timeline .req").length,
	rows: document.querySelectorAll("table.requests tbody tr[id]").length,
	title: document.title,
	pwned: typeof window.__pwned,
	images: document.images.length,
	scripts: document.scripts.length,
	timelines: document.querySelectorAll("svg.timeline").length,
	...(() => {
		const shown = () => [...document.querySelectorAll(".tl-tools button, .tl-tools .hint")].filter(e => getComputedStyle(e).display !== "none").length;
		const root = document.documentElement, ready = root.getAttribute("data-ready"), tools = shown();
		root.removeAttribute("data-ready");
		const toolsNoJS = shown();
		if (ready !== null) { root.setAttribute("data-ready", ready); }
		return {tools, toolsNoJS};
	})(),
}))()`

func writeReport(t *testing.T, trace, dir string) string {
	t.Helper()
	rep := analyzeFile(t, trace, Options{Name: filepath.Base(trace)})
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(trace), ".jsonl")+".html")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReportsWorkInARealBrowserWithTheNetworkOff(t *testing.T) {
	b := startBrowser(t)
	dir := t.TempDir()
	delivery := filepath.Join(dir, "generated-delivery.jsonl")
	if err := os.Rename(generate(t, deliveryConfig(3000)), delivery); err != nil {
		t.Fatal(err)
	}
	traces := append(bundledTraces(t), writeHostileTrace(t, dir), delivery, writeChangesTrace(t, `.data["`+hostileScript+`"]`, hostileImg, hostileJSON))
	for _, tr := range traces {
		name := strings.TrimSuffix(filepath.Base(tr), ".jsonl")
		t.Run(name, func(t *testing.T) {
			b.t = t
			page := writeReport(t, tr, dir)
			b.open(page)
			var st pageState
			b.eval(readState, &st)
			want := lineKinds(t, tr)["request"]
			if st.Ready != "true" {
				t.Errorf("the page's script did not finish (data-ready %q)", st.Ready)
			}
			if st.Bars != want || st.Rows != want {
				t.Errorf("got %d bars and %d request rows, want %d of each (the request lines)", st.Bars, st.Rows, want)
			}
			if wantTitle := "watchcache report: " + filepath.Base(tr); st.Title != wantTitle || st.Pwned != "undefined" || st.Images != 0 || st.Scripts != 2 {
				t.Errorf("got title %q, window.__pwned %s, %d images, %d scripts; want title %q, no __pwned, no images, 2 scripts",
					st.Title, st.Pwned, st.Images, st.Scripts, wantTitle)
			}
			if st.Timeline != len(analyzeFile(t, tr, Options{}).Resources) {
				t.Errorf("got %d timelines, want one per resource", st.Timeline)
			}
			if st.Tools != 3*st.Timeline || st.ToolsNoJS != 0 {
				t.Errorf("%d zoom buttons and hints shown, %d without the script; want the 3 of each timeline, and none", st.Tools, st.ToolsNoJS)
			}
			b.checkFindings(t, analyzeFile(t, tr, Options{}))
			rep := analyzeFile(t, tr, Options{})
			for i := 0; i < st.Timeline; i++ {
				b.interact(t, i)
				b.checkDelivery(t, i, rep.Resources[i])
			}
			b.eval(readState, &st)
			if st.Title != "watchcache report: "+filepath.Base(tr) || st.Pwned != "undefined" {
				t.Errorf("after hovering and zooming: title %q, window.__pwned %s", st.Title, st.Pwned)
			}
			b.screenshot(name)
			for _, p := range b.problems() {
				t.Error(p)
			}
		})
	}
}

// checkFindings checks the Findings section as the browser lays it out:
// above the first resource, an article per finding of rep, every in-page
// link of it resolving to an element, and a click on a request of the
// evidence going to that request's row.
func (b *browser) checkFindings(t *testing.T, rep *Report) {
	t.Helper()
	want := 0
	for _, res := range rep.Resources {
		want += len(res.Findings)
	}
	var got struct {
		Articles, Links, Broken int
		Above                   bool
		Href, Hash, Target      string
	}
	b.eval(`(() => {
		const sec = document.querySelector("section#findings");
		const links = Array.from(sec.querySelectorAll('a[href^="#"]'));
		const broken = links.filter(a => !document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1)))).length;
		const first = document.querySelector("section.resource");
		const out = {articles: sec.querySelectorAll("article.finding").length, links: links.length, broken: broken,
			above: !!first && sec.getBoundingClientRect().bottom <= first.getBoundingClientRect().top, href: "", hash: "", target: ""};
		const req = sec.querySelector("a.req-link");
		if (req) {
			req.click();
			const tg = document.querySelector(":target");
			out.href = req.getAttribute("href"); out.hash = location.hash; out.target = tg ? tg.tagName + "#" + tg.id : "";
		}
		return out;
	})()`, &got)
	if got.Articles != want || got.Broken != 0 || !got.Above {
		t.Errorf("findings section: %d articles (want %d), %d of %d links broken, above the resources %v", got.Articles, want, got.Broken, got.Links, got.Above)
	}
	if got.Href != "" && (got.Hash != got.Href || got.Target != "TR"+got.Href) {
		t.Errorf("clicking the evidence's request %s: location.hash %q, :target %q; want its row", got.Href, got.Hash, got.Target)
	}
	if want > 0 && got.Href == "" && len(rep.Resources[0].Findings) > 0 && len(rep.Resources[0].Findings[0].Evidence.Requests) > 0 {
		t.Error("the first finding names requests, but the section has no request link")
	}
}

// interact zooms into the middle of resource i's timeline by dragging,
// hovers its event chart, goes back to the whole run with a double-click,
// sorts its requests by duration both ways, and clicks one of its bars. The
// other resources' timelines stay as they were.
func (b *browser) interact(t *testing.T, i int) {
	t.Helper()
	sec := fmt.Sprintf(`document.querySelector("section#res-%d")`, i)
	var box struct{ X, Y, W, H float64 }
	b.eval(`(() => { const s = `+sec+`.querySelector("svg.timeline"); s.scrollIntoView({block: "center"});
		const r = s.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; })()`, &box)
	scale := box.W / 1200
	left, right := box.X+(plotX+plotWidth*0.3)*scale, box.X+(plotX+plotWidth*0.6)*scale
	y := box.Y + (axisHeight+barHeight)*scale
	b.mouse("mouseMoved", left, y, 0)
	b.mouse("mousePressed", left, y, 1)
	b.mouse("mouseMoved", (left+right)/2, y, 1)
	b.mouse("mouseMoved", right, y, 1)
	b.mouse("mouseReleased", right, y, 1)
	var zoom struct{ ViewBox, Range string }
	b.eval(`({viewBox: `+sec+`.querySelector("svg.plot").getAttribute("viewBox"), range: `+sec+`.querySelector(".tl-range").textContent})`, &zoom)
	if strings.HasPrefix(zoom.ViewBox, "0 0 ") || !strings.Contains(zoom.Range, " to ") {
		t.Errorf("after a drag across the middle: viewBox %q, range %q; want a zoomed range", zoom.ViewBox, zoom.Range)
	}
	var others []string
	b.eval(`Array.from(document.querySelectorAll("section.resource")).filter(s => s.id !== "res-`+fmt.Sprint(i)+`").map(s => s.querySelector("svg.plot").getAttribute("viewBox"))`, &others)
	for _, vb := range others {
		if !strings.HasPrefix(vb, "0 0 ") {
			t.Errorf("zooming resource %d's timeline zoomed another to %q", i, vb)
		}
	}
	// Hover the event chart: the read-out names the bucket's events.
	var chart struct{ X, Y float64 }
	b.eval(`(() => { const r = `+sec+`.querySelector("svg.c-rate").getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`, &chart)
	b.mouse("mouseMoved", chart.X, chart.Y, 0)
	var tip struct {
		Hidden bool
		Text   string
	}
	b.eval(`(() => { const t = `+sec+`.querySelector(".tip"); return {hidden: t.hidden, text: t.textContent}; })()`, &tip)
	if tip.Hidden || !strings.Contains(tip.Text, "MODIFIED") {
		t.Errorf("hovering the event chart: tip hidden %v, text %q; want the bucket's counts", tip.Hidden, tip.Text)
	}
	// A double-click on the axis goes back to the whole run.
	axisY := box.Y + 8*scale
	b.mouse("mouseMoved", box.X+box.W/2, axisY, 0)
	b.mouse("mousePressed", box.X+box.W/2, axisY, 1)
	b.mouse("mouseReleased", box.X+box.W/2, axisY, 1)
	b.mouse("mousePressed", box.X+box.W/2, axisY, 2)
	b.mouse("mouseReleased", box.X+box.W/2, axisY, 2)
	b.eval(sec+`.querySelector("svg.plot").getAttribute("viewBox")`, &zoom.ViewBox)
	if !strings.HasPrefix(zoom.ViewBox, "0 0 ") {
		t.Errorf("after a double-click: viewBox %q, want the whole run", zoom.ViewBox)
	}
	// Sort the requests by duration: ascending, then descending.
	var order struct{ Asc, Desc []float64 }
	b.eval(`(() => {
		const th = `+sec+`.querySelectorAll("table.requests thead th")[3];
		const col = () => Array.from(`+sec+`.querySelectorAll("table.requests tbody tr[id]")).map(r => parseFloat(r.cells[3].getAttribute("data-v")));
		th.click(); const asc = col(); th.click(); return {asc: asc, desc: col()};
	})()`, &order)
	for i := 1; i < len(order.Asc); i++ {
		if order.Asc[i] < order.Asc[i-1] || order.Desc[i] > order.Desc[i-1] {
			t.Errorf("sorting by duration: got %v then %v, want ascending then descending", order.Asc, order.Desc)
			break
		}
	}
	// A bar click goes to its row.
	var hash string
	b.eval(`(() => { const a = `+sec+`.querySelector("svg.timeline a.req"); a.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true})); return location.hash; })()`, &hash)
	if !strings.HasPrefix(hash, fmt.Sprintf("#r%d-", i)) {
		t.Errorf("after clicking a bar: location.hash %q, want its request row", hash)
	}
}

// checkDelivery checks resource i's latency plot as the browser draws it
// (after interact, on the whole run): a lag chart whose cells have a size
// when its events carry the passive estimate, a probe chart whose points
// spread over the run when it watches the probe's Lease (its dots, line and
// p50 and p99 lines), and neither otherwise; hovering a bucket with events
// or samples reads out their lag buckets or probe times.
func (b *browser) checkDelivery(t *testing.T, i int, res *Section) {
	t.Helper()
	sec := fmt.Sprintf(`document.querySelector("section#res-%d")`, i)
	var got struct {
		Lag, Probe                  bool
		LagCells, LagW, LagH, P99W  float64
		Dots, DotsW, Line, P50, P99 float64
		Legend                      string
	}
	b.eval(`(() => {
		const sec = `+sec+`;
		const box = (el) => { if (!el) { return {width: 0, height: 0}; } const r = el.getBBox(); return {width: r.width, height: r.height}; };
		const lag = sec.querySelector("svg.plot.c-lag"), probe = sec.querySelector("svg.plot.c-probe");
		const out = {lag: !!lag, probe: !!probe, lagCells: 0, lagW: 0, lagH: 0, p99W: 0, dots: 0, dotsW: 0, line: 0, p50: 0, p99: 0,
			legend: (sec.querySelector(".legend") || {}).textContent || ""};
		if (lag) {
			const cells = lag.querySelectorAll("path.lag");
			out.lagCells = cells.length;
			for (const c of cells) { const r = c.getBoundingClientRect(); out.lagW = Math.max(out.lagW, r.width); out.lagH = Math.max(out.lagH, r.height); }
			out.p99W = box(lag.querySelector("path.lag-p99")).width;
		}
		if (probe) {
			const dots = probe.querySelector("path.p-dots");
			out.dots = dots ? (dots.getAttribute("d").match(/M/g) || []).length : 0;
			out.dotsW = box(dots).width;
			out.line = box(probe.querySelector("polyline")).width;
			out.p50 = box(probe.querySelector("path.p-p50")).width;
			out.p99 = box(probe.querySelector("path.p-p99")).width;
		}
		return out;
	})()`, &got)
	lag, probe := res.Lag.Total() > 0, res.Probe != nil
	if got.Lag != lag || got.Probe != probe {
		t.Errorf("resource %d: lag chart %v, probe chart %v; want %v and %v", i, got.Lag, got.Probe, lag, probe)
	}
	if lag && (got.LagCells == 0 || got.LagW <= 0 || got.LagH <= 0 || got.P99W <= 0 || !strings.Contains(got.Legend, "±2 s")) {
		t.Errorf("resource %d: the lag chart has %v cells, the widest %vx%v px, a p99 line %v wide, legend %q; want cells and a line that show, and the ±2 s in the legend",
			i, got.LagCells, got.LagW, got.LagH, got.P99W, got.Legend)
	}
	if probe {
		points := 0
		for _, bk := range res.Buckets {
			if bk.ProbeN > 0 {
				points++
			}
		}
		p := res.Probe
		if int(got.Dots) != points || (points > 1 && (got.DotsW <= 0 || got.Line <= 0)) || got.P50 <= 0 || got.P99 <= 0 ||
			!strings.Contains(got.Legend, fmt.Sprintf("p50 %s, p99 %s", format.Duration(p.P50), format.Duration(p.P99))) {
			t.Errorf("resource %d: the probe chart has %v points (want %d) spread over %v, a line %v wide, p50 and p99 lines %v and %v wide, legend %q",
				i, got.Dots, points, got.DotsW, got.Line, got.P50, got.P99, got.Legend)
		}
	}
	// Hover the middle of a bucket with samples, else with lag, and read it out.
	want, chart, bucket := "", "", -1
	for k, bk := range res.Buckets {
		if probe && bk.ProbeN > 0 && k >= len(res.Buckets)/2 {
			want, chart, bucket = "probe ", "c-probe", k
			break
		}
	}
	if bucket < 0 && lag {
		for k, bk := range res.Buckets {
			if bk.Lag.Total() > 0 {
				want, chart, bucket = "lag (±2 s) ", "c-lag", k
				break
			}
		}
	}
	if bucket < 0 {
		return
	}
	var pt struct{ X, Y float64 }
	b.eval(fmt.Sprintf(`(() => { const p = %s.querySelector("svg.plot.%s"); p.scrollIntoView({block: "center"}); const r = p.getBoundingClientRect();
		const res = JSON.parse(document.getElementById("wc-data").textContent).resources[%d];
		return {x: r.left + (%d + 0.5) * res.bucketMs / res.spanMs * r.width, y: r.top + r.height / 2}; })()`, sec, chart, i, bucket), &pt)
	b.mouse("mouseMoved", pt.X, pt.Y, 0)
	var tip string
	b.eval(sec+`.querySelector(".tip").textContent`, &tip)
	if !strings.Contains(tip, want) {
		t.Errorf("resource %d: hovering bucket %d of its %s chart reads %q, want a line %q", i, bucket, chart, tip, want)
	}
}

// TestTheBrowserTestFailsWithoutABrowser keeps the promise that a missing
// Chromium fails the package at once (in TestMain), with the line that
// installs it, rather than skipping the browser test.
func TestTheBrowserTestFailsWithoutABrowser(t *testing.T) {
	if os.Getenv("WATCHCACHE_BROWSER_PROBE") == "1" {
		chromiumPath(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTheBrowserTestFailsWithoutABrowser$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WATCHCACHE_BROWSER_PROBE=1", "PATH="+t.TempDir(), "WATCHCACHE_CHROMIUM=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "chromium is not installed") ||
		!strings.Contains(string(out), "sudo apt-get install -y chromium") || !strings.Contains(string(out), "hack/test.sh") || strings.Contains(string(out), "SKIP") {
		t.Errorf("without a browser: got %v:\n%s\nwant a failure that says so", err, out)
	}
}
