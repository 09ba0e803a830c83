// SPDX-License-Identifier: MIT
// trees.js: the HTML report's call trees (top-down, bottom-up) and the caller/callee view of a function,
// drawn from the sites' stacks and the per-site cost arrays of the current time window (global CTTrees).
// Nodes are built lazily (a node's sites are grouped by their next frame only when it is expanded), so a
// trace of 100k sites and 1M frames costs one pass over the stacks; the UI state lives per element.
(function () {
	'use strict';

	// The costs the contract defines, in column order; `bytes` says how to format them.
	var COSTS = [
		{name: 'allocations', label: 'Allocations', bytes: false},
		{name: 'allocated', label: 'Allocated', bytes: true},
		{name: 'temporary', label: 'Temporary', bytes: false},
		{name: 'peak', label: 'Peak', bytes: true},
		{name: 'live', label: 'Live at end', bytes: true},
		{name: 'definite', label: 'Definitely lost', bytes: true},
		{name: 'indirect', label: 'Indirectly lost', bytes: true},
		{name: 'possible', label: 'Possibly lost', bytes: true},
		{name: 'reachable', label: 'Still reachable', bytes: true},
	];
	var PAGE = 200; // children shown per node before a "more" row: a node may have thousands
	var CSS = [
		'.ct-trees{font:13px system-ui,sans-serif}',
		'.ct-trees .ct-bar{display:flex;flex-wrap:wrap;gap:.6em;align-items:center;margin:.4em 0}',
		'.ct-trees .ct-bar button[aria-pressed=true]{font-weight:bold;background:#dde6f5}',
		'.ct-trees table{border-collapse:collapse;width:100%}',
		'.ct-trees th{position:sticky;top:0;background:#f3f3f3;cursor:pointer;user-select:none;',
		'text-align:right;padding:2px 6px;white-space:nowrap;border-bottom:1px solid #ccc}',
		'.ct-trees th:first-child{text-align:left}',
		'.ct-trees td{padding:1px 6px;white-space:nowrap;border-bottom:1px solid #eee;vertical-align:top}',
		'.ct-trees td.n{text-align:right;font-variant-numeric:tabular-nums}',
		'.ct-trees td.n small{display:block;color:#777}',
		'.ct-trees tr[data-test=tree-row]:hover,.ct-trees tr.ct-cc-row:hover{background:#f4f8ff;cursor:pointer}',
		'.ct-trees tr.ct-sel{background:#fff3c4}',
		'.ct-trees .ct-tog{display:inline-block;width:1.2em;color:#555}',
		'.ct-trees .ct-loc{color:#777;margin-left:.6em;font-size:90%}',
		'.ct-trees .ct-scroll{max-height:34em;overflow:auto;border:1px solid #ddd}',
		'.ct-trees .ct-cc{margin-top:1em}',
		'.ct-trees .ct-cc h4{margin:.6em 0 .2em}',
		'.ct-trees .ct-empty{color:#777;padding:.5em}',
		'.ct-trees input.ct-bad{background:#fdd}',
	].join('\n');

	function injectCss()
	{
		if (document.getElementById('ct-trees-css'))
			return;
		var style = document.createElement('style');
		style.id = 'ct-trees-css';
		style.textContent = CSS;
		document.head.appendChild(style);
	}

	// ---- formatting -------------------------------------------------------------------------------

	function esc(s)
	{
		return String(s).replace(/[&<>"']/g, function (c) {
			return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
		});
	}

	function fmtBytes(v)
	{
		var names = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
		var i = 0;
		while (i < names.length - 1 && Math.abs(v) >= 1024)
			v /= 1024, i++;
		return (i ? v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0) : String(Math.round(v))) + ' ' + names[i];
	}

	function fmtCount(v) { return Math.round(v).toLocaleString('en-US'); }

	function costInfo(name)
	{
		for (var i = 0; i < COSTS.length; i++)
			if (COSTS[i].name === name)
				return COSTS[i];
		return {name: name, label: name, bytes: true};
	}

	function fmtCost(name, v) { return costInfo(name).bytes ? fmtBytes(v) : fmtCount(v); }

	// The cost names of `costs` in column order (known ones first, then any others).
	function costNames(costs)
	{
		var out = [];
		COSTS.forEach(function (c) {
			if (costs[c.name])
				out.push(c.name);
		});
		Object.keys(costs).forEach(function (n) {
			if (out.indexOf(n) < 0)
				out.push(n);
		});
		return out;
	}

	function baseName(path)
	{
		var i = path.lastIndexOf('/');
		return i < 0 ? path : path.slice(i + 1);
	}

	// ---- the stack index, shared with flame.js ----------------------------------------------------
	// Frames are merged into keys: by function (full name and module) or by call line (plus file:line).
	// An index holds, per mode: keyOf[frame], the keys' representative frames, and every stack's keys
	// flattened (innermost first) with offsets, so a walk over 1M frames touches typed arrays only.

	var indexCache = typeof WeakMap === 'function' ? new WeakMap() : null;

	function frameKey(f, byLine)
	{
		var k = (f.full || f.fn || '??') + '\u0001' + (f.module || '');
		return byLine ? k + '\u0001' + (f.file || '') + ':' + (f.line || 0) : k;
	}

	function buildIndex(data, byLine)
	{
		var frames = data.frames || [], stacks = data.stacks || [], sites = data.sites || [];
		var keyOf = new Int32Array(frames.length), ids = new Map(), rep = [];
		for (var f = 0; f < frames.length; f++) {
			var s = frameKey(frames[f], byLine), id = ids.get(s);
			if (id === undefined) {
				id = rep.length;
				ids.set(s, id);
				rep.push(f);
			}
			keyOf[f] = id;
		}
		var total = 0;
		for (var i = 0; i < stacks.length; i++)
			total += stacks[i].length;
		var off = new Int32Array(stacks.length + 1), flat = new Int32Array(total), n = 0;
		for (i = 0; i < stacks.length; i++) {
			off[i] = n;
			for (var j = 0; j < stacks[i].length; j++)
				flat[n++] = keyOf[stacks[i][j]];
		}
		off[stacks.length] = n;
		var siteStack = new Int32Array(sites.length);
		for (i = 0; i < sites.length; i++)
			siteStack[i] = sites[i].stack;
		return {byLine: byLine, frames: frames, keyOf: keyOf, rep: rep, nkeys: rep.length, off: off, flat: flat,
		        siteStack: siteStack, nsites: sites.length};
	}

	// The index of `data` in one mode, built once per data document.
	function getIndex(data, byLine)
	{
		var entry = indexCache ? indexCache.get(data) : null;
		if (!entry) {
			entry = {};
			if (indexCache)
				indexCache.set(data, entry);
		}
		var mode = byLine ? 'line' : 'fn';
		if (!entry[mode])
			entry[mode] = buildIndex(data, byLine);
		return entry[mode];
	}

	function keyFrame(idx, key) { return idx.frames[idx.rep[key]] || {}; }

	function keyLabel(idx, key)
	{
		if (key === idx.nkeys)
			return '(no stack)';
		var f = keyFrame(idx, key);
		return f.fn || f.full || (f.module ? f.module + '+?' : '??');
	}

	function keyLoc(idx, key)
	{
		var f = keyFrame(idx, key);
		if (!f.file)
			return f.module || '';
		return idx.byLine && f.line ? baseName(f.file) + ':' + f.line : baseName(f.file);
	}

	// Keys whose short or full name (or file, with `withFile`) contains `text` (case-insensitive), or
	// whose short or full name matches `re` when given.
	function matchKeys(idx, text, re, withFile)
	{
		var out = new Uint8Array(idx.nkeys), low = (text || '').toLowerCase();
		for (var k = 0; k < idx.nkeys; k++) {
			var f = keyFrame(idx, k), fn = f.fn || '', full = f.full || '';
			if (re)
				out[k] = re.test(fn) || re.test(full) ? 1 : 0;
			else
				out[k] = fn.toLowerCase().indexOf(low) >= 0 || full.toLowerCase().indexOf(low) >= 0 ||
				                         (withFile && (f.file || '').toLowerCase().indexOf(low) >= 0)
				                 ? 1
				                 : 0;
		}
		return out;
	}

	// Whether site s's stack holds a key flagged in `flags`.
	function stackHas(idx, s, flags)
	{
		var st = idx.siteStack[s];
		for (var i = idx.off[st]; i < idx.off[st + 1]; i++)
			if (flags[idx.flat[i]])
				return true;
		return false;
	}

	// ---- the lazy tree ----------------------------------------------------------------------------

	// The key at `depth` of site s's path: top-down paths start at the outermost frame. A site without
	// frames has one, the key idx.nkeys ("(no stack)"), so the roots always add up to the total.
	function keyAt(idx, s, depth, topDown)
	{
		var st = idx.siteStack[s], a = idx.off[st], len = idx.off[st + 1] - a;
		if (depth >= len)
			return len || depth ? -1 : idx.nkeys;
		return idx.flat[topDown ? a + len - 1 - depth : a + depth];
	}

	function stackLen(idx, s)
	{
		var st = idx.siteStack[s];
		return idx.off[st + 1] - idx.off[st] || 1;
	}

	function sumCosts(ctx, sites)
	{
		var out = new Float64Array(ctx.names.length);
		for (var c = 0; c < ctx.names.length; c++) {
			var a = ctx.arrays[c], t = 0;
			for (var i = 0; i < sites.length; i++)
				t += a[sites[i]];
			out[c] = t;
		}
		return out;
	}

	function makeNode(ctx, parent, key, sites)
	{
		var depth = parent ? parent.depth + 1 : -1;
		var node = {key: key, depth: depth, sites: sites, parent: parent, children: null, limit: PAGE,
		            path: parent ? parent.path + ',' + key : ''};
		node.incl = sumCosts(ctx, sites);
		// Sites whose stack ends at this node: its self cost (in both directions, a stack ends once).
		var own = [];
		for (var i = 0; depth >= 0 && i < sites.length; i++)
			if (stackLen(ctx.idx, sites[i]) === depth + 1)
				own.push(sites[i]);
		node.self = own.length === sites.length ? node.incl : sumCosts(ctx, own);
		return node;
	}

	// Groups a node's sites by the key one level deeper: each site lies in one child at most, so
	// recursion (f calling f) never counts a site twice in a node.
	function expand(ctx, node)
	{
		if (node.children)
			return node.children;
		var groups = new Map(), d = node.depth + 1;
		for (var i = 0; i < node.sites.length; i++) {
			var s = node.sites[i], k = keyAt(ctx.idx, s, d, ctx.topDown);
			if (k < 0)
				continue;
			var g = groups.get(k);
			if (!g)
				groups.set(k, (g = []));
			g.push(s);
		}
		node.children = [];
		groups.forEach(function (sites, k) { node.children.push(makeNode(ctx, node, k, sites)); });
		sortChildren(ctx, node);
		return node.children;
	}

	function sortChildren(ctx, node)
	{
		var c = ctx.sortIdx, sign = ctx.sortAsc ? 1 : -1;
		node.children.sort(function (a, b) {
			return sign * (a.incl[c] - b.incl[c]) || (a.key - b.key);
		});
	}

	function isLeaf(ctx, node)
	{
		if (node.children)
			return node.children.length === 0;
		for (var i = 0; i < node.sites.length; i++)
			if (stackLen(ctx.idx, node.sites[i]) > node.depth + 1)
				return false;
		return true;
	}

	// Expands the path of largest children under the sort cost, from `node` down to a site.
	function expandLargest(ctx, node, expanded)
	{
		for (var guard = 0; node && guard < 512; guard++) {
			var kids = expand(ctx, node);
			if (!kids.length)
				return;
			if (node.depth >= 0)
				expanded.add(node.path);
			node = kids[0];
		}
	}

	// Re-expands the nodes whose path was expanded before (a new window, a new sort).
	function restore(ctx, node, expanded)
	{
		var kids = expand(ctx, node);
		for (var i = 0; i < kids.length; i++)
			if (expanded.has(kids[i].path))
				restore(ctx, kids[i], expanded);
	}

	// ---- the caller/callee figures ----------------------------------------------------------------
	// For function F (by-function keys), over the window's sites: its inclusive cost counts a site once
	// whatever F's depth of recursion; through each caller C, the sites where C calls F (once per site);
	// passed to each callee, the sites where F calls it (once per site); self, the sites allocating in F.

	var ROOT = -1, SELF = -2;

	function callerCallee(ctx, idx, F, sites)
	{
		var n = ctx.names.length, incl = new Float64Array(n), self = new Float64Array(n);
		var callers = new Map(), callees = new Map(), seenA = [], seenB = [];
		function add(map, k, s)
		{
			var v = map.get(k);
			if (!v)
				map.set(k, (v = new Float64Array(n)));
			for (var c = 0; c < n; c++)
				v[c] += ctx.arrays[c][s];
		}
		for (var i = 0; i < sites.length; i++) {
			var s = sites[i], st = idx.siteStack[s], a = idx.off[st], len = idx.off[st + 1] - a;
			seenA.length = 0;
			seenB.length = 0;
			for (var j = 0; j < len; j++) {
				if (idx.flat[a + j] !== F)
					continue;
				var caller = j + 1 < len ? idx.flat[a + j + 1] : ROOT;
				var callee = j > 0 ? idx.flat[a + j - 1] : SELF;
				if (seenA.indexOf(caller) < 0)
					seenA.push(caller), add(callers, caller, s);
				if (seenB.indexOf(callee) < 0)
					seenB.push(callee), add(callees, callee, s);
			}
			if (!seenA.length)
				continue;
			for (var c = 0; c < n; c++) {
				incl[c] += ctx.arrays[c][s];
				if (idx.flat[a] === F)
					self[c] += ctx.arrays[c][s];
			}
		}
		return {incl: incl, self: self, callers: callers, callees: callees};
	}

	// ---- the element's state and drawing ----------------------------------------------------------

	var states = typeof WeakMap === 'function' ? new WeakMap() : null;

	function newState(el)
	{
		return {el: el, mode: 'top', byLine: false, sortCost: 'allocated', sortAsc: false, filter: '',
		        expanded: {top: null, bottom: null}, selectedKey: null, last: {}, rows: []};
	}

	// Applies an option only when the app changed it since its last call, so the user's own choices
	// (made in this element's controls) survive re-renders for a new window.
	function applyOpts(st, opts, names)
	{
		opts = opts || {};
		if (opts.cost !== st.last.cost && names.indexOf(opts.cost) >= 0)
			st.sortCost = opts.cost, st.sortAsc = false;
		if (opts.byLine !== st.last.byLine && opts.byLine !== undefined && !!opts.byLine !== st.byLine)
			setByLine(st, !!opts.byLine);
		if (opts.search !== st.last.search && typeof opts.search === 'string')
			setFilter(st, opts.search);
		st.last = {cost: opts.cost, byLine: opts.byLine, search: opts.search};
		if (names.indexOf(st.sortCost) < 0)
			st.sortCost = names.indexOf('allocated') >= 0 ? 'allocated' : names[0];
	}

	function setByLine(st, v)
	{
		st.byLine = v;
		st.expanded = {top: null, bottom: null};
	}

	function setFilter(st, text)
	{
		st.filter = text;
		st.expanded = {top: null, bottom: null};
	}

	function skeleton(st)
	{
		var el = st.el;
		el.innerHTML = '';
		el.classList.add('ct-trees');
		el.innerHTML =
		        '<div class="ct-bar">' +
		        '<button type="button" data-test="tree-mode-top" data-mode="top">Top-down</button>' +
		        '<button type="button" data-test="tree-mode-bottom" data-mode="bottom">Bottom-up</button>' +
		        '<label><input type="checkbox" data-test="tree-byline"> per call line</label>' +
		        '<input type="search" data-test="tree-filter" size="28" ' +
		        'placeholder="only stacks through… (function, file)">' +
		        '<button type="button" data-test="tree-expand-largest">Expand largest</button>' +
		        '<button type="button" data-test="tree-collapse">Collapse all</button>' +
		        '<span data-test="tree-summary" class="ct-loc"></span></div>' +
		        '<div class="ct-scroll"><table data-test="tree-table"><thead></thead><tbody></tbody></table></div>' +
		        '<div class="ct-cc" data-test="cc-panel"><div class="ct-bar"><b>Callers and callees</b>' +
		        '<input type="search" data-test="cc-search" size="28" placeholder="find a function…">' +
		        '<span data-test="cc-matches"></span></div><div data-test="cc-body" class="ct-empty">' +
		        'Click a row of the tree, or find a function, to see its callers and callees.</div></div>';
		var q = function (t) { return el.querySelector('[data-test="' + t + '"]'); };
		st.dom = {table: q('tree-table'), thead: el.querySelector('thead'), tbody: el.querySelector('tbody'),
		          byLine: q('tree-byline'), filter: q('tree-filter'), summary: q('tree-summary'),
		          ccSearch: q('cc-search'), ccMatches: q('cc-matches'), ccBody: q('cc-body')};
		wire(st);
	}

	function wire(st)
	{
		var el = st.el, d = st.dom, timer = 0;
		el.querySelector('.ct-bar').addEventListener('click', function (e) {
			var b = e.target.closest('button');
			if (!b)
				return;
			if (b.dataset.mode) {
				st.mode = b.dataset.mode;
				return draw(st);
			}
			if (b.dataset.test === 'tree-expand-largest')
				expandLargest(st.ctx, st.root, currentExpanded(st));
			else if (b.dataset.test === 'tree-collapse')
				st.expanded[st.mode] = new Set();
			drawRows(st);
		});
		d.byLine.addEventListener('change', function () {
			setByLine(st, d.byLine.checked);
			draw(st);
		});
		d.filter.addEventListener('input', function () {
			clearTimeout(timer);
			timer = setTimeout(function () {
				setFilter(st, d.filter.value);
				draw(st);
			}, 200);
		});
		d.thead.addEventListener('click', function (e) {
			var th = e.target.closest('th[data-cost]');
			if (!th)
				return;
			if (st.sortCost === th.dataset.cost)
				st.sortAsc = !st.sortAsc;
			else
				st.sortCost = th.dataset.cost, st.sortAsc = false;
			draw(st);
		});
		d.tbody.addEventListener('click', function (e) { onRowClick(st, e); });
		d.ccSearch.addEventListener('input', function () { showMatches(st); });
		d.ccSearch.addEventListener('keydown', function (e) {
			var first = d.ccMatches.querySelector('[data-key]');
			if (e.key === 'Enter' && first)
				select(st, +first.dataset.key);
		});
		d.ccMatches.addEventListener('click', function (e) {
			var a = e.target.closest('[data-key]');
			if (a)
				select(st, +a.dataset.key);
		});
		d.ccBody.addEventListener('click', function (e) {
			var tr = e.target.closest('tr[data-key]');
			if (tr && +tr.dataset.key >= 0)
				select(st, +tr.dataset.key);
		});
	}

	function currentExpanded(st)
	{
		if (!st.expanded[st.mode])
			st.expanded[st.mode] = new Set();
		return st.expanded[st.mode];
	}

	function onRowClick(st, e)
	{
		var tr = e.target.closest('tr');
		if (!tr)
			return;
		if (tr.dataset.more !== undefined) {
			st.rows[+tr.dataset.more].limit += PAGE;
			return drawRows(st);
		}
		var node = st.rows[+tr.dataset.id];
		if (!node)
			return;
		if (e.target.closest('[data-test="tree-toggle"]'))
			return toggle(st, node);
		var fnIdx = getIndex(st.data, false);
		select(st, fnIdx.keyOf[st.ctx.idx.rep[node.key]]);
	}

	function toggle(st, node)
	{
		var ex = currentExpanded(st);
		if (ex.has(node.path))
			ex.delete(node.path);
		else
			ex.add(node.path), expand(st.ctx, node);
		drawRows(st);
	}

	// The sites of the window (some cost non-zero) that pass the filter.
	function activeSites(st, idx)
	{
		var arrays = st.ctx.arrays, n = idx.nsites, out = [], flags = null;
		if (st.filter)
			flags = matchKeys(idx, st.filter, null, true);
		for (var s = 0; s < n; s++) {
			var any = false;
			for (var c = 0; c < arrays.length && !any; c++)
				any = arrays[c][s] !== 0;
			if (any && (!flags || stackHas(idx, s, flags)))
				out.push(s);
		}
		return out;
	}

	// Rebuilds the tree for the current mode, window and state, re-expanding what was expanded (the
	// largest path when nothing was yet).
	function draw(st)
	{
		var idx = getIndex(st.data, st.byLine), names = costNames(st.costs);
		st.ctx = {idx: idx, names: names, arrays: names.map(function (n) { return st.costs[n]; }),
		          topDown: st.mode === 'top', sortIdx: names.indexOf(st.sortCost), sortAsc: st.sortAsc};
		st.sites = activeSites(st, idx);
		st.root = makeNode(st.ctx, null, -1, st.sites);
		var ex = st.expanded[st.mode];
		if (!ex) {
			ex = st.expanded[st.mode] = new Set();
			expandLargest(st.ctx, st.root, ex);
		} else {
			restore(st.ctx, st.root, ex);
		}
		drawControls(st);
		drawHead(st);
		drawRows(st);
		drawCallerCallee(st);
	}

	function drawControls(st)
	{
		var d = st.dom;
		st.el.querySelectorAll('[data-mode]').forEach(function (b) {
			b.setAttribute('aria-pressed', b.dataset.mode === st.mode ? 'true' : 'false');
		});
		d.byLine.checked = st.byLine;
		if (document.activeElement !== d.filter)
			d.filter.value = st.filter;
		d.summary.textContent = st.sites.length.toLocaleString('en-US') + ' sites' +
		                        (st.filter ? ' through “' + st.filter + '”' : '');
		d.summary.dataset.sites = st.sites.length;
	}

	function drawHead(st)
	{
		var html = '<tr><th data-test="tree-fn-head">Function' +
		           (st.mode === 'top' ? ' (callers → callees)' : ' (allocation site ← callers)') + '</th>';
		st.ctx.names.forEach(function (n) {
			var on = n === st.sortCost;
			html += '<th data-test="tree-sort" data-cost="' + esc(n) + '"' +
			        (on ? ' aria-sort="' + (st.sortAsc ? 'ascending' : 'descending') + '"' : '') +
			        ' title="sort by ' + esc(costInfo(n).label) + '">' + esc(costInfo(n).label) +
			        (on ? (st.sortAsc ? ' ▲' : ' ▼') : '') + '</th>';
		});
		st.dom.thead.innerHTML = html + '</tr>';
	}

	// A node's cells; with `withSelf` (top-down: the part allocated in the frame itself) the self figure
	// under the inclusive one where they differ. Bottom-up, a node's own sites are stacks ending there.
	function costCells(st, node, withSelf)
	{
		var html = '';
		st.ctx.names.forEach(function (n, c) {
			var v = node.incl[c], s = node.self[c];
			html += '<td class="n">' + fmtCost(n, v);
			if (withSelf && s !== v && s !== 0)
				html += '<small title="self: allocated in this frame itself">self ' + fmtCost(n, s) + '</small>';
			html += '</td>';
		});
		return html;
	}

	function costAttrs(st, node)
	{
		var html = '';
		st.ctx.names.forEach(function (n, c) {
			html += ' data-cost-' + n + '="' + node.incl[c] + '" data-self-' + n + '="' + node.self[c] + '"';
		});
		return html;
	}

	function drawRows(st)
	{
		var ctx = st.ctx, ex = currentExpanded(st), out = [], rows = [];
		var total = '<tr data-test="tree-total"' + costAttrs(st, st.root) + '><td><b>Total</b> <span class="ct-loc">' +
		            st.sites.length.toLocaleString('en-US') + ' sites</span></td>' + costCells(st, st.root, false) +
		            '</tr>';
		out.push(total);
		function walk(node)
		{
			var kids = node.children || [], n = Math.min(kids.length, node.limit);
			for (var i = 0; i < n; i++)
				row(kids[i]);
			if (kids.length > n) {
				rows.push(node);
				out.push('<tr data-test="tree-more" data-more="' + (rows.length - 1) + '"><td colspan="' +
				         (ctx.names.length + 1) + '" style="padding-left:' + (1.3 + (node.depth + 1) * 1.1) +
				         'em">… ' + (kids.length - n) + ' more (show ' + PAGE + ')</td></tr>');
			}
		}
		function row(node)
		{
			var open = ex.has(node.path) && node.children && node.children.length > 0, leaf = isLeaf(ctx, node);
			var f = keyFrame(ctx.idx, node.key), label = keyLabel(ctx.idx, node.key), loc = keyLoc(ctx.idx, node.key);
			rows.push(node);
			out.push('<tr data-test="tree-row" data-id="' + (rows.length - 1) + '" data-fn="' + esc(label) +
			         '" data-full="' + esc(f.full || label) + '" data-loc="' + esc(loc) + '" data-depth="' +
			         node.depth + '" data-expanded="' + (open ? 1 : 0) + '" data-leaf="' + (leaf ? 1 : 0) + '"' +
			         costAttrs(st, node) + (st.selectedKey === fnKeyOf(st, node.key) ? ' class="ct-sel"' : '') +
			         '><td style="padding-left:' + (0.3 + node.depth * 1.1) + 'em"><span class="ct-tog" ' +
			         'data-test="tree-toggle">' + (leaf ? '·' : open ? '▾' : '▸') + '</span><span title="' +
			         esc(f.full || label) + '">' + esc(label) + '</span><span class="ct-loc" title="' +
			         esc((f.file || '') + (f.line ? ':' + f.line : '')) + '">' + esc(loc) + '</span></td>' +
			         costCells(st, node, ctx.topDown) + '</tr>');
			if (open)
				walk(node);
		}
		walk(st.root);
		if (!st.sites.length)
			out.push('<tr><td class="ct-empty" colspan="' + (ctx.names.length + 1) +
			         '">Nothing was allocated in this window' + (st.filter ? ' through this filter' : '') +
			         '.</td></tr>');
		st.rows = rows;
		st.dom.tbody.innerHTML = out.join('');
	}

	function fnKeyOf(st, key)
	{
		var fnIdx = getIndex(st.data, false);
		return st.ctx.idx.byLine ? fnIdx.keyOf[st.ctx.idx.rep[key]] : key;
	}

	function select(st, fnKey)
	{
		st.selectedKey = fnKey;
		drawRows(st);
		drawCallerCallee(st);
	}

	// Lists up to 20 functions matching the search box, the largest (inclusive allocations) first.
	function showMatches(st)
	{
		var text = st.dom.ccSearch.value, box = st.dom.ccMatches;
		if (!text) {
			box.innerHTML = '';
			return;
		}
		var idx = getIndex(st.data, false), flags = matchKeys(idx, text, null, false), incl = new Float64Array(idx.nkeys);
		var arr = st.ctx.arrays[st.ctx.sortIdx], seen = new Int32Array(idx.nkeys).fill(-1);
		for (var i = 0; i < st.sites.length; i++) {
			var s = st.sites[i], sk = idx.siteStack[s];
			for (var j = idx.off[sk]; j < idx.off[sk + 1]; j++) {
				var k = idx.flat[j];
				if (flags[k] && seen[k] !== s)
					seen[k] = s, incl[k] += arr[s];
			}
		}
		var keys = [];
		for (var k2 = 0; k2 < idx.nkeys; k2++)
			if (flags[k2])
				keys.push(k2);
		keys.sort(function (a, b) { return incl[b] - incl[a]; });
		box.innerHTML = keys.slice(0, 20).map(function (k) {
			return '<a href="#" data-test="cc-match" data-key="' + k + '" title="' + esc(keyFrame(idx, k).full || '') +
			       '">' + esc(keyLabel(idx, k)) + '</a>';
		}).join(' · ') + (keys.length > 20 ? ' … ' + (keys.length - 20) + ' more' : keys.length ? '' : ' no match');
	}

	function ccRows(st, idx, map, kind, special)
	{
		var list = [];
		map.forEach(function (v, k) { list.push({k: k, v: v}); });
		var c = st.ctx.sortIdx;
		list.sort(function (a, b) { return b.v[c] - a.v[c]; });
		var html = '';
		list.forEach(function (e) {
			var label = e.k >= 0 ? keyLabel(idx, e.k) : special[e.k], f = e.k >= 0 ? keyFrame(idx, e.k) : {};
			var attrs = '';
			st.ctx.names.forEach(function (n, i) { attrs += ' data-cost-' + n + '="' + e.v[i] + '"'; });
			html += '<tr class="ct-cc-row" data-test="cc-' + kind + '-row" data-key="' + e.k + '" data-fn="' +
			        esc(label) + '"' + attrs + '><td title="' + esc(f.full || label) + '">' + esc(label) +
			        '<span class="ct-loc">' + (e.k >= 0 ? esc(keyLoc(idx, e.k)) : '') + '</span></td>';
			st.ctx.names.forEach(function (n, i) { html += '<td class="n">' + fmtCost(n, e.v[i]) + '</td>'; });
			html += '</tr>';
		});
		return html;
	}

	function drawCallerCallee(st)
	{
		var body = st.dom.ccBody;
		if (st.selectedKey === null || st.selectedKey === undefined)
			return;
		var idx = getIndex(st.data, false), F = st.selectedKey;
		if (F >= idx.nkeys)
			return;
		var r = callerCallee(st.ctx, idx, F, st.sites), f = keyFrame(idx, F), label = keyLabel(idx, F);
		var head = '<tr><th>Function</th>' + st.ctx.names.map(function (n) {
			return '<th>' + esc(costInfo(n).label) + '</th>';
		}).join('') + '</tr>';
		var fnAttrs = '', cells = '', selfCells = '';
		st.ctx.names.forEach(function (n, i) {
			fnAttrs += ' data-cost-' + n + '="' + r.incl[i] + '" data-self-' + n + '="' + r.self[i] + '"';
			cells += '<td class="n">' + fmtCost(n, r.incl[i]) + '</td>';
			selfCells += '<td class="n">' + fmtCost(n, r.self[i]) + '</td>';
		});
		var special = {};
		special[ROOT] = '(outermost: no caller)';
		special[SELF] = '(allocates here: self)';
		body.className = '';
		body.innerHTML =
		        '<table><thead>' + head + '</thead><tbody><tr data-test="cc-function" data-fn="' + esc(label) + '"' +
		        fnAttrs + '><td title="' + esc(f.full || label) + '"><b>' + esc(label) + '</b><span class="ct-loc">' +
		        esc(f.file ? f.file + (f.line ? ':' + f.line : '') : f.module || '') + '</span> inclusive</td>' +
		        cells + '</tr><tr><td>self</td>' + selfCells + '</tr></tbody></table>' +
		        '<h4>Callers (the function\'s inclusive cost through each)</h4><table data-test="cc-callers"><thead>' +
		        head + '</thead><tbody>' + ccRows(st, idx, r.callers, 'caller', special) + '</tbody></table>' +
		        '<h4>Callees (the cost passed to each)</h4><table data-test="cc-callees"><thead>' + head +
		        '</thead><tbody>' + ccRows(st, idx, r.callees, 'callee', special) + '</tbody></table>';
		if (!r.callers.size)
			body.insertAdjacentHTML('afterbegin', '<p class="ct-empty">' + esc(label) +
			                                              ' is on no stack of this window.</p>');
	}

	// CTTrees.render(el, data, costs, opts): draws (or redraws for a new window) the trees in `el`.
	function render(el, data, costs, opts)
	{
		injectCss();
		var st = states ? states.get(el) : el.__ctTrees;
		if (!st || st.data !== data) {
			st = newState(el);
			if (states)
				states.set(el, st);
			else
				el.__ctTrees = st;
			st.data = data;
			skeleton(st);
		}
		st.costs = costs;
		applyOpts(st, opts, costNames(costs));
		draw(st);
	}

	window.CTTrees = {
		render: render,
		index: getIndex,
		keyLabel: keyLabel,
		keyLoc: keyLoc,
		keyFrame: keyFrame,
		matchKeys: matchKeys,
		costNames: costNames,
		costInfo: costInfo,
		fmtCost: fmtCost,
		esc: esc,
	};
})();
