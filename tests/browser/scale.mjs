// SPDX-License-Identifier: MIT
// scale.mjs: times a big HTML report (ctrack-analyze --html) in Debian's Chromium through puppeteer-core,
// for scripts/html-scale: the load to data-ready (LOADS fresh tabs, the median), each tab's switch (the
// click to the next frame), the time window set on every view (setWindow to the next frame) and a drag
// across the heap chart. Prints one JSON document on stdout.
// Usage: node scale.mjs REPORT.html [LOADS]   (exit 77: no browser or puppeteer-core)
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import {launch} from './trees_harness.mjs';

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

// The time from a click (or a window change) to the frame after it, in the page's clock.
function timed(page, what, arg)
{
	return page.evaluate(async (what, arg) => {
		const t0 = performance.now();
		if (what === 'tab')
			document.querySelector(`#tabs button[data-view=${arg}]`).click();
		else
			window.ctReport.setWindow(arg[0], arg[1]);
		void document.body.offsetHeight;
		await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
		return performance.now() - t0;
	}, what, arg);
}

async function load(browser, url, out)
{
	const page = await browser.newPage();
	await page.setViewport({width: 1400, height: 1000});
	page.on('pageerror', (e) => out.errors.push(String(e)));
	page.on('console', (m) => {
		if (m.type() === 'error')
			out.errors.push(m.text());
	});
	const start = Date.now();
	await page.goto(url, {waitUntil: 'domcontentloaded', timeout: 900000});
	await page.waitForFunction(() => document.documentElement.dataset.ready === '1' ||
	                                 document.documentElement.hasAttribute('data-errors'),
	                           {timeout: 900000, polling: 50});
	out.loads.push(Date.now() - start);
	return page;
}

async function main()
{
	const [report, loads = '3'] = process.argv.slice(2);
	if (!report) {
		console.error('usage: node scale.mjs REPORT.html [LOADS]');
		process.exit(2);
	}
	const browser = await launch();
	if (!browser)
		process.exit(77);
	const out = {loads: [], errors: [], tabs: {}, window: {}};
	const url = pathToFileURL(path.resolve(report)).href;
	try {
		let page = null;
		for (let i = 0; i < +loads; i++) {
			if (page)
				await page.close();
			page = await load(browser, url, out);
		}
		out.load_median_ms = median(out.loads);
		out.js_heap_mb = (await page.metrics()).JSHeapUsedSize / 1048576;
		const info = await page.evaluate(() => ({slices: window.ctData.timeline.n,
		                                         site_slices: window.ctData.timeline.site_n ?? window.ctData.timeline.n,
		                                         sites: window.ctData.sites.length,
		                                         frames: window.ctData.frames.length,
		                                         tabs: [...document.querySelectorAll('#tabs button')].map((b) => b.dataset.view)}));
		Object.assign(out, {slices: info.slices, site_slices: info.site_slices, sites: info.sites, frames: info.frames});
		// Each tab twice: the first switch draws the view, the second shows it again.
		for (const v of info.tabs)
			out.tabs[v] = [await timed(page, 'tab', v)];
		for (const v of info.tabs)
			out.tabs[v].push(await timed(page, 'tab', v));
		// The middle third of the run as the window (in site slices), on each view that follows it, then
		// the whole run.
		const third = [Math.floor(info.site_slices / 3), Math.ceil(2 * info.site_slices / 3)];
		for (const v of ['timeline', 'sites', 'trees', 'flame', 'histogram']) {
			await timed(page, 'tab', v);
			out.window[v] = [await timed(page, 'window', third), await timed(page, 'window', [0, info.site_slices])];
		}
		// A drag across the heap chart, as a person makes it (mouse down, moves, up) on the timeline.
		await timed(page, 'tab', 'timeline');
		const box = await page.evaluate(() => {
			const u = window.ctCharts[0];
			u.over.scrollIntoView({block: 'center'});
			const r = u.over.getBoundingClientRect();
			return {x0: r.left + r.width / 3, x1: r.left + 2 * r.width / 3, y: r.top + r.height / 2};
		});
		const t0 = Date.now();
		await page.mouse.move(box.x0, box.y);
		await page.mouse.down();
		await page.mouse.move(box.x1, box.y, {steps: 4});
		await page.mouse.up();
		await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
		out.drag_ms = Date.now() - t0;
		out.drag_window = await page.evaluate(() => [window.ctReport.state.a, window.ctReport.state.b]);
		out.data_errors = await page.evaluate(() => document.documentElement.getAttribute('data-errors'));
	} finally {
		await browser.close();
	}
	process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
	console.error('scale:', e && e.stack || e);
	process.exit(1);
});
