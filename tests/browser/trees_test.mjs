// SPDX-License-Identifier: MIT
// trees_test.mjs: the call trees and caller/callee view (analyzer/html/trees.js) in Chromium, on the harness's
// synthetic sites whose figures are known (trees_harness.mjs, SMALL): totals, merging by function or line,
// recursion counted once, bottom-up sites, sorting, filter, caller/callee, state kept across windows.
// Usage: node tests/browser/trees_test.mjs   (exit 0 pass, 1 fail, 77 skip)
import {expandAll} from './common.mjs';
import {installSmall, check, artifact, runHarness} from './trees_harness.mjs';

// The drawn tree rows as {fn, loc, depth, expanded, leaf, cost: {name: inclusive}, self: {name: self}}.
function rows(page, sel = '#trees tr[data-test=tree-row]')
{
	return page.$$eval(sel, (trs) => trs.map((tr) => {
		const cost = {}, self = {};
		for (const [k, v] of Object.entries(tr.dataset)) {
			if (k.startsWith('cost'))
				cost[k.slice(4).toLowerCase()] = +v;
			if (k.startsWith('self'))
				self[k.slice(4).toLowerCase()] = +v;
		}
		return {fn: tr.dataset.fn, loc: tr.dataset.loc, depth: +tr.dataset.depth, expanded: tr.dataset.expanded === '1',
		        leaf: tr.dataset.leaf === '1', cost, self};
	}));
}

const click = (page, sel) => page.$eval(sel, (e) => e.click());
const attr = (page, sel, name) => page.$eval(sel, (e, n) => e.getAttribute(n), name);
const sum = (rs, c) => rs.reduce((t, r) => t + r.cost[c], 0);

async function render(page, opts)
{
	await page.evaluate((o) => CTTrees.render(document.getElementById('trees'), ctData, ctCosts, o), opts);
}

