// SPDX-License-Identifier: MIT
// flame_test.mjs: the flame graph (analyzer/html/flame.js on d3-flame-graph) in Chromium, on the harness's
// synthetic sites whose figures are known (trees_harness.mjs, SMALL): frames merged by function or line,
// search and its matched share, hiding frames by pattern, icicle, zoom, cost, tooltip, state across windows.
// Usage: node tests/browser/flame_test.mjs   (exit 0 pass, 1 fail, 77 skip)
import {installSmall, check, artifact, runHarness} from './trees_harness.mjs';

const OPTS = {cost: 'allocations', byLine: false, icicle: false, hide: null, search: ''};

// The drawn frames (those at least a pixel wide) as {fn, value, depth, hl, y}.
function frames(page)
{
	return page.$$eval('#flame g[data-test=flame-frame]', (gs) => gs.map((g) => ({
		fn: g.dataset.fn, value: +g.dataset.value, depth: +g.dataset.depth, hl: g.dataset.hl === '1',
		y: +/translate\([^,]+,([^)]+)\)/.exec(g.getAttribute('transform'))[1],
	})));
}

const settle = (page) => page.evaluate(() => new Promise((r) => setTimeout(r, 600)));
const attr = (page, sel, name) => page.$eval(sel, (e, n) => e.getAttribute(n), name);

async function setInput(page, test, value)
{
	await page.$eval('#flame [data-test=' + test + ']', (e, v) => {
		e.value = v;
		e.dispatchEvent(new Event('input'));
	}, value);
	await settle(page); // the inputs are debounced (200 ms)
}

