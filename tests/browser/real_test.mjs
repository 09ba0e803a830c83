// SPDX-License-Identifier: MIT
// real_test.mjs: a real program's HTML report (ctrack-analyze --html of gcc's cc1 or sqlite3) in Debian's
// Chromium through puppeteer-core. Prints what each view shows, for the whole run and after a drag across
// the middle third of the allocations on the heap chart, as one JSON document on stdout; tests/e2e/test_html_real.py checks
// it against valgrind's figures and its own computation over the page's data document.
// Usage: node real_test.mjs REPORT.html OUTDIR
//   OUTDIR/<view>.png (the whole run) and OUTDIR/<view>-window.png (the middle third of the allocations) for every tab.
// Exit 77 (meson's skip) when Chromium or puppeteer-core is missing and CI is not set; 1 on a crash.
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import {settle, show} from './common.mjs';
import {launch} from './trees_harness.mjs';

// Every chart: its points, the x points where any series is above 0, the highest value.
function charts(page)
{
	return page.evaluate(() => (window.ctCharts || []).map((u) => {
		const xs = u.data[0], nonzero = new Set();
		let max = 0;
		for (let s = 1; s < u.data.length; s++)
			for (let i = 0; i < xs.length; i++) {
				const v = u.data[s][i] || 0;
				if (v > 0)
					nonzero.add(xs[i]);
				max = Math.max(max, v);
			}
		return {title: u.root.closest('.chart').previousElementSibling.textContent, points: xs.length,
		        nonzero_x: nonzero.size, max};
	}));
}

// What the views show now: the top sites table, the trees' total, the flame graph's root, the
// histogram, the window as each view words it.
async function observe(page, out, suffix, outdir)
{
	const views = await page.$$eval('#tabs button', (b) => b.map((x) => x.dataset.view));
	out.views = {};
	for (const v of views) {
		await show(page, v);
		const shot = path.join(outdir, v + suffix + '.png');
		if (v === 'trees')
			out.trees = await trees(page);
		if (v === 'flame')
			out.flame = await flame(page);
		await page.screenshot({path: shot, fullPage: v !== 'sites'});
		out.views[v] = await page.evaluate((v) => {
			const e = document.getElementById('view-' + v), w = e.querySelector('[data-test=window]');
			return {text: e.innerText.length, rows: e.querySelectorAll('tr').length,
			        canvases: e.querySelectorAll('canvas').length, svgs: e.querySelectorAll('svg').length,
			        window: w ? w.textContent : null};
		}, v);
		out.views[v].screenshot = shot;
		if (v === 'sites')
			out.sites = await page.$$eval('#view-sites tr[data-test=site-row]', (rows) => rows.map((r) => [
				+r.dataset.site, +r.querySelector('td[data-col=n]').dataset.value,
				+r.querySelector('td[data-col=bytes]').dataset.value,
				+r.querySelector('td[data-col=live]').dataset.value]));
		if (v === 'histogram')
			out.histogram = await page.$$eval('#view-histogram tr[data-test=bucket]',
			                                  (rows) => rows.map((r) => [+r.dataset.lo, +r.dataset.n]));
		if (v === 'timeline')
			out.window_figures = await page.$$eval('#window-figures [data-value]',
			                                       (e) => Object.fromEntries(e.map((x) => [x.dataset.test, +x.dataset.value])));
	}
	out.state = await page.evaluate(() => [window.ctReport.state.a, window.ctReport.state.b]);
}

// The trees: the total row's costs, top-down and bottom-up, and the caller/callee view of the first
// function of the top-down tree (clicked); the largest path expanded for the screenshot.
async function trees(page)
{
	const total = () => page.$eval('#view-trees tr[data-test=tree-total]',
	                               (t) => ({allocations: +t.dataset.costAllocations, allocated: +t.dataset.costAllocated}));
	const r = {};
	await page.click('#view-trees [data-test=tree-mode-bottom]');
	r.bottom = await total();
	await page.click('#view-trees [data-test=tree-mode-top]');
	r.top = await total();
	r.rows = await page.$$eval('#view-trees tr[data-test=tree-row]', (t) => t.length);
	const first = await page.$('#view-trees tr[data-test=tree-row] td span[title]');
	if (first) {
		await first.click();
		r.cc = await page.$eval('#view-trees [data-test=cc-function]',
		                        (t) => ({fn: t.dataset.fn, allocations: +t.dataset.costAllocations}))
		               .catch(() => null);
		r.callers = await page.$$eval('#view-trees tr[data-test=cc-caller-row]', (t) => t.length);
		r.callees = await page.$$eval('#view-trees tr[data-test=cc-callee-row]', (t) => t.length);
	}
	return r;
}