async function run(page)
{
	await installSmall(page);
	await render(page, {cost: 'allocations', byLine: false, icicle: false, hide: null, search: ''});
	const names = ['allocations', 'allocated', 'temporary', 'peak', 'live', 'definite', 'indirect', 'possible',
	               'reachable'];
	const want = {allocations: 47, allocated: 4700, temporary: 6, peak: 520, live: 420, definite: 70, indirect: 0,
	              possible: 50, reachable: 300};

	// Top-down: the total row and the roots' sum equal the sum over the sites, for every cost.
	let rs = await rows(page);
	const roots = rs.filter((r) => r.depth === 0);
	check('top-down roots by function', roots.map((r) => r.fn), ['main', 'thread_fn']);
	for (const c of names) {
		check('total row ' + c, +(await attr(page, '#trees [data-test=tree-total]', 'data-cost-' + c)), want[c]);
		check('top-down roots sum ' + c, sum(roots, c), want[c]);
	}
	check('columns', await page.$$eval('#trees th[data-test=tree-sort]', (t) => t.map((e) => e.dataset.cost)), names);
	// The largest path (allocations) is open: main (44) → g (25) → xmalloc (20, a site).
	check('largest path expanded', rs.filter((r) => r.expanded).map((r) => r.fn + '=' + r.cost.allocations),
	      ['main=44', 'g=25']);
	check('full name in title', await page.$eval('#trees tr[data-fn=main] span[title]', (e) => e.title), 'main');

	// Merged by function: 11 nodes; f once per stack at each depth: main → f is 19 (10 + 7 + 2, not 10 + 3×7 + 2).
	await expandAll(page, '#trees', 200);
	rs = await rows(page);
	check('top-down nodes by function', rs.length, 11);
	check('f under main: inclusive, self',
	      rs.filter((r) => r.fn === 'f').map((r) => [r.depth, r.cost.allocations, r.self.allocations]),
	      [[1, 19, 2], [2, 7, 0], [3, 7, 0]]);
	await page.screenshot({path: artifact('trees-topdown.png'), fullPage: true});

	// Per call line: main:10 and main:20 are two roots, 14 nodes in all.
	await click(page, '#trees [data-test=tree-byline]');
	await expandAll(page, '#trees', 200);
	rs = await rows(page);
	check('top-down roots by line', rs.filter((r) => r.depth === 0).map((r) => r.fn + '@' + r.loc + '=' + r.cost.allocations),
	      ['main@demo.c:10=32', 'main@demo.c:20=12', 'thread_fn@t.c:1=3']);
	check('top-down nodes by line', rs.length, 14);
	check('recursion by line (f:5 → f:6 → f:6)', rs.filter((r) => r.fn === 'f').map((r) => r.loc + '=' + r.cost.allocations),
	      ['f.c:5=12', 'f.c:5=7', 'f.c:6=7', 'f.c:6=7']);
	await click(page, '#trees [data-test=tree-byline]');

	// Bottom-up: each allocation site's function with its sites' figures.
	await click(page, '#trees [data-test=tree-mode-bottom]');
	rs = await rows(page);
	const bu = rs.filter((r) => r.depth === 0);
	check('bottom-up roots', bu.map((r) => [r.fn, r.cost.allocations, r.cost.allocated, r.cost.peak, r.cost.definite]),
	      [['xmalloc', 37, 3700, 170, 70], ['g', 5, 500, 50, 0], ['operator new', 3, 300, 300, 0], ['f', 2, 200, 0, 0]]);
	for (const c of names)
		check('bottom-up roots sum ' + c, sum(bu, c), want[c]);
	await expandAll(page, '#trees', 200);
	rs = await rows(page);
	check('bottom-up xmalloc callers', rs.filter((r) => r.depth === 1 && r.cost.allocations >= 10).map((r) => r.fn + '=' + r.cost.allocations),
	      ['g=20', 'f=17']);
	await page.screenshot({path: artifact('trees-bottomup.png'), fullPage: true});

	// Sorting: by a column's header, descending first, then ascending.
	await click(page, '#trees th[data-cost=peak]');
	rs = await rows(page);
	check('sort by peak, descending', rs.filter((r) => r.depth === 0).map((r) => r.fn), ['operator new', 'xmalloc', 'g', 'f']);
	check('sort header marked', await attr(page, '#trees th[data-cost=peak]', 'aria-sort'), 'descending');
	await click(page, '#trees th[data-cost=peak]');
	rs = await rows(page);
	check('sort by peak, ascending', rs.filter((r) => r.depth === 0).map((r) => r.fn), ['f', 'g', 'xmalloc', 'operator new']);
	await click(page, '#trees th[data-cost=allocations]');

	// Caller/callee of f (clicked in the top-down tree): callers main and f itself, callees xmalloc, f, self.
	await click(page, '#trees [data-test=tree-mode-top]');
	await page.$eval('#trees tr[data-test=tree-row][data-fn=f][data-depth="1"] td', (e) => e.click());
	const cc = async (kind) => page.$$eval('#trees [data-test=cc-' + kind + '-row]', (t) => t.map((e) => e.dataset.fn + '=' + e.dataset.costAllocations));
	check('cc f inclusive (recursion once)', +(await attr(page, '#trees [data-test=cc-function]', 'data-cost-allocations')), 19);
	check('cc f self', +(await attr(page, '#trees [data-test=cc-function]', 'data-self-allocations')), 2);
	check('cc f callers', await cc('caller'), ['main=19', 'f=7']);
	check('cc f callees', await cc('callee'), ['xmalloc=17', 'f=7', '(allocates here: self)=2']);
	await page.screenshot({path: artifact('trees-callers.png'), fullPage: true});
	// Navigating: a click on the caller main selects main.
	await click(page, '#trees [data-test=cc-caller-row][data-fn=main]');
	check('cc navigate to main', await attr(page, '#trees [data-test=cc-function]', 'data-fn'), 'main');
	check('cc main inclusive', +(await attr(page, '#trees [data-test=cc-function]', 'data-cost-allocations')), 44);
	check('cc main callers', await cc('caller'), ['(outermost: no caller)=44']);
	// Search: xmalloc's callers are g (20) and f (10 + 7).
	await page.type('#trees [data-test=cc-search]', 'xmal');
	await click(page, '#trees [data-test=cc-match]');
	check('cc search xmalloc', await attr(page, '#trees [data-test=cc-function]', 'data-fn'), 'xmalloc');
	check('cc xmalloc callers', await cc('caller'), ['g=20', 'f=17']);
	check('cc xmalloc callees', await cc('callee'), ['(allocates here: self)=37']);

	// The filter keeps the stacks through a function (or file).
	await page.type('#trees [data-test=tree-filter]', 'thread');
	await page.waitForFunction(() => document.querySelector('#trees [data-test=tree-summary]').dataset.sites === '1');
	check('filter total', +(await attr(page, '#trees [data-test=tree-total]', 'data-cost-allocations')), 3);
	await page.$eval('#trees [data-test=tree-filter]', (e) => { e.value = ''; e.dispatchEvent(new Event('input')); });
	await page.waitForFunction(() => document.querySelector('#trees [data-test=tree-summary]').dataset.sites === '6');

	// A new window (site 4, the thread's, allocated nothing in it) keeps the sort, the mode, the expanded nodes.
	await click(page, '#trees th[data-cost=allocated]');
	const before = (await rows(page)).filter((r) => r.expanded).map((r) => r.fn + '/' + r.depth);
	await page.evaluate(() => {
		const w = {};
		for (const k of Object.keys(ctCosts))
			w[k] = ctCosts[k].map((v, i) => (i === 4 ? 0 : v));
		CTTrees.render(document.getElementById('trees'), ctData, w, {cost: 'allocations', byLine: false, icicle: false, hide: null, search: ''});
	});
	rs = await rows(page);
	check('new window: total', +(await attr(page, '#trees [data-test=tree-total]', 'data-cost-allocations')), 44);
	check('new window: sort kept', await attr(page, '#trees th[data-cost=allocated]', 'aria-sort'), 'descending');
	check('new window: expanded kept', rs.filter((r) => r.expanded).map((r) => r.fn + '/' + r.depth), before);
	check('new window: thread_fn gone', rs.filter((r) => r.fn === 'thread_fn').length, 0);
	check('new window: g under main', rs.filter((r) => r.fn === 'g').map((r) => r.cost.allocations), [25]);

	// A site without frames is a root of its own, so the roots still add up to the total.
	await page.evaluate(() => {
		const d = {...ctData, stacks: [...ctData.stacks, []], sites: [...ctData.sites, {stack: ctData.stacks.length}]};
		const c = {};
		for (const k of Object.keys(ctCosts))
			c[k] = Float64Array.from([...ctCosts[k], k === 'allocations' ? 4 : 0]);
		CTTrees.render(document.getElementById('trees'), d, c, {cost: 'allocations'});
	});
	rs = (await rows(page)).filter((r) => r.depth === 0);
	check('no stack: a root', rs.map((r) => r.fn + '=' + r.cost.allocations + (r.leaf ? ' leaf' : '')),
	      ['main=44', '(no stack)=4 leaf', 'thread_fn=3']);
	check('no stack: total', +(await attr(page, '#trees [data-test=tree-total]', 'data-cost-allocations')), 51);

	check('no page errors', page.errors, []);
}

await runHarness(run);
