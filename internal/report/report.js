"use strict";
// The report's one script: zoom and pan on each timeline, read-outs on the
// charts, sortable tables. It reads the JSON data block and never builds
// markup from strings: everything from the trace goes in through textContent.
(function () {
  var SVGNS = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("wc-data").textContent);
  var MS = { us: 1e-3, s: 1e3, m: 6e4, h: 3.6e6 };
  // The axis steps, as the page was drawn with (milliseconds).
  var steps = [];
  for (var p = 1e-6; p < 1000; p *= 10) { steps.push(p, 2 * p, 5 * p); }
  steps.push(1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5);

  function trim(x, prec) {
    var s = x.toFixed(prec);
    if (s.indexOf(".") >= 0) { s = s.replace(/0+$/, "").replace(/\.$/, ""); }
    return s;
  }
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function fmtDur(ms) {
    if (ms <= 0) { return "0s"; }
    if (ms < MS.us) { return Math.round(ms * 1e6) + "ns"; }
    if (ms < 1) { return trim(ms * 1e3, 1) + "µs"; }
    if (ms < MS.s) { return trim(ms, 1) + "ms"; }
    if (ms < MS.m) { return trim(ms / 1e3, 2) + "s"; }
    if (ms < MS.h) { return Math.floor(ms / MS.m) + "m" + two(Math.floor((ms % MS.m) / 1e3)) + "s"; }
    return Math.floor(ms / MS.h) + "h" + two(Math.floor((ms % MS.h) / MS.m)) + "m";
  }
  function fmtOff(ms) { return "+" + fmtDur(ms); }
  function svgEl(name, attrs) {
    var e = document.createElementNS(SVGNS, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    return e;
  }

  function Timeline(svg, res) {
    var self = this;
    this.svg = svg;
    this.res = res;
    this.full = parseFloat(svg.getAttribute("data-span"));
    this.plots = Array.prototype.slice.call(svg.querySelectorAll("svg.plot"));
    var first = this.plots[0];
    this.px = parseFloat(first.getAttribute("x"));
    this.pw = parseFloat(first.getAttribute("width"));
    this.height = svg.viewBox.baseVal.height;
    this.axis = svg.querySelector("g.axis");
    this.wrap = svg.parentNode;
    this.tip = this.wrap.querySelector(".tip");
    this.tools = document.querySelector('.tl-tools[data-tl="' + svg.id.slice(3) + '"]');
    this.range = this.tools ? this.tools.querySelector(".tl-range") : null;
    this.t0 = 0;
    this.span = this.full;
    this.drag = null;
    this.dragged = false;
    svg.addEventListener("pointerdown", function (e) { self.down(e); });
    // A drag across the timeline zooms: it must not select text or drag a link.
    svg.addEventListener("mousedown", function (e) { e.preventDefault(); });
    svg.addEventListener("dragstart", function (e) { e.preventDefault(); });
    svg.addEventListener("pointermove", function (e) { self.move(e); });
    svg.addEventListener("pointerup", function (e) { self.up(e); });
    svg.addEventListener("pointerleave", function () { self.hideTip(); });
    svg.addEventListener("dblclick", function (e) { e.preventDefault(); self.show(0, self.full); });
    svg.addEventListener("click", function (e) {
      if (self.dragged) { e.preventDefault(); e.stopPropagation(); self.dragged = false; }
    }, true);
    if (this.tools) {
      this.tools.addEventListener("click", function (e) {
        var act = e.target.getAttribute && e.target.getAttribute("data-act");
        if (act === "reset") { self.show(0, self.full); }
        if (act === "out") { self.show(self.t0 - self.span, self.span * 3); }
      });
    }
  }
  Timeline.prototype.toSVG = function (e) {
    var pt = this.svg.createSVGPoint();
    pt.x = e.clientX; pt.y = e.clientY;
    return pt.matrixTransform(this.svg.getScreenCTM().inverse());
  };
  Timeline.prototype.timeAt = function (x) { return this.t0 + (x - this.px) / this.pw * this.span; };
  Timeline.prototype.xAt = function (t) { return this.px + (t - this.t0) / this.span * this.pw; };
  Timeline.prototype.show = function (t0, span) {
    span = Math.min(Math.max(span, 1e-3), this.full);
    t0 = Math.min(Math.max(t0, 0), this.full - span);
    this.t0 = t0;
    this.span = span;
    for (var i = 0; i < this.plots.length; i++) {
      var p = this.plots[i];
      p.setAttribute("viewBox", t0 + " 0 " + span + " " + p.getAttribute("height"));
    }
    this.drawAxis();
    if (this.range) {
      this.range.textContent = span >= this.full ? "whole run: " + fmtDur(this.full) : fmtOff(t0) + " to " + fmtOff(t0 + span) + " (" + fmtDur(span) + ")";
    }
  };
  Timeline.prototype.drawAxis = function () {
    var step = steps[steps.length - 1];
    for (var i = 0; i < steps.length; i++) {
      if (this.span / steps[i] <= 8) { step = steps[i]; break; }
    }
    while (this.axis.firstChild) { this.axis.removeChild(this.axis.firstChild); }
    for (var t = Math.ceil(this.t0 / step) * step; t <= this.t0 + this.span + 1e-9; t += step) {
      var x = this.xAt(t).toFixed(1);
      this.axis.appendChild(svgEl("line", { "class": "grid", x1: x, x2: x, y1: 18, y2: this.height }));
      var label = svgEl("text", { x: x, y: 12 });
      label.textContent = fmtOff(t);
      this.axis.appendChild(label);
    }
  };
  Timeline.prototype.down = function (e) {
    if (e.button !== 0) { return; }
    var p = this.toSVG(e);
    if (p.x < this.px || p.x > this.px + this.pw) { return; }
    this.drag = { x: p.x, sel: null };
    this.dragged = false;
  };
  Timeline.prototype.move = function (e) {
    var p = this.toSVG(e);
    if (this.drag) {
      var x = Math.min(Math.max(p.x, this.px), this.px + this.pw);
      if (!this.drag.sel && Math.abs(x - this.drag.x) > 4) {
        this.drag.sel = svgEl("rect", { "class": "sel", y: 18, height: this.height - 18 });
        this.svg.appendChild(this.drag.sel);
        this.svg.setPointerCapture(e.pointerId);
      }
      if (this.drag.sel) {
        this.drag.sel.setAttribute("x", Math.min(x, this.drag.x));
        this.drag.sel.setAttribute("width", Math.abs(x - this.drag.x));
      }
      this.hideTip();
      return;
    }
    this.readout(e, p);
  };
  Timeline.prototype.up = function (e) {
    if (!this.drag) { return; }
    var d = this.drag;
    this.drag = null;
    if (!d.sel) { return; }
    this.svg.removeChild(d.sel);
    var x = Math.min(Math.max(this.toSVG(e).x, this.px), this.px + this.pw);
    var a = this.timeAt(Math.min(x, d.x)), b = this.timeAt(Math.max(x, d.x));
    this.dragged = true;
    this.show(a, b - a);
  };
  // readout shows the bucket under the pointer when it is over a chart.
  Timeline.prototype.readout = function (e, p) {
    var target = e.target;
    var chart = target && target.closest ? target.closest("svg.chart, svg.m-bookmark") : null;
    if (!chart || !this.tip || !this.res || !(this.res.bucketMs > 0)) { this.hideTip(); return; }
    var t = this.timeAt(p.x);
    var i = Math.floor(t / this.res.bucketMs);
    var n = this.res.added.length;
    if (i < 0 || t > this.full) { this.hideTip(); return; }
    // Past the last bucket nothing happened; the object count stays.
    var at = function (a) { return i < n ? a[i] : 0; };
    var objects = n === 0 ? -1 : this.res.objects[Math.min(i, n - 1)];
    var w = this.res.bucketMs;
    var lines = [
      fmtOff(i * w) + " to " + fmtOff((i + 1) * w),
      "ADDED " + at(this.res.added) + "  MODIFIED " + at(this.res.modified) + "  DELETED " + at(this.res.deleted),
      "objects " + (objects < 0 ? "none listed yet" : objects) + "  bookmarks " + at(this.res.bookmarks)
    ];
    if (this.res.lag && i < n) {
      var lag = this.res.lag[i], names = ["<2s", "2-5s", "5-15s", "15-60s", ">60s"], parts = [], total = 0;
      for (var k = 0; k < lag.length; k++) { total += lag[k]; }
      if (total > 0) {
        var rank = Math.ceil(0.99 * total), seen = 0, p99 = -1;
        for (var q = 0; q < lag.length; q++) {
          parts.push(names[q] + " " + lag[q]);
          seen += lag[q];
          if (p99 < 0 && seen >= rank) { p99 = q; }
        }
        lines.push("lag (±2 s) " + parts.join("  ") + "  p99 in " + names[p99]);
      }
    }
    if (this.res.probeN && i < n && this.res.probeN[i] > 0) {
      var pn = this.res.probeN[i];
      lines.push("probe " + pn + (pn === 1 ? " sample " + fmtDur(this.res.probeMaxMs[i]) :
        " samples " + fmtDur(this.res.probeMinMs[i]) + " to " + fmtDur(this.res.probeMaxMs[i])));
    }
    this.tip.textContent = lines.join("\n");
    this.tip.hidden = false;
    var box = this.wrap.getBoundingClientRect();
    var left = e.clientX - box.left + 14;
    if (left + this.tip.offsetWidth > box.width) { left = e.clientX - box.left - this.tip.offsetWidth - 14; }
    this.tip.style.left = left + "px";
    this.tip.style.top = (e.clientY - box.top + 14) + "px";
  };
  Timeline.prototype.hideTip = function () { if (this.tip) { this.tip.hidden = true; } };

  var timelines = document.querySelectorAll("svg.timeline");
  for (var i = 0; i < timelines.length; i++) {
    new Timeline(timelines[i], data.resources[i]);
  }

  // Sortable tables: a click on a header sorts by its column (data-v when
  // a cell has one, else its text); a second click reverses. A detail row
  // moves with the row before it.
  function sortBy(table, th) {
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var num = th.getAttribute("data-sort") === "num";
    var asc = !th.classList.contains("asc");
    var heads = th.parentNode.children;
    for (var h = 0; h < heads.length; h++) { heads[h].classList.remove("asc", "desc"); }
    th.classList.add(asc ? "asc" : "desc");
    var body = table.tBodies[0];
    var rows = [];
    var all = Array.prototype.slice.call(body.rows);
    for (var r = 0; r < all.length; r++) {
      var row = all[r];
      if (row.classList.contains("gap")) { row.hidden = true; continue; }
      if (row.classList.contains("detail")) {
        if (rows.length) { rows[rows.length - 1].details.push(row); }
        continue;
      }
      var cell = row.cells[col];
      var v = cell ? (cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent) : "";
      rows.push({ row: row, v: num ? parseFloat(v) || 0 : v.toLowerCase(), i: r, details: [] });
    }
    rows.sort(function (a, b) {
      var c = a.v < b.v ? -1 : a.v > b.v ? 1 : a.i - b.i;
      return asc ? c : -c;
    });
    for (var k = 0; k < rows.length; k++) {
      body.appendChild(rows[k].row);
      for (var d = 0; d < rows[k].details.length; d++) { body.appendChild(rows[k].details[d]); }
    }
  }
  var tables = document.querySelectorAll("table.sortable");
  for (var t = 0; t < tables.length; t++) {
    (function (table) {
      table.tHead.addEventListener("click", function (e) {
        var th = e.target.closest ? e.target.closest("th[data-sort]") : null;
        if (th) { sortBy(table, th); }
      });
    })(tables[t]);
  }
  document.documentElement.setAttribute("data-ready", "true");
})();
