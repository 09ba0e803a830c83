// SPDX-License-Identifier: MIT
// flame.js: the HTML report's flame graph (global CTFlame), drawn by d3-flame-graph 5.0.0 from the sites'
// stacks merged by function (or per call line) and one per-site cost array of the current time window;
// with search and its matched share, an icicle toggle, frames hidden by a pattern, and zoom kept per element.
// It uses trees.js's stack index and formatting (CTTrees, looked up when drawing, whatever the load order).
(function () {
	'use strict';

	// Frames an analysis of the program's own code rarely wants: the allocator's entry points and
	// wrappers, C++'s and Rust's allocation layers, and the runtime's thread and process starts.
	var PRESET = '^(operator new|operator delete|std::allocator|std::__new_allocator|__gnu_cxx::new_allocator|' +
	             'std::allocator_traits|std::_Vector_base|std::__cxx11::basic_string<…>::_M_create|__rust_alloc|' +
	             'alloc::|__libc_|__GI_|_dl_|_IO_|start_thread|clone3?$|_start$)';
	var MAX_NODES = 30000; // nodes given to d3-flame-graph: the smallest go first (narrower than a pixel)
	var HL = '#e600e6';    // the highlight colour of matched frames
	var CSS = [
		'.ct-flame{font:13px system-ui,sans-serif}',
		'.ct-flame .ct-bar{display:flex;flex-wrap:wrap;gap:.6em;align-items:center;margin:.4em 0}',
		'.ct-flame .ct-details{min-height:1.4em;color:#444;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}',
		'.ct-flame input.ct-bad{background:#fdd}',
		'.ct-flame .ct-empty{color:#777;padding:.5em}',
		'.ct-flame .d3-flame-graph-tip{max-width:40em;white-space:normal;word-break:break-all}',
	].join('\n');

	function injectCss()
	{
		if (document.getElementById('ct-flame-css'))
			return;
		var style = document.createElement('style');
		style.id = 'ct-flame-css';
		style.textContent = CSS;
		document.head.appendChild(style);
	}

	var states = new WeakMap();

	// d3-flame-graph's UMD build exports its factory as `flamegraph.default`.
	function factory()
	{
		var fg = window.flamegraph;
		return typeof fg === 'function' ? fg : fg && fg.default;
	}

	function compile(text)
	{
		if (!text)
			return null;
		try {
			return new RegExp(text);
		} catch (e) {
			return undefined;
		}
	}

	// ---- the merged tree --------------------------------------------------------------------------

	// The shape of the merged top-down tree of every site, whatever the costs: node 0 is the root ("all"),
	// a hidden key is skipped (its callees attach to its caller; the site still counts in the root).
	// Built once per mode and hide pattern without hashing: the sites sorted by their paths, each path
	// shares its nodes up to its common prefix with the previous one. leaf[s] is the node ending site s's
	// path; parents come before their children.
	function buildShape(idx, hidden)
	{
		var n = idx.nsites, off = new Int32Array(n + 1), path = new Int32Array(idx.flat.length), m = 0;
		for (var s = 0; s < n; s++) {
			var st = idx.siteStack[s];
			off[s] = m;
			for (var i = idx.off[st + 1] - 1; i >= idx.off[st]; i--)
				if (!hidden || !hidden[idx.flat[i]])
					path[m++] = idx.flat[i];
		}
		off[n] = m;
		var order = new Int32Array(n);
		for (s = 0; s < n; s++)
			order[s] = s;
		order.sort(function (x, y) {
			var a = off[x], b = off[y], la = off[x + 1] - a, lb = off[y + 1] - b, l = la < lb ? la : lb;
			for (var j = 0; j < l; j++)
				if (path[a + j] !== path[b + j])
					return path[a + j] - path[b + j];
			return la - lb;
		});
		var parent = new Int32Array(m + 1), key = new Int32Array(m + 1), leaf = new Int32Array(n);
		var chain = [0], nodes = 1, prev = -1;
		parent[0] = key[0] = -1;
		for (var o = 0; o < n; o++) {
			s = order[o];
			var a0 = off[s], len = off[s + 1] - a0, lcp = 0;
			if (prev >= 0) {
				var p0 = off[prev], plen = off[prev + 1] - p0;
				while (lcp < len && lcp < plen && path[a0 + lcp] === path[p0 + lcp])
					lcp++;
			}
			chain.length = lcp + 1;
			for (var d = lcp; d < len; d++) {
				parent[nodes] = chain[d];
				key[nodes] = path[a0 + d];
				chain.push(nodes++);
			}
			leaf[s] = chain[len];
			prev = s;
		}
		return {parent: parent.subarray(0, nodes), key: key.subarray(0, nodes), leaf: leaf, nodes: nodes};
	}

	// Each node's value: the cost of the sites whose path goes through it.
	function nodeValues(shape, cost)
	{
		var value = new Float64Array(shape.nodes), parent = shape.parent, leaf = shape.leaf;
		for (var s = 0; s < leaf.length; s++) {
			var v = cost[s];
			if (!v)
				continue;
			for (var node = leaf[s]; node >= 0; node = parent[node])
				value[node] += v;
		}
		return value;
	}

	// The smallest value a node needs to be drawn: none below a millionth of the root, and at most about
	// MAX_NODES nodes (the kept set is a subtree, a child never being larger than its parent). A histogram
	// of the values in 1/8 powers of two finds it in one pass, where sorting 1M values takes ~0.5 s.
	function threshold(value)
	{
		var n = value.length, min = Math.abs(value[0]) * 1e-6;
		if (n <= MAX_NODES || !(value[0] > 0))
			return min;
		var top = Math.log2(value[0]), counts = new Int32Array(8 * 64 + 1);
		for (var i = 1; i < n; i++) {
			if (!(value[i] >= min))
				continue;
			var b = Math.min(counts.length - 1, Math.floor(8 * (top - Math.log2(value[i]))));
			counts[b]++;
		}
		for (var sum = 0, j = 0; j < counts.length; j++) {
			if (sum + counts[j] > MAX_NODES)
				return Math.max(min, Math.pow(2, top - j / 8));
			sum += counts[j];
		}
		return min;
	}

	// The nodes d3-flame-graph is given (those above the threshold), as its {name, value, children}
	// objects with the key (k) and whether the search matched it (m); with the counts of all the nodes
	// with a value and of the matched ones among them, pruned or not.
	function toObjects(idx, shape, value, matched)
	{
		var min = threshold(value), objs = new Array(shape.nodes), kept = 0, used = 0, hits = 0;
		objs[0] = {name: 'all', value: value[0], k: -1, children: []};
		for (var i = 1; i < shape.nodes; i++) {
			if (value[i] > 0)
				used++, hits += matched && matched[shape.key[i]] ? 1 : 0;
			var p = objs[shape.parent[i]];
			if (!p || !(value[i] >= min) || !value[i])
				continue;
			var k = shape.key[i];
			var o = {name: label(idx, k), value: value[i], k: k, m: matched ? matched[k] : 0, children: []};
			p.children.push(o);
			objs[i] = o;
			kept++;
		}
		return {root: objs[0], kept: kept, total: used, matched: hits};
	}

	function label(idx, k)
	{
		var f = CTTrees.keyFrame(idx, k), name = CTTrees.keyLabel(idx, k);
		return idx.byLine && f.line ? name + ':' + f.line : name;
	}

	// The cost of the sites whose (unhidden) stack holds a matched frame: each site counts once.
	function matchedShare(idx, cost, hidden, matched)
	{
		var sum = 0;
		for (var s = 0; s < idx.nsites; s++) {
			var v = cost[s];
			if (!v)
				continue;
			var st = idx.siteStack[s];
			for (var i = idx.off[st]; i < idx.off[st + 1]; i++) {
				var k = idx.flat[i];
				if (matched[k] && !(hidden && hidden[k])) {
					sum += v;
					break;
				}
			}
		}
		return sum;
	}

	// ---- the element's state, controls and chart -------------------------------------------------

	function newState(el)
	{
		return {el: el, cost: 'allocated', byLine: false, icicle: false, hide: '', search: '', zoom: [], last: {}};
	}

	function applyOpts(st, opts, names)
	{
		opts = opts || {};
		var hide = opts.hide ? opts.hide.source || String(opts.hide) : '';
		if (opts.cost !== st.last.cost && names.indexOf(opts.cost) >= 0)
			st.cost = opts.cost;
		if (opts.byLine !== st.last.byLine && opts.byLine !== undefined)
			st.byLine = !!opts.byLine;
		if (opts.icicle !== st.last.icicle && opts.icicle !== undefined)
			st.icicle = !!opts.icicle;
		if (hide !== st.last.hide)
			st.hide = hide;
		if (opts.search !== st.last.search && typeof opts.search === 'string')
			st.search = opts.search;
		st.last = {cost: opts.cost, byLine: opts.byLine, icicle: opts.icicle, hide: hide, search: opts.search};
		if (names.indexOf(st.cost) < 0)
			st.cost = names.indexOf('allocated') >= 0 ? 'allocated' : names[0];
	}

	function skeleton(st)
	{
		var el = st.el;
		el.classList.add('ct-flame');
		el.innerHTML = '<div class="ct-bar">' +
		               '<label>cost <select data-test="flame-cost"></select></label>' +
		               '<label><input type="checkbox" data-test="flame-byline"> per call line</label>' +
		               '<label><input type="checkbox" data-test="flame-icicle"> icicle</label>' +
		               '<input type="search" data-test="flame-search" size="22" placeholder="search…">' +
		               '<span data-test="flame-match"></span></div>' +
		               '<div class="ct-bar"><label>hide frames matching <input type="text" data-test="flame-hide" ' +
		               'size="34" placeholder="regular expression"></label>' +
		               '<button type="button" data-test="flame-hide-preset" title="' + CTTrees.esc(PRESET) +
		               '">hide allocator/runtime frames</button>' +
		               '<button type="button" data-test="flame-reset">reset zoom</button></div>' +
		               '<div class="ct-details" data-test="flame-details"></div>' +
		               '<div data-test="flame-chart"></div>';
		var q = function (t) { return el.querySelector('[data-test="' + t + '"]'); };
		st.dom = {cost: q('flame-cost'), byLine: q('flame-byline'), icicle: q('flame-icicle'),
		          search: q('flame-search'), match: q('flame-match'), hide: q('flame-hide'),
		          preset: q('flame-hide-preset'), reset: q('flame-reset'), details: q('flame-details'),
		          chart: q('flame-chart')};
		wire(st);
	}

	function debounce(fn)
	{
		var timer = 0;
		return function () {
			clearTimeout(timer);
			timer = setTimeout(fn, 200);
		};
	}

	function wire(st)
	{
		var d = st.dom;
		d.cost.addEventListener('change', function () {
			st.cost = d.cost.value;
			draw(st);
		});
		d.byLine.addEventListener('change', function () {
			st.byLine = d.byLine.checked;
			st.zoom = [];
			draw(st);
		});
		d.icicle.addEventListener('change', function () {
			st.icicle = d.icicle.checked;
			draw(st);
		});
		d.search.addEventListener('input', debounce(function () {
			st.search = d.search.value;
			draw(st);
		}));
		d.hide.addEventListener('input', debounce(function () {
			st.hide = d.hide.value;
			draw(st);
		}));
		d.preset.addEventListener('click', function () {
			st.hide = st.hide === PRESET ? '' : PRESET;
			draw(st);
		});
		d.reset.addEventListener('click', function () {
			st.zoom = [];
			st.chart.resetZoom();
		});
		// The view may be drawn while its tab is hidden (no width yet): it is drawn again once sized.
		if (typeof ResizeObserver === 'function') {
			st.observer = new ResizeObserver(function () { resize(st); });
			st.observer.observe(d.chart);
		}
	}

	function resize(st)
	{
		var w = st.dom.chart.clientWidth;
		if (!st.chart || !w || Math.abs(w - st.chart.width()) < 2)
			return;
		st.chart.width(w);
		draw(st);
	}

	function tooltipHtml(st, d)
	{
		var esc = CTTrees.esc, k = d.data.k, root = rootNode(st);
		var share = root && root.value ? ' (' + (100 * d.value / root.value).toFixed(2) + '%)' : '';
		var cost = CTTrees.costInfo(st.cost).label + ': ' + CTTrees.fmtCost(st.cost, d.value) + share;
		if (k < 0)
			return 'all stacks<br>' + esc(cost);
		var f = CTTrees.keyFrame(st.idx, k), loc = f.file ? f.file + (f.line ? ':' + f.line : '') : f.module || '';
		return '<b>' + esc(f.full || d.data.name) + '</b><br>' + esc(loc) + '<br>' + esc(cost);
	}

	function makeChart(st)
	{
		var fg = factory();
		var tip = window.flamegraph.tooltip.defaultFlamegraphTooltip().html(function (d) {
			return tooltipHtml(st, d);
		});
		var chart = fg().width(st.dom.chart.clientWidth || 960).cellHeight(18).minFrameSize(2)
		                    .selfValue(false).resetHeightOnZoom(true).tooltip(tip)
		                    .setDetailsElement(st.dom.details);
		// Matches are flagged in the data (d.data.m) when the tree is built, so a search costs no
		// second pass of d3-flame-graph's own search and update.
		chart.setColorMapper(function (d, orig) { return d.data.m ? HL : orig; });
		chart.label(function (d) {
			var root = rootNode(st), pct = root && root.value ? (100 * d.value / root.value).toFixed(2) : '0';
			return d.data.name + ': ' + CTTrees.fmtCost(st.cost, d.value) + ' (' + pct + '%)';
		});
		chart.onClick(function (d) {
			st.zoom = pathOf(d);
			tag(st);
		});
		st.chart = chart;
	}

	function rootNode(st)
	{
		var sel = window.d3.select(st.dom.chart);
		return sel.datum && sel.datum();
	}

	function pathOf(d)
	{
		var path = [];
		for (; d && d.parent; d = d.parent)
			path.unshift(d.data.k);
		return path;
	}

	// The node at `path` (key ids from the root) in the current hierarchy, or null.
	function findPath(root, path)
	{
		var node = root;
		for (var i = 0; node && i < path.length; i++) {
			var kids = node.children || [], next = null;
			for (var j = 0; j < kids.length && !next; j++)
				if (kids[j].data.k === path[i])
					next = kids[j];
			node = next;
		}
		return node;
	}

	// Marks the drawn frames for tests and tools: data-test, the name, the value, highlight.
	function tag(st)
	{
		window.d3.select(st.dom.chart).selectAll('svg g').each(function (d) {
			this.setAttribute('data-test', 'flame-frame');
			this.setAttribute('data-fn', d.data.name);
			this.setAttribute('data-value', d.value);
			this.setAttribute('data-depth', d.depth);
			if (d.data.m)
				this.setAttribute('data-hl', '1');
			else
				this.removeAttribute('data-hl');
		});
	}

	function drawControls(st, names)
	{
		var d = st.dom;
		d.cost.innerHTML = names.map(function (n) {
			return '<option value="' + CTTrees.esc(n) + '">' + CTTrees.esc(CTTrees.costInfo(n).label) + '</option>';
		}).join('');
		d.cost.value = st.cost;
		d.byLine.checked = st.byLine;
		d.icicle.checked = st.icicle;
		if (document.activeElement !== d.search)
			d.search.value = st.search;
		if (document.activeElement !== d.hide)
			d.hide.value = st.hide;
		d.preset.setAttribute('aria-pressed', st.hide === PRESET ? 'true' : 'false');
	}

	function drawMatch(st, total, sum, frames)
	{
		var m = st.dom.match;
		m.dataset.total = total;
		m.dataset.matched = sum;
		m.dataset.frames = frames;
		if (!st.search) {
			m.textContent = '';
			return;
		}
		m.textContent = frames + ' frames; matched ' + CTTrees.fmtCost(st.cost, sum) + ' of ' +
		                CTTrees.fmtCost(st.cost, total) + ' (' + (total ? (100 * sum / total).toFixed(2) : '0') + '%)';
	}

	// Rebuilds the merged tree for the current window and state and redraws, keeping the zoom.
	function draw(st)
	{
		var names = CTTrees.costNames(st.costs), t0 = performance.now();
		drawControls(st, names);
		var re = compile(st.hide);
		st.dom.hide.classList.toggle('ct-bad', re === undefined);
		var idx = (st.idx = CTTrees.index(st.data, st.byLine)), cost = st.costs[st.cost];
		var hidden = re ? CTTrees.matchKeys(idx, null, re, false) : null;
		var matched = st.search ? CTTrees.matchKeys(idx, st.search, null, false) : null;
		var shapeKey = (st.byLine ? 'line:' : 'fn:') + (re ? st.hide : '');
		if (!st.shape || st.shapeKey !== shapeKey || st.shapeData !== st.data)
			st.shape = buildShape(idx, hidden), st.shapeKey = shapeKey, st.shapeData = st.data;
		var objs = toObjects(idx, st.shape, nodeValues(st.shape, cost), matched);
		st.stats = {nodes: objs.total, drawn: objs.kept};
		if (!objs.root.value) {
			if (st.chart)
				st.chart.destroy();
			st.dom.chart.innerHTML = '<p class="ct-empty" data-test="flame-empty">Nothing of this cost in this window.</p>';
			st.chart = null;
			st.drawn = false;
			drawMatch(st, 0, 0, 0);
			return;
		}
		if (!st.chart) {
			st.dom.chart.innerHTML = '';
			makeChart(st);
		}
		var many = objs.kept > 3000;
		st.chart.sort(function (a, b) { return b.data.value - a.data.value; });
		st.chart.inverted(st.icicle).transitionDuration(many ? 0 : 250);
		// A new tree is drawn afresh: d3-flame-graph's update of a drawn tree with new data joins and
		// transitions every frame, several times slower than drawing it anew.
		if (st.drawn)
			st.chart.destroy(); // and its tooltip, which drawing anew makes again
		window.d3.select(st.dom.chart).datum(objs.root).call(st.chart);
		st.drawn = true;
		drawMatch(st, objs.root.value, matched ? matchedShare(idx, cost, hidden, matched) : 0, objs.matched);
		var z = st.zoom.length ? findPath(rootNode(st), st.zoom) : null;
		if (z)
			st.chart.zoomTo(z);
		else
			st.zoom = [];
		tag(st);
		st.stats.ms = performance.now() - t0;
	}

	// CTFlame.render(el, data, costs, opts): draws (or redraws for a new window) the flame graph in `el`.
	function render(el, data, costs, opts)
	{
		injectCss();
		var st = states.get(el);
		if (!factory() || !window.d3) {
			el.textContent = 'The flame graph needs d3 and d3-flame-graph, which this page lacks.';
			return;
		}
		if (!st || st.data !== data) {
			if (st && st.chart)
				st.chart.destroy();
			if (st && st.observer)
				st.observer.disconnect();
			st = newState(el);
			states.set(el, st);
			st.data = data;
			skeleton(st);
		}
		st.costs = costs;
		applyOpts(st, opts, CTTrees.costNames(costs));
		draw(st);
	}

	// The last drawing's figures of `el`: merged nodes, nodes given to d3-flame-graph, milliseconds.
	function stats(el)
	{
		var st = states.get(el);
		return st && st.stats ? {nodes: st.stats.nodes, kept: st.stats.drawn, ms: st.stats.ms} : null;
	}

	window.CTFlame = {render: render, stats: stats, PRESET: PRESET};
})();
