// SPDX-License-Identifier: MIT
// trees_harness.mjs: a page holding only the trees and flame graph modules (analyzer/html/trees.js, flame.js)
// with the vendored d3 and d3-flame-graph, for the tests of those views on synthetic data of known figures.
// Exports launch() (Chromium through puppeteer-core, or null: skip) and open(browser) → page.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath, pathToFileURL} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..', '..');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// puppeteer-core from tests/browser/node_modules (scripts/deps test), or from $CT_NODE_MODULES.
async function puppeteer()
{
	const dirs = [here, process.env.CT_NODE_MODULES && path.dirname(process.env.CT_NODE_MODULES)];
	for (const dir of dirs.filter(Boolean)) {
		try {
			const req = createRequire(path.join(dir, 'x.js'));
			return (await import(pathToFileURL(req.resolve('puppeteer-core')).href)).default;
		} catch (e) {
			// next place
		}
	}
	return null;
}

// The browser, or null when puppeteer-core or Chromium is missing (the caller exits 77: skip).
export async function launch()
{
	const pp = await puppeteer();
	if (!pp || !fs.existsSync(CHROMIUM)) {
		console.log('skip: puppeteer-core or ' + CHROMIUM + ' is missing');
		return null;
	}
	return pp.launch({executablePath: CHROMIUM, headless: true,
	                  args: ['--no-sandbox', '--disable-gpu', '--window-size=1400,1000']});
}

function vendored(dir, file, npmPath)
{
	const v = path.join(root, 'vendor', dir, file);
	if (fs.existsSync(v))
		return v;
	return path.join(process.env.CT_NODE_MODULES || '', npmPath);
}

// A page with d3, d3-flame-graph, trees.js and flame.js and two empty elements (#trees, #flame); the
// page's errors (uncaught or console.error) are collected in page.errors.
export async function open(browser)
{
	const scripts = [vendored('d3-7.9.2', 'd3.min.js', 'd3/dist/d3.min.js'),
	                 vendored('d3-flame-graph-5.0.0', 'd3-flamegraph.umd.min.js',
	                          'd3-flame-graph/dist/d3-flamegraph.umd.min.js'),
	                 path.join(root, 'analyzer/html/trees.js'), path.join(root, 'analyzer/html/flame.js')];
	const html = '<!doctype html><meta charset="utf-8"><title>trees harness</title><body>' +
	             '<div id="trees"></div><div id="flame" style="width:1200px"></div>' +
	             scripts.map((s) => '<script src="' + pathToFileURL(s).href + '"></script>').join('') + '</body>';
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-trees-'));
	const file = path.join(dir, 'index.html');
	fs.writeFileSync(file, html);
	const page = await browser.newPage();
	await page.setViewport({width: 1400, height: 1000});
	page.errors = [];
	page.on('pageerror', (e) => page.errors.push(String(e)));
	page.on('console', (m) => {
		if (m.type() === 'error')
			page.errors.push(m.text());
	});
	await page.goto(pathToFileURL(file).href);
	await page.waitForFunction(() => window.CTTrees && window.CTFlame && window.d3 && window.flamegraph);
	return page;
}

// Synthetic data in the contract's shape, with figures the tests know (see trees_test.mjs):
//   S0 main:10 → f:5 → xmalloc        S3 main:20 → f:5 → f:6 → f:6 → xmalloc (recursion)
//   S1 main:10 → g → xmalloc          S4 thread_fn → h → operator new
//   S2 main:20 → g (allocates in g)   S5 main:10 → f:5 (allocates in f)
export const SMALL = {
	frames: [
		{fn: 'main', full: 'main', file: '/src/demo.c', line: 10, module: 'demo', inl: 0},
		{fn: 'main', full: 'main', file: '/src/demo.c', line: 20, module: 'demo', inl: 0},
		{fn: 'f', full: 'f', file: '/src/f.c', line: 5, module: 'demo', inl: 0},
		{fn: 'g', full: 'g', file: '/src/g.c', line: 7, module: 'demo', inl: 0},
		{fn: 'xmalloc', full: 'xmalloc', file: '/src/x.c', line: 3, module: 'demo', inl: 0},
		{fn: 'h', full: 'h(int)', file: '/src/h.cc', line: 9, module: 'demo', inl: 0},
		{fn: 'f', full: 'f', file: '/src/f.c', line: 6, module: 'demo', inl: 0},
		{fn: 'operator new', full: 'operator new(unsigned long)', file: null, line: 0, module: 'libstdc++.so.6',
		 inl: 0},
		{fn: 'thread_fn', full: 'thread_fn', file: '/src/t.c', line: 1, module: 'demo', inl: 0},
	],
	stacks: [[4, 2, 0], [4, 3, 0], [3, 1], [4, 6, 6, 2, 1], [7, 5, 8], [2, 0]],
	costs: {
		allocations: [10, 20, 5, 7, 3, 2],
		allocated: [1000, 2000, 500, 700, 300, 200],
		temporary: [1, 2, 0, 3, 0, 0],
		peak: [100, 0, 50, 70, 300, 0],
		live: [0, 0, 50, 70, 300, 0],
		definite: [0, 0, 0, 70, 0, 0],
		indirect: [0, 0, 0, 0, 0, 0],
		possible: [0, 0, 50, 0, 0, 0],
		reachable: [0, 0, 0, 0, 300, 0],
	},
};

// Installs SMALL in the page as window.ctData / window.ctCosts (Float64Arrays, as app.js passes them).
export async function installSmall(page)
{
	await page.evaluate((d) => {
		window.ctData = {version: 1, meta: {classified: true}, frames: d.frames, stacks: d.stacks,
		                 sites: d.stacks.map((s, i) => ({stack: i, n: d.costs.allocations[i], bytes: d.costs.allocated[i]}))};
		window.ctCosts = {};
		for (const k of Object.keys(d.costs))
			window.ctCosts[k] = Float64Array.from(d.costs[k]);
	}, SMALL);
}

let failures = 0;

// Records one check: prints it, counts a failure.
export function check(what, got, want)
{
	const ok = JSON.stringify(got) === JSON.stringify(want);
	console.log((ok ? 'ok   ' : 'FAIL ') + what + (ok ? '' : ': got ' + JSON.stringify(got) + ', want ' +
	                                                              JSON.stringify(want)));
	if (!ok)
		failures++;
}

export function failed() { return failures; }

// Where screenshots go: $CT_ARTIFACTS, or the system's temporary directory.
export function artifact(name)
{
	const dir = process.env.CT_ARTIFACTS || path.join(os.tmpdir(), 'ct-browser-artifacts');
	fs.mkdirSync(dir, {recursive: true});
	return path.join(dir, name);
}

// A harness test's whole run: the browser (exit 77 without one), run(page) on the harness page, then
// exit 1 when a check failed, else 0.
export async function runHarness(run)
{
	const browser = await launch();
	if (!browser)
		process.exit(77);
	try {
		await run(await open(browser));
	} finally {
		await browser.close();
	}
	process.exit(failed() ? 1 : 0);
}
