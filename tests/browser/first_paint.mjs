// tests/browser/first_paint.mjs: how long an explorer page takes to paint in headless chromium (a
// measurement, not a test: docs/explorer.md, "A long step"). Loads PAGE from file:// LOADS times in each
// of BROWSERS fresh browsers (a browser's first load is cold), and prints one JSON line per load (first
// contentful paint, the page's own timings) and a summary: the page's size and the paints' range and
// median. Needs puppeteer-core (`npm ci` in tests/browser).
//   node first_paint.mjs --chromium /usr/bin/chromium --page build/tests/browser/long.html [--loads 3] [--browsers 2]
import { statSync } from "node:fs";
import { pathToFileURL } from "node:url";
import puppeteer from "puppeteer-core";

const opt = { loads: "3", browsers: "2" };
for (let i = 2; i < process.argv.length; i += 2) opt[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
if (!opt.chromium || !opt.page) {
  console.error("usage: node first_paint.mjs --chromium PATH --page FILE [--loads N] [--browsers B]");
  process.exit(2);
}
const url = pathToFileURL(opt.page).href, paints = [];
for (let b = 0; b < Number(opt.browsers); b++) {
  const browser = await puppeteer.launch({ executablePath: opt.chromium, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"] });
  try {
    for (let l = 0; l < Number(opt.loads); l++) {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 900 });
      await page.goto(url, { waitUntil: "load" });
      await page.waitForSelector("body[data-ready='1']", { timeout: 60000 });
      const m = await page.evaluate(() => ({
        fcp: (performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint") || {}).startTime,
        timings: JSON.parse(document.body.dataset.timings || "{}"),
      }));
      paints.push(m.fcp);
      console.log(JSON.stringify({ browser: b, load: l, first_contentful_paint_ms: Math.round(m.fcp), timings: m.timings }));
      await page.close();
    }
  } finally {
    await browser.close();
  }
}
const sorted = [...paints].sort((a, b) => a - b);
console.log(JSON.stringify({ page: opt.page, bytes: statSync(opt.page).size, loads: paints.length,
  first_contentful_paint_ms: { min: Math.round(sorted[0]), median: Math.round(sorted[sorted.length >> 1]),
    max: Math.round(sorted[sorted.length - 1]) } }));
