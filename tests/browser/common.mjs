// SPDX-License-Identifier: MIT
// common.mjs: what the report tests share: Chromium through puppeteer-core (or meson's skip, 77, unless
// CI is set), a page that records console messages, page errors and requests, loading a report until
// it is drawn, and switching its views.
import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath, pathToFileURL} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

async function loadPuppeteer()
{
	try {
		const req = createRequire(path.join(here, 'x.js'));
		return (await import(pathToFileURL(req.resolve('puppeteer-core')).href)).default;
	} catch (e) {
		return null;
	}
}

// Exits 77 (meson's skip), or 1 when CI is set: there a missing browser is a failure.
function skip(name, why)
{
	if (process.env.CI) {
		console.error(`${name}: ${why} (CI is set: a failure, not a skip)`);
		process.exit(1);
	}
	console.error(`${name}: skipped: ${why}`);
	process.exit(77);
}

// Chromium, headless; exits as skip() says when puppeteer-core or Chromium is missing.
export async function launchOrSkip(name)
{
	const puppeteer = await loadPuppeteer();
	if (!puppeteer)
		skip(name, 'puppeteer-core is not installed (scripts/deps test installs it)');
	if (!fs.existsSync(CHROMIUM))
		skip(name, `no browser at ${CHROMIUM}`);
	return puppeteer.launch({
		executablePath: CHROMIUM, headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
	});
}

// A page of 1400 x 1000 whose console errors and warnings, page errors and requests other than
// file: URLs go to out.console, out.pageerrors and out.requests.
export async function watchedPage(browser, out)
{
	const page = await browser.newPage();
	await page.setViewport({width: 1400, height: 1000});
	page.on('console', m => { if (m.type() === 'error' || m.type() === 'warn') out.console.push(m.type() + ': ' + m.text()); });
	page.on('pageerror', e => out.pageerrors.push(String(e)));
	page.on('request', r => { if (!r.url().startsWith('file:')) out.requests.push(r.url()); });
	return page;
}

// Loads the report and waits until it is drawn (data-ready) or failed (data-errors): out.ready_ms,
// out.ready.
export async function openReport(page, report, out)
{
	const start = Date.now();
	await page.goto(pathToFileURL(path.resolve(report)).href, {waitUntil: 'domcontentloaded', timeout: 600000});
	await page.waitForFunction(() => document.documentElement.dataset.ready === '1' ||
	                                 document.documentElement.hasAttribute('data-errors'),
	                           {timeout: 600000, polling: 50});
	out.ready_ms = Date.now() - start;
	out.ready = await page.evaluate(() => document.documentElement.dataset.ready || null);
}

export const settle = (page, ms) => page.evaluate((t) => new Promise((r) => setTimeout(r, t)), ms);

// Opens a view by its tab, then lets its module draw again once sized (ResizeObserver).
export async function show(page, view, ms = 150)
{
	await page.click(`#tabs button[data-view=${view}]`);
	await page.waitForFunction((v) => !document.getElementById('view-' + v).hidden, {}, view);
	if (ms)
		await settle(page, ms);
}

// Expands every node of the tree under root: clicks the toggle of the first closed inner row until
// none is left (at most max clicks).
export async function expandAll(page, root, max)
{
	for (let i = 0; i < max; i++) {
		const done = await page.evaluate((sel) => {
			const tr = document.querySelector(sel + ' tr[data-test=tree-row][data-expanded="0"][data-leaf="0"]');
			if (!tr)
				return true;
			tr.querySelector('[data-test=tree-toggle]').click();
			return false;
		}, root);
		if (done)
			return;
	}
}