// The flame graph's root value for bytes allocated (the default cost) and for allocations, and the
// frames drawn.
async function flame(page)
{
	const root = () => page.evaluate(() => {
		const g = document.querySelector('#view-flame g[data-test=flame-frame][data-depth="0"]');
		return {root: g ? +g.dataset.value : null, cost: document.querySelector('#view-flame [data-test=flame-cost]').value,
		        frames: document.querySelectorAll('#view-flame g[data-test=flame-frame]').length,
		        svgs: document.querySelectorAll('#view-flame svg').length};
	});
	const r = {};
	r.allocated = await root();
	await page.select('#view-flame [data-test=flame-cost]', 'allocations');
	await settle(page, 100);
	r.allocations = await root();
	await page.select('#view-flame [data-test=flame-cost]', 'allocated');
	await settle(page, 100);
	return r;
}

// Drags on the heap chart from t0 to t1 (seconds), at pixels from uPlot's scale.
async function drag(page, t0, t1)
{
	const box = await page.evaluate((t0, t1) => {
		const u = window.ctCharts[0];
		u.over.scrollIntoView({block: 'center'});
		const r = u.over.getBoundingClientRect();
		return {x0: r.left + u.valToPos(t0, 'x'), x1: r.left + u.valToPos(t1, 'x'), y: r.top + r.height / 2};
	}, t0, t1);
	await page.mouse.move(box.x0, box.y);
	await page.mouse.down();
	await page.mouse.move((box.x0 + box.x1) / 2, box.y, {steps: 4});
	await page.mouse.move(box.x1, box.y, {steps: 4});
	await page.mouse.up();
}

async function main()
{
	const [report, outdir] = process.argv.slice(2);
	if (!report || !outdir) {
		console.error('usage: node real_test.mjs REPORT.html OUTDIR');
		process.exit(2);
	}
	const browser = await launch();
	if (!browser) {
		if (process.env.CI) {
			console.error('real_test: no browser (CI is set: a failure, not a skip)');
			process.exit(1);
		}
		process.exit(77);
	}
	fs.mkdirSync(outdir, {recursive: true});
	const out = {console: [], pageerrors: [], requests: []};
	let step = 'load';
	try {
		const page = await browser.newPage();
		await page.setViewport({width: 1400, height: 1000});
		page.on('console', (m) => {
			if (m.type() === 'error' || m.type() === 'warn')
				out.console.push(step + ': ' + m.type() + ': ' + m.text());
		});
		page.on('pageerror', (e) => out.pageerrors.push(step + ': ' + String(e)));
		page.on('request', (r) => {
			if (!r.url().startsWith('file:'))
				out.requests.push(r.url());
		});
		const start = Date.now();
		await page.goto(pathToFileURL(path.resolve(report)).href, {waitUntil: 'domcontentloaded', timeout: 120000});
		await page.waitForFunction(() => document.documentElement.dataset.ready === '1' ||
		                                 document.documentElement.hasAttribute('data-errors'),
		                           {timeout: 120000, polling: 50});
		out.ready_ms = Date.now() - start;
		out.ready = await page.evaluate(() => document.documentElement.dataset.ready || null);
		out.figures = await page.$$eval('header [data-value]', (e) => Object.fromEntries(e.map((x) => [x.id, +x.dataset.value])));
		out.tabs = await page.$$eval('#tabs button', (b) => b.map((x) => x.dataset.view));
		out.charts = await charts(page);
		step = 'whole run';
		out.whole = {};
		await observe(page, out.whole, '', outdir);
		// The middle third of the allocations (from the slice where a third of them is reached to the
		// one where two thirds are), dragged on the heap chart: the middle third of the run may hold
		// none (a loaded machine starved sqlite3 for half a second in a phase that allocates nothing).
		step = 'window';
		const [from, to] = await page.evaluate(() => {
			const t = window.ctData.timeline, a = t.allocs, total = a.reduce((s, x) => s + x, 0);
			let cum = 0, lo = 0, hi = a.length;
			for (let i = 0; i < a.length; i++) {
				if (cum < total / 3 && cum + a[i] >= total / 3)
					lo = i;
				if (cum < 2 * total / 3 && cum + a[i] >= 2 * total / 3)
					hi = i + 1;
				cum += a[i];
			}
			return [lo * t.width_us / 1e6, hi * t.width_us / 1e6];
		});
		await show(page, 'timeline');
		const t0 = Date.now();
		await drag(page, from, to);
		out.drag_ms = Date.now() - t0;
		const perPx = await page.evaluate(() => {
			const u = window.ctCharts[0];
			const t = window.ctData.timeline; // the window's unit is a site slice
			return (u.posToVal(1, 'x') - u.posToVal(0, 'x')) / ((t.site_width_us || t.width_us) / 1e6);
		});
		out.window = {dragged: [from, to], slices_per_px: perPx};
		await observe(page, out.window, '-window', outdir);
		out.errors = await page.evaluate(() => document.documentElement.getAttribute('data-errors'));
	} finally {
		await browser.close();
	}
	process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
	console.error('real_test:', e && e.stack || e);
	process.exit(1);
});
