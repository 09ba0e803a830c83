// SPDX-License-Identifier: MIT
// report_test.mjs: drives an HTML report (ctrack-analyze --html) in Debian's Chromium through
// puppeteer-core and prints what the page shows as one JSON document on stdout, for
// tests/e2e/test_html.py to compare with the traced program's own figures.
// Usage: node report_test.mjs REPORT.html OUTDIR [--phases] [--load-only]
//   always: the time to data-ready, data-errors, console errors, the header's figures, the tabs;
//   --phases: drags across the chart from the start to the mark "phase2", then from "phase2" to
//   "end", and records the top sites table's rows and the histogram after each drag (and after a
//   double-click reset), with OUTDIR/timeline-phase1.png and timeline-phase2.png;
//   unless --load-only: opens every tab, saves OUTDIR/<view>.png of each, records the rows each shows.
// Exit 77 (meson's skip) when Chromium or puppeteer-core is missing and CI is not set; 1 on a crash.
import fs from 'node:fs';
import path from 'node:path';
import {launchOrSkip, openReport, show, watchedPage} from './common.mjs';

// The rows of the top sites table: [{name, n, bytes, live}].
async function siteRows(page)
{
	return page.$$eval('#view-sites tr[data-test=site-row]', rows => rows.map(r => ({
		name: r.dataset.name,
		n: +r.querySelector('td[data-col=n]').dataset.value,
		bytes: +r.querySelector('td[data-col=bytes]').dataset.value,
		live: +r.querySelector('td[data-col=live]').dataset.value,
	})));
}

// The histogram's buckets with allocations: {lo: allocations}.
async function buckets(page)
{
	return page.$$eval('#view-histogram tr[data-test=bucket]', rows =>
		Object.fromEntries(rows.filter(r => +r.dataset.n).map(r => [r.dataset.lo, +r.dataset.n])));
}

// Drags on the heap chart from time t0 to t1 (seconds), at pixels computed from uPlot's scale.
async function drag(page, t0, t1)
{
	const box = await page.evaluate((t0, t1) => {
		const u = window.ctCharts[0];
		const r = u.over.getBoundingClientRect();
		u.over.scrollIntoView({block: 'center'});
		const r2 = u.over.getBoundingClientRect();
		return {x0: r2.left + u.valToPos(t0, 'x'), x1: r2.left + u.valToPos(t1, 'x'),
		        y: r2.top + r2.height / 2, width: r.width};
	}, t0, t1);
	await page.mouse.move(box.x0, box.y);
	await page.mouse.down();
	await page.mouse.move((box.x0 + box.x1) / 2, box.y, {steps: 4});
	await page.mouse.move(box.x1, box.y, {steps: 4});
	await page.mouse.up();
	return box;
}

async function phases(page, outdir, out)
{
	const marks = await page.evaluate(() => window.ctData.marks);
	const at = name => (marks.find(m => m.name === name) || {t: NaN}).t / 1e6;
	const width = await page.evaluate(() => window.ctData.timeline.width_us / 1e6);
	const px = await page.evaluate(() => {
		const u = window.ctCharts[0];
		return u.posToVal(1, 'x') - u.posToVal(0, 'x'); // seconds per CSS pixel
	});
	const steps = [['phase1', 0, at('phase2') - 2 * px], ['phase2', at('phase2') + 2 * px, at('end') + 2 * px]];
	out.phases = {};
	for (const [name, t0, t1] of steps) {
		await show(page, 'timeline', 0);
		await drag(page, t0, t1);
		const text = await page.$eval('#view-timeline [data-test=window]', e => e.textContent);
		await page.screenshot({path: path.join(outdir, `timeline-${name}.png`), fullPage: true});
		await show(page, 'sites', 0);
		const rows = await siteRows(page);
		// The table's columns and the names it shows (sites of one function told apart by their caller).
		const heads = await page.$$eval('#view-sites th', t => t.map(x => x.textContent));
		const labels = await page.$$eval('#view-sites td.name', t => t.map(x => x.textContent));
		await show(page, 'leaks', 0);
		const leaks_note = await page.$eval('#view-leaks [data-test=leaks-window]', e => e.hidden ? '' : e.textContent)
		                             .catch(() => null);
		await show(page, 'histogram', 0);
		out.phases[name] = {window: text, from: t0, to: t1, slice_s: width, rows, buckets: await buckets(page),
		                    state: await page.evaluate(() => [window.ctReport.state.a, window.ctReport.state.b]),
		                    heads, labels, leaks_note};
	}
	await show(page, 'timeline', 0);
	const u = await page.evaluate(() => {
		const r = window.ctCharts[0].over.getBoundingClientRect();
		return {x: r.left + r.width / 2, y: r.top + r.height / 2};
	});
	await page.mouse.click(u.x, u.y, {clickCount: 2});
	await show(page, 'sites', 0);
	const rows = await siteRows(page);
	await show(page, 'histogram', 0);
	out.phases.reset = {window: await page.$eval('#view-timeline [data-test=window]', e => e.textContent),
	                    rows, buckets: await buckets(page)};
}

async function everyView(page, outdir, out)
{
	const views = await page.$$eval('#tabs button', b => b.map(x => x.dataset.view));
	out.views = {};
	for (const v of views) {
		await show(page, v, 0);
		await new Promise(r => setTimeout(r, 150)); // a view's module may draw in a frame
		const file = path.join(outdir, v + '.png');
		await page.screenshot({path: file, fullPage: true});
		out.views[v] = await page.evaluate(v => {
			const e = document.getElementById('view-' + v);
			return {text: e.innerText.length, rows: e.querySelectorAll('tr').length,
			        canvases: e.querySelectorAll('canvas').length, svgs: e.querySelectorAll('svg').length};
		}, v);
		out.views[v].screenshot = file;
	}
}

async function main()
{
	const args = process.argv.slice(2);
	const [report, outdir] = args.filter(a => !a.startsWith('--'));
	if (!report || !outdir) {
		console.error('usage: node report_test.mjs REPORT.html OUTDIR [--phases] [--load-only]');
		process.exit(2);
	}
	fs.mkdirSync(outdir, {recursive: true});
	const browser = await launchOrSkip('report_test');
	const out = {console: [], pageerrors: [], requests: []};
	try {
		const page = await watchedPage(browser, out);
		await openReport(page, report, out);
		out.html_bytes = fs.statSync(report).size;
		out.figures = await page.$$eval('header [data-value]', e => Object.fromEntries(e.map(x => [x.id, +x.dataset.value])));
		out.colours = await page.$$eval('header [data-value]', e => Object.fromEntries(e.map(x => [x.id, getComputedStyle(x).color])));
		out.tabs = await page.$$eval('#tabs button', b => b.map(x => x.dataset.view));
		out.charts = await page.evaluate(() => (window.ctCharts || []).map(u => ({
			series: u.series.length, points: u.data[0].length,
			max: Math.max(...u.data.slice(1).map(s => Math.max(...s.map(v => v || 0)))),
		})));
		if (args.includes('--phases'))
			await phases(page, outdir, out);
		if (!args.includes('--load-only'))
			await everyView(page, outdir, out);
		out.errors = await page.evaluate(() => document.documentElement.getAttribute('data-errors'));
	} finally {
		await browser.close();
	}
	process.stdout.write(JSON.stringify(out, null, 1) + '\n');
}

main().catch(e => {
	console.error('report_test:', e && e.stack || e);
	process.exit(1);
});