async function run(page)
{
	await installSmall(page);
	await page.evaluate((o) => CTFlame.render(document.getElementById('flame'), ctData, ctCosts, o), OPTS);
	await settle(page);
	let fs = await frames(page);
	const root = fs.find((f) => f.depth === 0);
	check('root value = sum over sites', root && root.value, 47);
	check('frames merged by function', fs.length, 12);
	check('f frames (recursion: one per level)', fs.filter((f) => f.fn === 'f').map((f) => f.value), [19, 7, 7]);
	check('flame (not icicle): root at the bottom', root.y > 0, true);
	await page.screenshot({path: artifact('flame.png'), fullPage: true});

	// Search: the frames of xmalloc are highlighted, and the share counts each stack once.
	await setInput(page, 'flame-search', 'xmalloc');
	fs = await frames(page);
	check('search highlights', fs.filter((f) => f.hl).map((f) => f.value).sort((a, b) => b - a), [20, 10, 7]);
	check('search matched share', [+(await attr(page, '#flame [data-test=flame-match]', 'data-matched')),
	                               +(await attr(page, '#flame [data-test=flame-match]', 'data-total')),
	                               +(await attr(page, '#flame [data-test=flame-match]', 'data-frames'))], [37, 47, 3]);
	check('search text', await page.$eval('#flame [data-test=flame-match]', (e) => e.textContent),
	      '3 frames; matched 37 of 47 (78.72%)');
	await page.screenshot({path: artifact('flame-search.png'), fullPage: true});
	await setInput(page, 'flame-search', '');
	check('search cleared', (await frames(page)).filter((f) => f.hl).length, 0);

	// Hiding f: its callees attach to main (xmalloc 10 + 7 merge), the total stays.
	await setInput(page, 'flame-hide', '^f$');
	fs = await frames(page);
	check('hide: no f frame', fs.filter((f) => f.fn === 'f').length, 0);
	check('hide: total kept', fs.find((f) => f.depth === 0).value, 47);
	check('hide: frames', fs.map((f) => f.fn + '=' + f.value).sort(),
	      ['all=47', 'g=25', 'h=3', 'main=44', 'operator new=3', 'thread_fn=3', 'xmalloc=17', 'xmalloc=20']);
	await setInput(page, 'flame-hide', 'f(');
	check('bad pattern flagged', await page.$eval('#flame [data-test=flame-hide]', (e) => e.classList.contains('ct-bad')), true);
	await setInput(page, 'flame-hide', '');
	await page.$eval('#flame [data-test=flame-hide-preset]', (e) => e.click());
	await settle(page);
	fs = await frames(page);
	check('preset hides operator new', fs.filter((f) => f.fn === 'operator new').length, 0);
	check('preset keeps h', fs.filter((f) => f.fn === 'h').map((f) => f.value), [3]);
	await page.$eval('#flame [data-test=flame-hide-preset]', (e) => e.click());
	await settle(page);

	// Per call line: main:10 and main:20 split, f:5 and f:6 apart.
	await page.$eval('#flame [data-test=flame-byline]', (e) => e.click());
	await settle(page);
	fs = await frames(page);
	check('frames by line', fs.length, 15);
	check('main roots by line', fs.filter((f) => f.depth === 1).map((f) => f.fn + '=' + f.value).sort(), ['main:10=32', 'main:20=12', 'thread_fn:1=3']);
	await page.$eval('#flame [data-test=flame-byline]', (e) => e.click());
	await settle(page);

	// Icicle: the root at the top.
	await page.$eval('#flame [data-test=flame-icicle]', (e) => e.click());
	await settle(page);
	fs = await frames(page);
	check('icicle: root at the top', fs.find((f) => f.depth === 0).y, 0);
	check('icicle: children below', fs.filter((f) => f.depth === 1).every((f) => f.y > 0), true);
	await page.screenshot({path: artifact('flame-icicle.png'), fullPage: true});
	await page.$eval('#flame [data-test=flame-icicle]', (e) => e.click());
	await settle(page);
	check('flame again: root at the bottom', (await frames(page)).find((f) => f.depth === 0).y > 0, true);

	// Another cost.
	await page.select('#flame [data-test=flame-cost]', 'peak');
	await settle(page);
	check('cost peak: root', (await frames(page)).find((f) => f.depth === 0).value, 520);
	await page.select('#flame [data-test=flame-cost]', 'allocations');
	await settle(page);

	// Tooltip: the full name, file:line and the cost.
	await page.hover('#flame g[data-fn=h] rect');
	await settle(page);
	check('tooltip', await page.$eval('.d3-flame-graph-tip', (e) => e.textContent), 'h(int)/src/h.cc:9Allocations: 3 (6.38%)');

	// Click to zoom on g: only g's subtree (and its faded ancestors) is drawn; a new window keeps the zoom.
	await page.$eval('#flame g[data-fn=g]', (e) => e.dispatchEvent(new MouseEvent('click', {bubbles: true})));
	await settle(page);
	check('zoom on g', (await frames(page)).map((f) => f.fn).sort(), ['all', 'g', 'main', 'xmalloc']);
	await page.evaluate((o) => {
		const w = {};
		for (const k of Object.keys(ctCosts))
			w[k] = ctCosts[k].map((v, i) => (i === 2 ? 0 : v));
		CTFlame.render(document.getElementById('flame'), ctData, w, o);
	}, OPTS);
	await settle(page);
	fs = await frames(page);
	check('new window keeps the zoom', fs.map((f) => f.fn).sort(), ['all', 'g', 'main', 'xmalloc']);
	check('new window: g', fs.filter((f) => f.fn === 'g').map((f) => f.value), [20]);
	await page.$eval('#flame [data-test=flame-reset]', (e) => e.click());
	await settle(page);
	check('reset zoom: total', (await frames(page)).find((f) => f.depth === 0).value, 42);

	// An empty window draws a note, and the next one draws again.
	await page.evaluate((o) => {
		const w = {};
		for (const k of Object.keys(ctCosts))
			w[k] = new Float64Array(ctCosts[k].length);
		CTFlame.render(document.getElementById('flame'), ctData, w, o);
	}, OPTS);
	check('empty window', await page.$$eval('#flame [data-test=flame-empty]', (e) => e.length), 1);
	await page.evaluate((o) => CTFlame.render(document.getElementById('flame'), ctData, ctCosts, o), OPTS);
	await settle(page);
	check('after empty: root', (await frames(page)).find((f) => f.depth === 0).value, 47);

	check('no page errors', page.errors, []);
}

await runHarness(run);
