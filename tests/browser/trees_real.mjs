// SPDX-License-Identifier: MIT
// trees_real.mjs: the call trees, caller/callee view and flame graph of a real report (ctrack-analyze --html)
// in Chromium, driven through the page's tabs; prints what the views show as JSON, which
// tests/e2e/test_html_trees.py compares with the traced program's own figures. Screenshots go to OUTDIR.
// Usage: node tests/browser/trees_real.mjs PAGE OUTDIR FUNCTION [SEARCH]   (exit 0, or 77: no browser)
//   FUNCTION: the function whose caller/callee figures are read (found by the view's search box);
//   SEARCH: the flame graph's search and hide pattern (default: FUNCTION).
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import {expandAll, settle, show} from './common.mjs';
import {launch} from './trees_harness.mjs';

const [pagePath, outdir, fn, search = fn] = process.argv.slice(2);
const NAMES = ['allocations', 'allocated', 'temporary', 'peak', 'live', 'definite', 'indirect', 'possible', 'reachable'];

function costsOf(e)
{
	const c = {};
	for (const n of NAMES)
		if (e.dataset['cost' + n[0].toUpperCase() + n.slice(1)] !== undefined)
			c[n] = +e.dataset['cost' + n[0].toUpperCase() + n.slice(1)];
	return c;
}

const rowsOf = (page) => page.$$eval('#view-trees tr[data-test=tree-row]', (trs, names) => trs.map((tr) => {
	const c = {}, self = {};
	for (const n of names) {
		const k = n[0].toUpperCase() + n.slice(1);
		c[n] = +tr.dataset['cost' + k];
		self[n] = +tr.dataset['self' + k];
	}
	return {fn: tr.dataset.fn, loc: tr.dataset.loc, depth: +tr.dataset.depth, expanded: tr.dataset.expanded === '1',
	        leaf: tr.dataset.leaf === '1', cost: c, self};
}), NAMES);

async function trees(page, out)
{
	await show(page, 'trees', 200);
	const total = await page.$eval('#view-trees [data-test=tree-total]', (e, names) => {
		const c = {};
		for (const n of names)
			c[n] = +e.dataset['cost' + n[0].toUpperCase() + n.slice(1)];
		return c;
	}, NAMES);
	out.total = total;
	out.topdown = await rowsOf(page);
	out.more = await page.$$eval('#view-trees tr[data-test=tree-more]', (t) => t.map((e) => e.textContent));
	await page.screenshot({path: path.join(outdir, 'trees-topdown.png'), fullPage: true});
	await expandAll(page, '#view-trees', 60);
	out.topdownAll = await rowsOf(page);
	await page.click('#view-trees [data-test=tree-mode-bottom]');
	out.bottomup = await rowsOf(page);
	await page.click('#view-trees [data-test=tree-byline]');
	out.bottomupByLine = await rowsOf(page);
	await page.click('#view-trees [data-test=tree-byline]');
	await page.screenshot({path: path.join(outdir, 'trees-bottomup.png'), fullPage: true});
	await page.click('#view-trees [data-test=tree-mode-top]');

	// The caller/callee view of FUNCTION, found with the search box.
	await page.type('#view-trees [data-test=cc-search]', fn);
	await page.$$eval('#view-trees [data-test=cc-match]', (as, f) => {
		const a = as.find((e) => e.textContent === f);
		if (a)
			a.click();
	}, fn);
	const cc = (kind) => page.$$eval('#view-trees [data-test=cc-' + kind + '-row]', (t) => t.map((e) => [e.dataset.fn, +e.dataset.costAllocations, +e.dataset.costAllocated]));
	out.cc = {fn: await page.$eval('#view-trees [data-test=cc-function]', (e) => e.dataset.fn).catch(() => null),
	          incl: await page.$eval('#view-trees [data-test=cc-function]', (e) => [+e.dataset.costAllocations, +e.dataset.costAllocated]).catch(() => null),
	          self: await page.$eval('#view-trees [data-test=cc-function]', (e) => [+e.dataset.selfAllocations, +e.dataset.selfAllocated]).catch(() => null),
	          callers: await cc('caller'), callees: await cc('callee')};
	await page.$eval('#view-trees [data-test=cc-panel]', (e) => e.scrollIntoView());
	await page.screenshot({path: path.join(outdir, 'trees-callers.png'), fullPage: true});
}

const framesOf = (page) => page.$$eval('#view-flame g[data-test=flame-frame]', (gs) => gs.map((g) => ({
	fn: g.dataset.fn, value: +g.dataset.value, depth: +g.dataset.depth, hl: g.dataset.hl === '1'})));

async function setFlameInput(page, test, value)
{
	await page.$eval('#view-flame [data-test=' + test + ']', (e, v) => {
		e.value = v;
		e.dispatchEvent(new Event('input'));
	}, value);
	await settle(page, 500);
}

async function flame(page, out)
{
	await show(page, 'flame', 200);
	await page.select('#view-flame [data-test=flame-cost]', 'allocations');
	await settle(page, 400);
	out.flame = {frames: await framesOf(page)};
	await page.screenshot({path: path.join(outdir, 'flame.png'), fullPage: true});
	await setFlameInput(page, 'flame-search', search);
	const m = await page.$eval('#view-flame [data-test=flame-match]', (e) => ({matched: +e.dataset.matched, total: +e.dataset.total, frames: +e.dataset.frames, text: e.textContent}));
	out.flame.search = {...m, highlighted: (await framesOf(page)).filter((f) => f.hl).length};
	await page.screenshot({path: path.join(outdir, 'flame-search.png'), fullPage: true});
	await setFlameInput(page, 'flame-search', '');
	await setFlameInput(page, 'flame-hide', '^' + search + '$');
	out.flame.hidden = await framesOf(page);
	await setFlameInput(page, 'flame-hide', '');
	await page.click('#view-flame [data-test=flame-icicle]');
	await settle(page, 400);
	out.flame.icicle = await page.$eval('#view-flame g[data-test=flame-frame][data-depth="0"]', (g) => g.getAttribute('transform'));
	await page.screenshot({path: path.join(outdir, 'flame-icicle.png'), fullPage: true});
	await page.click('#view-flame [data-test=flame-icicle]');
}

const browser = await launch();
if (!browser)
	process.exit(77);
const out = {};
try {
	const page = await browser.newPage();
	await page.setViewport({width: 1400, height: 1000});
	out.pageerrors = [];
	page.on('pageerror', (e) => out.pageerrors.push(String(e)));
	page.on('console', (m) => {
		if (m.type() === 'error')
			out.pageerrors.push(m.text());
	});
	await page.goto(pathToFileURL(path.resolve(pagePath)).href);
	await page.waitForFunction(() => document.documentElement.dataset.ready === '1', {timeout: 60000});
	await trees(page, out);
	await flame(page, out);
	out.errors = await page.evaluate(() => document.documentElement.dataset.errors || null);
} finally {
	await browser.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
