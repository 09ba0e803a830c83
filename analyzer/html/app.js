// SPDX-License-Identifier: MIT
// The HTML report's core (the page's contract: analyzer/html_data.h): reads the JSON data, owns the
// time window, draws the charts (uPlot), the tabs, the top sites table, the histogram and the source
// snippets of the leaks, and hands per-site costs for the window to the trees and flame graph modules
// (trees.js, flame.js: CTTrees, CTFlame) whenever the window changes. Aggregates are per site and per
// time slice, never per event, so a window change costs one pass over the sites' slices.
(function () {
  "use strict";
  const html = document.documentElement;
  const KINDS = ["definite", "indirect", "possible", "reachable", "unscanned"];
  const KIND_LABELS = ["definitely lost", "indirectly lost", "possibly lost", "still reachable", "never scanned"];
  const SITE_ROWS = 500; // rows of the top sites table drawn (the rest are counted in a line)
  const STACK_TOP = 10; // sites stacked in the heap chart, the others are "other"
  const PALETTE = ["#d9661f", "#2b6cb0", "#2f855a", "#b7791f", "#6b46c1", "#c53030", "#2c7a7b",
    "#97266d", "#4a5568", "#dd6b20"];

  function fail(e) {
    const msg = (e && (e.stack || e.message)) || String(e);
    html.setAttribute("data-errors", (html.getAttribute("data-errors") || "") + msg + "\n");
    if (window.console) console.error(e);
  }

  // ---- formatting ----

  function bytes(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let u = 0;
    while (Math.abs(n) >= 1024 && u < units.length - 1) n /= 1024, u++;
    return (u ? n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) : String(Math.round(n))) + " " + units[u];
  }
  function count(n) {
    return Math.round(n).toLocaleString("en-US");
  }
  // An axis's counts: 950, 12.5k, 3.2M (a full count would not fit the axis's width).
  function short(n) {
    const a = Math.abs(n);
    return a >= 1e9 ? +(n / 1e9).toFixed(1) + "G" : a >= 1e6 ? +(n / 1e6).toFixed(1) + "M" :
      a >= 1e4 ? +(n / 1e3).toFixed(1) + "k" : String(+n.toFixed(2));
  }
  // A slice's width: 8 µs, 512 µs, 16.384 ms, 2.097 s.
  function span(us) {
    return us >= 1e6 ? +(us / 1e6).toFixed(3) + " s" : us >= 1000 ? +(us / 1000).toFixed(3) + " ms" : us + " \u00b5s";
  }
  // Seconds to the millisecond, or to the microsecond for a run shorter than 0.1 s.
  function secs(us) {
    return (us / 1e6).toFixed(D.meta.runtime_us >= 1e5 ? 3 : 6) + " s";
  }
  // Tick labels with the decimals their spacing needs.
  function ticks(u, splits) {
    const step = splits.length > 1 ? Math.abs(splits[1] - splits[0]) : 1;
    const dec = Math.max(0, Math.min(9, -Math.floor(Math.log10(step || 1))));
    return splits.map(v => v.toFixed(dec));
  }
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), attrs[k]);
      else if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    }
    for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
    return e;
  }

  // ---- the data ----

  const D = JSON.parse(document.getElementById("ct-data").textContent);
  const T = D.timeline;
  // Two resolutions: the whole heap's arrays have NS slices of T.width_us; the sites' (T.sites) SN
  // slices of SW, a power-of-two multiple (RATIO) of it, coarser when many busy stacks made the
  // analyzer merge them. A window is a range of site slices [a, b): per-site figures exist at no finer.
  const NS = T.n;
  const SN = T.site_n === undefined ? T.n : T.site_n;
  const SW = T.site_width_us || T.width_us;
  const RATIO = Math.max(1, Math.round(SW / T.width_us));
  const SITES = D.sites;
  const N = SITES.length;
  const state = { a: 0, b: SN, view: null, costs: null, sort: { col: "n", desc: true } };
  // The first options of the trees and the flame graph, which keep their own controls from then on.
  const treeOpts = { cost: "allocated", byLine: false, icicle: false, hide: null, search: "" };

  function frameOf(site) {
    const st = D.stacks[SITES[site].stack];
    return st && st.length ? D.frames[st[0]] : null;
  }
  function siteName(site) {
    const f = frameOf(site);
    return f ? f.fn : "(no frame)";
  }
  function siteFull(site) {
    const f = frameOf(site);
    return f ? f.full + (f.file ? " at " + f.file + ":" + f.line : "") : "";
  }
  function where(f) {
    return f.file ? f.file.split("/").pop() + ":" + f.line : f.module || "";
  }

  // A site's name for lists (the table, the histogram, the heap chart's legend): its function and,
  // where sites of one function must be told apart, its caller and the frames where its stack parts
  // from the others' ("f ← caller", "f ← caller ← … ← g"; a frame's line when it parts by it alone),
  // at most PARTINGS of those, then its index ("… #12") when more would be needed (the full stack is
  // on hover and in the row's backtrace). Made once for every site: a walk of the stacks' common
  // prefixes, O(frames).
  const PARTINGS = 2;
  let labels = null;
  function siteLabel(site) {
    if (!labels) labels = labelSites();
    return labels[site];
  }
  function labelSites() {
    const out = new Array(N), groups = new Map();
    for (let i = 0; i < N; i++) {
      const name = out[i] = siteName(i), g = groups.get(name);
      if (g) g.push(i);
      else groups.set(name, [i]);
    }
    const frameAt = (i, d) => {
      const st = D.stacks[SITES[i].stack] || [];
      return d < st.length ? st[d] : -1;
    };
    // A frame's line when it tells apart frames of one function (without a file, they differ by an
    // address the page does not hold: the later partings tell them apart).
    const lineOf = (k, line) => line && k >= 0 && D.frames[k].file ? " (" + where(D.frames[k]) + ")" : "";
    const word = (k, line) => k < 0 ? "(top)" : D.frames[k].fn + lineOf(k, line);
    // path: [depth, frame, with its line] of the frames named so far (the caller, the partings).
    // twins: sites with the same stack as i's (or one too deep to part): told apart by their index.
    const name = (i, path, twins) => {
      let text = siteName(i), at = 0, parts = 0;
      for (const [d, k, line] of path) {
        if (d > 1 && ++parts > PARTINGS) return text + " \u2190 \u2026 #" + i;
        if (d === 0) text += lineOf(k, true);
        else text += (d === at + 1 ? " \u2190 " : " \u2190 \u2026 \u2190 ") + word(k, line);
        at = d;
      }
      return twins ? text + " #" + i : text;
    };
    // Sites sharing their frames 0..d-1: grouped by their frame at depth d. A group that would need
    // more partings than PARTINGS to tell apart is named by index at once (no deeper walk).
    const partings = path => path.reduce((n, [d]) => n + (d > 1), 0);
    const part = (sites, d, path) => {
      const by = new Map();
      for (const i of sites) {
        const k = frameAt(i, d), g = by.get(k);
        if (g) g.push(i);
        else by.set(k, [i]);
      }
      const fns = new Map(); // functions of several frames here: those frames are told apart by line
      if (by.size > 1) for (const k of by.keys()) if (k >= 0) fns.set(D.frames[k].fn, (fns.get(D.frames[k].fn) || 0) + 1);
      for (const [k, g] of by) {
        const named = by.size > 1 || d === 1 ? path.concat([[d, k, k >= 0 && fns.get(D.frames[k].fn) > 1]]) : path;
        if (g.length === 1) out[g[0]] = name(g[0], named);
        else if (k < 0 || d >= 255) for (const i of g) out[i] = name(i, named, true);
        else if (partings(named) >= PARTINGS) for (const i of g) out[i] = name(i, named) + " \u2190 \u2026 #" + i;
        else part(g, d + 1, named);
      }
    };
    for (const g of groups.values()) if (g.length > 1) part(g, 0, []);
    return out;
  }

  // Per-site figures of window [a, b) of site slices (the contract's arithmetic): allocated in it, live
  // at its end, growth over it. The whole run takes the sites' own figures, which carry the peak and
  // the kinds.
  function computeCosts(a, b) {
    const whole = a === 0 && b === SN;
    const c = {};
    for (const k of ["allocations", "allocated", "temporary", "peak", "live", "definite", "indirect",
      "possible", "reachable"]) c[k] = new Float64Array(N);
    // Not costs of the contract (the trees would show them as columns): the table's alone.
    const liven = new Float64Array(N), growth = new Float64Array(N);
    Object.defineProperty(c, "liven", { value: liven, enumerable: false });
    Object.defineProperty(c, "growth", { value: growth, enumerable: false });
    for (let i = 0; i < N; i++) {
      const s = SITES[i];
      if (s.kinds) for (let k = 0; k < 4; k++) c[KINDS[k]][i] = s.kinds[k][1];
      if (whole) {
        c.allocations[i] = s.n, c.allocated[i] = s.bytes, c.temporary[i] = s.temp;
        c.peak[i] = s.peak, c.live[i] = s.live, liven[i] = s.liven;
        growth[i] = s.live;
        continue;
      }
      const v = T.sites[i] || [];
      let n = 0, by = 0, tmp = 0, live = 0, ln = 0, grow = 0;
      for (let j = 0; j < v.length; j += 6) {
        const sl = v[j];
        if (sl >= b) break;
        live += v[j + 2] - v[j + 4], ln += v[j + 1] - v[j + 3];
        if (sl >= a) n += v[j + 1], by += v[j + 2], tmp += v[j + 5], grow += v[j + 2] - v[j + 4];
      }
      c.allocations[i] = n, c.allocated[i] = by, c.temporary[i] = tmp;
      c.live[i] = live, liven[i] = ln, c.peak[i] = live, growth[i] = Math.max(0, grow);
    }
    return c;
  }

  // ---- the time window ----

  // The window in seconds; its edges are site slices', which the text says when they are coarser than
  // the charts' slices (the selection snapped to them).
  function windowText() {
    if (state.a === 0 && state.b === SN) return "window: the whole run (" + secs(D.meta.runtime_us) + ")";
    const from = state.a * SW, to = Math.min(state.b * SW, Math.max(D.meta.runtime_us, from));
    return "window: " + secs(from) + " \u2013 " + secs(to) + (RATIO > 1 ? " (per-site figures at " + span(SW) + " steps)" : "");
  }

  // Window [a, b) of site slices.
  function setWindow(a, b) {
    a = Math.max(0, Math.min(SN - 1, a)), b = Math.max(a + 1, Math.min(SN, b));
    if (SN === 0) a = 0, b = 0;
    state.a = a, state.b = b;
    state.costs = computeCosts(a, b);
    for (const e of document.querySelectorAll("[data-test=window]")) e.textContent = windowText();
    for (const e of document.querySelectorAll("[data-test=window-reset]")) e.disabled = a === 0 && b === SN;
    for (const u of window.ctCharts || []) u.redraw(false, false);
    drawWindowFigures();
    redrawViews();
  }

  // From chart x values (seconds) to the site slices the range touches.
  function selectSeconds(x0, x1) {
    const w = SW / 1e6;
    setWindow(Math.floor(Math.max(0, x0) / w), Math.ceil(Math.max(x0, x1) / w));
  }

  function drawWindowFigures() {
    const box = document.getElementById("window-figures");
    if (!box) return;
    const c = state.costs;
    let n = 0, by = 0, tmp = 0, live = 0;
    for (let i = 0; i < N; i++) n += c.allocations[i], by += c.allocated[i], tmp += c.temporary[i], live += c.live[i];
    box.replaceChildren(
      el("span", { "data-test": "window-allocations", "data-value": n, text: count(n) + " allocations" }), " \u00b7 ",
      el("span", { "data-test": "window-bytes", "data-value": by, text: bytes(by) + " allocated" }), " \u00b7 ",
      el("span", { "data-test": "window-temporary", "data-value": tmp, text: count(tmp) + " temporary" }), " \u00b7 ",
      el("span", { "data-test": "window-live", "data-value": live, text: bytes(live) + " live at its end" }));
  }

  // ---- charts ----

  // Marks as labelled vertical lines, the window as a shaded band.
  function overlayPlugin() {
    return {
      hooks: {
        draw: [u => {
          const ctx = u.ctx, top = u.bbox.top, h = u.bbox.height, dpr = devicePixelRatio || 1;
          ctx.save();
          if (!(state.a === 0 && state.b === SN)) {
            const x0 = u.valToPos(state.a * SW / 1e6, "x", true);
            const x1 = u.valToPos(state.b * SW / 1e6, "x", true);
            ctx.fillStyle = "rgba(43,108,176,0.12)";
            ctx.fillRect(x0, top, Math.max(1, x1 - x0), h);
          }
          ctx.strokeStyle = "#8a5a00", ctx.fillStyle = "#8a5a00", ctx.lineWidth = dpr;
          ctx.font = (11 * dpr) + "px system-ui,sans-serif";
          ctx.setLineDash([4 * dpr, 3 * dpr]);
          for (const m of D.marks) {
            const x = Math.round(u.valToPos(m.t / 1e6, "x", true));
            ctx.beginPath(), ctx.moveTo(x, top), ctx.lineTo(x, top + h), ctx.stroke();
            ctx.fillText(m.name, x + 3 * dpr, top + 11 * dpr);
          }
          ctx.restore();
        }],
        setSelect: [u => {
          if (u.select.width < 2) return;
          const x0 = u.posToVal(u.select.left, "x"), x1 = u.posToVal(u.select.left + u.select.width, "x");
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          selectSeconds(x0, x1);
        }],
        ready: [u => u.over.addEventListener("dblclick", () => setWindow(0, SN))],
      },
    };
  }

  function chartWidth(box) {
    return Math.max(320, Math.min(1400, box.clientWidth || 1000));
  }

  function makeChart(box, title, testId, series, data, yfmt) {
    const holder = el("div", { class: "chart", "data-test": "chart-" + testId });
    box.append(el("h3", { text: title }), holder);
    const opts = {
      width: chartWidth(box), height: 200, plugins: [overlayPlugin()],
      cursor: { sync: { key: "ct" }, drag: { x: true, y: false, setScale: false } },
      scales: { x: { time: false } },
      axes: [{ label: "time (s)", values: ticks },
        { size: 80, values: (u, v) => v.map(yfmt) }],
      series: [{ label: "time", value: (u, v) => v === null ? "" : v.toFixed(4) + " s" }].concat(series),
      legend: { live: true },
    };
    const u = new uPlot(opts, data, holder);
    window.ctCharts.push(u);
    return u;
  }

  // Heap in use stacked by the top sites (each site's live bytes at each site slice's end), the rest
  // as "other" up to the heap's highest in the site slice: heaptrack_gui's "consumed". The bands are at
  // the sites' resolution, held over each site slice's heap slices; when that is coarser than the
  // heap's, the whole heap (its highest per slice) is a line on top at full resolution.
  function heapSeries(xs) {
    // Ranked by the most each site held at a slice's end (its own peak), not at the global peak: a
    // phase that freed everything before the peak still shows.
    const most = new Float64Array(N), order = [];
    for (let i = 0; i < N; i++) {
      const v = T.sites[i] || [];
      let live = 0;
      for (let j = 0; j < v.length; j += 6) live += v[j + 2] - v[j + 4], most[i] = Math.max(most[i], live);
      if (most[i] > 0) order.push(i);
    }
    order.sort((p, q) => (most[q] - most[p]) || p - q);
    const top = order.slice(0, STACK_TOP);
    const raw = top.map(site => {
      const y = new Float64Array(SN), v = T.sites[site] || [];
      let live = 0, j = 0;
      for (let s = 0; s < SN; s++) {
        for (; j < v.length && v[j] === s; j += 6) live += v[j + 2] - v[j + 4];
        y[s] = live;
      }
      return y;
    });
    const most_heap = new Float64Array(SN);
    for (let s = 0; s < NS; s++) {
      const k = Math.floor(s / RATIO);
      most_heap[k] = Math.max(most_heap[k], T.heap[s]);
    }
    const other = new Float64Array(SN);
    for (let s = 0; s < SN; s++) {
      let sum = 0;
      for (const y of raw) sum += y[s];
      other[s] = Math.max(0, most_heap[s] - sum);
    }
    raw.push(other);
    const names = top.map(siteLabel);
    names.push("other");
    // Cumulative from the bottom, at the heap's slices; drawn from the top of the stack down, so each
    // fill shows its band.
    const cum = [];
    let acc = new Float64Array(NS);
    for (const y of raw) {
      const c = new Float64Array(NS);
      for (let s = 0; s < NS; s++) c[s] = acc[s] + y[Math.floor(s / RATIO)];
      cum.push(c), acc = c;
    }
    const series = [], data = [xs];
    for (let k = raw.length - 1; k >= 0; k--) {
      const colour = k === raw.length - 1 ? "#a0aec0" : PALETTE[k % PALETTE.length], y = raw[k];
      series.push({ label: names[k], stroke: colour, fill: colour + "cc", width: 1,
        value: (u, v, si, i) => i === null || i === undefined ? "" : bytes(y[Math.floor(i / RATIO)]) });
      data.push(Array.from(cum[k]));
    }
    if (RATIO > 1) {
      series.push({ label: "heap in use (highest per " + span(T.width_us) + ")", stroke: "#1a202c", width: 1.5,
        value: (u, v) => v === null ? "" : bytes(v) });
      data.push(Array.from(T.heap));
    }
    return { series, data };
  }

  function drawTimeline(view) {
    view.replaceChildren();
    window.ctCharts = [];
    const bar = el("p", { class: "window-bar" },
      el("span", { "data-test": "window", class: "window-text", text: windowText() }), " ",
      el("button", { "data-test": "window-reset", type: "button", onclick: () => setWindow(0, SN), text: "reset" }),
      el("span", { class: "hint", text: " drag across a chart to select a window; double-click resets" }));
    view.append(el("h2", { text: "Memory over time" }), bar, el("p", { id: "window-figures", class: "window-figures" }));
    if (!NS) {
      view.append(el("p", { text: "No samples: the trace holds no time." }));
      return;
    }
    const xs = new Array(NS);
    for (let s = 0; s < NS; s++) xs[s] = s * T.width_us / 1e6;
    const heap = heapSeries(xs);
    makeChart(view, "Heap in use by site (the " + STACK_TOP + " that held most, then the others" +
      (RATIO > 1 ? "; sites at " + span(SW) + " steps, the whole heap at " + span(T.width_us) : "") + ")", "heap",
      heap.series, heap.data, bytes);
    makeChart(view, "Allocations per slice (" + span(T.width_us) + ")",
      "allocs", [{ label: "allocations", stroke: "#2b6cb0", fill: "#2b6cb040", paths: uPlot.paths.stepped({ align: 1 }) }],
      [xs, Array.from(T.allocs)], short);
    makeChart(view, "Temporary allocations per slice", "temps",
      [{ label: "temporary", stroke: "#c53030", fill: "#c5303040", paths: uPlot.paths.stepped({ align: 1 }) }],
      [xs, Array.from(T.temps)], short);
    makeChart(view, "Resident memory (RSS)", "rss",
      [{ label: "RSS", stroke: "#2f855a", width: 2, spanGaps: true, value: (u, v) => v === null ? "" : bytes(v) }],
      [xs, T.rss.map(v => v || null)], bytes);
    drawWindowFigures();
  }

  // ---- source snippets ----

  function snippet(file, line) {
    const src = file && D.sources[file];
    if (!src || !line) return null;
    const ctx = 3, lines = [];
    for (let l = Math.max(src.first, line - ctx); l <= line + ctx && l - src.first < src.lines.length; l++) {
      const text = src.lines[l - src.first];
      lines.push(el("span", { class: l === line ? "src-line here" : "src-line" },
        el("span", { class: "ln", text: String(l) }), text + "\n"));
    }
    return lines.length ? el("pre", { class: "src", "data-test": "source", title: file }, ...lines) : null;
  }

  function backtrace(site) {
    const ol = el("ol", { class: "bt" });
    for (const fi of D.stacks[SITES[site].stack] || []) {
      const f = D.frames[fi];
      const li = el("li", {}, el("b", { title: f.full, text: f.fn }),
        f.file ? el("span", { class: "loc", text: " at " + f.file + ":" + f.line }) : null,
        f.module ? el("span", { class: "mod", text: " (" + f.module + ")" }) : null,
        f.inl ? el("span", { class: "inl", text: " [inlined]" }) : null);
      const s = snippet(f.file, f.line);
      if (s) li.append(s);
      ol.append(li);
    }
    return ol;
  }

  // The leaks are the exit scan's, whatever the window: with one selected, a note under the heading says
  // so (the other views narrow to it).
  function drawLeaksNote(view) {
    let note = view.querySelector("[data-test=leaks-window]");
    if (!note) {
      note = el("p", { class: "window-note", "data-test": "leaks-window" });
      const h = view.querySelector("h2");
      if (h) h.after(note);
      else view.prepend(note);
    }
    const whole = state.a === 0 && state.b === SN;
    note.hidden = whole;
    note.textContent = whole ? "" : windowText() + ": leak classes are those of the exit scan; the window does not narrow them.";
  }

  // The server-rendered leaks get the source around each frame's line, the first one open.
  function enhanceLeaks(view) {
    for (const d of view.querySelectorAll("details.leak")) {
      let first = true;
      for (const li of d.querySelectorAll("ol.bt > li[data-file]")) {
        const s = snippet(li.dataset.file, +li.dataset.line);
        if (!s) continue;
        const box = el("details", { class: "src-box" }, el("summary", { text: "source" }), s);
        if (first) box.open = true, first = false;
        li.append(box);
      }
    }
  }

  // ---- top sites ----

  // The whole run: the peak and what was live at exit (its growth, the same figure, is not repeated).
  // A window: what was live at its end and its growth, then the whole run's live at exit beside them.
  function siteColumns() {
    const whole = state.a === 0 && state.b === SN;
    const cols = [
      { id: "n", label: "allocations", get: i => state.costs.allocations[i], fmt: count },
      { id: "bytes", label: "bytes allocated", get: i => state.costs.allocated[i], fmt: bytes },
      { id: "temp", label: "temporary", get: i => state.costs.temporary[i], fmt: count },
    ];
    if (whole)
      cols.push({ id: "peak", label: "at the peak", get: i => SITES[i].peak, fmt: bytes },
        { id: "live", label: "live at exit", get: i => state.costs.live[i], fmt: bytes });
    else
      cols.push({ id: "live", label: "live at the window's end", get: i => state.costs.live[i], fmt: bytes },
        { id: "growth", label: "growth in the window", get: i => state.costs.growth[i], fmt: bytes },
        { id: "exit", label: "live at exit (whole run)", get: i => SITES[i].live, fmt: bytes });
    if (D.meta.classified)
      for (let k = 0; k < 4; k++) cols.push({ id: KINDS[k], label: KIND_LABELS[k], get: i => state.costs[KINDS[k]][i], fmt: bytes });
    return cols;
  }

  function drawSites(view) {
    const cols = siteColumns();
    const col = cols.find(c => c.id === state.sort.col) || cols[0];
    const rows = [];
    for (let i = 0; i < N; i++) if (state.costs.allocations[i] > 0 || state.costs.live[i] > 0) rows.push(i);
    rows.sort((p, q) => (state.sort.desc ? col.get(q) - col.get(p) : col.get(p) - col.get(q)) || p - q);
    const head = el("tr", {}, el("th", { text: "site" }), el("th", { text: "where" }),
      ...cols.map(c => el("th", {
        class: "num sortable" + (c === col ? (state.sort.desc ? " desc" : " asc") : ""), "data-col": c.id,
        "data-test": "sort-" + c.id, text: c.label,
        onclick: () => {
          state.sort = { col: c.id, desc: c === col ? !state.sort.desc : true };
          drawSites(view);
        },
      })));
    const body = el("tbody");
    for (const i of rows.slice(0, SITE_ROWS)) {
      const f = frameOf(i);
      const tr = el("tr", { class: "site", "data-test": "site-row", "data-site": i, "data-name": f ? f.fn : "" },
        el("td", { class: "name", title: siteFull(i), text: siteLabel(i) }),
        el("td", { class: "where", title: f && f.file ? f.file + ":" + f.line : "", text: f ? where(f) : "" }),
        ...cols.map(c => el("td", { class: "num", "data-col": c.id, "data-value": c.get(i), text: c.fmt(c.get(i)) })));
      tr.addEventListener("click", () => {
        const next = tr.nextSibling;
        if (next && next.classList.contains("detail")) return next.remove();
        tr.after(el("tr", { class: "detail" }, el("td", { colspan: cols.length + 2 }, backtrace(i))));
      });
      body.append(tr);
    }
    const more = rows.length > SITE_ROWS ? el("p", { text: (rows.length - SITE_ROWS) + " more sites not shown (sort by another column to see them)." }) : null;
    view.replaceChildren(el("h2", { text: "Top sites" }),
      el("p", { class: "window-note", "data-test": "window", text: windowText() }),
      el("p", { class: "hint", text: rows.length + " sites with allocations in the window or blocks live at its end; click a row for its backtrace." }),
      el("div", { class: "table-wrap" }, el("table", { class: "sites", "data-test": "sites" }, el("thead", {}, head), body)));
    if (more) view.append(more);
  }

  // ---- histogram ----

  // The buckets of the window: the whole run's as written; a narrower window spreads each site's
  // allocations in it over the site's size buckets as over the whole run (exact for a site of one
  // bucket, the usual case; "≈" marks the figures it is not exact for).
  function histogramOf() {
    const H = D.histogram, whole = state.a === 0 && state.b === SN;
    const rows = H.map(b => ({ lo: b.lo, hi: b.hi, n: 0, bytes: 0, temp: 0, live: 0, top: [], approx: false, sites: new Map() }));
    if (whole) return H.map(b => Object.assign({}, b, { approx: false }));
    const index = new Map(H.map((b, r) => [b.lo === 0 ? 0 : Math.round(Math.log2(b.lo)) + 1, r]));
    const c = state.costs;
    for (let i = 0; i < N; i++) {
      const s = SITES[i], hb = s.hb || [];
      if (!c.allocations[i] && !c.liven[i]) continue;
      const one = hb.length === 5;
      for (let j = 0; j < hb.length; j += 5) {
        const row = rows[index.get(hb[j])];
        if (!row) continue;
        const n = s.n ? c.allocations[i] * hb[j + 1] / s.n : 0;
        row.n += n;
        row.bytes += s.bytes ? c.allocated[i] * hb[j + 2] / s.bytes : 0;
        row.temp += s.temp ? c.temporary[i] * hb[j + 3] / s.temp : 0;
        row.live += s.n ? c.liven[i] * hb[j + 1] / s.n : 0;
        row.approx = row.approx || !one;
        if (n > 0) row.sites.set(i, n);
      }
    }
    for (const row of rows) row.top = [...row.sites].sort((p, q) => q[1] - p[1] || p[0] - q[0]).slice(0, 5);
    return rows;
  }

  function drawHistogram(view) {
    const H = histogramOf();
    const max = Math.max(1, ...H.map(b => b.n));
    const fmt = (b, v, f) => (b.approx && v ? "\u2248" : "") + f(v);
    const body = el("tbody");
    for (const b of H) {
      const tr = el("tr", { class: "bucket", "data-test": "bucket", "data-lo": b.lo, "data-n": Math.round(b.n) },
        el("td", { text: b.lo === b.hi ? String(b.lo) : b.lo + " \u2013 " + b.hi }),
        el("td", { class: "num", text: fmt(b, b.n, count) }),
        el("td", { class: "bar" }, el("span", { style: "width:" + (100 * b.n / max).toFixed(1) + "%" })),
        el("td", { class: "num", text: fmt(b, b.bytes, bytes) }),
        el("td", { class: "num", text: fmt(b, b.temp, count) }),
        el("td", { class: "num", text: fmt(b, b.live, count) }));
      tr.addEventListener("click", () => {
        const next = tr.nextSibling;
        if (next && next.classList.contains("detail")) return next.remove();
        const ul = el("ul", { class: "top" }, ...b.top.map(([site, n]) =>
          el("li", {}, el("span", { title: siteFull(site), text: siteLabel(site) }), " \u2014 " + fmt(b, n, count) + " allocations")));
        tr.after(el("tr", { class: "detail" }, el("td", { colspan: 6 }, ul)));
      });
      body.append(tr);
    }
    view.replaceChildren(el("h2", { text: "Allocation sizes" }),
      el("p", { class: "window-note", "data-test": "window", text: windowText() }),
      el("p", { class: "hint", text: "Power-of-two buckets; click a bucket for its top sites. Live: blocks live at the window's end." }),
      el("table", { class: "histogram", "data-test": "histogram" }, el("thead", {}, el("tr", {},
        ...["size (bytes)", "allocations", "", "bytes", "temporary", "live"].map(t => el("th", { text: t })))), body));
  }

  // ---- trees, flame graph, diff ----

  function moduleView(view, title, mod) {
    if (!view.querySelector(".module-body")) {
      const body = el("div", { class: "module-body" });
      view.replaceChildren(el("h2", { text: title }), el("p", { class: "window-note", "data-test": "window", text: windowText() }), body);
    }
    drawModule(view, mod);
  }

  function drawModule(view, mod) {
    const body = view.querySelector(".module-body");
    const m = window[mod];
    view.querySelector(".window-note").textContent = windowText();
    if (!m || typeof m.render !== "function") {
      body.textContent = "This view is not part of this build of ctrack.";
      return;
    }
    m.render(body, D, state.costs, Object.assign({}, treeOpts));
  }

  function drawDiff(view) {
    const d = D.diff;
    if (!d) return;
    if (window.CTDiff && typeof window.CTDiff.render === "function") return window.CTDiff.render(view, D, state.costs);
    const sites = d.sites || [];
    const keys = sites.length ? Object.keys(sites[0]).filter(k => typeof sites[0][k] !== "object") : [];
    view.replaceChildren(el("h2", { text: "Compared with " + d.base }),
      el("table", { class: "sites", "data-test": "diff" }, el("thead", {}, el("tr", {}, ...keys.map(k => el("th", { text: k })))),
        el("tbody", {}, ...sites.slice(0, SITE_ROWS).map(s => el("tr", {}, ...keys.map(k => el("td", { text: String(s[k]) })))))));
  }

  // ---- tabs ----

  const DRAW = {
    timeline: null, // drawn once; the window redraws its overlay
    leaks: drawLeaksNote,
    sites: drawSites,
    trees: v => moduleView(v, "Call trees", "CTTrees"),
    flame: v => moduleView(v, "Flame graph", "CTFlame"),
    histogram: drawHistogram,
    diff: drawDiff,
    details: null,
  };

  function redrawViews() {
    const v = document.getElementById("view-" + state.view);
    const fn = v && DRAW[state.view];
    if (!fn) return;
    try {
      fn(v);
    } catch (e) {
      fail(e);
    }
  }

  function show(name) {
    state.view = name;
    for (const v of document.querySelectorAll("section.view")) v.hidden = v.dataset.view !== name;
    for (const t of document.querySelectorAll("#tabs button")) t.classList.toggle("on", t.dataset.view === name);
    redrawViews();
    if (name === "timeline") onResize();
  }

  function makeTabs() {
    const nav = document.getElementById("tabs");
    for (const v of document.querySelectorAll("section.view")) {
      const name = v.dataset.view;
      if (name === "diff" && !D.diff) continue;
      if (name === "details" && !v.querySelector("h2")) continue;
      nav.append(el("button", { type: "button", "data-view": name, "data-test": "tab-" + name, text: v.dataset.title,
        onclick: () => show(name) }));
    }
  }

  // A zoomed or resized page redraws the charts at the new width (once the resizing pauses).
  let resizing = 0;
  function onResize() {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      const view = document.getElementById("view-timeline");
      if (view.hidden) return;
      for (const u of window.ctCharts || []) u.setSize({ width: chartWidth(view), height: 200 });
    }, 150);
  }

  function init() {
    html.classList.add("js");
    window.ctCharts = [];
    window.ctData = D;
    state.costs = computeCosts(0, SN);
    makeTabs();
    drawTimeline(document.getElementById("view-timeline"));
    enhanceLeaks(document.getElementById("view-leaks"));
    show("timeline");
    window.addEventListener("resize", onResize);
    window.ctReport = { setWindow, selectSeconds, show, state };
    html.dataset.ready = "1";
  }

  function start() {
    try {
      init();
    } catch (e) {
      fail(e);
    }
  }
  // The page's scripts come before its body: draw once the document is parsed.
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
