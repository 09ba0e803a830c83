// SPDX-License-Identifier: MIT
// diff.js: the HTML report's Diff view (global CTDiff), drawn from the data's "diff" (html_data.h; written by
// ctrack-analyze --diff BASE NEW --html): both runs' totals with their change, the sites matched as --baseline
// matches them in a table sortable by the change of any figure (growth red, shrink green), new and gone sites
// apart, a site's backtrace on click, and, when BASE is a trace, a flame graph of the change (d3-flame-graph:
// widths BASE + NEW, colour NEW - BASE). A figure a saved JSON report does not list is unknown: "?", never a change.
(function () {
	'use strict';

	var ROWS = 500; // rows drawn per table (the rest are counted in a line)
	var KINDS = ['definite', 'indirect', 'possible', 'reachable'];
	var KIND_LABELS = ['definitely lost', 'indirectly lost', 'possibly lost', 'still reachable'];
	var CSS = [
		'.ct-diff .grow{color:#c53030;font-weight:600}',
		'.ct-diff .shrink{color:#2f855a;font-weight:600}',
		'.ct-diff .unknown{color:#888}',
		'.ct-diff table.diff{border-collapse:collapse;margin:.4em 0 1em}',
		'.ct-diff table.diff td,.ct-diff table.diff th{padding:.15em .6em;border-bottom:1px solid #e2e8f0;text-align:left}',
		'.ct-diff table.diff td.num,.ct-diff table.diff th.num{text-align:right;white-space:nowrap}',
		'.ct-diff th.sortable{cursor:pointer}',
		'.ct-diff th.desc:after{content:" \\25bc"}',
		'.ct-diff th.asc:after{content:" \\25b2"}',
		'.ct-diff tr.site{cursor:pointer}',
		'.ct-diff tr.site:hover{background:#f7fafc}',
		'.ct-diff .ct-bar{display:flex;flex-wrap:wrap;gap:.6em;align-items:center;margin:.4em 0}',
		'.ct-diff .ct-details{min-height:1.4em;color:#444;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}',
		'.ct-diff .d3-flame-graph-tip{max-width:40em;white-space:normal;word-break:break-all}',
	].join('\n');

	var states = new WeakMap();

	function injectCss()
	{
		if (document.getElementById('ct-diff-css'))
			return;
		var style = document.createElement('style');
		style.id = 'ct-diff-css';
		style.textContent = CSS;
		document.head.appendChild(style);
	}

	function el(tag, attrs)
	{
		var e = document.createElement(tag);
		for (var k in attrs || {}) {
			if (k === 'text')
				e.textContent = attrs[k];
			else if (k.slice(0, 2) === 'on')
				e.addEventListener(k.slice(2), attrs[k]);
			else if (attrs[k] !== undefined && attrs[k] !== null)
				e.setAttribute(k, attrs[k]);
		}
		for (var i = 2; i < arguments.length; i++)
			if (arguments[i] !== null && arguments[i] !== undefined && arguments[i] !== false)
				e.append(arguments[i]);
		return e;
	}

	function bytes(n)
	{
		var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], u = 0, a = Math.abs(n);
		while (a >= 1024 && u < units.length - 1)
			a /= 1024, u++;
		return (n < 0 ? '-' : '') + (u ? a.toFixed(a < 10 ? 2 : a < 100 ? 1 : 0) : String(Math.round(a))) + ' ' + units[u];
	}

	function count(n)
	{
		return Math.round(n).toLocaleString('en-US');
	}

	// A change with its sign ("+96 B", "-2", "0"); "?" when unknown.
	function signed(v, fmt)
	{
		if (v === null)
			return '?';
		return (v > 0 ? '+' : '') + fmt(v);
	}

	function cls(v)
	{
		return v === null ? 'unknown' : v > 0 ? 'grow' : v < 0 ? 'shrink' : 'zero';
	}

	// ---- figures ----

	// The figures of a site in one run: side is null when the site is not in that run (every figure 0),
	// a figure is null when that run's report does not list it.
	function figures(classified)
	{
		var f = [
			{id: 'leaked', label: 'leaked bytes', fmt: bytes, get: function (s) { return s.leaked; }},
			{id: 'leakedn', label: 'leaked blocks', fmt: count, get: function (s) { return s.leakedn; }},
			{id: 'bytes', label: 'bytes allocated', fmt: bytes, get: function (s) { return s.bytes; }},
			{id: 'n', label: 'allocations', fmt: count, get: function (s) { return s.n; }},
			{id: 'peak', label: 'at the peak', fmt: bytes, get: function (s) { return s.peak; }},
			{id: 'temp', label: 'temporary', fmt: count, get: function (s) { return s.temp; }},
		];
		KINDS.forEach(function (k, i) {
			if (classified)
				f.push({id: k, label: KIND_LABELS[i], fmt: bytes,
				        get: function (s) { return s.kinds ? s.kinds[i][1] : null; }});
		});
		return f;
	}

	function value(side, fig)
	{
		if (!side)
			return 0;
		var v = fig.get(side);
		return v === undefined ? null : v;
	}

	function delta(site, fig)
	{
		var a = value(site.base, fig), b = value(site.new, fig);
		return a === null || b === null ? null : b - a;
	}

	// ---- totals ----

	var TOTALS = [
		['allocations', 'allocations', count], ['frees', 'frees', count],
		['bytes_allocated', 'bytes allocated', bytes], ['temporary', 'temporary allocations', count],
		['peak', 'peak heap', bytes], ['leaked_bytes', 'leaked bytes', bytes],
		['leaked_blocks', 'leaked blocks', count],
	];

	function totalsTable(diff)
	{
		var b = diff.totals.base, n = diff.totals.new, rows = TOTALS.map(function (t) {
			return [t[0], t[1], b[t[0]], n[t[0]], t[2]];
		});
		KINDS.forEach(function (k, i) {
			if (b.kinds || n.kinds)
				rows.push([k, KIND_LABELS[i] + ' (bytes)', b.kinds ? b.kinds[i][1] : null,
				           n.kinds ? n.kinds[i][1] : null, bytes]);
		});
		var body = el('tbody');
		rows.forEach(function (r) {
			var d = r[2] === null || r[3] === null ? null : r[3] - r[2], fmt = r[4];
			body.append(el('tr', {'data-test': 'diff-total', 'data-name': r[0], 'data-base': r[2] === null ? '' : r[2],
			                      'data-new': r[3] === null ? '' : r[3], 'data-delta': d === null ? '' : d},
			               el('td', {text: r[1]}),
			               el('td', {class: 'num', text: r[2] === null ? '?' : fmt(r[2])}),
			               el('td', {class: 'num', text: r[3] === null ? '?' : fmt(r[3])}),
			               el('td', {class: 'num ' + cls(d), text: signed(d, fmt)})));
		});
		return el('table', {class: 'diff', 'data-test': 'diff-totals'},
		          el('thead', {}, el('tr', {}, el('th', {text: ''}), el('th', {class: 'num', text: 'base'}),
		                                    el('th', {class: 'num', text: 'new'}), el('th', {class: 'num', text: 'change'}))),
		          body);
	}

	// ---- the site tables ----

	function where(s)
	{
		return s.file ? s.file + (s.line ? ':' + s.line : '') : '';
	}

	function snippet(data, file, line)
	{
		var src = file && data.sources && data.sources[file];
		if (!src || !line)
			return null;
		var pre = el('pre', {class: 'src', 'data-test': 'source', title: file});
		for (var l = Math.max(src.first, line - 3); l <= line + 3 && l - src.first < src.lines.length; l++)
			pre.append(el('span', {class: l === line ? 'src-line here' : 'src-line'},
			              el('span', {class: 'ln', text: String(l)}), src.lines[l - src.first] + '\n'));
		return pre.childNodes.length ? pre : null;
	}

	function backtrace(data, site, figs)
	{
		var ol = el('ol', {class: 'bt', 'data-test': 'diff-backtrace'});
		site.frames.forEach(function (fi) {
			var f = data.frames[fi];
			var li = el('li', {}, el('b', {title: f.full, text: f.fn}),
			            f.file ? el('span', {class: 'loc', text: ' at ' + f.file + ':' + f.line}) : null,
			            f.module ? el('span', {class: 'mod', text: ' (' + f.module + ')'}) : null,
			            f.inl ? el('span', {class: 'inl', text: ' [inlined]'}) : null);
			var s = snippet(data, f.file, f.line);
			if (s)
				li.append(s);
			ol.append(li);
		});
		var runs = ['base', 'new'].map(function (k) {
			var side = site[k];
			var text = !side ? 'not in this run' : figs.map(function (fg) {
				var v = value(side, fg);
				return fg.label + ' ' + (v === null ? '? (not listed)' : fg.fmt(v));
			}).join(', ');
			return el('p', {class: 'hint', text: k + ': ' + text});
		});
		var title = site.status === 'gone' ? 'backtrace in BASE (the site is gone from NEW):' : 'backtrace in NEW:';
		return el('div', {}, runs[0], runs[1], el('p', {class: 'hint', text: title}), ol);
	}

	function siteTable(st, list, test, empty)
	{
		var figs = st.figs, sort = st.sort, col = figs.filter(function (f) { return f.id === sort.col; })[0] || figs[0];
		var key = function (s) {
			var d = delta(s, col);
			return d === null ? 0 : d;
		};
		var rows = list.slice().sort(function (p, q) {
			return (sort.desc ? key(q) - key(p) : key(p) - key(q)) || p.order - q.order;
		});
		var head = el('tr', {}, el('th', {text: 'site'}), el('th', {text: 'where'}), el('th', {text: 'status'}));
		figs.forEach(function (f) {
			head.append(el('th', {class: 'num sortable' + (f === col ? (sort.desc ? ' desc' : ' asc') : ''),
			                      'data-col': f.id, 'data-test': 'diff-sort-' + f.id, text: f.label,
			                      title: 'change of ' + f.label + ' (click to sort)',
			                      onclick: function () {
				                      st.sort = {col: f.id, desc: f === col ? !sort.desc : true};
				                      draw(st);
			                      }}));
		});
		var body = el('tbody');
		rows.slice(0, ROWS).forEach(function (s) {
			var tr = el('tr', {class: 'site', 'data-test': 'diff-row', 'data-fn': s.fn, 'data-full': s.full,
			                   'data-status': s.status},
			            el('td', {class: 'name', title: s.full, text: s.fn}),
			            el('td', {class: 'where', text: where(s)}),
			            el('td', {class: 'status', text: s.status === 'same' ? 'unchanged' : s.status}));
			figs.forEach(function (f) {
				var a = value(s.base, f), b = value(s.new, f), d = delta(s, f);
				tr.append(el('td', {class: 'num ' + cls(d), 'data-col': f.id, 'data-base': a === null ? '' : a,
				                    'data-new': b === null ? '' : b, 'data-delta': d === null ? '' : d,
				                    title: (a === null ? '?' : f.fmt(a)) + ' \u2192 ' + (b === null ? '?' : f.fmt(b)),
				                    text: signed(d, f.fmt)}));
			});
			tr.addEventListener('click', function () {
				var next = tr.nextSibling;
				if (next && next.classList.contains('detail'))
					return next.remove();
				tr.after(el('tr', {class: 'detail', 'data-test': 'diff-detail'},
				            el('td', {colspan: figs.length + 3}, backtrace(st.data, s, figs))));
			});
			body.append(tr);
		});
		if (!rows.length)
			return el('p', {class: 'hint', 'data-test': test + '-empty', text: empty});
		var wrap = el('div', {class: 'table-wrap'},
		              el('table', {class: 'diff sites', 'data-test': test}, el('thead', {}, head), body));
		if (rows.length > ROWS)
			wrap.append(el('p', {text: (rows.length - ROWS) + ' more sites not shown (sort by another column to see them).'}));
		return wrap;
	}

	// ---- the flame graph of the change ----

	// The merged top-down tree of both runs' stacks (merged by function), each node's BASE and NEW cost.
	function changeTree(data, costId)
	{
		var diff = data.diff, root = {name: 'all', k: '', inBase: 0, inNew: 0, kids: new Map()};
		function add(frames, v, side) {
			if (!v)
				return;
			var node = root;
			node[side] += v;
			for (var i = frames.length - 1; i >= 0; i--) {
				var f = data.frames[frames[i]], key = f.full || f.fn, next = node.kids.get(key);
				if (!next)
					node.kids.set(key, next = {name: f.fn, k: key, file: f.file, inBase: 0, inNew: 0, kids: new Map()});
				next[side] += v;
				node = next;
			}
		}
		var pick = COSTS[costId].get;
		data.sites.forEach(function (s) { add(data.stacks[s.stack] || [], pick(s), 'inNew'); });
		diff.base_sites.forEach(function (s) { add(diff.base_stacks[s.stack] || [], pick(s), 'inBase'); });
		// Frames narrower than a 3000th of the whole are left out (under half a pixel on a wide screen):
		// each depth then holds at most 3000 frames, so d3-flame-graph stays fast on 100k stacks.
		var min = (root.inBase + root.inNew) / 3000;
		function toObject(node) {
			var kids = [];
			node.kids.forEach(function (c) {
				if (c.inBase + c.inNew >= min)
					kids.push(toObject(c));
			});
			// (d3-flame-graph reads a node's "n", "d", "v" and "l" as name, delta, value and type)
			return {name: node.name, k: node.k, file: node.file, inBase: node.inBase, inNew: node.inNew,
			        value: node.inBase + node.inNew, change: node.inNew - node.inBase, children: kids};
		}
		return toObject(root);
	}

	var COSTS = {
		leaked: {label: 'leaked bytes', fmt: bytes, get: function (s) { return s.live; }},
		allocated: {label: 'bytes allocated', fmt: bytes, get: function (s) { return s.bytes; }},
		allocations: {label: 'allocations', fmt: count, get: function (s) { return s.n; }},
		peak: {label: 'bytes at the peak', fmt: bytes, get: function (s) { return s.peak; }},
		temporary: {label: 'temporary allocations', fmt: count, get: function (s) { return s.temp; }},
	};

	// Red for growth, blue for shrinking, paler the smaller the change's share of the frame.
	function colour(d)
	{
		var x = d.data, share = x.value ? Math.min(1, Math.abs(x.change) / x.value) : 0, c = Math.round(235 * (1 - share));
		if (!x.change)
			return 'rgb(220,220,220)';
		return x.change > 0 ? 'rgb(255,' + c + ',' + c + ')' : 'rgb(' + c + ',' + c + ',255)';
	}

	function factory()
	{
		var fg = window.flamegraph;
		return typeof fg === 'function' ? fg : fg && fg.default;
	}

	function drawFlame(st, box)
	{
		var cost = COSTS[st.flameCost], tree = changeTree(st.data, st.flameCost);
		var chart = box.querySelector('[data-test=diff-flame]'), details = box.querySelector('.ct-details');
		if (st.chart)
			st.chart.destroy();
		st.chart = null;
		chart.textContent = '';
		if (!tree.value) {
			chart.append(el('p', {class: 'hint', 'data-test': 'diff-flame-empty', text: 'Neither run has any of this cost.'}));
			return;
		}
		var tip = window.flamegraph.tooltip.defaultFlamegraphTooltip().html(function (d) {
			var x = d.data;
			return '<b>' + esc(x.k || 'all stacks') + '</b><br>' + esc(x.file || '') + '<br>' +
			       esc(cost.label + ': ' + cost.fmt(x.inBase) + ' \u2192 ' + cost.fmt(x.inNew) + ' (' + signed(x.change, cost.fmt) + ')');
		});
		var c = factory()().width(chart.clientWidth || 960).cellHeight(18).minFrameSize(1).selfValue(false)
		                   .transitionDuration(0).tooltip(tip).setDetailsElement(details);
		c.setColorMapper(colour);
		c.label(function (d) {
			return d.data.name + ': ' + cost.fmt(d.data.inBase) + ' \u2192 ' + cost.fmt(d.data.inNew) + ' (' + signed(d.data.change, cost.fmt) + ')';
		});
		c.sort(function (a, b) { return b.data.value - a.data.value || (a.data.name < b.data.name ? -1 : 1); });
		window.d3.select(chart).datum(tree).call(c);
		st.chart = c;
		window.d3.select(chart).selectAll('svg g').each(function (d) {
			this.setAttribute('data-test', 'diff-flame-frame');
			this.setAttribute('data-fn', d.data.name);
			this.setAttribute('data-base', d.data.inBase);
			this.setAttribute('data-new', d.data.inNew);
			this.setAttribute('data-delta', d.data.change);
			this.setAttribute('data-depth', d.depth);
		});
	}

	function esc(s)
	{
		return String(s).replace(/[&<>"']/g, function (c) {
			return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
		});
	}

	function flameSection(st)
	{
		var diff = st.data.diff;
		if (!diff.base_is_trace || !diff.base_sites)
			return el('p', {class: 'hint', 'data-test': 'diff-flame-none',
			                text: 'No flame graph of the change: BASE is a saved JSON report, which holds no stacks.'});
		if (!factory() || !window.d3)
			return el('p', {class: 'hint', text: 'The flame graph needs d3 and d3-flame-graph, which this page lacks.'});
		var select = el('select', {'data-test': 'diff-flame-cost'});
		Object.keys(COSTS).forEach(function (k) {
			select.append(el('option', {value: k, text: COSTS[k].label}));
		});
		select.value = st.flameCost;
		var box = el('div', {class: 'ct-flame-diff'},
		             el('div', {class: 'ct-bar'}, el('label', {}, 'cost ', select),
		                el('span', {class: 'hint', text: 'width: BASE + NEW; red grew, blue shrank; click a frame to zoom'})),
		             el('div', {class: 'ct-details'}), el('div', {'data-test': 'diff-flame'}));
		select.addEventListener('change', function () {
			st.flameCost = select.value;
			drawFlame(st, box);
		});
		st.flameBox = box;
		return box;
	}

	// ---- the view ----

	function draw(st)
	{
		var diff = st.data.diff, view = st.view;
		var both = [], added = [], gone = [], counts = {new: 0, gone: 0, changed: 0, same: 0};
		diff.sites.forEach(function (s, i) {
			s.order = i;
			counts[s.status]++;
			(s.status === 'new' ? added : s.status === 'gone' ? gone : both).push(s);
		});
		var flame = st.flameBox || flameSection(st);
		var sel = el('select', {'data-test': 'diff-cost'});
		st.figs.forEach(function (f) { sel.append(el('option', {value: f.id, text: f.label})); });
		sel.value = st.sort.col;
		sel.addEventListener('change', function () {
			st.sort = {col: sel.value, desc: true};
			draw(st);
		});
		view.replaceChildren(
		    el('h2', {text: 'Compared with ' + diff.base}),
		    el('p', {class: 'hint', text: 'BASE ' + diff.base + (diff.base_is_trace ? ' (a trace)' : ' (a saved JSON report: ' +
		               'the figures it does not list are shown as ?)') + '; NEW ' + diff.totals.new.trace +
		               ' (the other views show NEW). Sites are matched by their first frame\u2019s function and source file.'}),
		    totalsTable(diff),
		    el('p', {'data-test': 'diff-counts', 'data-new': counts.new, 'data-gone': counts.gone,
		             'data-changed': counts.changed, 'data-same': counts.same,
		             text: counts.new + ' new, ' + counts.gone + ' gone, ' + counts.changed + ' changed, ' + counts.same +
		                   ' unchanged sites'}),
		    el('p', {class: 'ct-bar'}, el('label', {}, 'sort by the change of ', sel),
		       el('span', {class: 'hint', text: 'click a column to sort by it, a row for its backtrace'})),
		    el('h3', {text: 'Sites in both runs'}), siteTable(st, both, 'diff-both', 'No site is in both runs.'),
		    el('h3', {text: 'New sites (only in NEW)'}), siteTable(st, added, 'diff-new', 'No new site.'),
		    el('h3', {text: 'Gone sites (only in BASE)'}), siteTable(st, gone, 'diff-gone', 'No site is gone.'),
		    el('h3', {text: 'Flame graph of the change'}), flame);
		if (!st.flameDrawn && st.flameBox) {
			st.flameDrawn = true;
			drawFlame(st, st.flameBox);
		}
	}

	// CTDiff.render(view, data, costs): draws the Diff view in `view` once (the diff does not depend on the
	// time window); the sort order and the flame graph's cost are kept while `view` and the data stay.
	function render(view, data)
	{
		if (!data || !data.diff)
			return;
		injectCss();
		var st = states.get(view);
		if (st && st.data === data)
			return;
		var classified = !!(data.diff.totals.base.kinds || data.diff.totals.new.kinds);
		st = {view: view, data: data, figs: figures(classified), sort: {col: 'leaked', desc: true},
		      flameCost: 'leaked', flameBox: null, flameDrawn: false, chart: null};
		view.classList.add('ct-diff');
		states.set(view, st);
		draw(st);
	}

	window.CTDiff = {render: render};
})();
