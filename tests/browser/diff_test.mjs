// SPDX-License-Identifier: MIT
// diff_test.mjs: drives the Diff view of an HTML report written by ctrack-analyze --diff BASE NEW --html in
// Debian's Chromium through puppeteer-core, and prints what the view shows as one JSON document on stdout,
// for tests/e2e/test_html_diff.py to compare with the traced programs' own figures.
// Usage: node diff_test.mjs REPORT.html SCREENSHOT.png
//   the time to data-ready, data-errors, console errors, requests, the tabs, the Diff tab's drawing time; then: the
//   totals, the site counts, every row of the three tables (its cells' base, new and change), the order of
//   the rows sorted by the change of bytes allocated (a click on its header) and of allocations (the
//   select), the backtrace a click on the first row opens, and the flame graph of the change's frames
//   (for each cost of its select). The screenshot is taken of the view as first drawn, backtrace open.
// Exit 77 (meson's skip) when Chromium or puppeteer-core is missing and CI is not set; 1 on a crash.
import fs from 'node:fs';
import path from 'node:path';
import {launchOrSkip, openReport, watchedPage} from './common.mjs';

// Every row of the view's tables: {table, fn, status, cells: {col: {base, new, delta, text, cls}}}.
async function rows(page)
{
	return page.$$eval('#view-diff tr[data-test=diff-row]', trs => trs.map(tr => {
		const num = v => (v === '' ? null : +v);
		const cells = {};
		for (const td of tr.querySelectorAll('td[data-col]'))
			cells[td.dataset.col] = {base: num(td.dataset.base), new: num(td.dataset.new), delta: num(td.dataset.delta),
			                         text: td.textContent, cls: td.className.replace('num', '').trim()};
		return {table: tr.closest('table').dataset.test, fn: tr.dataset.fn, status: tr.dataset.status, cells};
	}));
}

async function flameFrames(page)
{
	return page.$$eval('#view-diff g[data-test=diff-flame-frame]', gs => gs.map(g => ({
		fn: g.dataset.fn, base: +g.dataset.base, new: +g.dataset.new, delta: +g.dataset.delta, depth: +g.dataset.depth,
		fill: (g.querySelector('rect') || {getAttribute: () => null}).getAttribute('fill'),
	})));
}

async function main()
{
	const [report, shot] = process.argv.slice(2);
	if (!report || !shot) {
		console.error('usage: node diff_test.mjs REPORT.html SCREENSHOT.png');
		process.exit(2);
	}
	fs.mkdirSync(path.dirname(path.resolve(shot)), {recursive: true});
	const browser = await launchOrSkip('diff_test');
	const out = {console: [], pageerrors: [], requests: []};
	try {
		const page = await watchedPage(browser, out);
		await openReport(page, report, out);
		out.tabs = await page.$$eval('#tabs button', b => b.map(x => x.dataset.view));
		if (!out.tabs.includes('diff'))
			return;
		// The view draws in the tab's click handler: its time is the click's.
		out.diff_ms = await page.evaluate(() => {
			const t0 = performance.now();
			document.querySelector('#tabs button[data-view=diff]').click();
			return performance.now() - t0;
		});
		await page.waitForFunction(() => !document.getElementById('view-diff').hidden &&
		                                 document.querySelector('#view-diff [data-test=diff-counts]'));
		out.heading = await page.$eval('#view-diff h2', e => e.textContent);
		out.totals = await page.$$eval('#view-diff tr[data-test=diff-total]', trs => Object.fromEntries(trs.map(tr => [
			tr.dataset.name, {base: tr.dataset.base === '' ? null : +tr.dataset.base,
			                  new: tr.dataset.new === '' ? null : +tr.dataset.new,
			                  delta: tr.dataset.delta === '' ? null : +tr.dataset.delta}])));
		out.counts = await page.$eval('#view-diff [data-test=diff-counts]', e => ({
			new: +e.dataset.new, gone: +e.dataset.gone, changed: +e.dataset.changed, same: +e.dataset.same}));
		out.rows = await rows(page);
		out.flame = await flameFrames(page);
		out.flame_none = await page.$('#view-diff [data-test=diff-flame-none]') !== null;
		// The first row's backtrace, then the screenshot.
		await page.click('#view-diff tr[data-test=diff-row]');
		out.backtrace = await page.$$eval('#view-diff tr[data-test=diff-detail] ol.bt > li > b', b => b.map(x => x.textContent));
		await page.screenshot({path: shot, fullPage: true});
		// Sorting: by the header of bytes allocated (descending), then the select's allocations.
		await page.click('#view-diff table[data-test=diff-both] th[data-test=diff-sort-bytes]');
		out.sorted_bytes = (await rows(page)).filter(r => r.table === 'diff-both').map(r => r.fn);
		await page.click('#view-diff table[data-test=diff-both] th[data-test=diff-sort-bytes]');
		out.sorted_bytes_asc = (await rows(page)).filter(r => r.table === 'diff-both').map(r => r.fn);
		await page.select('#view-diff [data-test=diff-cost]', 'n');
		out.sorted_n = (await rows(page)).filter(r => r.table === 'diff-both').map(r => r.fn);
		// The flame graph of the change for each cost of its select.
		out.flame_costs = {};
		const costs = await page.$$eval('#view-diff [data-test=diff-flame-cost] option', o => o.map(x => x.value));
		for (const c of costs) {
			await page.select('#view-diff [data-test=diff-flame-cost]', c);
			out.flame_costs[c] = await flameFrames(page);
		}
		// Leaving the tab and coming back keeps the view (and draws nothing twice).
		await page.click('#tabs button[data-view=sites]');
		await page.click('#tabs button[data-view=diff]');
		out.rows_again = (await rows(page)).length;
		out.errors = await page.evaluate(() => document.documentElement.getAttribute('data-errors'));
	} finally {
		await browser.close();
	}
	process.stdout.write(JSON.stringify(out, null, 1) + '\n');
}

main().catch(e => {
	console.error('diff_test:', e && e.stack || e);
	process.exit(1);
});
